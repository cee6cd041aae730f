"""Discrete-event simulator: a virtual clock driving the production ``run_cycle`` (edge).

The simulator plays an arrival stream against an inventory exactly as the engine would, minus
processes: at every event time (an arrival, a finish, or a periodic tick for idle detection) it
builds the :class:`~jupyter_sched.scheduling.Snapshot`, calls
:func:`jupyter_sched.scheduling.run_cycle` (the same function the engine calls), and applies the
:class:`~jupyter_sched.scheduling.CycleResult` with :func:`jupyter_sched.scheduling.apply_result`.
Admitted work starts at once and finishes ``runtime_s`` later; preempted work is requeued by the
core's rules and restarts from scratch (its lost GPU-seconds are counted). Leases follow an
activity profile (GPU utilisation and kernel state over time); the reclaim ladder of
:mod:`jupyter_sched.reclaim` sees per-minute samples of it and may release the lease early.

Outputs: per-job records and a time series as pandas DataFrames, a summary dict, CSV files and
plotly figures (:mod:`jupyter_sched.sim.report`). Ids are made here (``<prefix>00001``), never in
the core.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pandas as pd

from ..accounting import UsageInterval, budget_usage
from ..accounting.usage import decayed_seconds
from ..backfill.history import SAME_RUNS, RuntimeHistory
from ..backfill.progress import ProgressReport
from ..model import (
    GPU_MILLI,
    Allocation,
    Inventory,
    Job,
    JobKind,
    JobSpec,
    JobState,
    PendingReason,
    PriorityClass,
    QuotaSet,
    ResourceRequest,
)
from ..model.samples import GpuSample, Validity
from ..queues.limits import effective_limit
from ..reclaim import IdleArbiter, IdleInput, IdlePolicies, LadderState, device_keys, evaluate_idle
from ..scheduling import CycleResult, SchedulingProfile, Snapshot, apply_result, run_cycle
from ..scheduling.snapshot import IdleAction, UsageHistory
from ..telemetry.validity import SampleValidator
from .progress import ProgressModel
from .teams import TEAM_COLUMNS, team_figures

__all__ = ["Activity", "SimJob", "SimResult", "Simulator", "simulate"]

CycleFn = Callable[[Snapshot, SchedulingProfile | None], CycleResult]


@dataclass(frozen=True, slots=True)
class Activity:
    """One stretch of a lease's (or job's) behaviour after it starts.

    Attributes:
        duration_s: how long the stretch lasts (seconds).
        util_pct: GPU utilisation during it (0..100 %).
        kernel: kernel state during it: ``"busy"`` (executing — e.g. loading data at 0 % GPU) or
            ``"idle"`` (waiting for the user).
        telemetry: what the GPU *reports* during it (the truth is ``util_pct``): ``"normal"``;
            ``"blank"`` (DCGM blank values, e.g. MIG without profiling metrics: no reading);
            ``"latch"`` (the case 026 latch: 100 % with 0 MiB and no process).
        memory_mib: GPU memory in use while the stretch is ``normal`` or ``blank``.
    """

    duration_s: float
    util_pct: float
    kernel: str = "idle"
    telemetry: str = "normal"
    memory_mib: float = 1024.0

    def sample(self, uuid: str, when: datetime) -> GpuSample:
        """The reading a collector would make in this stretch (validity marked as collectors do;
        the latch rule needs history and is applied by :class:`~jupyter_sched.telemetry.validity.SampleValidator`)."""
        if self.telemetry == "latch":
            return GpuSample(gpu_uuid=uuid, mig_instance=None, timestamp=when, utilization_pct=100.0,
                             memory_used_mib=0.0, process_count=0, simulated=True)
        if self.telemetry == "blank":
            return GpuSample(gpu_uuid=uuid, mig_instance=None, timestamp=when, utilization_pct=None,
                             memory_used_mib=None, simulated=True, validity=Validity.BLANK,
                             validity_rule="dcgm_blank")
        return GpuSample(gpu_uuid=uuid, mig_instance=None, timestamp=when, utilization_pct=self.util_pct,
                         memory_used_mib=self.memory_mib, process_count=1, simulated=True)


_QUIET = logging.getLogger("jupyter_sched.sim.telemetry")
"""Where the simulated validator's once-per-device messages go (not the user's console)."""
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False
_IDLE_TAIL = Activity(duration_s=float("inf"), util_pct=0.0, kernel="idle")


@dataclass(frozen=True, slots=True)
class SimJob:
    """One arrival of the stream.

    Attributes:
        name, user, team: as in :class:`~jupyter_sched.model.JobSpec`.
        submit_s: arrival time, seconds after the simulation start.
        runtime_s: work to do once started (seconds); for a lease, how long the user keeps it
            before releasing it themselves (``None`` = until reclaimed or the end).
        resources: the request.
        kind, priority: job kind and class.
        time_limit_s: the user's declared limit (what backfill plans with; None = none).
        activity: for leases (or jobs with telemetry), behaviour from start; after the last
            stretch the GPUs sit idle with an idle kernel (the "idle tail").
        checkpointable: resumes from where it stopped after a preemption.
    """

    name: str
    user: str
    submit_s: float
    runtime_s: float | None
    resources: ResourceRequest
    team: str = "default"
    kind: JobKind = JobKind.TRAINING
    priority: PriorityClass = PriorityClass.NORMAL
    time_limit_s: float | None = None
    activity: tuple[Activity, ...] = ()
    checkpointable: bool = False

    def stretch_at(self, offset_s: float) -> Activity:
        """The stretch ``offset_s`` seconds after start (the idle tail after the last one)."""
        t = 0.0
        for stretch in self.activity:
            if offset_s < t + stretch.duration_s:
                return stretch
            t += stretch.duration_s
        return _IDLE_TAIL

    def state_at(self, offset_s: float) -> tuple[float, str]:
        """``(GPU utilisation %, kernel state)`` ``offset_s`` seconds after start."""
        t = 0.0
        for stretch in self.activity:
            if offset_s < t + stretch.duration_s:
                return stretch.util_pct, stretch.kernel
            t += stretch.duration_s
        return 0.0, "idle"

    def active_until_s(self) -> float:
        """Offset after start at which the last non-idle stretch ends (start of the idle tail)."""
        t = end = 0.0
        for stretch in self.activity:
            t += stretch.duration_s
            if stretch.util_pct > 0 or stretch.kernel == "busy":
                end = t
        return end


@dataclass
class _Track:
    """What the simulator remembers about one job (not visible to the core)."""

    sim: SimJob
    job_id: str
    predicted: datetime | None = None
    limit_s: float | None = None
    timed_out: bool = False
    first_eta: datetime | None = None
    any_eta: datetime | None = None
    shown: list[tuple[float, datetime | None]] = field(default_factory=list)  # (t_s, ETA) at each change while waiting
    first_reason: str = ""
    eta_known: bool = False
    saw_first_cycle: bool = False
    start: datetime | None = None
    first_start: datetime | None = None
    finish: datetime | None = None
    outcome: str = ""
    attempt: int = 0
    done_s: float = 0.0
    lost_gpu_s: float = 0.0
    preemptions: int = 0
    requeued_at: datetime | None = None
    """When it went back to the queue (preempted, or requeued when idle); None while not waiting again."""
    waited_again_s: float = 0.0
    """Seconds waited in the queue again after its first start (new user 18, N9: "mean wait 0s" for
    a job that waited 30 minutes after its preemption)."""
    ladder: LadderState = field(default_factory=LadderState)
    samples: list[GpuSample] = field(default_factory=list)
    validator: SampleValidator = field(default_factory=lambda: SampleValidator(logger=_QUIET))
    sample_next: int = 0
    sample_attempt: int = -1
    reclaimed_at: datetime | None = None
    warned: int = 0
    reclaim_reason: str = ""
    false_reclaims: int = 0
    progress: ProgressReport | None = None
    """Its latest progress report in this attempt (:attr:`Simulator.progress`), carried to the next cycle."""


@dataclass
class SimResult:
    """What a run produced.

    Attributes:
        jobs: one row per job: ids, request, submit/start/finish (s from start), queueing delay,
            JCT, first ETA and its error, preemptions, reclaim, outcome.
        timeseries: one row per cycle: time (s), pending, running, GPUs allocated, utilisation (%).
        summary: averages and totals (see :meth:`Simulator.run`).
        cycles: number of ``run_cycle`` calls.
        teams: one row per team: jobs, waits, GPU-hours held (:func:`~.teams.team_figures`).
    """

    jobs: pd.DataFrame
    timeseries: pd.DataFrame
    summary: dict[str, Any]
    cycles: int
    teams: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(TEAM_COLUMNS)))

    def to_csv(self, directory: str) -> list[str]:
        """Write ``jobs.csv``, ``timeseries.csv`` and ``summary.csv`` into ``directory``; return the paths."""
        import os

        from .outfiles import frame_csv

        os.makedirs(directory, exist_ok=True)
        paths = [os.path.join(directory, n) for n in ("jobs.csv", "timeseries.csv", "summary.csv")]
        for path, frame in zip(paths, (self.jobs, self.timeseries, pd.DataFrame([self.summary])), strict=True):
            with open(path, "w", encoding="utf-8", newline="") as fh:  # the one CSV writer (s30: names never formulas)
                fh.write(frame_csv(frame))
        return paths


class Simulator:
    """Plays ``arrivals`` on ``inventory`` through ``run_cycle``.

    Args:
        inventory: the cluster.
        arrivals: the stream (any order).
        profile: the scheduling profile (None = the core's default).
        quotas: quota set in force.
        start: simulation start (aware UTC).
        tick_s: also run a cycle every ``tick_s`` seconds while work is running (idle detection
            needs regular samples; None = only at arrivals and finishes).
        idle: idle policies for the reclaim ladder (None = no idle reclamation).
        horizon_s: stop at this many seconds after start (None = when all work is done).
        cycle: the decision function (default: the production ``run_cycle``).
        id_prefix: prefix of the job ids the simulator makes.
        usage_half_life_s: half-life of the fair-share usage fed to the core (seconds; the engine's
            default, 7 days), computed from the simulated allocations exactly as the engine does
            from its accounting rows.
        idle_arbiter: the idle rule (:class:`~jupyter_sched.reclaim.IdleArbiter`; None = the
            default) — ``benchmarks/idle_scenario.py`` plugs a naive lifetime-average culler in here.
        learn_runtimes: learn runtimes from finished runs (:class:`~jupyter_sched.backfill.history.RuntimeHistory`)
            and pass the predictions in ``Snapshot.runtime_estimates``, as the engine does from its
            store (the core uses them when the profile's ``eta_source`` is ``"history"``).
        progress: how running jobs report their progress (:class:`~.progress.ProgressModel`: the
            trace has no reports, so they are modelled); their latest reports go in
            ``Snapshot.progress``, which the core reads for ETAs only (issue 16 item 4). None: no
            job reports (as before).
    """

    def __init__(self, inventory: Inventory, arrivals: Iterable[SimJob], *,
                 profile: SchedulingProfile | None = None, quotas: QuotaSet | None = None,
                 start: datetime | None = None, tick_s: float | None = None,
                 idle: IdlePolicies | None = None, horizon_s: float | None = None,
                 cycle: CycleFn | None = None, id_prefix: str = "sim-",
                 usage_half_life_s: float = 7 * 86400.0, idle_arbiter: IdleArbiter | None = None,
                 learn_runtimes: bool = True, progress: ProgressModel | None = None) -> None:
        self.inventory = inventory
        self.arrivals = sorted(arrivals, key=lambda a: a.submit_s)
        self.profile = profile
        self.quotas = quotas or QuotaSet()
        self.start = start or datetime(2026, 1, 1, tzinfo=timezone.utc)
        if self.start.tzinfo is None:
            raise ValueError("start must be an aware datetime (UTC)")
        self.tick_s = tick_s
        self.idle = idle
        self.idle_arbiter = idle_arbiter
        self.history = RuntimeHistory() if learn_runtimes else None
        self.progress = progress
        self.horizon_s = horizon_s
        self._cycle: CycleFn = cycle or run_cycle
        self.id_prefix = id_prefix
        self.usage_half_life_s = usage_half_life_s
        self._intervals: list[UsageInterval] = []
        self._open: dict[str, list[int]] = {}
        self._closed: list[int] = []
        """Intervals closed since the last :meth:`_usage` (folded into ``_decayed`` there)."""
        self._decayed: dict[str, float] = {}
        """Per user, the decayed GPU-seconds of the intervals folded, as of ``_decayed_at``: a closed
        interval's value only shrinks by ``exp(-k Δt)``, so the sum is scaled, not summed again each cycle
        (a quarter's replay read every interval at every cycle: O(jobs²), minutes for 6,000 jobs)."""
        self._decayed_at: datetime | None = None
        self._unseen: dict[str, _Track] = {}
        """Jobs not yet in a cycle's answer, in submit order (:meth:`_note_reasons` looks at these only)."""
        self.capacity_gpus = inventory.gpu_count()
        self.decisions: list[tuple[float, str, str, str]] = []
        """Every decision applied: ``(t_s, kind, job id, detail)``; kinds ``admit`` (detail: where,
        see :func:`_where`), ``finish``, ``preempt`` (detail: for which job), ``reject`` (code),
        ``idle_warn``, ``idle_<action>``."""

    def _at(self, seconds: float) -> datetime:
        return self.start + timedelta(seconds=seconds)

    def _secs(self, when: datetime | None) -> float | None:
        return None if when is None else (when - self.start).total_seconds()

    def run(self) -> SimResult:
        """Run to completion (or the horizon).

        Returns:
            A :class:`SimResult`; ``summary`` holds ``jobs``, ``finished``, ``avg_jct_s``,
            ``avg_queue_s``, ``makespan_s``, ``eta_median_abs_err_s`` (over jobs that waited and
            had an ETA at their first cycle), ``eta_jobs``, ``shown_eta_median_abs_err_s`` /
            ``shown_eta_jobs`` (the first ETA shown at any cycle while waiting), ``preemptions``, ``lost_gpu_h``,
            ``gpu_h_allocated``, ``cycles``; the ETA accuracy of :func:`_accuracy` (``eta_coverage``,
            ``eta_mae_s``, ``eta_mae_rel``, ...) and the same over the jobs submitted after the first run
            succeeded (``steady_*``, :func:`_steady_accuracy`).
        """
        tracks: dict[str, _Track] = {}
        events: list[tuple[float, int, str, str, int]] = []  # (t, seq, kind, job id, attempt)
        seq = 0
        for i, sim in enumerate(self.arrivals):
            job_id = f"{self.id_prefix}{i + 1:05d}"
            tracks[job_id] = _Track(sim=sim, job_id=job_id)
            heapq.heappush(events, (sim.submit_s, seq, "arrive", job_id, 0))
            seq += 1
        self._unseen = dict(tracks)
        snap = Snapshot(now=self.start, inventory=self.inventory, quotas=self.quotas)
        series: list[dict[str, float]] = []
        cycles = 0
        next_tick: float | None = None
        gpu_s_alloc = 0.0
        last_t = 0.0

        while events:
            t = events[0][0]
            if self.horizon_s is not None and t > self.horizon_s:
                break
            # account allocated GPU-seconds over [last_t, t)
            gpu_s_alloc += self._allocated_gpus(snap) * (t - last_t)
            last_t = t
            now = self._at(t)
            jobs = list(snap.jobs)
            changed = False
            while events and events[0][0] == t:
                _, _, kind, job_id, attempt = heapq.heappop(events)
                if kind == "tick":
                    changed = True
                    continue
                tr = tracks[job_id]
                if kind == "arrive":
                    jobs.append(Job(id=job_id, spec=self._spec(tr.sim), submitted_at=now))
                    changed = True
                elif kind == "finish" and attempt == tr.attempt and tr.start is not None:
                    jobs = [j for j in jobs if j.id != job_id]
                    ran = (now - tr.start).total_seconds()
                    if self.history is not None and not tr.timed_out:
                        self.history.learn(self._spec(tr.sim), ran + tr.done_s, tr.limit_s)
                    elif self.history is not None:  # as the engine's feed: its key runs to its limit (N15)
                        self.history.ran_to_limit(self._spec(tr.sim))
                    tr.finish, tr.outcome, tr.start = now, "timeout" if tr.timed_out else "succeeded", None
                    self._close_usage(job_id, now)
                    self.decisions.append((t, "finish", job_id, ""))
                    changed = True
            snap = replace(snap, now=now, jobs=tuple(jobs))
            if not changed:
                continue
            estimates, typical = self._runtimes(snap, tracks)
            snap = replace(snap, telemetry=self._telemetry(snap, tracks), kernels=self._kernels(snap, tracks),
                           usage=self._usage(now), runtime_estimates=estimates, runtime_typical=typical,
                           runtime_sources=self._sources(snap, tracks, estimates), progress=self._progress(snap, tracks))
            result = self._cycle(snap, self.profile)
            cycles += 1
            idle_actions: Sequence[IdleAction] = result.idle
            if not idle_actions and self.idle is not None:
                idle_actions = evaluate_idle(snap, self.idle, self.idle_arbiter)
            self._note_reasons(result, tracks, t)
            before = {j.id: j for j in snap.jobs}
            snap = apply_result(snap, result)
            for admit in result.admits:
                tr = tracks[admit.job_id]
                tr.attempt += 1
                tr.start = now
                tr.first_start = tr.first_start or now
                if tr.requeued_at is not None:
                    tr.waited_again_s += (now - tr.requeued_at).total_seconds()
                    tr.requeued_at = None
                tr.ladder = LadderState()
                self.decisions.append((t, "admit", admit.job_id, _where(admit.allocation)))
                self._open_usage(before[admit.job_id], admit.allocation, tr.attempt, now)
                if tr.attempt == 1:
                    tr.predicted = admit.predicted_start
                tr.limit_s = admit.time_limit_s
                remaining = self._remaining(tr)
                tr.timed_out = tr.limit_s is not None and (remaining is None or remaining > tr.limit_s)
                if tr.timed_out:  # the executor stops a job at its (effective) limit
                    remaining = tr.limit_s
                if remaining is not None:
                    heapq.heappush(events, (t + remaining, seq, "finish", admit.job_id, tr.attempt))
                    seq += 1
            for pre in result.preemptions:
                tr = tracks[pre.job_id]
                if tr.start is not None:
                    ran = (now - tr.start).total_seconds()
                    gpus = before[pre.job_id].spec.resources.total_milli / GPU_MILLI
                    if tr.sim.checkpointable:
                        tr.done_s += ran
                    else:
                        tr.lost_gpu_s += ran * gpus
                tr.start, tr.preemptions, tr.requeued_at = None, tr.preemptions + 1, now
                self._close_usage(pre.job_id, now)
                tr.attempt += 1  # invalidates the pending finish event
                self.decisions.append((t, "preempt", pre.job_id, pre.for_job))
            for rej in result.rejects:
                tracks[rej.job_id].outcome = "rejected"
                tracks[rej.job_id].finish = now
                self.decisions.append((t, "reject", rej.job_id, rej.reason.code))
            snap = self._apply_idle(snap, idle_actions, tracks, now, t)
            running = [j for j in snap.jobs if j.state.holds_gpus]
            pending = [j for j in snap.jobs if j.state is JobState.PENDING]
            alloc = self._allocated_gpus(snap)
            series.append({"t_s": t, "pending": len(pending), "running": len(running),
                           "gpus_allocated": alloc,
                           "utilization_pct": 100.0 * alloc / self.capacity_gpus if self.capacity_gpus else 0.0})
            if self.tick_s and (running or result.preemptions) and (next_tick is None or next_tick <= t):
                next_tick = (int(t // self.tick_s) + 1) * self.tick_s
                heapq.heappush(events, (next_tick, seq, "tick", "", 0))
                seq += 1
            elif result.preemptions and not self.tick_s:
                # Victims free their GPUs now; the job they were evicted for starts on the next
                # cycle, which no arrival or finish may ever trigger (example A: nothing is left running).
                heapq.heappush(events, (t + 1.0, seq, "tick", "", 0))
                seq += 1
        end_t = last_t
        if self.horizon_s is not None and last_t < self.horizon_s and self._allocated_gpus(snap):
            # work still holds GPUs when nothing is left to happen before the horizon: it holds them to
            # the horizon, as the summary says ("still running at the 1h horizon"), not to the last event
            # (new user 17, N19: a job that ran to the 1 h horizon was 0.0 GPU-hours, end_s 0)
            gpu_s_alloc += self._allocated_gpus(snap) * (self.horizon_s - last_t)
            end_t = self.horizon_s
        for tr in tracks.values():  # work still running at the horizon
            if tr.start is not None and not tr.outcome:
                tr.outcome = "running"
        return self._result(tracks, series, cycles, end_t, gpu_s_alloc)

    def learn_earlier(self, runs: Iterable[SimJob]) -> int:
        """Seed the learner with ``runs`` finished before the replay (a store with history): each learnt as
        a run of ``runtime_s`` seconds under its ``time_limit_s``, in submit order, as the engine feeds its
        store's finished runs. They are not replayed, hold no GPUs, charge no usage and are never scored.
        Call before :meth:`run`. Returns the runs learnt (0 when the simulator learns no runtimes; a run
        without a positive finite ``runtime_s`` is skipped, as :meth:`RuntimeHistory.learn` skips it)."""
        if self.history is None:
            return 0
        learnt = 0
        for run in sorted(runs, key=lambda r: r.submit_s):
            if run.runtime_s is None or not run.runtime_s > 0 or not math.isfinite(run.runtime_s):
                continue
            self.history.learn(self._spec(run), run.runtime_s, run.time_limit_s)
            learnt += 1
        return learnt

    # ------------------------------------------------------------------ helpers
    def _spec(self, sim: SimJob) -> JobSpec:
        return JobSpec(name=sim.name, user=sim.user, team=sim.team, kind=sim.kind, priority=sim.priority,
                       resources=sim.resources, time_limit_s=sim.time_limit_s,
                       kernel_id=f"kernel-{sim.name}" if sim.kind is JobKind.LEASE else None,
                       checkpointable=sim.checkpointable)

    def _open_usage(self, job: Job, allocation: Allocation, attempt: int, now: datetime) -> None:
        """Accounting rows of an admission: one per GPU, ``share`` = milli-GPUs / 1000."""
        models = {g.uuid: g.model for g in self.inventory.gpus()}
        share = allocation.gpu_milli / GPU_MILLI
        idx = []
        for uuid in allocation.all_gpu_uuids():
            idx.append(len(self._intervals))
            self._intervals.append(UsageInterval(
                job_id=job.id, attempt=attempt, user=job.spec.user, team=job.spec.team, kind=job.spec.kind.value,
                gpu_uuid=uuid, gpu_model=models.get(uuid, ""), share=share, started_at=now, ended_at=None))
        self._open[job.id] = idx

    def _close_usage(self, job_id: str, now: datetime) -> None:
        for i in self._open.pop(job_id, []):
            self._intervals[i] = replace(self._intervals[i], ended_at=now)
            self._closed.append(i)

    def _usage(self, now: datetime) -> UsageHistory:
        """What the engine's snapshot carries: decayed GPU-seconds per user (what
        :func:`~jupyter_sched.accounting.decayed_gpu_seconds` of every interval gives, within float rounding:
        the closed ones kept as a running sum, as the engine's ``UsageLedger`` keeps them) and budget use."""
        if not self._intervals:
            return UsageHistory()
        if self.usage_half_life_s <= 0:
            raise ValueError("half_life_s must be > 0")
        k = math.log(2) / self.usage_half_life_s
        if self._decayed_at is not None and now != self._decayed_at:
            scale = math.exp(-k * ((now - self._decayed_at) / timedelta(seconds=1)))
            self._decayed = {user: value * scale for user, value in self._decayed.items()}
        self._decayed_at = now
        for i in self._closed:
            iv = self._intervals[i]
            if (value := decayed_seconds(iv, now=now, k=k)) is not None:
                self._decayed[iv.user] = self._decayed.get(iv.user, 0.0) + value
        self._closed.clear()
        decayed = dict(self._decayed)
        for idx in self._open.values():
            for i in idx:
                iv = self._intervals[i]
                if (value := decayed_seconds(iv, now=now, k=k)) is not None:
                    decayed[iv.user] = decayed.get(iv.user, 0.0) + value
        return UsageHistory(decayed_gpu_seconds_by_user=decayed,
                            gpu_hours_this_period=budget_usage(self._intervals, self.quotas.budgets, now=now))

    def _runtimes(self, snap: Snapshot, tracks: dict[str, _Track]) -> tuple[dict[str, float], dict[str, float]]:
        """``(Snapshot.runtime_estimates, Snapshot.runtime_typical)`` in one pass, as the engine's
        feed gives them (``RuntimeFeed.estimates_and_typical``): each job's learned runtime
        (remaining work for resumed checkpointable jobs; a running job's given what it already
        ran), and the running jobs that ran longer than similar past runs took."""
        if self.history is None:
            return {}, {}
        rules = (self.profile or SchedulingProfile()).time_limits
        estimates: dict[str, float] = {}
        typical: dict[str, float] = {}
        for job in snap.jobs:
            tr = tracks[job.id]
            limit = effective_limit(job.spec, rules)[0]
            ran = 0.0 if tr.start is None else (snap.now - tr.start).total_seconds() + tr.done_s
            guess = self.history.predict(job.spec, limit, ran)
            if guess is not None:
                estimates[job.id] = max(1.0, guess - tr.done_s)
            if tr.start is not None:
                usual = self.history.typical(job.spec, limit)
                if usual is not None and usual <= ran:
                    typical[job.id] = max(1.0, usual - tr.done_s)
        return estimates, typical

    def _sources(self, snap: Snapshot, tracks: dict[str, _Track], estimates: Mapping[str, float]) -> dict[str, str]:
        """``Snapshot.runtime_sources`` as the engine's feed gives them (``RuntimeFeed.learnt``): the
        jobs of ``estimates`` whose guess came from their user's runs of other programs."""
        if self.history is None:
            return {}
        rules = (self.profile or SchedulingProfile()).time_limits
        out: dict[str, str] = {}
        for job in snap.jobs:
            if job.id in estimates:
                tr = tracks[job.id]
                ran = 0.0 if tr.start is None else (snap.now - tr.start).total_seconds() + tr.done_s
                origin = self.history.origin(job.spec, effective_limit(job.spec, rules)[0], ran)
                if origin is not None and origin != SAME_RUNS:
                    out[job.id] = origin
        return out

    def _progress(self, snap: Snapshot, tracks: dict[str, _Track]) -> dict[str, ProgressReport]:
        """``Snapshot.progress``: each running job's latest report by :attr:`progress` (none without it)."""
        model = self.progress
        if model is None:
            return {}
        out: dict[str, ProgressReport] = {}
        for job in snap.jobs:
            tr = tracks[job.id]
            if tr.start is None or tr.sim.runtime_s is None or tr.sim.kind is JobKind.LEASE:
                continue
            report = model.latest(job.id, attempt=tr.attempt, start=tr.start,
                                  ran_s=(snap.now - tr.start).total_seconds(), runtime_s=tr.sim.runtime_s,
                                  done_s=tr.done_s, previous=tr.progress)
            tr.progress = report
            if report is not None:
                out[job.id] = report
        return out

    @staticmethod
    def _allocated_gpus(snap: Snapshot) -> float:
        return sum(j.spec.resources.total_milli for j in snap.jobs if j.state.holds_gpus) / GPU_MILLI

    def _remaining(self, tr: _Track) -> float | None:
        if tr.sim.runtime_s is None:
            return None
        return max(0.0, tr.sim.runtime_s - tr.done_s)

    def _note_reasons(self, result: CycleResult, tracks: dict[str, _Track], t: float) -> None:
        """Remember each job's first pending reason and ETA (the prediction made at submit)."""
        pending: dict[str, PendingReason] = {p.job_id: p.reason for p in result.pending}
        admitted = {a.job_id for a in result.admits}
        for job_id, reason in pending.items():  # the first ETA shown at all while the job waited
            tr = tracks[job_id]
            if tr.any_eta is None and tr.first_start is None and reason.eta is not None:
                tr.any_eta = reason.eta
            if tr.first_start is None and (not tr.shown or tr.shown[-1][1] != reason.eta):
                tr.shown.append((t, reason.eta))  # every ETA shown until its first start, at each change
        seen = []
        for job_id, tr in self._unseen.items():  # in submit order: those arrived by t
            if tr.sim.submit_s > t:
                break
            if job_id in pending:
                tr.saw_first_cycle = True
                reason = pending[job_id]
                tr.first_reason = reason.code
                tr.first_eta = reason.eta
                tr.eta_known = reason.eta is not None
            elif job_id in admitted:
                tr.saw_first_cycle = True
            if tr.saw_first_cycle:
                seen.append(job_id)
        for job_id in seen:
            del self._unseen[job_id]

    def _shown_error(self, shown: list[tuple[float, datetime | None]], start_s: float) -> float | None:
        """The time-weighted mean of ``|ETA shown - actual start|`` over a job's wait, from the first
        cycle that showed it an ETA to its first start (stretches without an ETA are left out);
        None: no ETA shown while it waited."""
        if not shown:
            return None
        total = span = 0.0
        for (t, eta), (until, _) in zip(shown, [*shown[1:], (start_s, None)], strict=True):
            at = self._secs(eta)
            if at is not None and until > t:
                total += abs(start_s - at) * (until - t)
                span += until - t
        return total / span if span > 0 else None

    def _telemetry(self, snap: Snapshot, tracks: dict[str, _Track]) -> dict[str, Any]:
        """Per running job with an activity profile: per-minute samples of its GPUs (IdleInput)."""
        if self.idle is None:
            return {}
        out: dict[str, Any] = {}
        policy_window = max(max(p.window_s, p.busy_kernel_window_s or 0.0) + p.grace_s for p in self.idle.all())
        for job in snap.jobs:
            tr = tracks[job.id]
            if job.state is not JobState.RUNNING or not tr.sim.activity or job.allocation is None or tr.start is None:
                continue
            uuids = job.allocation.all_gpu_uuids()
            ran = (snap.now - tr.start).total_seconds()
            if tr.sample_attempt != tr.attempt:  # a new run: start its sample history afresh
                tr.samples, tr.sample_next, tr.sample_attempt = [], 0, tr.attempt
                tr.validator = SampleValidator(logger=_QUIET)
            while tr.sample_next * 60.0 <= ran:  # one sample per GPU per minute since start
                stretch = tr.sim.stretch_at(tr.sample_next * 60.0)
                when = tr.start + timedelta(seconds=tr.sample_next * 60.0)
                # Validity as the telemetry monitor applies it (a confirmed latch relabels its run).
                marked, relabels = tr.validator.check([stretch.sample(u, when) for u in uuids])
                for relabel in relabels:
                    mine = [i for i, old in enumerate(tr.samples) if old.key == relabel.key][-relabel.count:]
                    for i in mine:
                        tr.samples[i] = replace(tr.samples[i], validity=Validity.SUSPECT, validity_rule="util_latch")
                tr.samples.extend(marked)
                tr.sample_next += 1
            keep = int((policy_window + 120.0) // 60.0 + 1) * len(uuids)
            if len(tr.samples) > 4 * keep:
                del tr.samples[:-keep]
            samples = tr.samples[-keep:]
            out[job.id] = IdleInput(samples=tuple(samples), ladder=tr.ladder,
                                    devices=device_keys(uuids, snap.inventory))
        return out

    def _kernels(self, snap: Snapshot, tracks: dict[str, _Track]) -> dict[str, dict[str, Any]]:
        """Kernel activity of running leases, from their activity profiles."""
        out: dict[str, dict[str, Any]] = {}
        for job in snap.jobs:
            tr = tracks[job.id]
            if not job.is_lease or tr.start is None or job.spec.kernel_id is None:
                continue
            ran = (snap.now - tr.start).total_seconds()
            _, kernel = tr.sim.state_at(ran)
            # last activity: the end of the last busy or GPU-active stretch before now
            t = last = 0.0
            for stretch in tr.sim.activity:
                seg_end = t + stretch.duration_s
                if t >= ran:
                    break
                if stretch.kernel == "busy" or stretch.util_pct > 0:
                    last = min(seg_end, ran)
                t = seg_end
            out[job.spec.kernel_id] = {"execution_state": kernel,
                                       "last_activity": tr.start + timedelta(seconds=last)}
        return out

    def _apply_idle(self, snap: Snapshot, actions: Sequence[IdleAction], tracks: dict[str, _Track],
                    now: datetime, t: float) -> Snapshot:
        """Apply ladder steps: remember warnings, release reclaimed leases (requeue/stop jobs)."""
        drop: set[str] = set()
        requeue: set[str] = set()
        for action in actions:
            tr = tracks.get(action.job_id)
            if tr is None or tr.start is None:
                continue
            if action.stage == "warn":
                tr.ladder = replace(tr.ladder, warned_at=now, warned_idle_since=action.idle_since)
                tr.warned += 1
                self.decisions.append((t, "idle_warn", action.job_id, ""))
            elif action.stage == "clear":
                tr.ladder = replace(tr.ladder, warned_at=None, warned_idle_since=None)
            elif action.stage == "reclaim":
                tr.ladder = replace(tr.ladder, reclaimed_at=now)
                # false: before the work's last active moment, or a service (benchmarks/idle_scenario.py's rule)
                ran = (now - tr.start).total_seconds()
                tr.false_reclaims += int(action.action in ("release", "stop", "requeue")
                                         and (ran < tr.sim.active_until_s() or tr.sim.kind is JobKind.INFERENCE))
                if action.action in ("release", "stop", "requeue"):
                    self._close_usage(action.job_id, now)
                self.decisions.append((t, f"idle_{action.action}", action.job_id, ""))
                if action.action in ("release", "stop"):
                    drop.add(action.job_id)
                    tr.reclaimed_at, tr.finish, tr.outcome, tr.start = now, now, "reclaimed", None
                    tr.reclaim_reason = action.reason
                    tr.attempt += 1
                elif action.action == "requeue":
                    requeue.add(action.job_id)
                    tr.reclaimed_at, tr.start, tr.requeued_at = now, None, now
                    tr.reclaim_reason = action.reason
                    tr.attempt += 1
        if not drop and not requeue:
            return snap
        jobs: list[Job] = []
        for job in snap.jobs:
            if job.id in drop:
                continue
            if job.id in requeue:
                job = job.transition(JobState.PREEMPTED, allocation=None).transition(
                    JobState.PENDING, admitted_at=None, started_at=None,
                    reason=PendingReason(code="Preempted", message="requeued after idle reclaim"))
            jobs.append(job)
        return replace(snap, jobs=tuple(jobs))

    def _result(self, tracks: dict[str, _Track], series: list[dict[str, float]], cycles: int,
                end_t: float, gpu_s_alloc: float) -> SimResult:
        rows = []
        for tr in tracks.values():
            sim = tr.sim
            start = self._secs(tr.first_start)
            finish = self._secs(tr.finish)
            eta = self._secs(tr.first_eta)
            any_eta = self._secs(tr.any_eta)
            # the wait from the arrival as the replay's clock stamped it (datetimes hold microseconds):
            # a job started at its arrival waited exactly 0, not +-0.5 us of rounding (which counted
            # about half of them as "waited" in replays with fractional arrival times)
            queue = None if tr.first_start is None else (tr.first_start - self._at(sim.submit_s)).total_seconds()
            requeued = self._secs(tr.requeued_at)  # still waiting again at the end: until then
            again = tr.waited_again_s + (end_t - requeued if requeued is not None else 0.0)
            rows.append({
                "job_id": tr.job_id, "name": sim.name, "user": sim.user, "team": sim.team, "kind": sim.kind.value,
                "priority": sim.priority.value, "gpus": sim.resources.total_milli / GPU_MILLI,
                "submit_s": sim.submit_s, "start_s": start, "finish_s": finish,
                "queue_s": queue, "wait_s": None if queue is None else queue + again, "jct_s": None if finish is None or tr.outcome != "succeeded" else finish - sim.submit_s,
                "first_reason": tr.first_reason, "eta_s": eta,
                "eta_err_s": None if eta is None or start is None else abs(start - eta),
                "first_shown_eta_s": any_eta,
                "shown_eta_err_s": None if any_eta is None or start is None else abs(start - any_eta),
                "predicted_s": (predicted := self._secs(tr.predicted)),
                "predicted_err_s": None if predicted is None or start is None else start - predicted,
                "shown_avg_err_s": None if start is None else self._shown_error(tr.shown, start),
                "preemptions": tr.preemptions, "lost_gpu_s": tr.lost_gpu_s, "idle_warnings": tr.warned,
                "reclaimed_s": self._secs(tr.reclaimed_at), "reclaim_reason": tr.reclaim_reason,
                "outcome": tr.outcome or "pending",
                "false_reclaims": tr.false_reclaims,
            })
        jobs = pd.DataFrame(rows)
        ts = pd.DataFrame(series, columns=["t_s", "pending", "running", "gpus_allocated", "utilization_pct"])
        done = jobs[jobs["outcome"] == "succeeded"]
        waited = jobs[jobs["eta_err_s"].notna()]
        shown = jobs[jobs["shown_eta_err_s"].notna()]
        summary: dict[str, Any] = {
            "jobs": len(jobs), "finished": len(done),
            "avg_jct_s": float(done["jct_s"].mean()) if len(done) else None,
            "avg_queue_s": float(jobs["queue_s"].dropna().mean()) if jobs["queue_s"].notna().any() else None,
            # every wait in the queue, after a preemption too (new user 18, N9); avg_queue_s is the first one
            "avg_wait_s": float(jobs["wait_s"].dropna().mean()) if jobs["wait_s"].notna().any() else None,
            "started": int(jobs["wait_s"].notna().sum()),  # the jobs avg_wait_s is over (newuser38 n19: say which)
            # work still running at the horizon ran until then at least: the makespan is not shorter (N9)
            "makespan_s": (max(float(jobs["finish_s"].max()) if jobs["finish_s"].notna().any() else 0.0,
                               end_t if (jobs["outcome"] == "running").any() else 0.0) - float(jobs["submit_s"].min()))
            if jobs["finish_s"].notna().any() or (jobs["outcome"] == "running").any() else None,
            "makespan_open": bool((jobs["outcome"] == "running").any()),
            "eta_median_abs_err_s": float(waited["eta_err_s"].median()) if len(waited) else None,
            "eta_jobs": len(waited),
            "shown_eta_median_abs_err_s": float(shown["shown_eta_err_s"].median()) if len(shown) else None,
            "shown_eta_jobs": len(shown),
            **_accuracy(jobs),
            **_steady_accuracy(jobs),
            "timeouts": int((jobs["outcome"] == "timeout").sum()),
            "preemptions": int(jobs["preemptions"].sum()),
            "lost_gpu_h": float(jobs["lost_gpu_s"].sum() / 3600.0),
            "gpu_h_allocated": gpu_s_alloc / 3600.0,
            "end_s": end_t, "cycles": cycles,
            # what happened to every job (new user 8, N11: "17 jobs, 5 finished" and nothing else)
            "reclaimed": int((jobs["outcome"] == "reclaimed").sum()),
            "false_reclaims": int(jobs["false_reclaims"].sum()),
            "running_at_end": int((jobs["outcome"] == "running").sum()),
            "pending_at_end": int((jobs["outcome"] == "pending").sum()),
            "rejected": int((jobs["outcome"] == "rejected").sum()),
            "horizon_s": self.horizon_s,
        }
        return SimResult(jobs=jobs, timeseries=ts, summary=summary, cycles=cycles,
                         teams=team_figures(jobs, self._intervals, start=self.start, end_s=end_t))


def _accuracy(jobs: pd.DataFrame) -> dict[str, Any]:
    """ETA accuracy over jobs that waited: predicted-at-submit (``Admit.predicted_start``) vs first start.

    ``eta_coverage``: share of them that had a prediction; ``eta_mae_s``: median absolute error;
    ``eta_mae_rel``: that error over the median actual wait (issue 16's figure); ``eta_mean_abs_err_s``
    beside it. Other readings of the same ETAs, printed beside it, never instead:
    ``eta_per_job_rel``: the median over jobs of each one's error over its *own* wait;
    ``eta_within_15``: the share of them whose error is at most 15 % of their own wait;
    ``eta_every_shown_rel``: every ETA shown while a job waited, not only the one at submit (nor the
    first shown, ``shown_eta_*``) — the median over jobs of the time-weighted mean
    ``|shown - actual start|`` over its wait, over the median wait.
    """
    started = jobs[jobs["start_s"].notna()]
    waited = started[started["queue_s"] > 0]
    predicted = waited[waited["predicted_err_s"].notna()]
    errs = predicted["predicted_err_s"].abs()
    wait = float(waited["queue_s"].median()) if len(waited) else None
    mae = float(errs.median()) if len(errs) else None
    shown = waited["shown_avg_err_s"].dropna() if "shown_avg_err_s" in waited else waited["queue_s"].iloc[0:0]
    own = errs / predicted["queue_s"]
    return {"eta_waited_jobs": len(waited), "eta_coverage": len(errs) / len(waited) if len(waited) else None,
            "eta_mae_s": mae, "eta_mean_abs_err_s": float(errs.mean()) if len(errs) else None,
            "median_wait_s": wait, "eta_mae_rel": None if mae is None or not wait else mae / wait,
            "eta_per_job_rel": float(own.median()) if len(own) else None,
            "eta_within_15": float((own <= 0.15).mean()) if len(own) else None,
            "eta_every_shown_rel": None if not len(shown) or not wait else float(shown.median()) / wait}


def _steady_accuracy(jobs: pd.DataFrame) -> dict[str, Any]:
    """:func:`_accuracy` over the jobs submitted after the first run succeeded (``steady_*`` keys).

    A replay starts with an empty history: until a run has finished and been learnt from (a run
    stopped at its time limit is not), every runtime is its declared limit, which a deployment
    with an accounting history never has to assume. The jobs submitted before then are the
    replay's warm-up — they run and are learnt from like every other job, but their ETAs are left
    out here. ``steady_first_finish_s``: when that was (None: no run succeeded; then nothing is
    scored). Reported *beside* the whole replay's figure, never instead of it.
    """
    done = jobs.loc[jobs["outcome"] == "succeeded", "finish_s"]
    first = float(done.min()) if len(done) else None
    out = _accuracy(jobs[jobs["submit_s"] > first] if first is not None else jobs.iloc[0:0])
    return {"steady_first_finish_s": first, **{f"steady_{k}": v for k, v in out.items()}}


def _where(allocation: Allocation) -> str:
    """``node:uuid,uuid@milli`` per worker, ``;``-joined: a decision's placement as one string. A
    placement with no GPU holds no share (``@0``), as the API's job object says (new user 11, N8)."""
    milli = allocation.gpu_milli if allocation.all_gpu_uuids() else 0
    return ";".join(f"{node}:{','.join(uuids)}@{milli}" for node, uuids in allocation.per_worker())


def simulate(inventory: Inventory, arrivals: Iterable[SimJob], **kwargs: Any) -> SimResult:
    """Shorthand for ``Simulator(inventory, arrivals, **kwargs).run()``."""
    return Simulator(inventory, arrivals, **kwargs).run()
