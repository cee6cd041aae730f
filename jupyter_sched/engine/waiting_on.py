"""Who holds the GPUs other users' waiting work waits for, per holder (newuser31 n14).

n31b ran 4 one-GPU jobs on all 4 GPUs while n31a's job waited; n31a's line said "ask n31b to …", n31b's own
``status`` said nothing of it. Each pending reason names the running work its ETA waits on and that work's owner
where it is another user's (``details.eta_waits_on_owners``; public, as every queue line shows owners) — queued
work ahead of it holds nothing yet (``eta_waits_on_queued``) and is left out. :func:`waiting_on` turns the
cycle's reasons into, per holder, how many jobs and leases of other users wait on them, and whose: ``GET me``
carries it (``waiting_on_you``) and ``status``, ``%schedule status`` and the panel's My work say it. Never a job's
name or command: those are their owners'. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..model import Job
from ..scheduling.snapshot import Pend

__all__ = ["WaitingOn", "waited_on", "waiting_on", "waiting_on_one"]


@dataclass(frozen=True, slots=True)
class WaitingOn:
    """Other users' waiting work whose ETA waits on one user's GPU-holding work.

    Attributes:
        jobs: their waiting jobs.
        leases: their waiting leases (a kernel's GPU request).
        users: their owners, sorted.
    """

    jobs: int
    leases: int
    users: tuple[str, ...]


def waiting_on(pending: Iterable[Pend], job_of: Callable[[str], Job | None]) -> dict[str, WaitingOn]:
    """Per user holding GPUs that other users' pending work waits on (``pending``: the cycle's reasons; ``job_of``:
    a waiting job by id, for its owner and kind), what waits on them (module doc). Reads only the reasons that
    name another user's work (most wait on nothing, or on their own team's)."""
    counts: dict[str, list[int]] = {}  # holder -> [jobs, leases]
    whose: dict[str, set[str]] = {}
    for pend in pending:
        if not pend.reason.details.get("eta_waits_on_owners"):
            continue
        waiter = job_of(pend.job_id)
        if waiter is None:
            continue
        user = waiter.spec.user
        for holder in waited_on(pend.reason.details, user):
            counts.setdefault(holder, [0, 0])[1 if waiter.is_lease else 0] += 1
            whose.setdefault(holder, set()).add(user)
    return {holder: WaitingOn(n[0], n[1], tuple(sorted(whose[holder]))) for holder, n in counts.items()}


def waited_on(details: Mapping[str, object], user: str) -> set[str]:
    """The other users whose running work the ETA of ``user``'s waiting job (its reason's ``details``) waits on."""
    owners = details.get("eta_waits_on_owners")
    if not isinstance(owners, Mapping) or not owners:
        return set()
    queued = details.get("eta_waits_on_queued")
    ahead = set(queued) if isinstance(queued, list) else set()
    return {str(owner) for job_id, owner in owners.items() if job_id not in ahead and owner != user}


def waiting_on_one(holder: str, waiters: Iterable[tuple[str, bool, Mapping[str, object]]]) -> WaitingOn | None:
    """What waits on ``holder`` among ``waiters`` — ``(owner, is a lease, reason details)`` of waiting work, as
    the store holds their reasons (a server that does not lead: :meth:`~..store.StoreTx.waiting_on_owner`) —
    as :func:`waiting_on` counts it; None when nothing does."""
    jobs = leases = 0
    users: set[str] = set()
    for user, lease, details in waiters:
        if holder in waited_on(details, user):
            leases, jobs = (leases + 1, jobs) if lease else (leases, jobs + 1)
            users.add(user)
    return WaitingOn(jobs, leases, tuple(sorted(users))) if users else None
