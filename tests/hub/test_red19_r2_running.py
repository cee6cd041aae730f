"""Red team 19, R2: work admitted before admission saw a membership change, and running by the time
the hub poll checks, is named in a ``team_left`` record — also when the change was announced already
(it was said once, at the first check, with the running work of that moment only).

:class:`~jupyter_sched.hub.membership.TeamHolds` with a recording audit (the hub-level flow is in
tests/hub/test_red18_team.py and tests/hub/test_red19_r2_hub.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

from jupyter_sched.admission import Caller
from jupyter_sched.hub.membership import TEAM_LEFT_ACTION, TeamHolds

NOW = datetime(2026, 12, 4, 20, 0, tzinfo=timezone.utc)


class _Audit:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add_event(self, **row: Any) -> None:
        self.rows.append(row)

    def list_events(self, **_filters: Any) -> list[Any]:
        """A fresh service's audit as TeamHolds reads it back at its first check (hubadmin22 H2): nothing."""
        return []

    def publish(self, event: dict[str, Any]) -> None:
        pass


def _eve(name: str, model: Any) -> Caller:
    return Caller(user=name, teams=("nlp",), granted={"nlp": frozenset({"normal", "low"})})


def _job(job_id: str, state: str) -> dict[str, Any]:
    return {"id": job_id, "user": "eve", "team": "vision", "state": state, "priority": "normal"}


def test_red19_r2_running_work_started_after_the_change_was_announced_gets_its_own_record() -> None:
    audit = _Audit()
    services = SimpleNamespace(store=audit, bus=audit)
    holds, listed = TeamHolds(), {"eve": {"name": "eve", "groups": ["nlp"]}}
    holds.update(services, [_job("a", "running")], listed, _eve, default_team="default", now=NOW)
    assert [(r["action"], r["details"]["running"]) for r in audit.rows] == [(TEAM_LEFT_ACTION, ["a"])]
    # b was admitted in the window before admission saw the change, and started before this check
    holds.update(services, [_job("a", "running"), _job("b", "running")], listed, _eve, default_team="default",
                 now=NOW + timedelta(seconds=60))
    assert [r["details"]["running"] for r in audit.rows] == [["a"], ["b"]]
    assert "b" in audit.rows[1]["message"] and "left running" in audit.rows[1]["message"]
    # nothing new: nothing said again
    holds.update(services, [_job("a", "running"), _job("b", "running")], listed, _eve, default_team="default",
                 now=NOW + timedelta(seconds=120))
    assert len(audit.rows) == 2
