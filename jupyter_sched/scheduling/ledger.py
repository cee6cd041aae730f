"""The per-cycle ledger: capacity and quota usage together, with ``what_if`` trials (STYLE §2).

Built once from the frozen :class:`~.snapshot.Snapshot`: every job holding GPUs (admitted or
running) is taken on the capacity ledger and charged to its quota lines (GPUs nominated for
pending jobs are masked by :class:`~.nominations.NominationBook`). The cycle then assumes
admissions and tries evictions on it; ``with ledger.what_if() as trial:`` undoes both halves
unless ``trial.keep()`` is called — Kueue's ``SimulateWorkloadRemoval`` with a restore function.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from ..model import ANY_MODEL, Allocation, Job
from ..placement.state import ClusterState, Holding, Trial
from ..quota.ledger import QuotaLedger
from .snapshot import Snapshot

__all__ = ["CycleLedger", "NOMINATION_PREFIX", "Holder", "gone_model"]

NOMINATION_PREFIX = "\0nominated:"
"""Ledger holder key prefix for GPUs held for a preemptor."""


@dataclass(frozen=True, slots=True)
class Holder:
    """A job holding capacity at cycle start (a preemption candidate)."""

    job: Job
    model: str
    milli: int


def gone_model(job: Job) -> str:
    """The GPU model a job whose GPUs the inventory no longer lists is charged on: the one model it
    asked for, else ``"*"`` (the inventory that named its GPUs' model is gone; a ``"*"`` line counts
    it, a per-model line only when the request named that model alone)."""
    models = job.spec.resources.gpu_models
    return models[0] if len(models) == 1 else ANY_MODEL


class CycleLedger:
    """Capacity (:class:`ClusterState`) and quota (:class:`QuotaLedger`) for one cycle."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.state = ClusterState(snapshot.inventory)
        capacity: dict[str, int] = {}
        for model in self.state.gpu_model:
            capacity[model] = capacity.get(model, 0) + 1
        self.quota = QuotaLedger(snapshot.quotas, capacity)
        self.holders: dict[str, Holder] = {}
        for job in snapshot.jobs:
            if job.state.holds_gpus and job.allocation is not None:
                self.load_holder(job)

    def holding_of(self, allocation: Allocation, job: Job) -> Holding | None:
        """The ledger holding for ``allocation`` (None when its node is unknown)."""
        st = self.state
        gpus: list[tuple[int, int]] = []
        migs: list[str] = []
        extra: list[tuple[int, int, int]] = []
        first: int | None = None
        req = job.spec.resources
        workers = req.worker_requests() if req.groups else ()
        first_req = workers[0] if workers else req
        for i, (node_name, uuids) in enumerate(allocation.per_worker()):
            node = st.node_index.get(node_name)
            if node is None:
                continue
            if first is None:
                first = node
            else:
                w = workers[i] if i < len(workers) else req
                extra.append((node, w.cpu_millis, w.memory_mib))
            for uuid in uuids:
                if uuid in st.mig_uuid:
                    migs.append(uuid)
                    continue
                g = st.uuid_to_gpu.get(uuid)
                if g is not None:
                    gpus.append((g, allocation.gpu_milli))
        if first is None:
            return None
        return Holding(gpus=tuple(gpus), node=first, cpu_millis=first_req.cpu_millis, memory_mib=first_req.memory_mib,
                       extra=tuple(extra), migs=tuple(migs))

    def load_holder(self, job: Job) -> None:
        """Take and charge a job that already holds GPUs (the snapshot is the truth).

        Work whose GPUs (or node) the inventory no longer lists (hubadmin 22, H3: it runs on) takes
        no capacity — those GPUs are handed to nobody — but its GPUs are charged to its team's quota
        all the same, as ``status`` and ``queue --summary`` count them (hubadmin24 B3: a team of limit
        2 ran 3 GPUs, its pending reasons said "2 in use"). It is no preemption candidate (evicting it
        frees nothing placement can use)."""
        assert job.allocation is not None
        holding = self.holding_of(job.allocation, job)
        milli = job.spec.resources.total_milli
        if holding is None:
            self.quota.charge(job.id, job.spec.team, job.spec.user, gone_model(job), milli)
            return
        self.state.force_take(job.id, holding)
        st = self.state
        if holding.gpus:
            model = st.gpu_model[holding.gpus[0][0]]
        elif holding.migs:
            model = st.gpu_model[st.mig_uuid[holding.migs[0]][0]]
        else:
            model = gone_model(job)
        self.quota.charge(job.id, job.spec.team, job.spec.user, model, milli)
        self.holders[job.id] = Holder(job=job, model=model, milli=milli)

    def evict(self, job_id: str) -> None:
        """Release a holder's capacity and quota (inside a trial, or for real)."""
        self.state.release(job_id)
        self.quota.uncharge(job_id)

    @contextmanager
    def what_if(self) -> Iterator[Trial]:
        """Trial over capacity and quota together; ``trial.keep()`` keeps both."""
        trial = Trial()
        with ExitStack() as stack:
            t1 = stack.enter_context(self.state.what_if())
            t2 = stack.enter_context(self.quota.what_if())
            try:
                yield trial
            finally:
                if trial.kept:
                    t1.keep()
                    t2.keep()

