"""``TelemetryService``: current and recent GPU samples (``GET telemetry``), utilization and
memory over time with gaps (``GET telemetry/history``), idle work before its warning (``GET
idle``), idle figures for ``/metrics``, and the ``telemetry`` events pushed while somebody listens.
What the telemetry says (validity, gaps, health, attribution) comes from
:mod:`jupyter_sched.telemetry.report`; who may see which GPU's processes is decided here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from ..admission import Caller
from ..engine.telemetry import TelemetryMonitor
from ..errors import AuthorizationError, NotFoundError, SchedError, ValidationError
from ..model import JobState
from ..model.samples import GpuSample
from ..model.units import parse_utc
from .context import Context
from .models import (
    GetIdleResponse,
    GetTelemetryHistoryRequest,
    GetTelemetryHistoryResponse,
    GetTelemetryRequest,
    GetTelemetryResponse,
)
from .visibility import HOLDERS_KEY, WITHHELD_NOTE, GpuReaders, Holding, telemetry_for

__all__ = ["TelemetryService"]

log = logging.getLogger(__name__)


# At most this many recent samples in one GET telemetry answer, all devices together (~500 B each
# as JSON): `limit` is per device, so on 64 GPUs limit=3600 was a 116 MB answer built in one
# request (red-team 4 finding 3). The panel's seed (600 s of every GPU) fits whole up to 83 GPUs
# at 1 s sampling; beyond that each device keeps its newest samples.
MAX_RECENT_SAMPLES = 50_000
# At most this many points (devices x steps, gaps included) in one GET telemetry/history answer
# (~150 B each): a week of one 8-GPU job at one-minute steps is 80,640.
MAX_HISTORY_POINTS = 500_000


def recent_limit(limit: int, devices: int) -> int:
    """Samples per device that keep an answer of ``devices`` devices within
    :data:`MAX_RECENT_SAMPLES`: ``limit``, or fewer (at least 1) when they would not fit."""
    return max(1, min(limit, MAX_RECENT_SAMPLES // max(1, devices)))


class TelemetryService:
    """Telemetry (see module docstring).

    Args:
        ctx: shared dependencies.
        monitor: the telemetry monitor (None = telemetry off).
        push_interval_s: seconds between ``telemetry`` events while somebody subscribes.
    """

    def __init__(self, ctx: Context, monitor: TelemetryMonitor | None, *, push_interval_s: float = 1.0) -> None:
        self.ctx = ctx
        self.monitor = monitor
        self.push_interval_s = push_interval_s
        self.wanted: Callable[[], bool] = lambda: self.ctx.bus.subscribers() > 0
        """True while some client listens for telemetry events (the extension points it at its SSE clients)."""
        self._push: asyncio.Task[None] | None = None

    def telemetry(self, caller: Caller, request: GetTelemetryRequest) -> GetTelemetryResponse:
        """Current and recent samples per GPU: every GPU, one GPU (``gpu``), or the GPUs of one of
        the caller's jobs or leases; ``recent`` starts at ``since`` (default: the last minute) and
        holds up to ``limit`` newest samples per device, fewer when the answer would pass
        :data:`MAX_RECENT_SAMPLES` over all its devices (:func:`recent_limit`).

        Users see process lists and pod names only for GPUs their own work holds, and neither the
        foreign-process alerts nor other users' idle work (admins see all:
        :func:`~.visibility.telemetry_for`); a GPU's readings taken while another user's work held
        it are withheld (:class:`~.visibility.GpuReaders`: the current one nulled, recent ones left out).

        Raises:
            ValidationError: bad ``since``, or two filters at once.
            NotFoundError: the job/lease is another user's (audited) or does not exist; no such GPU.
        """
        from ..reclaim import device_keys, foreign_gpu_reports
        from ..telemetry import foreign_report_to_dict, sample_to_dict

        if sum(1 for f in (request.gpu, request.job, request.lease) if f) > 1:
            raise ValidationError("give at most one of gpu, job and lease", field="gpu",
                                  hint="ask for one GPU, one job or one lease at a time")
        now = self.ctx.clock.now()
        start = parse_utc(request.since, field="since") if request.since else now - timedelta(seconds=60)
        inv = self.ctx.inventory()
        live = [r.job for r in self.ctx.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING))]
        work = request.job or request.lease
        body: dict[str, Any] = {
            "enabled": self.monitor is not None, "source": None, "interval_s": None, "simulated": inv.simulated,
            "at": now.isoformat(), "job_id": work, "gpus": [],
            "foreign": [foreign_report_to_dict(r) for r in foreign_gpu_reports(
                inv, live, foreign_processes=self._foreign_processes() if caller.admin else None)],
            "idle": [{"job_id": j, "gpu_uuids": list(u)} for j, u in sorted(self.ctx.engine.idle_gpus.items())]}
        mine = [job for job in live if job.spec.user == caller.user]
        held = {uuid for job in mine if job.allocation is not None for uuid in job.allocation.all_gpu_uuids()}
        own = {job.id for job in mine}
        if self.monitor is None:
            return GetTelemetryResponse.model_validate(telemetry_for(caller, body, held, own))
        body.update(source=self.monitor.source, interval_s=self.monitor.interval_s)
        latest = self.monitor.latest()
        keys: list[tuple[str, int | None]]
        if work:
            record = self.ctx.visible(caller, work, request="read telemetry")
            alloc = record.job.allocation if record.job.state.holds_gpus else None
            keys = list(device_keys(alloc.all_gpu_uuids(), inv)) if alloc is not None else []
        elif request.gpu:
            keys = list(device_keys([request.gpu], inv))
            if keys[0] not in latest and request.gpu not in inv.gpu_by_uuid():
                raise NotFoundError(f"no GPU {request.gpu[:80]!r} in the inventory", field="gpu",
                                    hint="see GET inventory for uuids")
        else:
            keys = sorted(latest, key=lambda k: (k[0], k[1] if k[1] is not None else -1))
        readers = self.readers(caller, start, now, inv, gpus={k[0] for k in keys} if (work or request.gpu) else None)
        recent = self.monitor.recent(keys, since=start, limit=recent_limit(request.limit, len(keys)))
        for key in keys:
            current = latest.get(key)
            body["gpus"].append({"gpu_uuid": key[0], "mig_instance": key[1],
                                 "current": sample_to_dict(current) if current is not None else None,
                                 "recent": [sample_to_dict(s) for s in recent.get(key, [])]})
        return GetTelemetryResponse.model_validate(telemetry_for(caller, body, held, own, readers))

    def readers(self, caller: Caller, since: datetime, until: datetime, inv: Any,
                gpus: Iterable[str] | None = None) -> GpuReaders:
        """Who held which GPU device when over ``[since, until]`` (the store's usage intervals:
        opened at admission and closed at the end in the job's own transaction), as
        :class:`~.visibility.GpuReaders` for ``caller`` (an admin reads everything). Work on a MIG
        instance is listed under its ``MIG-`` uuid and its parent GPU's. ``gpus``: only the
        holdings of these GPUs (uuids; a whole GPU's MIG instances with it), None: all.

        The rows are merged by the database into spans per GPU, the caller's and the others'
        (:meth:`~jupyter_sched.store.StoreTx.usage_spans`): O(spans) here, whatever the rows (verify27 V7)."""
        if caller.admin:
            return GpuReaders(None, {})
        by_uuid = inv.gpu_by_uuid()
        wanted: set[str] | None = None
        if gpus is not None:
            wanted = set()
            for uuid in gpus:
                gpu = by_uuid.get(uuid)
                wanted.add(uuid)
                if gpu is not None:  # the GPU and every instance of it: both name the GPU's readings
                    wanted.update((gpu.uuid, *(m.uuid for m in gpu.mig_devices)))
        holdings: dict[str, list[Holding]] = {}
        other = ""  # no user's name: anyone else's holding, as far as the rule asks
        for uuid, own, start, end in self.ctx.store.usage_spans(
                since=since, until=until + timedelta(seconds=1), user=caller.user, gpu_uuids=wanted):
            span: Holding = (caller.user if own else other, start, end)
            gpu = by_uuid.get(uuid)
            for name in dict.fromkeys((uuid, gpu.uuid if gpu is not None else uuid)):
                holdings.setdefault(name, []).append(span)
        return GpuReaders(caller.user, holdings)

    def _foreign_processes(self) -> dict[str, Any]:
        """``{gpu uuid: ForeignProcess...}`` from the NVML inventory (pid, memory, age, user; case
        025); empty for other sources. Shown to admins only (other users' processes)."""
        from ..telemetry.report import foreign_processes_of

        return foreign_processes_of(self.ctx.inventory_source)

    def history(self, caller: Caller, request: GetTelemetryHistoryRequest) -> GetTelemetryHistoryResponse:
        """Utilization and memory over time of one job's, lease's or GPU's devices, with gap spans
        where telemetry was blank, suspect or missing (:func:`jupyter_sched.telemetry.report.history_answer`;
        from the stored rollups, the live samples for minutes not stored yet or steps under 60 s).

        Raises:
            ValidationError: not exactly one of gpu, job and lease; a bad time; since after until;
                more than :data:`MAX_HISTORY_POINTS` points asked for.
            NotFoundError: the job/lease is another user's (audited) or does not exist; no such GPU.
            AuthorizationError: a non-admin's ``gpu`` is held by another user's live work (audited).
        """
        from ..reclaim import device_keys
        from ..telemetry.history import drawn_range
        from ..telemetry.report import history_answer

        if sum(1 for f in (request.gpu, request.job, request.lease) if f) != 1:
            raise ValidationError("give exactly one of gpu, job and lease", field="job",
                                  hint="e.g. telemetry/history?job=<id> or ?gpu=<uuid>")
        now = self.ctx.clock.now()
        inv = self.ctx.inventory()
        work = request.job or request.lease
        start: Any = None
        mig_names: dict[tuple[str, int | None], str] = {}
        end = parse_utc(request.until, field="until") if request.until else now
        if work:
            try:
                record = self.ctx.visible(caller, work, request="read telemetry history")
            except SchedError as err:  # the query argument sent, not the job's path parameter (new user 13, N12)
                err.field = "lease" if request.lease else "job"
                raise
            alloc = record.job.allocation
            keys = list(device_keys(alloc.all_gpu_uuids(), inv)) if alloc is not None else []
            start = record.job.started_at or record.job.admitted_at
            if record.job.finished_at is not None and not request.until:
                end = record.job.finished_at
        else:
            assert request.gpu is not None
            if request.gpu not in inv.gpu_by_uuid():
                raise NotFoundError(f"no GPU {request.gpu[:80]!r} in the inventory", field="gpu",
                                    hint="see GET inventory for uuids")
            keys = list(device_keys([request.gpu], inv))
            self._series_visible(caller, request.gpu, {k[0] for k in keys}, inv)
            gpu = inv.gpu_by_uuid()[request.gpu]
            if gpu.uuid == request.gpu:  # a whole GPU: its MIG instances too
                keys += [(gpu.uuid, m.gpu_instance_id) for m in gpu.mig_devices]
            mig_names = {(gpu.uuid, m.gpu_instance_id): m.uuid for m in gpu.mig_devices}
        if request.since:
            start = parse_utc(request.since, field="since")
        start = start or end - timedelta(hours=1)
        if start > end:
            raise ValidationError("since is after until", field="since", hint="give since <= until")
        points = len(keys) * (int((end - start).total_seconds()) // request.step_s + 1)
        if points > MAX_HISTORY_POINTS:
            # every step is answered, data or gap: a range of years is millions of gap points
            least = int((end - start).total_seconds() * len(keys)) // MAX_HISTORY_POINTS + 1
            raise ValidationError(
                f"the answer would hold {points:,} points ({len(keys)} device{'' if len(keys) == 1 else 's'} x steps of {request.step_s} s); "
                f"at most {MAX_HISTORY_POINTS:,}", field="since",
                hint=f"give a later since, an earlier until or a step_s of at least {least}")
        # what the answer draws: a range longer than MAX_MINUTES steps keeps its newest (verify27 V7: the
        # readers below read 30 days for a week's points, and the stored minutes the oldest 10,000 of them)
        first, _ = drawn_range(start, end, request.step_s)
        stored: list[dict[str, Any]] = []
        if request.step_s == 60:
            lo = max(start, first) - timedelta(minutes=1)
            for uuid in dict.fromkeys(k[0] for k in keys):
                # every minute of the range, each device of the GPU, written twice at worst (two servers)
                most = 2 * sum(1 for k in keys if k[0] == uuid) * (int((end - lo).total_seconds()) // 60 + 2)
                stored += self.ctx.store.rollup_rows(since=lo, until=end, gpu_uuid=uuid, limit=max(10_000, most))
        # Live samples from the start of the first step, so a step drawn live holds the samples it
        # will hold once rolled up; a job's or lease's: those taken while it held the GPU, all of
        # them (its stored minutes keep every one, new user 14, N26).
        live: list[GpuSample] = []
        monitor = self.monitor
        if monitor is not None:
            for key in keys:
                own = monitor.job_samples(work, key, first) if work else None
                live += own if own is not None else monitor.window(key, first, end)
        withheld = None
        if not work and not caller.admin:
            # a step another user's work held the GPU for is theirs (red team 17, R9: once A's job
            # ended, B read its whole series by GPU id and time range)
            readers = self.readers(caller, first, end, inv, gpus=[request.gpu] if request.gpu else None)

            def withheld(key: tuple[str, int | None], lo: datetime, hi: datetime) -> str | None:
                names = (key[0], mig_names.get(key) if key[1] is not None else None)
                return WITHHELD_NOTE if readers.hides(names, lo, hi) else None
        body = history_answer(stored, live, devices=keys, since=start, until=end, step_s=request.step_s,
                              job_id=work, withheld=withheld)
        return GetTelemetryHistoryResponse.model_validate(body)

    def _series_visible(self, caller: Caller, gpu_uuid: str, parents: set[str], inv: Any) -> None:
        """Refuse (403, audited) a non-admin's history of a GPU that another user's live job or
        lease holds: that series is the work's, which ``?job=`` refuses them too (new user 16, N15:
        B got A's job series by the GPU id the queue shows). One rule for both routes: another
        user's work's utilization over time is theirs; the readings of its GPU are withheld from the
        other routes too (:class:`~.visibility.GpuReaders`, red team 17, R9 / new user 17, N4)."""
        from ..reclaim import device_keys

        if caller.admin:
            return
        for record in self.ctx.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            if job.spec.user == caller.user or job.allocation is None:
                continue
            if parents & {k[0] for k in device_keys(job.allocation.all_gpu_uuids(), inv)}:
                noun = "lease" if job.is_lease else "job"
                self.ctx.admission.refuse(caller, AuthorizationError(
                    f"GPU {gpu_uuid[:80]!r} is held by another user's {noun} ({job.id}): the history of a GPU "
                    f"while another user's work holds it is theirs, as telemetry/history?job= is",
                    field="gpu", hint="ask for the times before or after that work (those are readable), "
                                      "ask its owner or an admin"),
                    request="read telemetry history", job_id=job.id)

    def idle(self, caller: Caller) -> GetIdleResponse:
        """Idle work of the engine's last cycle, least time left first, from its first idle sample
        on (case 025): the caller's own; admins see everyone's."""
        from ..telemetry.report import idle_candidates_answer

        candidates = getattr(self.ctx.engine.idle, "candidates", ())
        return GetIdleResponse.model_validate(idle_candidates_answer(candidates,
                                                                     user=None if caller.admin else caller.user))

    def idle_stats(self) -> dict[str, Any]:
        """For ``/metrics``: ``{"idle_gpus": GPUs of work with an open idle warning, "reclaims": idle
        reclaims that freed GPUs since start, "telemetry": the monitor's status or None}``."""
        engine = self.ctx.engine
        return {"idle_gpus": sum(len(u) for u in engine.idle_gpus.values()), "reclaims": engine.reclaims_total,
                "telemetry": self.monitor.status() if self.monitor is not None else None}

    def now(self) -> dict[str, Any]:
        """The ``telemetry`` event's data: the newest sample of every GPU, plus (under
        :data:`~.visibility.HOLDERS_KEY`, removed before any client sees it) who holds each GPU
        (a MIG instance's holder under its parent too), so the fan-out shows each subscriber the
        process lists of their own GPUs only and withholds the readings of GPUs other users'
        work holds (:class:`~.visibility.GpuReaders`)."""
        from ..telemetry import sample_to_dict

        latest = self.monitor.latest() if self.monitor is not None else {}
        holders: dict[str, list[str]] = {}
        by_uuid = self.ctx.inventory().gpu_by_uuid()
        for record in self.ctx.store.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING)):
            job = record.job
            for uuid in job.allocation.all_gpu_uuids() if job.allocation is not None else ():
                gpu = by_uuid.get(uuid)
                for name in dict.fromkeys((uuid, gpu.uuid if gpu is not None else uuid)):  # a MIG's parent too
                    holders.setdefault(name, []).append(job.spec.user)
        return {"at": self.ctx.clock.now().isoformat(), HOLDERS_KEY: holders,
                "gpus": [sample_to_dict(latest[k]) for k in sorted(latest, key=lambda k: (k[0], k[1] or -1))]}

    # ---- lifetime ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start sampling and pushing (on the running loop)."""
        if self.monitor is not None and self._push is None:
            self.monitor.start()
            self._push = asyncio.ensure_future(self._push_loop())

    async def stop(self) -> None:
        """Stop pushing and sampling."""
        if self._push is not None:
            self._push.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._push
            self._push = None
        if self.monitor is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.monitor.stop)

    async def _push_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.push_interval_s)
            if self.wanted():
                try:  # reads the store: off the event loop
                    self.ctx.publish({"type": "telemetry", "data": await loop.run_in_executor(None, self.now)})
                except Exception:
                    log.exception("jupyter_sched: telemetry event failed")
