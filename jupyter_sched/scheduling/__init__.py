"""The pure scheduling core: ``run_cycle(snapshot, profile) -> CycleResult``.

Public surface (pinned by ``tests/core/test_exports.py``):

* :func:`run_cycle` — one cycle over a frozen :class:`Snapshot`;
* :class:`SchedulingProfile` — the policy a cycle runs with;
* :func:`apply_result` — apply a :class:`CycleResult` to a snapshot (tests, simulator);
* :func:`dryrun` — would a hypothetical job fit, where and when, without enqueuing it;
* the snapshot/decision dataclasses of :mod:`.snapshot`.
"""

from .apply import apply_result
from .cycle import run_cycle
from .dryrun import DryRun, dryrun
from .profile import SchedulingProfile
from .snapshot import Admit, AuditRecord, CycleResult, IdleAction, Pend, Preempt, Reject, Snapshot, UsageHistory

__all__ = [
    "Admit", "AuditRecord", "CycleResult", "DryRun", "IdleAction", "Pend", "Preempt", "Reject",
    "SchedulingProfile", "Snapshot", "UsageHistory", "apply_result", "dryrun", "run_cycle",
]
