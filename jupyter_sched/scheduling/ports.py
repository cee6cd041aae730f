"""An inference job's declared port as a node resource (Kubernetes ``hostPort`` semantics).

Red team 15, R11 / new user 15, N11: red15b's 0-GPU ``b-squat`` ran ``http.server 18765`` on node
``vm``; red15a's ``a-serve`` declared the same port, was admitted on the same node, crash-looped on
``Address already in use`` and was charged for its GPU, said only "restarted (restart 5)". A port
declared by a running (or admitted) inference job is held on its node: another job declaring it is
placed on a node where it is free (the placement masks the others: :func:`masked`), or pends with
``PortInUse`` naming the port and the job holding it (:func:`gate`) until that job ends — as the
kube-scheduler's ``NodePorts`` filter does for a pod's ``hostPort``.

Red team 16, R8: holding a port must not be a free reservation of well-known ports by jobs that
never listen. Smallest design: only inference jobs hold one (:func:`declares_port`); the local
executor stops a service that has not listened on its port within ``listen_s`` (10 min) of its
start and fails it saying so (its port then blocks nobody); and one user's services hold at most
``profile.max_ports_per_user`` ports (``c.SchedApp.max_ports_per_user``, default 4): more pend
``PortLimit`` naming the setting.

Red team 17, R3: a port bound by a process *outside* the scheduler (a notebook terminal's
``http.server``) was seen by nobody: the job was admitted, charged, and failed "port in use". The
edge binds each pending job's declared port before the cycle (``Snapshot.ports_bound_outside``);
such a job pends ``PortInUse`` saying the port is bound by a process outside the scheduler, and
is looked at again each cycle. Who holds it is not said to the job's owner at first (another account's
process): the service log names it for admins; once the port stayed bound for a while the edge names the
holder's account (``Snapshot.port_holders``) and the reason says it to the owner (red31 R6).

Pure: reads the snapshot's jobs, its ports bound outside and the cycle's admissions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..model import Job, JobKind, PendingReason
from ..placement.state import Holding

if TYPE_CHECKING:
    from .context import CycleContext

__all__ = ["PORT_IN_USE", "PORT_LIMIT", "declares_port", "gate", "held_ports", "hold", "masked"]

PORT_IN_USE = "PortInUse"
"""Code of a job whose declared port is held on every node it could use."""
PORT_LIMIT = "PortLimit"
"""Code of a job whose user's services already hold :attr:`~.profile.SchedulingProfile.max_ports_per_user` ports."""
PORT_SETTING = "c.SchedApp.max_ports_per_user"

_MASK = "\0port:"


def _declares(job: Job) -> int | None:
    spec = job.spec
    return spec.port if spec.kind is JobKind.INFERENCE and spec.port else None


def declares_port(job: Job) -> bool:
    """Whether ``job`` is an inference job that declares a port (the cycle then gates it)."""
    return job.spec.port is not None and job.spec.kind is JobKind.INFERENCE


def held_ports(jobs: Iterable[Job]) -> dict[int, dict[str, str]]:
    """Port -> node name -> the job id holding it, from the jobs holding an allocation."""
    out: dict[int, dict[str, str]] = {}
    for job in jobs:
        port = _declares(job)
        if port is not None and job.state.holds_gpus and job.allocation is not None:
            out.setdefault(port, {}).setdefault(job.allocation.node, job.id)
    return out


def hold(ctx: CycleContext, job: Job, node: str) -> None:
    """Record that ``job``, admitted this cycle on ``node``, holds its port there."""
    port = _declares(job)
    if port is not None:
        ctx.ports.setdefault(port, {}).setdefault(node, job.id)


def _held_for(ctx: CycleContext, job: Job) -> dict[str, str]:
    port = _declares(job)
    if port is None or not ctx.ports:
        return {}
    return {node: holder for node, holder in ctx.ports.get(port, {}).items() if holder != job.id}


def gate(ctx: CycleContext, job: Job) -> PendingReason | None:
    """``PortInUse`` when ``job``'s port is held on every schedulable node — on any, for a 0-GPU job
    (None: it may be placed where the port is free)."""
    cap = ctx.profile.max_ports_per_user
    if cap and _declares(job) is not None:
        mine = sorted((port, node) for port, nodes in ctx.ports.items() for node, holder in nodes.items()
                      if holder != job.id and (h := ctx.by_id.get(holder)) is not None and h.spec.user == job.spec.user)
        if len(mine) >= cap:
            said = ", ".join(str(port) for port, _ in mine[:8]) + (" …" if len(mine) > 8 else "")
            return PendingReason(
                code=PORT_LIMIT, details={"held": len(mine), "limit": cap, "setting": PORT_SETTING},
                message=f"{job.spec.user}'s services hold {len(mine)} declared ports ({said}); at most {cap} per "
                        f"user ({PORT_SETTING})",
                unblock="cancel one of your services, or submit without a port", eta_reason="it starts when one "
                        "of them ends")
    held = _held_for(ctx, job)
    if not held:
        return _bound_outside(ctx, job)
    nodes = [n.name for n in ctx.snap.inventory.nodes if n.schedulable]
    if job.spec.resources.total_milli and any(name not in held for name in nodes):
        return _bound_outside(ctx, job)  # else placed on a node where it is free (:func:`masked`); a 0-GPU job takes no GPU a
        # mask could steer, so it waits for the port wherever it is held
    port = job.spec.port
    holder_id = held[nodes[0]] if nodes else next(iter(held.values()))
    holder = ctx.by_id.get(holder_id)
    # another user's job as every reason names it — quoted, with its owner (new user 17, N9: this line said
    # `nu17a's job a-secret-svc (j-…)` and its ETA clause `nu17a's job "a-secret-svc" (j-…)`)
    if holder is None:
        by = f"the job {holder_id}"
    elif holder.spec.user == job.spec.user:
        by = f"your job {ctx.named(holder_id)}"
    else:
        by = ctx.named(holder_id, reader=job.spec.user)
    where = ", ".join(sorted(held))
    return PendingReason(
        code=PORT_IN_USE,
        message=f"port {port} is held on {where} by {by}; a node runs one job per declared port",
        details={"port": port, "held_by": dict(sorted(held.items())), "holder": holder_id,
                 "holder_user": holder.spec.user if holder is not None else None},
        unblock="resubmit with another port to start sooner",
        eta_reason=f"it starts when {holder_id} ends")


def _bound_outside(ctx: CycleContext, job: Job) -> PendingReason | None:
    """``PortInUse`` when ``job``'s port is bound on the jobs' host by a process outside the
    scheduler (red team 17, R3; module docstring), else None."""
    port = _declares(job)
    if port is None or port not in ctx.snap.ports_bound_outside:
        return None
    account = ctx.snap.port_holders.get(port)
    if account:  # bound for a while (red31 R6): its owner may ask that account, or an admin
        return PendingReason(
            code=PORT_IN_USE,
            message=f"port {port} has been bound on this host for a while by a process of {account}, outside the "
                    "scheduler; it starts once the port is free",
            details={"port": port, "outside": True, "holder_account": account},
            unblock=f"ask {account} to free port {port}, or an admin; or resubmit with another port",
            eta_reason="it starts when the process outside the scheduler frees the port")
    return PendingReason(
        code=PORT_IN_USE,
        message=f"port {port} is bound on this host by a process outside the scheduler (not a job of it); "
                "it starts once the port is free",
        details={"port": port, "outside": True},
        unblock="resubmit with another port to start sooner, or stop what listens on it if it is yours",
        eta_reason="it starts when the process outside the scheduler frees the port")


@contextmanager
def masked(ctx: CycleContext, job: Job) -> Iterator[frozenset[str]]:
    """Inside: the free GPUs of the nodes holding ``job``'s port taken by a mask, so the placer
    picks another node; yields those nodes' names (empty: nothing masked)."""
    held = _held_for(ctx, job)
    if not held:
        yield frozenset()
        return
    state = ctx.state
    with state.what_if():
        for name in held:
            n_id = state.node_index.get(name)
            if n_id is None:
                continue
            gpus = tuple((g, state.free_milli[g]) for g in state.node_gpus[n_id] if state.free_milli[g] > 0)
            if gpus:
                state.take(f"{_MASK}{name}", Holding(gpus=gpus, node=n_id))
        yield frozenset(held)
