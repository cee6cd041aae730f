"""``SystemService``: the inventory (``GET inventory``) and the engine's status.

What the backend supports (``GET config``) depends on the server's configuration and is answered
by the extension (``SchedApp.capabilities``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..admission import Caller
from ..engine.telemetry import TelemetryMonitor
from ..model import Inventory, Job, JobState
from ..model.codec import inventory_to_dict
from ..model.off_inventory import allocated_gpus, off_inventory, off_inventory_warning, unhealthy_under_work
from ..wording.cordons import cordon_sentence
from .context import Context
from .models import EngineStatus, GetInventoryResponse
from .visibility import WITHHELD_NOTE

__all__ = ["SystemService"]


class SystemService:
    """Inventory and status (see module docstring)."""

    def __init__(self, ctx: Context, monitor: TelemetryMonitor | None = None, *,
                 unpriced: Callable[[Inventory], list[str]] | None = None) -> None:
        self.ctx = ctx
        self.monitor = monitor
        self.unpriced = unpriced
        """Admins' warnings of GPU models with no price in force (:class:`~.unpriced.UnpricedModels`; hubadmin26 B21)."""
        self._held: tuple[int, list[Job], dict[str, list[dict[str, Any]]]] | None = None
        """The jobs holding GPUs and who holds each GPU, at the store's ``jobs`` counter (see :meth:`inventory`)."""
        self._answers: dict[bool, tuple[tuple[Any, ...], GetInventoryResponse]] = {}
        self._views: dict[str, tuple[GetInventoryResponse, GetInventoryResponse]] = {}
        """Per non-admin user: (the answer :meth:`inventory` gave, as :meth:`for_caller` shows it)."""
        """The last ``GET inventory`` answer per view (admin or not) with what it was computed from."""

    def inventory(self, caller: Caller | None = None) -> GetInventoryResponse:
        """Nodes and GPUs (simulated ones labelled), NVML status (case 015), and per GPU uuid who
        holds it: ``[{job_id, user, kind, gpu_milli}]``. With telemetry, ``telemetry`` says per GPU
        what its readings show (state phrase, validity, health with time and hint) and per node
        physical / schedulable counts and warnings (:func:`jupyter_sched.telemetry.report.inventory_telemetry`;
        cases 018, 022, 025, 026). Processes the scheduler did not start are named (pid, user,
        age) to admins only; ``caller`` None is the server's own reading."""
        from ..reclaim import gpu_occupancy
        from ..telemetry.report import inventory_telemetry

        inv = self.ctx.inventory()
        version, live, allocations = self._holders()
        admin = caller is None or caller.admin
        # Kept while every input is equal (issue 17: status polls built, validated and serialised
        # the same answer ~100 times a second): the inventory (a frozen value; compared by
        # identity first), the store's jobs counter, the telemetry readings, foreign processes
        # and warnings. The answer is a pure function of these and the view (admin or not), so a
        # kept one is the one it would build; returning the same object also reuses its JSON
        # and ETag (extension ``web._written``).
        inputs = self._inputs(inv, version, admin)
        kept = self._answers.get(admin)
        if kept is not None and version >= 0 and self._same(kept[0], inputs):
            self._answers[admin] = (inputs, kept[1])
            return kept[1] if caller is None else self.for_caller(caller.user, caller.admin, kept[1])
        _, _, latest, foreign, warnings, source_warnings = inputs
        body: dict[str, Any] = inventory_to_dict(inv)
        for node, shown in zip(inv.nodes, body["nodes"], strict=True):
            if node.cordon is not None:  # the sentence every surface says it with (hubadmin24)
                shown["cordon"]["text"] = cordon_sentence(node.name, node.cordon, now=self.ctx.clock.now())
        body["allocations"] = allocations
        body["warnings"] = list(source_warnings)
        if admin and (gone := off_inventory(inv, live)):  # work on GPUs the inventory lost (hub admin 22, H3)
            body["warnings"].append(off_inventory_warning(gone, allocated=allocated_gpus(live),
                                                          in_inventory=inv.gpu_count()))
        if admin:  # GPUs marked unhealthy under running work, with the work (hubadmin24 B14)
            body["warnings"].extend(unhealthy_under_work(inv, live))
        if self.monitor is not None:
            body["telemetry"] = inventory_telemetry(inv, latest, gpu_occupancy(inv, live),
                                                    foreign=foreign, processes_for=lambda uuid: admin,
                                                    warnings=warnings)
        answer = GetInventoryResponse.model_validate(body)
        self._answers[admin] = (inputs, answer)  # one assignment: request threads may race, each right
        return answer if caller is None else self.for_caller(caller.user, caller.admin, answer)

    def for_caller(self, user: str, admin: bool, answer: GetInventoryResponse) -> GetInventoryResponse:
        """``answer`` as ``user`` (an admin: ``admin``) may see it: the newest reading of a GPU that only other users'
        work holds now is withheld (utilization :data:`~.visibility.WITHHELD_NOTE`, telemetry
        ``unknown``), as ``GET telemetry`` withholds it (:class:`~.visibility.GpuReaders`; new user
        17, N4). The same object while nothing is withheld; kept per user while ``answer`` is."""
        if admin or answer.telemetry is None:
            return answer
        kept = self._views.get(user)
        if kept is not None and kept[0] is answer:
            return kept[1]
        gpus = answer.telemetry.gpus
        hidden = {uuid for uuid, holders in answer.allocations.items()
                  if uuid in gpus and holders and all(h.user != user for h in holders)}
        view = answer
        if hidden:
            withheld = {uuid: g.model_copy(update={"telemetry": "unknown", "utilization": WITHHELD_NOTE, "validity": None})
                        if uuid in hidden else g for uuid, g in gpus.items()}
            view = answer.model_copy(update={"telemetry": answer.telemetry.model_copy(update={"gpus": withheld})})
        self._views[user] = (answer, view)  # one assignment: request threads may race, each right
        return view

    def kept_inventory(self, admin: bool, user: str | None = None, *,
                       asked_at: float | None = None) -> GetInventoryResponse | None:
        """The answer :meth:`inventory` last gave the view ``admin`` (an admin's or anyone else's)
        if it is still the one it would give now — checked without a transaction and without
        reading the inventory source, so the server answers on its event loop (issue 17: every
        ``jupyter-sched status`` sent ``GET inventory`` to a request thread for a transaction,
        which under fifty pollers waited for the GIL at each hop). Exact, because the answer is a
        pure function of its inputs (:meth:`inventory`), each read here as :meth:`inventory`
        reads it: the inventory the source keeps (``peek``: None while a refresh is due or under
        way), the store's ``jobs`` counter read now (``Store.jobs_version_now``: every committed
        write of a job row, by any process sharing the store, moves it), the telemetry readings,
        foreign processes and label warnings. ``asked_at``: when the request arrived
        (``time.monotonic()``; :meth:`Store.counters_now`). None: call :meth:`inventory`."""
        kept = self._answers.get(admin)
        peek = getattr(self.ctx.inventory_source, "peek", None)
        if kept is None or peek is None:
            return None
        inv, version = peek(), self.ctx.store.jobs_version_now(asked_at=asked_at)
        if inv is None or version is None or version < 0:
            return None
        inputs = self._inputs(inv, version, admin)
        if not self._same(kept[0], inputs):
            return None
        self._answers[admin] = (inputs, kept[1])  # at the counter now: the next look spans less
        return kept[1] if user is None else self.for_caller(user, admin, kept[1])

    def _same(self, kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
        """Whether an answer computed from the inputs ``kept`` is the one the inputs ``now`` give:
        equal inputs, but for the ``jobs`` counter, which may have moved by writes that touched no
        GPU holder (``Store.holders_unchanged``: submits and pending reasons move it many times a
        second under load, and the holders are all this answer reads of the jobs)."""
        return (kept[0] is now[0] or kept[0] == now[0]) and kept[2:] == now[2:] and \
            self.ctx.store.holders_unchanged(kept[1], now[1])

    def _inputs(self, inv: Any, version: int, admin: bool) -> tuple[Any, ...]:
        """What a ``GET inventory`` answer of the view ``admin`` is computed from, besides the
        holders the ``jobs`` counter ``version`` stands for: ``(inventory, version, telemetry
        readings, foreign processes, label warnings, source warnings)``; the last: admins', the
        inventory source's failed re-read in force (a bad ``inventory_file`` edit; hub admin 22, H12) and the GPU
        models with no price in force (hubadmin26 B21)."""
        from ..telemetry.report import foreign_processes_of

        said = getattr(self.ctx.inventory_source, "warnings", None)
        source_warnings = tuple(said()) if admin and callable(said) else ()
        if admin and self.unpriced is not None:  # a model no price covers: its cost unknown (hubadmin26 B21)
            source_warnings += tuple(self.unpriced(inv))
        if self.monitor is None:
            return inv, version, None, None, (), source_warnings
        warnings = tuple(self.monitor.label_warnings()) if admin else ()
        return (inv, version, self.monitor.latest(), foreign_processes_of(self.ctx.inventory_source), warnings,
                source_warnings)

    def _holders(self) -> tuple[int, list[Job], dict[str, list[dict[str, Any]]]]:
        """The store's ``jobs`` counter, the jobs holding GPUs and, per GPU uuid,
        ``[{job_id, user, kind, gpu_milli}]`` — read again
        only when the store's ``jobs`` counter moved (any job written, by any process sharing the
        store): status polls read and decoded every holder's row for each ``GET inventory``
        (18,000 rows on a 5,000-node cluster; issue 17)."""
        with self.ctx.store.transaction(write=False) as tx:
            version = tx.jobs_version()
            kept = self._held
            if kept is not None and version >= 0 and self.ctx.store.holders_unchanged(kept[0], version):
                self._held = (version, kept[1], kept[2])
                return self._held
            live = [r.job for r in tx.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING))]
        allocations: dict[str, list[dict[str, Any]]] = {}
        for job in live:
            if job.allocation is None:
                continue
            for uuid in job.allocation.all_gpu_uuids():
                allocations.setdefault(uuid, []).append({"job_id": job.id, "user": job.spec.user,
                                                         "kind": job.spec.kind.value,
                                                         "gpu_milli": job.allocation.gpu_milli})
        self._held = (version, live, allocations)
        return self._held

    def status(self) -> EngineStatus:
        """Whether this server leads the store, who does, and the schema version."""
        engine, store = self.ctx.engine, self.ctx.store
        lease = store.leader()
        return EngineStatus(leader=engine.is_leader, engine_id=engine.owner_id,
                            leader_id=lease.owner if lease else None, term=lease.term if lease else None,
                            leader_expires_at=lease.expires_at.isoformat() if lease else None,
                            store=store.safe_url, schema_version=store.schema_version())
