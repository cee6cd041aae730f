"""Idle detection and the reclamation ladder (pure: no clock, no I/O; ``now`` is injected).

Steps for each running job or lease (DESIGN.md "Idle reclamation"; cases 008 and 012):

1. **Verdict** — :func:`default_idle_arbiter` (or an admin's hook with the same keyword-only
   signature) finds when the work became idle:

   - GPU side: the start of the *trailing* run of samples in which every allocated GPU / MIG
     instance is below ``threshold_pct`` (activity = ``GR_ENGINE_ACTIVE x 100`` when known, else
     utilization). Not a lifetime average (case 013). Held memory is not activity. Only *valid*
     samples count (``jupyter_sched.model.samples``): a blank or rejected reading (DCGM blank,
     NaN, MIG without profiling metrics, 101 %) *pauses* the clock — it neither advances nor
     resets it (case 009) — and a run never starts on one; a confirmed utilization latch (100 %
     with 0 MiB and no process) is idle evidence (case 026). A device with no samples, or a gap
     longer than ``max_gap_s`` with no sample at all, restarts the run: missing data never
     counts as idle.
   - Kernel side (leases): an ``idle`` kernel is idle since its ``last_activity``; a busy kernel
     is not idle — then only the separate, longer ``busy_kernel_window_s`` rule (GPU idle while the
     kernel computes on CPU) may apply. A lease with no kernel is judged by its GPUs alone under the
     normal window; a kernel whose state is unknown or ``starting`` gets :data:`KERNEL_STATE_BOUND_S`
     more, then the normal rule (red team 17, R8: neither is *busy*). HTTP/websocket traffic is never
     looked at (jupyterhub#1498, case 012). A kernel whose state is not known (none reported;
     in hub mode a stale report or an older user server) is said to be *unknown* in the reason,
     never *busy* (red team 15, R6). On a hub the whole report (state and ``last_activity``) is
     its user's word (red41 R3): with a bound set, the period is the GPUs' own idle run, a said
     activity only lengthens its limit, and never past ``busy_kernel_window_s`` — whatever the
     reports say or however they alternate.

2. **Ladder** — with ``deadline = idle_since + paused + limit + grace_s`` (pushed back by a
   keepalive): ``warn`` at ``deadline - grace_s - warning_s``; ``reclaim`` at the deadline, but
   never sooner than ``warning_s + grace_s`` after the warning was delivered; ``clear`` when
   activity resumes after a warning. Two ways to give notice: ``warning_s`` warns *inside* the
   window (case 025: window 60, warning 15 → warn at 45, reclaim at 60), ``grace_s`` waits
   *after* it (case 013: window 60 + grace 15 → warn at 60, reclaim at 75); warnings state the
   numbers as set (``60 + 15 min``). The reclaim step carries the evidence: the window of samples,
   per minute.

The source of the idea: jupyterhub-idle-culler's ``cull_arbiter_hook`` (a keyword-only hook with a
documented default) and Kubernetes/Kueue's "decide, then act" split.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..errors import ConflictError, ValidationError
from ..model import Inventory, Job, JobKind, JobState, parse_utc, to_iso
from ..model.samples import VALIDITY_RULES, GpuSample, Validity
from ..model.units import clock_text, format_duration
from ..scheduling.snapshot import IdleAction, Snapshot, kernel_activity_of
from .policy import IdlePolicies, IdlePolicy, ReclaimMode

__all__ = [
    "IdleArbiter",
    "IdleInput",
    "IdleVerdict",
    "KERNEL_KEPT",
    "KERNEL_MANAGER",
    "KernelActivity",
    "LadderState",
    "USER_SERVER_REPORT",
    "advance_ladder",
    "busy_kernel_evidence",
    "default_idle_arbiter",
    "device_keys",
    "evaluate_idle",
    "extend_keepalive",
    "judge_running",
    "ladder_step",
    "ladder_times",
    "limit_text",
    "window_evidence",
]

DeviceKey = tuple[str, int | None]


@dataclass(frozen=True, slots=True)
class KernelActivity:
    """What the Jupyter server knows about a lease's kernel.

    Attributes:
        execution_state: ``"idle"``, ``"busy"``, ``"starting"``, ... (jupyter_client's states).
        last_activity: last time the kernel executed or emitted output (aware UTC).
        unknown_why: with ``execution_state`` ``unknown``, why it is not known (``kernel state
            unknown in hub mode: its server's last kernel report is 3 min old``); "" otherwise.
        source: who said the state: :data:`KERNEL_MANAGER` (an embedded server's own kernel
            manager) or :data:`USER_SERVER_REPORT` (hub mode: the user's server's report, which
            the user's own code can send too — red39 R8); "" when not said.
    """

    execution_state: str
    last_activity: datetime | None = None
    unknown_why: str = ""
    source: str = ""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> KernelActivity | None:
        """Build from ``Snapshot.kernels[kernel_id]`` (``{"execution_state", "last_activity"}``;
        ``last_activity`` an aware datetime or ISO 8601 text with offset).

        Raises:
            TimestampError: ``last_activity`` text without a UTC offset.
        """
        if not data:
            return None
        last = data.get("last_activity")
        if last is not None and not isinstance(last, datetime):
            last = parse_utc(str(last), field="kernels.last_activity")  # ISO text from jupyter_server
        return cls(execution_state=str(data.get("execution_state", "unknown")), last_activity=last,
                   unknown_why=str(data.get("unknown_why") or "")[:200], source=str(data.get("source") or "")[:80])


KERNEL_MANAGER = "this server's kernel manager"
"""``source`` of a kernel state an embedded server read from its own kernel manager (nobody else's word)."""

USER_SERVER_REPORT = "its user's server's report"
"""``source`` of a kernel state the hub's service took from a user server's ``PUT api/sched/kernels``: the
user's own word (their code holds the same token), believed only up to ``busy_kernel_window_s`` with idle GPUs."""


@dataclass(frozen=True, slots=True)
class IdleVerdict:
    """Whether work is idle, since when, and under which rule.

    Attributes:
        idle: the idle period has begun (``idle_since`` set); reclaim waits for ``limit_s``.
        idle_since: start of the current idle period (None when not idle).
        limit_s: how long the period must last before reclaim under ``rule``, seconds.
        rule: ``"kernel_and_gpu"`` (lease, kernel idle), ``"gpu_busy_kernel"`` (lease, kernel busy
            or unknown, GPU idle), ``"gpu"`` (batch job) or ``""`` (not idle).
        mode: what reclaim does under this rule.
        reason: one sentence: the reclaim reason when idle (``kernel idle and GPU < 5% for 120 min``),
            else why not (``GPU-1111 at 87 % at Mar 2 08:45:00 UTC``).
        devices: the device keys ``(gpu_uuid, mig_instance)`` the verdict looked at.
        open_start: the idle run starts at the first sample given (no activity seen before it in
            the lookback), so the period may have begun earlier: the ladder then keeps the start
            it recorded (a sliding lookback must not restart the idle clock).
        paused_s: seconds of the period during which readings were blank or rejected: the idle
            clock did not run (case 009), so the deadline moves back by as much.
        kernel_state: a lease's kernel state the verdict judged (``idle``, ``busy``, ``unknown``,
            ...); "" for batch work. A lease idle under ``gpu_busy_kernel`` with a ``busy`` kernel
            is still active work (hub activity, :mod:`jupyter_sched.hub.activity`).
        kernel_source: who said ``kernel_state`` (:attr:`KernelActivity.source`); "" when not said.
        threshold_pct: the idle threshold the verdict used, % (the evidence's numbers).
        kernel_active_at: the kernel's said last activity where the user's word decides (hub: a
            user server's report, red41 R3): under ``kernel_and_gpu`` it moved the deadline past the
            GPUs' own idle start — a later one than the warning's clears the warning (activity
            resumed); under ``gpu_busy_kernel`` it is what the bound overrode (the evidence says it).
    """

    idle: bool
    idle_since: datetime | None = None
    limit_s: float = 0.0
    rule: str = ""
    mode: ReclaimMode = ReclaimMode.NOTIFY
    reason: str = ""
    devices: tuple[DeviceKey, ...] = ()
    open_start: bool = False
    paused_s: float = 0.0
    kernel_state: str = ""
    kernel_source: str = ""
    threshold_pct: float = 0.0
    kernel_active_at: datetime | None = None


class IdleArbiter(Protocol):
    """Type of the admin hook: ``(*, job, samples, kernel, policy, now) -> IdleVerdict``.

    A callable protocol, so third-party rules type-check against it; the default is
    :func:`default_idle_arbiter`.
    """

    def __call__(self, *, job: Job, samples: Sequence[GpuSample], kernel: KernelActivity | None,
                 policy: IdlePolicy, now: datetime) -> IdleVerdict:
        """Return the verdict for ``job`` at ``now``."""
        ...


@dataclass(frozen=True, slots=True)
class LadderState:
    """What the engine remembers between cycles about one job's ladder (persisted by the engine).

    Attributes:
        warned_at: when the warning for the current deadline was delivered (a keepalive clears it,
            so a new deadline gets a new warning).
        warned_idle_since: start of the idle period the ladder is tracking (set by the warning,
            kept through a keepalive and the reclaim, cleared when activity resumes).
        keepalive_until: the user asked to keep the GPUs until then.
        keepalive_used: the one keepalive of this allocation was used.
        reclaimed_at: reclaim step already issued (for ``notify`` mode: do not repeat).
    """

    warned_at: datetime | None = None
    warned_idle_since: datetime | None = None
    keepalive_until: datetime | None = None
    keepalive_used: bool = False
    reclaimed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class IdleInput:
    """``Snapshot.telemetry[job_id]``: the samples of the job's devices and its ladder state.

    Attributes:
        samples: recent samples of the job's GPUs / MIG instances (at least ``window`` long;
            1-minute rollups are fine), any order.
        ladder: the engine's remembered ladder state.
        devices: the device keys the job holds (see :func:`device_keys`); empty = whatever
            the samples show.
    """

    samples: Sequence[GpuSample] = ()
    ladder: LadderState = field(default_factory=LadderState)
    devices: tuple[DeviceKey, ...] = ()


def device_keys(gpu_uuids: Iterable[str], inventory: Inventory) -> tuple[DeviceKey, ...]:
    """Map allocated GPU / ``MIG-...`` UUIDs to sample keys ``(parent GPU uuid, GI id or None)``."""
    by_uuid = inventory.gpu_by_uuid()
    keys: list[DeviceKey] = []
    for uuid in gpu_uuids:
        gpu = by_uuid.get(uuid)
        if gpu is None or gpu.uuid == uuid:
            keys.append((uuid, None))
            continue
        mig = next(m for m in gpu.mig_devices if m.uuid == uuid)
        keys.append((gpu.uuid, mig.gpu_instance_id))
    return tuple(keys)


def _minutes(seconds: float) -> str:
    minutes = seconds / 60.0
    return f"{minutes:.0f} min" if abs(minutes - round(minutes)) < 1e-9 else f"{minutes:.1f} min"


def _number(minutes: float) -> str:
    return f"{minutes:.0f}" if abs(minutes - round(minutes)) < 1e-9 else f"{minutes:.1f}"


def limit_text(window_s: float, grace_s: float = 0.0) -> str:
    """The limit as the admin set it: ``60 min``, or ``60 + 15 min`` with a grace (case 013: never
    the sum, ``75 min``, which is not a number the admin wrote down)."""
    if grace_s <= 0:
        return _minutes(window_s)
    return f"{_number(window_s / 60.0)} + {_number(grace_s / 60.0)} min"


@dataclass(frozen=True, slots=True)
class _Run:
    """The trailing idle run of a job's devices (see :func:`_gpu_idle_run`)."""

    since: datetime | None
    why: str
    open_start: bool = False
    paused_s: float = 0.0
    no_process: bool = False
    latched: bool = False


def _device(s: GpuSample) -> str:
    return s.gpu_uuid + ("" if s.mig_instance is None else f" MIG instance {s.mig_instance}")


def _unknown_why(s: GpuSample) -> str:
    note = s.note or VALIDITY_RULES.get(s.validity_rule, (s.validity, ""))[1] or "utilization unknown"
    return f"{_device(s)}: {note}"


def _gpu_idle_run(samples: Sequence[GpuSample], devices: Sequence[DeviceKey], policy: IdlePolicy,
                  now: datetime) -> _Run:
    """The start of the trailing run in which every allocated device is idle, and how long of it
    was paused by unknown readings.

    Each instant (samples grouped by timestamp) is *active* when any device is at or above the
    threshold, *unknown* when any device's reading is blank or out of range (and none is active),
    else *idle* (:meth:`GpuSample.idle_state`; a confirmed latch is idle). An active instant ends
    the run; an unknown one pauses it (the time until the next instant does not count: blank
    neither advances nor resets the idle clock, case 009); a gap longer than ``max_gap_s`` with no
    sample at all restarts it (nothing was watching). A run cannot start on an unknown instant.
    """
    ordered = sorted((s for s in samples if s.timestamp <= now), key=lambda s: s.timestamp)
    if not ordered:
        return _Run(None, "no GPU samples yet")
    seen = {s.key for s in ordered}
    missing = [k for k in devices if k not in seen]
    if missing:
        uuid, gi = missing[0]
        return _Run(None, f"no samples for {uuid}" + ("" if gi is None else f" MIG instance {gi}"))
    gap = timedelta(seconds=policy.max_gap_s)
    if now - ordered[-1].timestamp > gap:
        # said in the audit and the job's message: the one formatter, with date and seconds (new user 17, N6)
        return _Run(None, f"telemetry stale: last sample at {clock_text(ordered[-1].timestamp, None, seconds=True)}")
    groups: dict[datetime, list[GpuSample]] = {}
    for s in ordered:
        groups.setdefault(s.timestamp, []).append(s)
    since: datetime | None = None
    # the last instant that stopped (active) or could not start (unknown) the run: worded once at the end,
    # not at every such instant (a day of 1-s samples is ~86,000 of them)
    last_why: tuple[GpuSample, datetime, bool] | None = None
    paused = 0.0
    no_process = latched = False
    previous: datetime | None = None
    previous_unknown = False
    for when, group in groups.items():
        if since is not None and previous is not None:
            if when - previous > gap:
                since = None
            elif previous_unknown:
                paused += (when - previous).total_seconds()
        states = [(s, s.idle_state(policy.threshold_pct)) for s in group]
        active = [s for s, state in states if state == "active"]
        unknown = [s for s, state in states if state == "unknown"]
        previous, previous_unknown = when, bool(unknown) and not active
        if active:
            since, last_why = None, (active[0], when, True)
        elif unknown:
            if since is None:
                last_why = (unknown[0], when, False)
        else:
            if since is None:
                since, paused, no_process, latched = when, 0.0, True, False
            no_process = no_process and all(s.known_process_count == 0 for s in group)
            latched = latched or any(s.validity_rule == "util_latch" for s in group)
    if since is not None and previous_unknown and previous is not None:
        paused += (now - previous).total_seconds()
    why = ""
    if last_why is not None:
        s, when, was_active = last_why
        why = (f"{_device(s)} at {s.activity_pct:.0f} % at {clock_text(when, None, seconds=True)}" if was_active
               else _unknown_why(s))
    return _Run(since, why, since is not None and since == ordered[0].timestamp, paused, no_process, latched)


def _gpu_reason(run: _Run, policy: IdlePolicy, window_s: float) -> str:
    """``GPU < 5 % for 60 min``; with no process on any device ``no process and < 5 % for 60 min``
    (case 025); with a confirmed latch ``no process and 0 MiB for 60 min (utilization 100 %
    ignored: latch suspected)`` (case 026)."""
    thr = f"{policy.threshold_pct:g} %"
    if run.latched:
        return f"no process and 0 MiB for {_minutes(window_s)} (utilization 100 % ignored: latch suspected)"
    if run.no_process:
        return f"no process and < {thr} for {_minutes(window_s)}"
    return f"GPU < {thr} for {_minutes(window_s)}"


def default_idle_arbiter(*, job: Job, samples: Sequence[GpuSample], kernel: KernelActivity | None,
                         policy: IdlePolicy, now: datetime, devices: Sequence[DeviceKey] = ()) -> IdleVerdict:
    """The documented default rule (module docstring, step 1).

    Args:
        job: the running job or lease.
        samples: its devices' samples (any order; those after ``now`` are ignored), with their
            validity (``jupyter_sched.model.samples``).
        kernel: the lease's kernel activity (None for batch jobs or when unknown).
        policy: the policy for the job's kind and priority class.
        now: the cycle's time (aware UTC).
        devices: device keys the job holds; each must have samples.

    Returns:
        :class:`IdleVerdict`. For a lease with an idle kernel: rule ``kernel_and_gpu``,
        ``idle_since = max(GPU idle since, kernel last activity)``, limit ``window_s``, reason
        ``kernel idle and GPU < 5 % for 120 min``. For a lease with a busy kernel: rule
        ``gpu_busy_kernel`` with ``busy_kernel_window_s``; on a hub (a user server's report, red41 R3)
        an idle kernel's verdict starts at the GPUs' idle start with limit ``window_s`` past the said
        activity, or ``gpu_busy_kernel`` once that would pass the bound; with no kernel: rule ``gpu_no_kernel``
        (``window_s``; one held by a kernel this server did not start says :data:`KERNEL_UNSEEN`); an
        unknown/starting one: rule ``kernel_unknown`` (``window_s`` plus
        :data:`KERNEL_STATE_BOUND_S`), both with ``lease_mode``. For batch jobs: rule ``gpu``; for
        inference services: rule ``service`` (mode ``service_mode``, notify by default: a
        service idle at night is low efficiency, not abandoned work; case 013 S4).
        ``paused_s`` is the time blank readings paused the clock.
    """
    keys = tuple(devices) or tuple(dict.fromkeys(s.key for s in samples))
    run = _gpu_idle_run(samples, keys, policy, now)
    if run.since is None:
        return IdleVerdict(idle=False, reason=run.why, devices=keys)
    if job.spec.kind is JobKind.INFERENCE:
        return IdleVerdict(idle=True, idle_since=run.since, limit_s=policy.window_s, rule="service",
                           mode=policy.service_mode,
                           reason=f"low efficiency: {_gpu_reason(run, policy, policy.window_s)}",
                           open_start=run.open_start, devices=keys, paused_s=run.paused_s)
    if not job.is_lease:
        return IdleVerdict(idle=True, idle_since=run.since, limit_s=policy.window_s, rule="gpu",
                           mode=policy.job_mode, reason=_gpu_reason(run, policy, policy.window_s),
                           open_start=run.open_start, devices=keys, paused_s=run.paused_s)
    thr = f"{policy.threshold_pct:g} %"
    if not job.spec.kernel_id:
        # Red team 17, R8: a lease asked for without a kernel has no kernel to be busy; the GPU is the
        # only evidence, under the normal lease window and mode. One a kernel this server did not start
        # holds (released_at_exit) has a kernel whose state is not seen: said so, never "no kernel"
        # (s41 race41: its queue line said "held by a kernel" and "no kernel is bound" at once).
        unseen = job.spec.released_at_exit
        return IdleVerdict(idle=True, idle_since=run.since, limit_s=policy.window_s, rule="gpu_no_kernel",
                           mode=policy.lease_mode,
                           reason=f"{_gpu_reason(run, policy, policy.window_s)}, "
                                  f"{KERNEL_UNSEEN if unseen else NO_KERNEL_BOUND}",
                           open_start=run.open_start, devices=keys, paused_s=run.paused_s,
                           kernel_state="unknown" if unseen else "none")
    state = "unknown" if kernel is None else kernel.execution_state
    bound = policy.busy_kernel_window_s
    # Red41 R3: on a hub the whole report (state AND last_activity) is its user's word; the GPUs idle
    # for ``bound`` reclaim whatever it says, and the period stays the GPUs' own (run.since), so no
    # alternation of reports restarts the ladder.
    users_word = kernel is not None and kernel.source == USER_SERVER_REPORT and bound is not None
    if kernel is not None and state == "idle":
        active = None if kernel.last_activity is None else min(kernel.last_activity, now)
        since = run.since if active is None else max(run.since, active)
        if users_word and bound is not None:
            return _users_idle_word(run, policy, bound, kernel, since, active, keys)
        return IdleVerdict(idle=True, idle_since=since, limit_s=policy.window_s, rule="kernel_and_gpu",
                           mode=policy.lease_mode,
                           reason=f"kernel idle and GPU < {thr} for {_minutes(policy.window_s)}",
                           open_start=run.open_start and since == run.since, devices=keys, paused_s=run.paused_s,
                           kernel_state=state)
    said = _kernel_said(kernel)
    if state != "busy":
        # Red team 17, R8: unknown, starting (or dead, restarting) is not busy: the normal rule, given
        # KERNEL_STATE_BOUND_S more for the state to be reported, and said as what is known.
        limit = policy.window_s + min(KERNEL_STATE_BOUND_S, policy.window_s)
        if users_word and bound is not None:
            limit = min(limit, bound)  # "starting" from a user's server is its user's word too (red41 R3)
        return IdleVerdict(idle=True, idle_since=run.since, limit_s=limit, rule="kernel_unknown",
                           mode=policy.lease_mode,
                           reason=f"GPU < {thr} for {_minutes(limit)}, {_not_known(said, state)}",
                           open_start=run.open_start, devices=keys, paused_s=run.paused_s, kernel_state=state)
    if policy.busy_kernel_window_s is None:
        return IdleVerdict(idle=False, reason=said, devices=keys, kernel_state=state)
    return IdleVerdict(idle=True, idle_since=run.since, limit_s=policy.busy_kernel_window_s, rule="gpu_busy_kernel",
                       mode=policy.busy_kernel_mode,
                       reason=f"GPU < {thr} for {_minutes(policy.busy_kernel_window_s)} while the {said} "
                              f"({KERNEL_KEPT})", open_start=run.open_start,
                       devices=keys, paused_s=run.paused_s, kernel_state=state,
                       kernel_source=kernel.source if kernel is not None else "", threshold_pct=policy.threshold_pct)


def _users_idle_word(run: _Run, policy: IdlePolicy, bound: float, kernel: KernelActivity, since: datetime,
                     active: datetime | None, keys: tuple[DeviceKey, ...]) -> IdleVerdict:
    """A hub lease whose kernel is reported idle (red41 R3): reclaimed ``window_s`` after the said last
    activity, but never later than ``bound`` after the GPUs' own idle start — the period is the GPUs'
    (``idle_since = run.since``), the said activity only lengthens its limit, up to the bound."""
    thr = f"{policy.threshold_pct:g} %"
    start = since if run.since is None else run.since  # set: an idle verdict has a run
    base = IdleVerdict(idle=True, idle_since=start, open_start=run.open_start, devices=keys,
                       paused_s=run.paused_s, kernel_state="idle", kernel_source=kernel.source,
                       threshold_pct=policy.threshold_pct)
    extra = (since - start).total_seconds()
    if extra + policy.window_s < bound:
        return replace(base, limit_s=policy.window_s + extra, rule="kernel_and_gpu", mode=policy.lease_mode,
                       reason=f"kernel idle and GPU < {thr} for {_minutes(policy.window_s)}",
                       kernel_active_at=since if extra > 0 else None)
    said = "kernel is idle" + ("" if active is None else f", active at {clock_text(active, None, seconds=True)}")
    return replace(base, limit_s=bound, rule="gpu_busy_kernel", mode=policy.busy_kernel_mode,
                   reason=f"GPU < {thr} for {_minutes(bound)} while the {said} ({kernel.source}; {KERNEL_KEPT})",
                   kernel_active_at=active)


NO_KERNEL_BOUND = "no kernel is bound to this lease"
"""The idle rule's words for a lease asked for with no kernel (red team 17, R8)."""

KERNEL_UNSEEN = "its kernel's state is not seen by this server"
"""The idle rule's words for a lease a kernel this server did not start holds (``released_at_exit``):
that kernel lives, but reports no state here, so the GPU alone decides."""

KERNEL_KEPT = "the kernel keeps running"
"""What a lease's idle reason or release message says of its kernel, once (newuser35 n6: said twice in one line)."""

KERNEL_STATE_BOUND_S = 60.0
"""Seconds past the normal window a lease whose kernel state is unknown or ``starting`` keeps its GPUs
(two 30-s kernel reports; never more than the window itself): then the normal lease rule applies."""


def _not_known(said: str, state: str) -> str:
    """``kernel state unknown (none reported)``, ``kernel is still starting (not reported idle or
    busy)``, ``kernel is dead (not busy)``: what is known, never *busy* or *keeps running*."""
    if state == "unknown":
        return said
    if state == "starting":
        return "kernel is still starting (not reported idle or busy)"
    return f"{said} (not busy)"


def _kernel_said(kernel: KernelActivity | None) -> str:
    """``kernel is busy``; an unknown state said as unknown with its cause, never as busy (red team
    15, R6): ``kernel state unknown in hub mode: its server's last kernel report is 3 min old``."""
    if kernel is None:
        return "kernel state unknown (none reported)"
    if kernel.execution_state == "unknown":
        return kernel.unknown_why or "kernel state unknown"
    return f"kernel is {kernel.execution_state}"


def _evidence(samples: Sequence[GpuSample], verdict: IdleVerdict, now: datetime, limit_s: float) -> dict[str, Any]:
    """The window of samples behind a decision, as per-minute max activity per device (JSON-able)."""
    start = now - timedelta(seconds=limit_s)
    per_minute: dict[tuple[str, str], dict[str, Any]] = {}
    for s in samples:
        if not start <= s.timestamp <= now:
            continue
        minute = s.timestamp.replace(second=0, microsecond=0)
        device = s.gpu_uuid if s.mig_instance is None else f"{s.gpu_uuid}/{s.mig_instance}"
        row = per_minute.setdefault((device, to_iso(minute) or ""), {
            "device": device, "minute": to_iso(minute), "max_activity_pct": None, "memory_used_mib": None, "n": 0})
        if s.activity_pct is not None:
            row["max_activity_pct"] = max(row["max_activity_pct"] or 0.0, round(s.activity_pct, 2))
        if s.memory_used_mib is not None:
            row["memory_used_mib"] = max(row["memory_used_mib"] or 0.0, s.memory_used_mib)
        row["n"] += 1
    out: dict[str, Any] = {"rule": verdict.rule, "idle_since": to_iso(verdict.idle_since), "limit_s": limit_s,
                           "window_start": to_iso(start), "window_end": to_iso(now),
                           "samples": sorted(per_minute.values(), key=lambda r: (r["device"], r["minute"]))}
    if verdict.rule == "gpu_busy_kernel" and verdict.idle_since is not None:
        out["kernel"] = busy_kernel_evidence(samples, since=verdict.idle_since, now=now,
                                             threshold_pct=verdict.threshold_pct, state=verdict.kernel_state,
                                             source=verdict.kernel_source, active_at=verdict.kernel_active_at)
    return out


def busy_kernel_evidence(samples: Sequence[GpuSample], *, since: datetime, now: datetime, threshold_pct: float,
                         state: str, source: str, active_at: datetime | None = None) -> dict[str, Any]:
    """What a busy-kernel step rests on (red39 R8): the kernel's *said* state, who said it, and the
    GPUs' own valid samples of the period — the one evidence its user cannot forge. ``summary``: ``kernel
    reported busy while its GPUs were idle for 4h00m (its user's server's report; valid samples: 240,
    all < 5 %, max 0.4 %; 3 blank or suspect left out)``; a kernel said idle with fresh activity (red41 R3):
    ``kernel reported idle, active at Dec 7 20:49:10 UTC, while …`` and ``last_activity_said``. Pure; JSON-able."""
    period = [s for s in samples if since <= s.timestamp <= now]
    valid = [s for s in period if s.validity is Validity.VALID and s.activity_pct is not None]
    peak = max((s.activity_pct or 0.0 for s in valid), default=0.0)
    left = len(period) - len(valid)
    said = f"{source}; " if source else ""
    active = "" if active_at is None else f", active at {clock_text(active_at, None, seconds=True)},"
    summary = (f"kernel reported {state or 'busy'}{active} while its GPUs were idle for "
               f"{format_duration((now - since).total_seconds())} ({said}valid samples: {len(valid)}, all < "
               f"{threshold_pct:g} %, max {peak:.1f} %" + (f"; {left} blank or suspect left out)" if left else ")"))
    return {"state": state, "source": source, "busy_since_at_most": to_iso(since), "valid_samples": len(valid),
            "left_out_samples": left, "max_activity_pct": round(peak, 2), "threshold_pct": threshold_pct,
            "last_activity_said": to_iso(active_at), "summary": summary}


def window_evidence(samples: Sequence[GpuSample], *, rule: str, idle_since: datetime | None, now: datetime,
                    limit_s: float) -> dict[str, Any]:
    """The evidence of a ladder step (the same shape a ``reclaim`` step carries): the samples of
    ``[now - limit_s, now]`` as per-minute maximum activity per device, with the rule and the idle
    start. The engine attaches it to warnings. Pure; JSON-able."""
    return _evidence(samples, IdleVerdict(idle=idle_since is not None, idle_since=idle_since, rule=rule), now, limit_s)


def ladder_times(verdict: IdleVerdict, ladder: LadderState, policy: IdlePolicy) -> tuple[datetime, datetime, datetime]:
    """``(idle since, warning due, reclaim due)`` of an idle verdict under ``policy`` (module
    docstring, step 2): the period's start (the ladder's recorded one when the lookback slid past
    it), ``deadline = since + paused + limit + grace`` or a later keepalive, and the warning
    ``grace_s + warning_s`` before the deadline. Once this period's warning was delivered, the
    reclaim is due no sooner than ``warning_s + grace_s`` after it — the time :func:`ladder_step`
    reclaims at, so ``GET idle`` shows the deadline that is kept even when the warning went out
    late (a restart, a slow cycle). Pure.

    Raises:
        ValueError: ``verdict`` is not idle.
    """
    if verdict.idle_since is None:
        raise ValueError("ladder_times needs an idle verdict")
    since = verdict.idle_since
    if verdict.open_start and ladder.warned_idle_since is not None and ladder.warned_idle_since <= since:
        since = ladder.warned_idle_since  # the lookback slid past the recorded start; the period goes on
    deadline = since + timedelta(seconds=verdict.paused_s + verdict.limit_s + policy.grace_s)
    if ladder.keepalive_until is not None and ladder.keepalive_until > deadline:
        deadline = ladder.keepalive_until
    notice = timedelta(seconds=policy.warning_s + policy.grace_s)
    warn_at = deadline - notice
    if ladder.warned_at is not None and ladder.warned_idle_since == since:
        deadline = max(deadline, ladder.warned_at + notice)
    return since, warn_at, deadline


def ladder_step(*, job: Job, verdict: IdleVerdict, ladder: LadderState, policy: IdlePolicy, now: datetime,
                samples: Sequence[GpuSample] = ()) -> IdleAction | None:
    """Decide this cycle's ladder step for one job (module docstring, step 2). Pure.

    Returns:
        ``IdleAction`` with stage ``warn``, ``reclaim`` or ``clear``, or None (nothing to do).
        The engine persists ``advance_ladder(ladder, action, now=...)`` after delivering it.
    """
    uuids = job.allocation.all_gpu_uuids() if job.allocation else ()
    # A reclaimed_at without a tracked period is stale (the period was cleared): ignore it.
    tracking = ladder.warned_idle_since is not None or ladder.warned_at is not None
    if not verdict.idle or verdict.idle_since is None:
        if tracking:
            return IdleAction(job_id=job.id, stage="clear", reason=f"active again: {verdict.reason}",
                              gpu_uuids=uuids)
        return None
    since, warn_at, deadline = ladder_times(verdict, ladder, policy)
    if tracking and ladder.warned_idle_since != since:
        # Activity in between (or a new kernel execution): a new idle period; start the ladder over.
        return IdleAction(job_id=job.id, stage="clear", reason="a new idle period began", gpu_uuids=uuids)
    if tracking and ladder.reclaimed_at is not None:
        return None
    if (tracking and ladder.warned_at is not None and verdict.rule == "kernel_and_gpu"
            and verdict.kernel_active_at is not None and verdict.kernel_active_at > ladder.warned_at):
        # a hub kernel ran after the warning (red41 R3: the period stays the GPUs', its limit grew): a new warning
        return IdleAction(job_id=job.id, stage="clear", gpu_uuids=uuids,
                          reason=f"active again: the kernel ran at "
                                 f"{clock_text(verdict.kernel_active_at, None, seconds=True)}")
    notice = timedelta(seconds=policy.warning_s + policy.grace_s)
    if ladder.warned_at is None:
        if now < warn_at:
            return None
        deadline = max(deadline, now + notice)
        # kernel_and_gpu counts window_s from the kernel's last activity (a hub's limit_s runs from the GPUs')
        limit = limit_text(policy.window_s if verdict.rule == "kernel_and_gpu" else verdict.limit_s, policy.grace_s)
        return IdleAction(job_id=job.id, stage="warn", action=verdict.mode.value, deadline=deadline, idle_since=since,
                          gpu_uuids=uuids, reason=f"{verdict.reason}: GPUs will be {_verb(verdict.mode)} at "
                                                  # kept in the audit: the date and the seconds, by the one
                                                  # formatter (new user 17, N6: raw ISO with microseconds)
                                                  f"{clock_text(deadline, None, seconds=True)} unless activity "
                                                  f"resumes (limit {limit})")
    effective = deadline  # ladder_times: no sooner than the notice after the warning
    if now < effective:
        return None
    return IdleAction(job_id=job.id, stage="reclaim", action=verdict.mode.value, reason=verdict.reason,
                      deadline=effective, idle_since=since, gpu_uuids=uuids,
                      evidence=_evidence(samples, replace(verdict, idle_since=since), now,
                                         verdict.limit_s + verdict.paused_s + policy.grace_s))


def _verb(mode: ReclaimMode) -> str:
    return {ReclaimMode.RELEASE: "released", ReclaimMode.REQUEUE: "requeued", ReclaimMode.STOP: "stopped",
            ReclaimMode.NOTIFY: "reported as idle"}[mode]


def evaluate_idle(snapshot: Snapshot, policies: IdlePolicies | None = None,
                  arbiter: IdleArbiter | None = None) -> tuple[IdleAction, ...]:
    """Run idle detection and the ladder for every running job in ``snapshot``. Pure.

    Reads ``snapshot.telemetry[job_id]`` (an :class:`IdleInput`; jobs without one are skipped —
    no telemetry is never evidence of idleness) and ``snapshot.kernels[job.spec.kernel_id]``.

    Args:
        snapshot: the cycle's snapshot (``now`` is its clock).
        policies: admin policy (default :class:`IdlePolicies`).
        arbiter: the admin hook, keyword-only ``(*, job, samples, kernel, policy, now)``;
            default :func:`default_idle_arbiter`.

    Returns:
        The ladder steps of this cycle, in job order.
    """
    actions: list[IdleAction] = []
    for job, entry, policy, verdict in judge_running(snapshot, policies, arbiter):
        action = ladder_step(job=job, verdict=verdict, ladder=entry.ladder, policy=policy, now=snapshot.now,
                             samples=entry.samples)
        if action is not None:
            actions.append(action)
    return tuple(actions)


def judge_running(snapshot: Snapshot, policies: IdlePolicies | None = None, arbiter: IdleArbiter | None = None
                  ) -> Iterator[tuple[Job, IdleInput, IdlePolicy, IdleVerdict]]:
    """``(job, its IdleInput, its policy, the verdict)`` for every running job with telemetry
    whose policy is enabled, in job order (what :func:`evaluate_idle` and the idle-candidate list
    share). Pure."""
    policies = policies or IdlePolicies()
    for job in snapshot.jobs:
        if job.state is not JobState.RUNNING:
            continue
        entry = snapshot.telemetry.get(job.id)
        if not isinstance(entry, IdleInput):
            continue
        policy = policies.for_job(job)
        if not policy.enabled:
            continue
        kernel = (KernelActivity.from_mapping(kernel_activity_of(snapshot.kernels, job.spec.user, job.spec.kernel_id))
                  if job.is_lease else None)
        if arbiter is None:
            verdict = default_idle_arbiter(job=job, samples=entry.samples, kernel=kernel, policy=policy,
                                           now=snapshot.now, devices=entry.devices)
        else:
            verdict = arbiter(job=job, samples=entry.samples, kernel=kernel, policy=policy, now=snapshot.now)
        yield job, entry, policy, _not_before_start(verdict, job)


def _not_before_start(verdict: IdleVerdict, job: Job) -> IdleVerdict:
    """``verdict`` with its idle period begun no earlier than the job's current allocation: work
    is never idle since before it started (new user 6 F14: a job requeued by a preemption and
    started again inherited its GPU's idle clock; an admin's arbiter may be given older samples)."""
    start = job.started_at or job.admitted_at
    if verdict.idle_since is None or start is None or verdict.idle_since >= start:
        return verdict
    return replace(verdict, idle_since=start, open_start=False)


def advance_ladder(ladder: LadderState, action: IdleAction | None, *, now: datetime) -> LadderState:
    """The ladder state after the engine delivered ``action`` at ``now`` (persist the result).

    ``warn`` records ``warned_at`` and the period's ``warned_idle_since``; ``reclaim`` records
    ``reclaimed_at``; ``clear`` forgets the period (a used keepalive stays used for this allocation).
    """
    if action is None:
        return ladder
    if action.stage == "warn":
        return replace(ladder, warned_at=now, warned_idle_since=action.idle_since)
    if action.stage == "reclaim":
        return replace(ladder, reclaimed_at=now, warned_idle_since=action.idle_since)
    return replace(ladder, warned_at=None, warned_idle_since=None, reclaimed_at=None)


def extend_keepalive(ladder: LadderState, *, now: datetime, policy: IdlePolicy,
                     requested_s: float | None = None) -> LadderState:
    """A user's one keepalive: keep the GPUs until ``now + requested_s`` (default: the admin max).

    Raises:
        ConflictError: the keepalive of this allocation was already used, or keepalive is off.
        ValidationError: ``requested_s`` is not in ``(0, keepalive_max_s]``.
    """
    if policy.keepalive_max_s <= 0:
        raise ConflictError("keepalive is disabled by the admin policy", field="keepalive",
                            hint="release the GPUs and request them again when needed")
    if ladder.keepalive_used:
        # until when the one it used keeps them, while it does (newuser39 n11: the refusal did not say)
        kept = ladder.keepalive_until
        still = (f": it keeps its GPUs while idle until {clock_text(kept, now)} (they are reclaimed after "
                 f"{_minutes(policy.window_s + policy.grace_s)} idle, not before then)") \
            if kept is not None and kept > now else ""
        raise ConflictError(f"keepalive was already used for this allocation{still}", field="keepalive",
                            hint="use the GPUs (any activity resets the idle clock) or request them again later")
    seconds = policy.keepalive_max_s if requested_s is None else requested_s
    if not 0 < seconds <= policy.keepalive_max_s:
        raise ValidationError(f"keepalive of {seconds:g} s is outside (0, {policy.keepalive_max_s:g}] s",
                              field="keepalive.seconds", hint=f"ask for at most {_minutes(policy.keepalive_max_s)}")
    # The idle period goes on (``warned_idle_since`` kept); the new deadline gets its own warning.
    return replace(ladder, keepalive_until=now + timedelta(seconds=seconds), keepalive_used=True, warned_at=None)
