"""Pending jobs that already run: a store restored from a backup is older than the host (hubadmin23 A13).

After ``pg_restore`` of a dump (or a copied-back SQLite file) a job admitted after the dump is
``pending`` again in the store while its first copy still runs. Left alone, the scheduler admits it
a second time and starts a second copy beside the first (same id, job directory and token), and
the first copy's GPUs are not accounted. Right after this engine becomes leader, before anything is
decided, :func:`adopt_running_pending` asks the executor (its optional ``live_copy(job)``) whether
each pending job's work is alive; such a job is written as ``running`` on the allocation its copy
was launched with, with the copy's handle, and the executor watches it from then on; one WARNING
and one ``adopted`` audit record naming it. A copy whose allocation is unknown is not adopted here, and
the executor never starts a second copy of it (local: the start is refused naming the live wrapper;
Kubernetes: the existing Job is reused).

A store that does not have a job at all (submitted after the backup that was restored, or a new empty store:
hubadmin24 B2, B7) is the same kind: :func:`adopt_unknown_live` asks the executor (its optional
``live_unknown(known)``) for every wrapper that runs here for a job id the store lacks, and inserts each as
a ``running`` job on the GPUs it was launched with (the spec its launch record keeps: owner, team, GPUs,
limit, command), so its GPUs are never handed to another job, it is listed, charged and its limit kept, and
``cancel`` reaches it. An owner the hub no longer lists is said in its WARNING (its GPUs stay taken until it
ends). Each: one WARNING naming id, owner, pid and GPUs, one ``adopted`` audit record, one job event.

A wrapper that no launch record names at all (``<log_dir>/.state`` lost or older than the host: hubadmin26
B22) is adopted the same way on the GPUs its environment names (``CUDA_VISIBLE_DEVICES``; the executor
vouches for the wrapper: its job directory is one this service made), their node found in the inventory;
its WARNING and audit record name the pid, the job id and the account and say to restore ``.state`` or
stop it. One that names no GPU of the inventory is said (``unknown_work``) and not adopted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timezone

from ..errors import NotFoundError, StoreError
from ..executors.base import Executor, ExecutorHandle
from ..model import Allocation, Inventory, Job, JobState
from ..model.codec import allocation_to_dict
from ..store import JobRecord, Store
from .clock import Clock
from .transitions import JobWriter

__all__ = ["adopt_running_pending", "adopt_unknown_live"]

log = logging.getLogger(__name__)

LiveCopy = Callable[[Job], "tuple[ExecutorHandle, Allocation | None] | None"]


def adopt_running_pending(store: Store, executor: Executor, writer: JobWriter, clock: Clock) -> list[str]:
    """Write every pending job whose work still runs as ``running`` (module docstring).

    Returns:
        The ids adopted (empty when the executor cannot tell, e.g. the simulator).

    Raises:
        StoreError: the store failed (an executor that cannot answer is logged and skipped).
    """
    live_copy: LiveCopy | None = getattr(executor, "live_copy", None)
    if live_copy is None:
        return []
    adopted: list[str] = []
    for record in store.list_jobs(states=(JobState.PENDING,)):
        job = record.job
        if job.is_lease:
            continue
        try:
            found = live_copy(job)
        except Exception as exc:  # the executor cannot tell now (an API server down); its start never makes a 2nd copy
            log.warning("job %s: could not check whether its work already runs (%s)", job.id, exc)
            continue
        if found is None:
            continue
        handle, allocation = found
        if allocation is None:
            log.warning("job %s is pending in the store but its work still runs (%s); its GPUs are not recorded, "
                        "so it is not adopted and will not be started again", job.id, _where(handle))
            continue
        written = _write(store, clock, job.id, handle, allocation)
        if written is not None:
            adopted.append(job.id)
            writer.announce(written)  # the panel and `jobs --watch` see it now, not at their next read
            # watched from now on (one audit record, this one); work that ended meanwhile is settled by the
            # regular adoption of the running job (recovery.AdoptReconciler)
            executor.adopt(written, handle)
            log.warning("job %s of %s was pending in the store but runs on this host (%s, GPUs %s): adopted as "
                        "running — the store is older than the host (restored from a backup?)", job.id,
                        job.spec.user, _where(handle), ", ".join(allocation.all_gpu_uuids()) or "none")
            writer.audit_id(job.id, "adopted",
                            f"job {job.id} was pending in the store but still runs ({_where(handle)}): adopted as "
                            "running (the store is older than the host)",
                            {"handle": handle.to_dict(), "allocation": allocation_to_dict(allocation),
                             "restored": True})
    return adopted


def adopt_unknown_live(store: Store, executor: Executor, writer: JobWriter, clock: Clock, *,
                       held_users: Callable[[], Mapping[str, str]] | None = None,
                       inventory: Callable[[], Inventory] | None = None) -> list[str]:
    """Insert every job whose work runs on this host but which the store lacks as ``running`` (module docstring).

    Args:
        held_users: ``{user: why}`` of owners whose pending work is held (hub mode: no longer a hub
            user); such an owner's adopted job is said so in its WARNING and audit record.
        inventory: the current inventory, to find the node of GPUs a wrapper with no launch record
            uses (None: such a wrapper is said, not adopted).

    Returns:
        The ids adopted (empty when the executor cannot tell, e.g. the simulator or Kubernetes).

    Raises:
        StoreError: the store failed (an executor that cannot answer is logged and skipped).
    """
    scan: Callable[[Callable[[str], bool]], list[tuple[Job, ExecutorHandle, Allocation | None]]] | None = \
        getattr(executor, "live_unknown", None)
    if scan is None:
        return []

    def known(job_id: str) -> bool:
        try:
            store.get_job(job_id)
        except NotFoundError:
            return False
        return True

    try:
        found = scan(known)
    except StoreError:
        raise
    except Exception as exc:  # the executor cannot tell now: its start still never makes a second copy
        log.warning("could not look for work that runs on this host but is not in the store (%s)", exc)
        return []
    held = dict(held_users()) if held_users is not None else {}
    adopted: list[str] = []
    for job, handle, allocation in found:
        user = job.spec.user or "an unknown owner"
        unrecorded = bool(handle.data.get("no_launch_record"))
        if unrecorded:
            allocation = _on_node(allocation, inventory)
            if allocation is None:
                text = (f"a job wrapper of this service (pid {handle.data.get('pid')}, {job.id}, account {user}) runs "
                        f"with no record in the store or in <log_dir>/.state, and its environment names no GPU of the "
                        f"inventory: it is not adopted and its GPUs, if any, may be given to other work — stop it "
                        f"(kill {handle.data.get('pid')}) or restore <log_dir>/.state")
                log.warning("%s", text)
                store.add_event(actor="scheduler", action="unknown_work", job_id=job.id, user=job.spec.user or None,
                                message=text, details={"handle": handle.to_dict(), "no_launch_record": True})
                continue
            job = replace(job, spec=replace(job.spec, resources=replace(
                job.spec.resources, gpus=len(allocation.gpu_uuids), gpu_milli=allocation.gpu_milli)))
        if allocation is None:
            text = (f"job {job.id} of {user} runs on this host ({_where(handle)}) but is not in this store, and its "
                    f"launch record does not say its GPUs: it is not adopted and the scheduler may hand its GPUs to "
                    f"other jobs — stop it (kill {handle.data.get('pid')}) or let it end")
            log.warning("%s", text)
            store.add_event(actor="scheduler", action="unknown_work", job_id=job.id, user=job.spec.user or None,
                            message=text, details={"handle": handle.to_dict()})
            continue
        written = _insert(store, clock, job, handle, allocation)
        if written is None:
            continue
        adopted.append(job.id)
        executor.adopt(written, handle)  # watched from now on: its exit, time limit and cancel
        writer.announce(written)
        gpus = ", ".join(allocation.all_gpu_uuids()) or "none"
        owner = held.get(job.spec.user)
        said = (f"job {job.id} of {user} ({job.spec.name!r}, team {job.spec.team}) runs on this host ({_where(handle)}, "
                f"GPUs {gpus}) but was not in this store (submitted after the backup that was restored, or the "
                f"store is new): adopted as running, so its GPUs stay taken until it ends and `jupyter-sched cancel "
                f"{job.id}` reaches it")
        if unrecorded:
            said = (f"a job wrapper of this service (pid {handle.data.get('pid')}, {job.id}, account {user}) runs with "
                    f"no record in the store or in <log_dir>/.state (a restore without .state?): adopted as running "
                    f"on the GPUs its environment names ({gpus}, node {allocation.node}), so they are not given to "
                    f"other work until it ends — cancel it (jupyter-sched cancel {job.id}) if it should not run, and "
                    f"keep <log_dir>/.state with the store's backups")
        if owner:
            said += f"; its owner: {owner} — cancel it if it should not run"
        log.warning("%s", said)
        writer.audit(written, "adopted", said, {"handle": handle.to_dict(), "allocation": allocation_to_dict(allocation),
                                                "restored": True, "not_in_store": True, "owner_held": owner,
                                                "no_launch_record": unrecorded})
    if found:
        log.warning("%d job(s) ran on this host that this store did not have (restored from a backup, or a new "
                    "store?): %d adopted. Work that was pending in the old store and not in this one is not carried: "
                    "its owners must submit it again", len(found), len(adopted))
    return adopted


def _on_node(allocation: Allocation | None, inventory: Callable[[], Inventory] | None) -> Allocation | None:
    """``allocation`` (GPUs with no node, from a wrapper's environment) on the inventory node of its first GPU,
    keeping that node's GPUs only; None when no GPU of it is in the inventory (or no inventory is given)."""
    if allocation is None or inventory is None:
        return None
    try:
        current = inventory()
    except Exception as exc:  # an inventory that cannot be read now: said, not adopted
        log.warning("could not read the inventory to place a wrapper with no launch record (%s)", exc)
        return None
    node_of = {uuid: node.name for node in current.nodes for gpu in node.gpus
               for uuid in (gpu.uuid, *(mig.uuid for mig in gpu.mig_devices))}
    nodes = [node_of[uuid] for uuid in allocation.gpu_uuids if uuid in node_of]
    if not nodes:
        return None
    return replace(allocation, node=nodes[0],
                   gpu_uuids=tuple(uuid for uuid in allocation.gpu_uuids if node_of.get(uuid) == nodes[0]))


def _where(handle: ExecutorHandle) -> str:
    pid, name = handle.data.get("pid"), handle.data.get("name")
    return f"wrapper pid {pid}" if pid is not None else f"{handle.executor} object {name}"


def _started(handle: ExecutorHandle, now: datetime) -> datetime:
    """When the copy started: its wrapper's create time (else ``now``)."""
    created = handle.data.get("create_time")
    return datetime.fromtimestamp(created, tz=timezone.utc) \
        if isinstance(created, (int, float)) and not isinstance(created, bool) and created > 0 else now


def _insert(store: Store, clock: Clock, job: Job, handle: ExecutorHandle, allocation: Allocation) -> Job | None:
    now = clock.now()
    started = min(_started(handle, now), now)
    message = "running (adopted: it runs on this host but was not in this store — restored from a backup?)"
    with store.transaction(now=now) as tx:
        try:
            tx.get_job(job.id)
            return None  # written meanwhile
        except NotFoundError:
            pass
        running = replace(job, submitted_at=job.submitted_at or started).transition(
            JobState.ADMITTED, allocation=allocation, admitted_at=started, reason=None, nominated=None,
            attempts=max(job.attempts, 1), not_before=None, message=message).transition(
            JobState.RUNNING, started_at=started, message=message)
        stored = tx.insert_job(JobRecord(job=running, executor=handle.executor, handle=handle.to_dict()))
        tx.open_usage(job_id=running.id, attempt=running.attempts, user=running.spec.user, team=running.spec.team,
                      kind=running.spec.kind.value, started_at=started,
                      gpus=[(g, "unknown", allocation.gpu_milli / 1000) for g in allocation.all_gpu_uuids()])
    return stored.job


def _write(store: Store, clock: Clock, job_id: str, handle: ExecutorHandle, allocation: Allocation) -> Job | None:
    now = clock.now()
    started = _started(handle, now)
    with store.transaction(now=now) as tx:
        try:
            current = tx.get_job(job_id)
        except NotFoundError:
            return None
        if current.job.state is not JobState.PENDING:
            return None
        message = "running (adopted: it was pending in a store older than this host)"
        job = current.job.transition(JobState.ADMITTED, allocation=allocation, admitted_at=started, reason=None,
                                     nominated=None, attempts=current.job.attempts + 1, not_before=None,
                                     message=message).transition(JobState.RUNNING, started_at=started,
                                                                 message=message)
        stored = tx.try_update_job(replace(current, job=job, handle=handle.to_dict(), executor=handle.executor))
        if stored is None:
            return None
        tx.open_usage(job_id=job.id, attempt=job.attempts, user=job.spec.user, team=job.spec.team,
                      kind=job.spec.kind.value, started_at=started,
                      gpus=[(g, "unknown", allocation.gpu_milli / 1000) for g in allocation.all_gpu_uuids()])
    return stored.job
