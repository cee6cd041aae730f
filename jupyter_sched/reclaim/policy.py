"""Idle-reclamation policy: thresholds, windows and what reclaiming does (frozen config, pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from ..errors import ValidationError
from ..model import Job

__all__ = ["IdlePolicies", "IdlePolicy", "ReclaimMode", "warning_example"]


class ReclaimMode(str, Enum):
    """What the last step of the ladder does.

    ``release``: free the GPUs (a lease is revoked; its kernel keeps running — user code is
    never killed). ``requeue``: stop a batch job and put it back in the queue. ``stop``: stop a
    batch job for good. ``notify``: tell the user and admins; free nothing.
    """

    RELEASE = "release"
    REQUEUE = "requeue"
    STOP = "stop"
    NOTIFY = "notify"


@dataclass(frozen=True, slots=True)
class IdlePolicy:
    """When work counts as idle and what happens then.

    Attributes:
        enabled: False turns idle reclamation off for this class.
        threshold_pct: a GPU is idle below this activity, % (default 5; DCGM ``GR_ENGINE_ACTIVE``
            x 100, else NVML ``utilization.gpu``).
        window_s: idle timeout: how long all GPUs (and for leases, the kernel) must stay idle
            before reclaim, seconds (default 7200 = 120 min, case 012).
        warning_s: the warning comes this many seconds before reclaim, and at least this much
            grace follows any warning (default 900 = 15 min).
        busy_kernel_window_s: for a lease whose kernel is busy (or whose state is unknown) but whose
            GPUs are idle (data loading, a CPU-only loop): the separate, longer limit, seconds
            (default 14400 = 4 h; None disables this rule).
        lease_mode: what reclaim does to an idle lease (default ``release``: GPUs only).
        busy_kernel_mode: what reclaim does under the busy-kernel rule (default ``notify``: the
            user's running code keeps its GPUs; admins can choose ``release``).
        job_mode: what reclaim does to an idle batch job (default ``notify``; ``requeue`` or ``stop``).
        service_mode: what reclaim does to an idle inference service (default ``notify``: reported
            as low efficiency, never stopped on its own — a service waits for requests; case 013 S4).
        grace_s: extra time *after* the window before reclaim, seconds (default 0). The warning
            comes when the window is over and reclaim ``grace_s`` later (case 013: window 60 min +
            grace 15 → warn at 60, reclaim at 75); warnings name both numbers (``60 + 15 min``).
        max_gap_s: a gap between samples longer than this restarts the idle clock — missing data
            is never evidence of idleness (default 600).
        keepalive_max_s: the longest extension a user may ask for once per idle period
            (default 7200; 0 disables keepalive).
    """

    enabled: bool = True
    threshold_pct: float = 5.0
    window_s: float = 7200.0
    warning_s: float = 900.0
    busy_kernel_window_s: float | None = 14400.0
    lease_mode: ReclaimMode = ReclaimMode.RELEASE
    busy_kernel_mode: ReclaimMode = ReclaimMode.NOTIFY
    job_mode: ReclaimMode = ReclaimMode.NOTIFY
    max_gap_s: float = 600.0
    keepalive_max_s: float = 7200.0
    service_mode: ReclaimMode = ReclaimMode.NOTIFY
    grace_s: float = 0.0

    def __post_init__(self) -> None:
        if not 0 < self.threshold_pct <= 100:
            raise ValidationError(f"idle threshold must be in (0, 100] % (got {self.threshold_pct})",
                                  field="idle.threshold_pct", hint="e.g. 5")
        if self.window_s <= 0:
            raise ValidationError(f"idle window must be > 0 s (got {self.window_s})", field="idle.window_s",
                                  hint="e.g. 7200 for 2 h")
        if not 0 <= self.warning_s < self.window_s:
            raise ValidationError(f"idle warning ({self.warning_s} s) must be >= 0 and shorter than the window "
                                  f"({self.window_s} s)", field="idle.warning_s",
                                  hint=warning_example(self.window_s))
        if self.busy_kernel_window_s is not None and self.busy_kernel_window_s < self.window_s:
            raise ValidationError(f"busy-kernel limit ({self.busy_kernel_window_s} s) must be >= the idle window "
                                  f"({self.window_s} s)", field="idle.busy_kernel_window_s",
                                  hint="a busy kernel gets at least as long as an idle one")
        if self.grace_s < 0:
            raise ValidationError(f"idle grace must be >= 0 s (got {self.grace_s})", field="idle.grace_s",
                                  hint="e.g. 900 for 15 min after the window; 0 for none")
        if self.max_gap_s <= 0 or self.keepalive_max_s < 0:
            raise ValidationError("idle max_gap_s must be > 0 and keepalive_max_s >= 0", field="idle.max_gap_s",
                                  hint="e.g. max_gap_s 600, keepalive_max_s 7200")


@dataclass(frozen=True, slots=True)
class IdlePolicies:
    """The admin's idle policy: a default with overrides per priority class, per job kind, and per
    kind and class together.

    Attributes:
        default: policy for work without an override.
        by_priority: ``{"high": IdlePolicy(...), "low": ...}`` keyed by priority class value.
        by_kind: ``{"lease" | "training" | "inference": IdlePolicy(...)}`` keyed by job kind
            (interactive lease, batch, inference service).
        by_kind_priority: ``{kind: {class: IdlePolicy(...)}}`` for one kind in one class.

    The most specific entry wins, whole: kind and class, then kind, then class, then default.
    """

    default: IdlePolicy = field(default_factory=IdlePolicy)
    by_priority: Mapping[str, IdlePolicy] = field(default_factory=dict)
    by_kind: Mapping[str, IdlePolicy] = field(default_factory=dict)
    by_kind_priority: Mapping[str, Mapping[str, IdlePolicy]] = field(default_factory=dict)

    def for_job(self, job: Job) -> IdlePolicy:
        """The policy that applies to ``job`` (by its kind and priority class, most specific first)."""
        kind, priority = job.spec.kind.value, job.spec.priority.value
        specific = self.by_kind_priority.get(kind, {}).get(priority)
        if specific is not None:
            return specific
        if kind in self.by_kind:
            return self.by_kind[kind]
        return self.by_priority.get(priority, self.default)

    def all(self) -> list[IdlePolicy]:
        """Every policy in force (default first), e.g. for the longest lookback any of them needs."""
        return [self.default, *self.by_priority.values(), *self.by_kind.values(),
                *(p for per_class in self.by_kind_priority.values() for p in per_class.values())]


def warning_example(window_s: float) -> str:
    """The hint for a refused ``warning_s``: an example below ``window_s`` (seconds) — 900 (15 min) when
    the window is longer, else half the window, in whole seconds (new user 23, N13: "e.g. 900 for 15 min"
    beside a 240 s window, itself refused)."""
    if window_s > 900:
        return "e.g. 900 for 15 min"
    example = max(int(window_s // 2), 0)
    return f"e.g. {example} (less than the {window_s:g} s window)" if example else "e.g. 0 (no warning)"
