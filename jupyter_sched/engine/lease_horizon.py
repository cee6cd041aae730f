"""When the leases a pending job waits for can be reclaimed as idle (new user 18, N10).

The core says a job waits for leases (``details.eta_code == "NoTimeLimit"``, their ids in
``details.eta_waits_on``): a lease has no time limit, so the wait has no ETA. What can end it is
its owner's release or idle reclamation — and only the engine knows whether this server reclaims
idle leases at all and after how long (:class:`~jupyter_sched.reclaim.IdlePolicies`, which the
core never sees). This module adds that to the reason, as data the wording renders
(:func:`jupyter_sched.wording.reasons.eta_sentence`), so the panel, ``%gpu``, the CLI and REST
say the same: before, every one said "released by its owner or reclaimed when idle" on a server
that reclaims nothing, and never after how long.

``details.eta_idle_release``: ``{lease id: {"after_s": seconds idle before it is released
(window + grace), "at": ISO time it is due if it stays idle, or None while it is not idle}}`` for
each lease waited on that its policy releases when idle; a lease whose policy only notifies (or
has idle reclamation off) is absent, and the key is ``{}`` when none of them is released so.

``details.eta_idle_at`` (several leases, session 21; session 20's closing note: a job waiting on
several of its own team's idle kernel leases said "ETA unknown"): ``{"at": ISO time, "leases": [ids]}``,
when enough of them are reclaimed for it to start if the idle ones stay idle — they go in the order
of their reclaim deadlines until the GPUs freed cover what its quota line is short of (``used +
requested - quota``, the quota wait's numbers). Absent where that is not known: a wait that is not a
quota wait with those numbers (on capacity, which holders free a node is the core's projection, not
a count of GPUs), or leases in use (not idle: no reclaim time) that must go too. Pure.

A capacity wait on idle leases (session 21): the engine put each idle lease's reclaim deadline in
the snapshot (:mod:`.idle_ends`) and the core's ETA plan ended it there, so the reason has a
projected ETA (``eta_code == "Projected"``) waiting on those leases; when every one it waits on is
a lease idle now, it gets the same two keys (``eta_idle_at.at``: the projected ETA; ``leases``: the
ones it waits on) and is worded "if they stay idle".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..model import Job, to_iso
from ..reclaim import IdleCandidate, IdlePolicies
from ..reclaim.policy import ReclaimMode
from ..scheduling.snapshot import CycleResult, Pend

__all__ = ["idle_start", "lease_idle_release", "with_lease_horizons"]

QUOTA_WAITS = frozenset({"ExceedsQuota", "BorrowingLimitReached", "InsufficientQuota", "NoQuota"})
"""Reason codes whose ``details`` carry the quota line's ``used``, ``requested`` and ``quota`` GPUs."""


def _horizon(lease: Job, policies: IdlePolicies | None, due: Mapping[str, IdleCandidate]) -> dict[str, Any] | None:
    """``{"after_s", "at"}`` for a lease its idle policy releases, else None."""
    if policies is None:
        return None
    policy = policies.for_job(lease)
    if not policy.enabled or policy.lease_mode == ReclaimMode.NOTIFY:
        return None
    idle = due.get(lease.id)
    at = to_iso(idle.deadline) if idle is not None and idle.action != ReclaimMode.NOTIFY.value else None
    return {"after_s": policy.window_s + policy.grace_s, "at": at}


def _projected_on_idle(pend: Pend, held: Sequence[Job], waits: Sequence[Any], policies: IdlePolicies | None,
                       due: Mapping[str, IdleCandidate]) -> Pend | None:
    """``pend`` with ``eta_idle_release`` and ``eta_idle_at`` (``at``: its projected ETA) when that
    ETA waits only on leases that are idle now (the plan ended them at their reclaim deadline:
    ``Snapshot.idle_ends``), so it is worded "if they stay idle" (``leases``: the ones it waits on,
    which the core lists with every idle lease of their nodes reclaimed by then:
    :func:`jupyter_sched.scheduling.eta._with_idle_peers`); None for any other projected ETA."""
    eta = pend.reason.eta
    horizons = {lease.id: h for lease in held if (h := _horizon(lease, policies, due)) is not None}
    if eta is None or len(held) != len(waits) or any(
            not isinstance(horizons.get(lease.id, {}).get("at"), str) for lease in held):
        return None
    added = {"eta_idle_release": horizons, "eta_idle_at": {"at": to_iso(eta), "leases": [lease.id for lease in held]}}
    return Pend(pend.job_id, replace(pend.reason, details={**pend.reason.details, **added}))


def idle_start(code: str, details: Mapping[str, Any], held: Sequence[Job],
               horizons: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """``details.eta_idle_at`` (module doc): when enough of the leases ``held`` that a quota-held job
    waits on are reclaimed as idle for it to start, if the idle ones stay idle.

    Args:
        code: the pending reason's code (a quota wait: :data:`QUOTA_WAITS`).
        details: its details (``used``, ``requested``, ``quota``: GPUs of the quota line).
        held: the leases it waits on.
        horizons: ``details.eta_idle_release`` of them (``at``: ISO reclaim time, None while not idle).

    Returns:
        ``{"at": ISO time, "leases": [ids reclaimed by then, soonest first]}``, or None: not a quota
        wait with its numbers, or the idle leases do not free enough without one that is in use.
    """
    numbers = [details.get(k) for k in ("used", "requested", "quota")]
    if code not in QUOTA_WAITS or not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
        return None
    used, requested, quota = (float(n) for n in numbers)  # type: ignore[arg-type]
    short = round((used + requested - quota) * 1000)  # milli-GPUs
    due = sorted((datetime.fromisoformat(str(h["at"])), lease.id, lease.spec.resources.total_milli) for lease in held
                 if isinstance(h := horizons.get(lease.id), Mapping) and isinstance(h.get("at"), str))
    freed, by = 0, []
    for at, lease_id, milli in due:
        freed += milli
        by.append(lease_id)
        if freed >= short:
            return {"at": to_iso(at), "leases": by}
    return None


def lease_idle_release(lease: Job, policies: IdlePolicies | None, *, kernel_action: str | None = None,
                       keepalive_until: datetime | None = None) -> dict[str, Any]:
    """What this server's idle policy does to ``lease`` when it sits idle — the wire field
    ``idle_release`` of a lease, which its own line renders (:func:`jupyter_sched.wording.jobs.ends_by`;
    session 19: it said "or reclaimed when idle" on a server that reclaims nothing):
    ``{"action": "release", "after_s": seconds idle before it is released (window + grace)}``,
    ``{"action": "notify"}`` (reported as idle, never released) or ``{"action": "off"}``
    (``policies`` None — no telemetry — or the policy disabled). ``kernel_action``: what is done
    about a kernel still holding the GPU when it is released (``"shutdown"`` / ``"hold"``,
    :mod:`.idle_kernels`; None where no GPU process list is read), added as ``"kernel"`` to a
    kernel's lease that is released. ``keepalive_until``: its keepalive keeps it while idle until then
    (``%gpu keepalive``), added as ``"keepalive_until"`` to a released lease (newuser39 n11).
    A kernel's lease under a busy-kernel rule adds its bound (red39 R8: "busy" defers reclaim only so long):
    ``"busy_after_s"`` (seconds its GPUs may stay idle while its kernel is said to be busy: the rule's
    window + grace) and ``"busy_action"`` (``"release"`` or ``"notify"``: what happens then). Pure."""
    if policies is None:
        return {"action": "off"}
    policy = policies.for_job(lease)
    if not policy.enabled:
        return {"action": "off"}
    busy: dict[str, Any] = {}
    busy_notify = policy.busy_kernel_mode == ReclaimMode.NOTIFY
    # said where it changes what the line promises: a server that reclaims nothing says that alone
    if lease.spec.kernel_id and policy.busy_kernel_window_s is not None and not (
            busy_notify and policy.lease_mode == ReclaimMode.NOTIFY):
        busy = {"busy_after_s": policy.busy_kernel_window_s + policy.grace_s,
                "busy_action": "notify" if busy_notify else "release"}
    if policy.lease_mode == ReclaimMode.NOTIFY:
        return {"action": "notify", **busy}
    out: dict[str, Any] = {"action": "release", "after_s": policy.window_s + policy.grace_s, **busy}
    if kernel_action and lease.spec.kernel_id:
        out["kernel"] = kernel_action
    if keepalive_until is not None:
        out["keepalive_until"] = keepalive_until.isoformat()
    return out


def with_lease_horizons(result: CycleResult, jobs: Iterable[Job], policies: IdlePolicies | None,
                        candidates: Iterable[IdleCandidate]) -> CycleResult:
    """``result`` with ``details.eta_idle_release`` on every pending reason whose ETA is unknown
    because it waits for leases (module docstring); other reasons unchanged.

    Args:
        result: the cycle's decisions (``pending`` is read).
        jobs: the snapshot's jobs (the leases waited on are looked up by id).
        policies: the idle policy in force (None: idle reclamation is off).
        candidates: idle work now, with its reclaim deadline (:func:`~jupyter_sched.reclaim.idle_candidates`).
    """
    leases = {j.id: j for j in jobs if j.is_lease}  # queued ahead too: released so once started
    if not leases or not result.pending:
        return result
    due = {c.job_id: c for c in candidates}
    out: list[Pend] = []
    changed = False
    for pend in result.pending:
        details = pend.reason.details
        waits = details.get("eta_waits_on")
        held = [leases[w] for w in waits if isinstance(w, str) and w in leases] \
            if details.get("eta_code") in ("NoTimeLimit", "Projected") and isinstance(waits, list) else []
        if not held:
            out.append(pend)
            continue
        if details.get("eta_code") == "Projected":  # the plan ended idle leases at their reclaim (.idle_ends)
            projected = _projected_on_idle(pend, held, waits if isinstance(waits, list) else [], policies, due)
            out.append(projected or pend)
            changed = changed or projected is not None
            continue
        horizons = {lease.id: h for lease in held if (h := _horizon(lease, policies, due)) is not None}
        added: dict[str, Any] = {"eta_idle_release": horizons}
        whole = isinstance(waits, list) and len(held) == len(waits) > 1  # several, every one a lease
        if whole and (start := idle_start(pend.reason.code, details, held, horizons)) is not None:
            added["eta_idle_at"] = start
        out.append(Pend(pend.job_id, replace(pend.reason, details={**details, **added})))
        changed = True
    return replace(result, pending=tuple(out)) if changed else result
