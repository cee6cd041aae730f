"""Cordoning and draining nodes for maintenance (hubadmin24): ``POST nodes/{node}/cordon`` and
``POST nodes/{node}/uncordon``, admins only, audited (``node_cordoned``, ``node_uncordoned``).

The cordon is stored (``node_cordons``; it outlives restarts and every server on the store sees it)
and put on the inventory every reader sees (:mod:`jupyter_sched.engine.cordons`): the core places no
new work there, and a job only that node could hold waits with a reason naming the cordon. A drain
(``evict_after_s``) also sets when the work still on the node is stopped — the core's
:mod:`~jupyter_sched.scheduling.drain` asks it, with the normal grace and checkpoint signal, and jobs
are requeued. Before the change the answer (``dry_run``) lists that work and what happens to each.
"""

from __future__ import annotations

import difflib
from datetime import datetime, timedelta

from ..admission import Caller
from ..admission.rules import visible_text
from ..engine.cordons import CordonBook
from ..errors import NotFoundError, SchedError, ValidationError
from ..model import Job, JobState
from ..model.codec import cordon_to_dict
from ..model.resources import GPU_MILLI, Cordon
from ..model.units import clock_text, format_duration
from ..scheduling.profile import SchedulingProfile
from ..wording.cordons import cordon_sentence
from .context import Context
from .models.nodes import (
    MAX_REASON_CHARS,
    CordonNodeRequest,
    CordonNodeResponse,
    NodeCordon,
    NodeWork,
    UncordonNodeRequest,
)

__all__ = ["NODE_CORDONED_ACTION", "NODE_UNCORDONED_ACTION", "NodesService"]

NODE_CORDONED_ACTION = "node_cordoned"
"""Audit action of a cordon or drain (details: node, reason, evict_at, the cordon replaced, the work on it)."""
NODE_UNCORDONED_ACTION = "node_uncordoned"
"""Audit action of an uncordon (details: node, the cordon lifted)."""

_HOLDING = (JobState.ADMITTED, JobState.RUNNING)
_MAX_NODE_CHARS = 253
"""A node name as Kubernetes allows it (a DNS subdomain)."""


class NodesService:
    """Cordon, drain and uncordon nodes (module docstring).

    Args:
        ctx: the shared context.
        book: the cordons the inventory carries (invalidated after each change here).
    """

    def __init__(self, ctx: Context, book: CordonBook) -> None:
        self.ctx = ctx
        self.book = book

    def cordon(self, caller: Caller, node: str, request: CordonNodeRequest) -> CordonNodeResponse:
        """Cordon ``node`` (``request.evict_after_s``: drain it), or with ``dry_run`` say what would happen.

        Returns:
            the cordon in force, the one it replaced, the work on the node and each one's fate.

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a blank or invisible-character reason (field ``reason``), a bad node name.
            NotFoundError: no node of that name in the inventory (the nearest names said).
        """
        self.ctx.admission.require_admin(caller, "cordoning a node", field="node")
        self._check_node(node, known=True)
        reason = request.reason.strip()
        if not reason:
            raise ValidationError("reason is blank", field="reason",
                                  hint='say why, e.g. --reason "PSU swap, back by 18:00" (users waiting see it)')
        visible_text(reason, "reason", limit=MAX_REASON_CHARS)
        now = self.ctx.clock.now()
        evict_at = None if request.evict_after_s is None else now + timedelta(seconds=request.evict_after_s)
        cordon = Cordon(reason=reason, by=caller.user, at=now, evict_at=evict_at)
        work = self._work(node, cordon, now)
        was = self.ctx.store.node_cordons().get(node)
        if request.dry_run:
            return self._answer(node, cordon, was, work, now, dry_run=True, changed=True)
        with self.ctx.store.transaction() as tx:
            was = tx.put_cordon(node, cordon)
            tx.add_event(actor=caller.user, action=NODE_CORDONED_ACTION, job_id=None, user=None,
                         message=cordon_sentence(node, cordon) + (f" (was: {was.reason!r} by {was.by})" if was else ""),
                         details={"node": node, "reason": reason, "evict_at": evict_at.isoformat() if evict_at else None,
                                  "previous": cordon_to_dict(was),
                                  "work": [w.id for w in work], "jobs": [{"id": w.id, "user": w.user} for w in work]})
            for w in work if evict_at is not None else ():  # each owner's announced stop (hubadmin26 B1): audit --job/--user
                tx.add_event(actor=caller.user, action=NODE_CORDONED_ACTION, job_id=w.id, user=w.user,
                             message=f"{w.id} ({w.kind} of {w.user}) on node {node}: {w.fate} — "
                                     f"{cordon_sentence(node, cordon)}",
                             details={"node": node, "reason": reason, "evict_at": evict_at.isoformat() if evict_at else None,
                                      "fate": w.fate})
        self.book.invalidate()
        self.ctx.kick("node_cordoned")
        return self._answer(node, cordon, was, work, now, dry_run=False, changed=True)

    def uncordon(self, caller: Caller, node: str, request: UncordonNodeRequest) -> CordonNodeResponse:
        """Lift ``node``'s cordon (a drain's pending stop with it); a node not cordoned: ``changed`` false.

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a bad node name.
            NotFoundError: neither cordoned nor in the inventory (the nearest names said).
        """
        self.ctx.admission.require_admin(caller, "uncordoning a node", field="node")
        self._check_node(node, known=False)
        now = self.ctx.clock.now()
        was = self.ctx.store.node_cordons().get(node)
        if was is None:
            self._check_node(node, known=True)  # a typo is said as such, not "was not cordoned"
            return self._answer(node, None, None, self._work(node, None, now), now, dry_run=request.dry_run,
                                changed=False)
        if not request.dry_run:
            with self.ctx.store.transaction() as tx:
                was = tx.remove_cordon(node)
                if was is not None:
                    tx.add_event(actor=caller.user, action=NODE_UNCORDONED_ACTION, job_id=None, user=None,
                                 message=f"node {node} uncordoned: new work may be placed on it (it was cordoned: "
                                         f"{was.reason}, by {was.by} at {clock_text(was.at, None)})",
                                 details={"node": node, "previous": cordon_to_dict(was)})
            self.book.invalidate()
            self.ctx.kick("node_uncordoned")
        return self._answer(node, None, was, self._work(node, None, now), now, dry_run=request.dry_run,
                            changed=was is not None)

    # ---- helpers ------------------------------------------------------------------------------
    def _check_node(self, node: str, *, known: bool) -> None:
        """A node name as a path part may carry it; ``known``: the inventory lists it."""
        if not node.strip():
            raise ValidationError("node is empty", field="node", hint="name a node: jupyter-sched nodes list lists them")
        visible_text(node, "node", limit=_MAX_NODE_CHARS)
        if not known:
            return
        try:
            names = [n.name for n in self.ctx.inventory().nodes]
        except SchedError:
            return  # the inventory cannot be read now: the node may be one of it (the cordon waits for it)
        if node not in names:
            near = difflib.get_close_matches(node, names, n=1, cutoff=0.5)
            listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            raise NotFoundError(f"no node {node[:80]!r} in the inventory" + (f" — did you mean {near[0]}?" if near else ""),
                                field="node", hint=f"nodes here: {listed or 'none'} (jupyter-sched nodes list lists them)")

    def _work(self, node: str, cordon: Cordon | None, now: datetime) -> list[NodeWork]:
        """The jobs and leases holding GPUs on ``node`` and what ``cordon`` does to each."""
        grace = (self.ctx.engine.profile or SchedulingProfile()).grace_s  # what a drain's stop is given
        out: list[NodeWork] = []
        for record in self.ctx.store.list_jobs(states=_HOLDING):
            job = record.job
            alloc = job.allocation
            if alloc is None:
                continue
            gpus = sum(len(uuids) for where, uuids in alloc.per_worker() if where == node)
            if not gpus and all(where != node for where, _ in alloc.per_worker()):
                continue
            out.append(NodeWork(id=job.id, kind="lease" if job.is_lease else "job", user=job.spec.user,
                                state=job.state.value, gpus=gpus * alloc.gpu_milli / GPU_MILLI,
                                fate=_fate(job, cordon, now, grace)))
        return out

    def _answer(self, node: str, cordon: Cordon | None, was: Cordon | None, work: list[NodeWork], now: datetime, *,
                dry_run: bool, changed: bool) -> CordonNodeResponse:
        if cordon is not None:
            verb = "would be" if dry_run else "is"
            said = cordon_sentence(node, cordon, now=now).replace(" is cordoned", f" {verb} cordoned", 1)
            text = f"{said}: no new work is placed on it"
        elif not changed:
            text = f"node {node} was not cordoned: nothing changed"
        else:
            text = f"node {node} {'would be' if dry_run else 'is'} uncordoned: new work may be placed on it again"
        if work:
            text += f"; {len(work)} running there ({', '.join(w.id for w in work[:5])}{', …' if len(work) > 5 else ''})"
        return CordonNodeResponse(node=node, cordoned=cordon is not None, cordon=_view(node, cordon, now),
                                  previous=_view(node, was, now), dry_run=dry_run, changed=changed, work=work,
                                  text=text + ".")


def _view(node: str, cordon: Cordon | None, now: datetime) -> NodeCordon | None:
    if cordon is None:
        return None
    wire = cordon_to_dict(cordon) or {}
    return NodeCordon(reason=cordon.reason, by=cordon.by, at=str(wire["at"]), evict_at=wire["evict_at"],
                      text=cordon_sentence(node, cordon, now=now))


def _fate(job: Job, cordon: Cordon | None, now: datetime, grace_s: float) -> str:
    """What ``cordon`` does to ``job`` (running on the node), one clause."""
    limit = job.spec.time_limit_s
    end = (job.started_at or job.admitted_at or now) + timedelta(seconds=limit) if limit and not job.is_lease else None
    own = (f"runs on to its end (time limit {format_duration(limit)}, until {clock_text(end, now)})" if end is not None
           else "runs on until it is released" if job.is_lease else "runs on to its end (it has no time limit)")
    if cordon is None or cordon.evict_at is None or (end is not None and end <= cordon.evict_at):
        return own
    signal = ", checkpoint signal first" if job.spec.checkpointable else ""
    after = "then it ends (a lease)" if job.is_lease else "then requeued"
    return f"stopped at {clock_text(cordon.evict_at, now)} (grace {format_duration(grace_s)}{signal}), {after}"
