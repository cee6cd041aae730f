"""The whole ``jupyter-sched doctor`` scan as data: one :class:`Check` per thing it looks at, rendered to the text
form's lines or to ``doctor --json``'s report (session 36 left ``--json`` printing the quarantine list only, so a script
or a monitoring probe could not see what the lines said: the isolation, the config, the overlapping usage).

The JSON shape (stable; docs/admin.md, "doctor --json")::

    {"store": "sqlite:///…", "source": "--db", "versions": "code: jupyter_sched …; store schema N …",
     "status": "ok" | "warn" | "fail",      # the worst check's
     "exit": 0 | 1,                          # the exit code the scan gives
     "checks": [{"name": "quarantine", "status": "ok" | "warn" | "fail", "message": "…", "fix": "…" | null,
                 "details": ["…", …]}, …],  # in the order the text form prints them
     "quarantined": [{"id": …, "table": …, "key": …, "error": …, "attributes": {…}}, …]}

``fail`` is what makes the scan exit 1 (quarantined rows, open usage rows of ended jobs, overlapping usage, a bad
setting); ``warn`` is said and does not change the exit code; ``ok`` needs nothing. A check that does not apply here
(a hub's service settings on a personal lab's store) is absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Check", "DoctorReport", "Status"]

Status = Literal["ok", "warn", "fail"]
_RANK: dict[str, int] = {"ok": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class Check:
    """One thing the scan looked at.

    Attributes:
        name: a stable identifier (``quarantine``, ``usage_overlaps``, ``isolation``, …; docs/admin.md lists them).
        status: ``ok``, ``warn`` (said; the exit code is unchanged) or ``fail`` (the scan exits 1).
        message: the one-sentence finding, as the text form says it.
        fix: what to do, or None where nothing is to be done.
        details: one entry per item found (a quarantined row, an overlap with its repair SQL, a bad setting).
        lines: the text form's lines for this check, exactly as printed (none: it prints nothing when ok).
    """

    name: str
    status: Status
    message: str
    fix: str | None = None
    details: tuple[str, ...] = ()
    lines: tuple[str, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message, "fix": self.fix,
                "details": list(self.details)}


@dataclass(frozen=True)
class DoctorReport:
    """The scan's report: which store, its versions line, every check in the text form's order, the quarantine."""

    store: str
    source: str
    versions: str
    checks: Sequence[Check]
    quarantined: Sequence[dict[str, Any]] = ()

    @property
    def status(self) -> Status:
        worst: Status = "ok"
        for check in self.checks:
            worst = check.status if _RANK[check.status] > _RANK[worst] else worst
        return worst

    @property
    def exit_code(self) -> int:
        return 1 if self.status == "fail" else 0

    def to_dict(self) -> dict[str, Any]:
        return {"store": self.store, "source": self.source, "versions": self.versions, "status": self.status,
                "exit": self.exit_code, "checks": [c.to_dict() for c in self.checks],
                "quarantined": list(self.quarantined)}
