"""Idle detection and the reclamation ladder (pure), cases 008 and 012."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.errors import ConflictError, ValidationError
from jupyter_sched.model import GPU, Inventory, Job, JobKind, JobSpec, JobState, MigDevice, Node, PriorityClass
from jupyter_sched.model.job import Allocation
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.reclaim import (
    IdleInput,
    IdlePolicies,
    IdlePolicy,
    IdleVerdict,
    KernelActivity,
    LadderState,
    ReclaimMode,
    advance_ladder,
    default_idle_arbiter,
    evaluate_idle,
    extend_keepalive,
    idle_candidates,
)
from jupyter_sched.scheduling.snapshot import IdleAction, Snapshot
from jupyter_sched.telemetry import SampleStore, idle_input, parse_dcgm_text

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)
GPU_UUID = "GPU-1111"


def minutes(m: float) -> datetime:
    return T0 + timedelta(minutes=m)


def make_job(job_id: str = "lease-1", *, lease: bool = True, gpus: Sequence[str] = (GPU_UUID,),
             priority: PriorityClass = PriorityClass.NORMAL, kernel: str = "k1") -> Job:
    spec = JobSpec(name=job_id, user="carol", kind=JobKind.LEASE if lease else JobKind.TRAINING, priority=priority,
                   kernel_id=kernel if lease else None)
    return Job(id=job_id, spec=spec, state=JobState.RUNNING, started_at=T0,
               allocation=Allocation(node="n1", gpu_uuids=tuple(gpus)))


def sample(t: datetime, util: float | None, *, uuid: str = GPU_UUID, mig: int | None = None,
           memory: float = 0.0) -> GpuSample:
    return GpuSample(gpu_uuid=uuid, mig_instance=mig, timestamp=t, utilization_pct=util, memory_used_mib=memory,
                     memory_total_mib=81920.0)


def series(util: Callable[[float], float | None], start: float, end: float, step: float = 1.0,
           **kwargs: object) -> list[GpuSample]:
    """One sample every ``step`` minutes in [start, end], utilization ``util(minute)``."""
    out = []
    m = start
    while m <= end + 1e-9:
        out.append(sample(minutes(m), util(m), **kwargs))  # type: ignore[arg-type]
        m += step
    return out


def run_timeline(job: Job, samples: list[GpuSample], kernel: Callable[[float], dict[str, object] | None],
                 policy: IdlePolicy, until: float, every: float = 5.0, lookback: float | None = None,
                 keepalive: tuple[float, float] | None = None) -> list[tuple[float, IdleAction]]:
    """Evaluate every ``every`` minutes from 0 to ``until`` as the engine would: only the last
    ``lookback`` minutes of samples are passed; ``keepalive=(minute, seconds)`` asks for one."""
    ladder = LadderState()
    out: list[tuple[float, IdleAction]] = []
    m = 0.0
    while m <= until:
        now = minutes(m)
        k = kernel(m)
        if keepalive is not None and m == keepalive[0]:
            ladder = extend_keepalive(ladder, now=now, policy=policy, requested_s=keepalive[1])
        start = now - timedelta(minutes=lookback) if lookback is not None else minutes(-1)
        snapshot = Snapshot(now=now, inventory=Inventory(), jobs=(job,),
                            telemetry={job.id: IdleInput(samples=[s for s in samples if start <= s.timestamp <= now],
                                                         ladder=ladder, devices=((GPU_UUID, None),))},
                            kernels={"k1": k} if k else {})
        actions = evaluate_idle(snapshot, IdlePolicies(default=policy))
        for action in actions:
            out.append((m, action))
            ladder = advance_ladder(ladder, action, now=now)
        m += every
    return out


# ---- case 012 ---------------------------------------------------------------------------------
CASE_012 = IdlePolicy(threshold_pct=5, window_s=120 * 60, warning_s=15 * 60)


def case_012_kernel(m: float) -> dict[str, object]:
    return {"execution_state": "busy", "last_activity": minutes(m)} if m < 300 else \
        {"execution_state": "idle", "last_activity": minutes(300)}


def test_case_012_busy_kernel_is_not_reclaimed_and_idle_clock_starts_when_cell_finishes() -> None:
    samples = series(lambda m: 70 + (m % 20) if m < 300 else 0.0, 0, 600)
    timeline = run_timeline(make_job(), samples, case_012_kernel, CASE_012, until=600)
    assert [(m, a.stage) for m, a in timeline] == [(405, "warn"), (420, "reclaim")]
    warn, reclaim = (a for _, a in timeline)
    assert warn.deadline == minutes(420) and warn.idle_since == minutes(300)
    assert reclaim.reason == "kernel idle and GPU < 5 % for 120 min"
    assert reclaim.action == "release" and reclaim.gpu_uuids == (GPU_UUID,)


def test_case_012_reclaim_records_the_window_of_samples_as_evidence() -> None:
    samples = series(lambda m: 80.0 if m < 300 else 0.0, 0, 600, memory=30000)
    (_, _), (_, reclaim) = run_timeline(make_job(), samples, case_012_kernel, CASE_012, until=420)
    evidence = reclaim.evidence
    assert evidence["rule"] == "kernel_and_gpu" and evidence["idle_since"] == "2026-03-02T13:00:00Z"
    assert evidence["window_start"] == "2026-03-02T13:00:00Z" and evidence["window_end"] == "2026-03-02T15:00:00Z"
    rows = evidence["samples"]
    assert len(rows) == 121 and {r["max_activity_pct"] for r in rows} == {0.0}
    assert {r["memory_used_mib"] for r in rows} == {30000}


def test_case_012_variant_busy_kernel_at_zero_gpu_with_release_policy_frees_gpus_not_the_kernel() -> None:
    policy = replace(CASE_012, busy_kernel_window_s=120 * 60, busy_kernel_mode=ReclaimMode.RELEASE)
    samples = series(lambda m: 0.0, 0, 300)
    busy = lambda m: {"execution_state": "busy", "last_activity": minutes(m)}  # noqa: E731
    timeline = run_timeline(make_job(), samples, busy, policy, until=300)
    assert [(m, a.stage, a.action) for m, a in timeline] == [(105, "warn", "release"), (120, "reclaim", "release")]
    assert "the kernel keeps running" in timeline[1][1].reason


def test_case_012_variant_default_policy_only_notifies() -> None:
    samples = series(lambda m: 0.0, 0, 300)
    busy = lambda m: {"execution_state": "busy", "last_activity": minutes(m)}  # noqa: E731
    timeline = run_timeline(make_job(), samples, busy, CASE_012, until=300)
    assert [(m, a.stage, a.action) for m, a in timeline] == [(225, "warn", "notify"), (240, "reclaim", "notify")]
    assert all(a.action not in ("stop", "requeue") for _, a in timeline)


def test_case_012_no_http_traffic_is_irrelevant_only_kernel_and_gpu_count() -> None:
    samples = series(lambda m: 80.0, 0, 300)
    timeline = run_timeline(make_job(), samples, lambda m: {"execution_state": "idle", "last_activity": T0},
                            CASE_012, until=300)
    assert timeline == []


def test_a_sliding_lookback_does_not_restart_the_idle_clock_after_a_keepalive() -> None:
    samples = series(lambda m: 0.0, 0, 400)
    def idle_kernel(m: float) -> dict[str, object]:
        return {"execution_state": "idle", "last_activity": None}

    timeline = run_timeline(make_job(), samples, idle_kernel, CASE_012, until=400, lookback=121, keepalive=(110, 7200))
    assert [(m, a.stage) for m, a in timeline] == [(105, "warn"), (215, "warn"), (230, "reclaim")]
    assert all(a.idle_since == T0 for _, a in timeline)


def test_notify_only_reclaim_is_not_repeated_while_the_period_lasts() -> None:
    samples = series(lambda m: 0.0, 0, 600)
    busy = lambda m: {"execution_state": "busy", "last_activity": minutes(m)}  # noqa: E731
    timeline = run_timeline(make_job(), samples, busy, CASE_012, until=600, lookback=241)
    assert [(m, a.stage, a.action) for m, a in timeline] == [(225, "warn", "notify"), (240, "reclaim", "notify")]


# ---- case 008 ---------------------------------------------------------------------------------
CASE_008 = """\
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:17:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="gpu-node-7",namespace="team-ml",pod="alice-nb-0",container="notebook"} 0
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:17:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname="gpu-node-7",namespace="team-cv",pod="bob-train-0",container="trainer"} 0
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:17:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="gpu-node-7",namespace="team-ml",pod="alice-nb-0",container="notebook"} 0.000000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:17:00.0",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname="gpu-node-7",namespace="team-cv",pod="bob-train-0",container="trainer"} 0.870000
"""
A100 = "GPU-0a1b2c3d-0000-1111-2222-333344445555"
A100_INVENTORY = Inventory(nodes=(Node(name="gpu-node-7", gpus=(GPU(
    uuid=A100, index=0, node="gpu-node-7", model="NVIDIA A100-SXM4-80GB", memory_mib=81920, mig_enabled=True,
    mig_devices=(MigDevice("MIG-alice", "3g.40gb", 1, 40960), MigDevice("MIG-bob", "3g.40gb", 2, 40960))),)),))
CASE_008_POLICY = IdlePolicy(threshold_pct=5, window_s=30 * 60, warning_s=0)


def scrapes(text: str, count: int = 46) -> SampleStore:
    """The scrape repeated every 60 s for 45 minutes, through the ring buffer."""
    store = SampleStore(retention_s=3600, rate_hz=1 / 60)
    for k in range(count):
        store.add(list(parse_dcgm_text(text, received_at=minutes(k)).samples))
    return store


def test_case_008_mig_parser_keys_by_uuid_and_instance_and_uses_engine_activity() -> None:
    scrape = parse_dcgm_text(CASE_008, received_at=T0)
    assert [(s.key, s.utilization_pct, s.pod) for s in scrape.samples] == [
        ((A100, 1), 0.0, "alice-nb-0"), ((A100, 2), 87.0, "bob-train-0")]


def test_case_008_after_45_minutes_instance_1_is_idle_and_instance_2_is_not() -> None:
    store = scrapes(CASE_008)
    now = minutes(45)
    jobs = [make_job("alice-nb-0", lease=False, gpus=("MIG-alice",)), make_job("bob-train-0", lease=False, gpus=("MIG-bob",))]
    telemetry = {job.id: idle_input(job, store, A100_INVENTORY, now=now, lookback_s=3600) for job in jobs}
    assert telemetry["bob-train-0"].devices == ((A100, 2),) and len(telemetry["bob-train-0"].samples) == 46
    verdicts = {job.id: default_idle_arbiter(job=job, samples=telemetry[job.id].samples, kernel=None,
                                             policy=CASE_008_POLICY, now=now, devices=telemetry[job.id].devices)
                for job in jobs}
    assert verdicts["alice-nb-0"].idle and verdicts["alice-nb-0"].idle_since == T0
    assert verdicts["alice-nb-0"].reason == "GPU < 5 % for 30 min"
    assert not verdicts["bob-train-0"].idle
    # the one time formatter, as every audit message says a time (new user 17, N6: raw ISO before)
    assert verdicts["bob-train-0"].reason.endswith("MIG instance 2 at 87 % at Mar 2 08:45:00 UTC")
    actions = evaluate_idle(Snapshot(now=now, inventory=A100_INVENTORY, jobs=tuple(jobs), telemetry=telemetry),
                            IdlePolicies(default=CASE_008_POLICY))
    assert [(a.job_id, a.stage) for a in actions] == [("alice-nb-0", "warn")]


def test_case_008_mig_without_profiling_metrics_is_unknown_and_never_idle() -> None:
    no_prof = CASE_008.split("# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE")[0]
    store = scrapes(no_prof)
    now = minutes(45)
    samples = store.window((A100, 1), T0)
    assert samples[-1].utilization_pct is None
    assert samples[-1].note == "no utilization signal for MIG device (profiling metrics unavailable)"
    verdict = default_idle_arbiter(job=make_job(lease=False, gpus=("MIG-alice",)), samples=samples, kernel=None,
                                   policy=CASE_008_POLICY, now=now, devices=((A100, 1),))
    assert not verdict.idle
    assert verdict.reason.endswith("no utilization signal for MIG device (profiling metrics unavailable)")


# ---- the idle rule ----------------------------------------------------------------------------
JOB_POLICY = IdlePolicy(threshold_pct=5, window_s=3600, warning_s=600)


@dataclass(frozen=True)
class RuleCase:
    name: str
    samples: list[GpuSample]
    now: float
    idle: bool
    since: float | None = None
    devices: tuple[tuple[str, int | None], ...] = ((GPU_UUID, None),)


RULE_CASES = [
    RuleCase("a trailing window, not a lifetime average: 10 h busy then 70 min idle is idle",
             series(lambda m: 100.0 if m < 600 else 0.0, 0, 670), now=670, idle=True, since=600),
    RuleCase("held memory alone is not activity",
             series(lambda m: 0.0, 0, 90, memory=75000), now=90, idle=True, since=0),
    RuleCase("a spike restarts the idle clock",
             series(lambda m: 50.0 if m == 40 else 1.0, 0, 90), now=90, idle=True, since=41),
    RuleCase("exactly at the threshold is activity",
             series(lambda m: 5.0, 0, 90), now=90, idle=False),
    RuleCase("unknown utilization never counts as idle",
             series(lambda m: None, 0, 90), now=90, idle=False),
    RuleCase("a gap in telemetry restarts the clock",
             series(lambda m: 0.0, 0, 20) + series(lambda m: 0.0, 40, 90), now=90, idle=True, since=40),
    RuleCase("stale telemetry is not idleness",
             series(lambda m: 0.0, 0, 50), now=90, idle=False),
    RuleCase("every allocated GPU needs samples",
             series(lambda m: 0.0, 0, 90), now=90, idle=False, devices=((GPU_UUID, None), ("GPU-2222", None))),
    RuleCase("all GPUs must be idle: one busy GPU keeps the job active",
             series(lambda m: 0.0, 0, 90) + series(lambda m: 60.0, 0, 90, uuid="GPU-2222"), now=90, idle=False,
             devices=((GPU_UUID, None), ("GPU-2222", None))),
    RuleCase("samples from the future are ignored",
             [*series(lambda m: 0.0, 0, 90), sample(minutes(95), 90.0)], now=90, idle=True, since=0),
    RuleCase("a compute loop with 3-second sleeps is never idle",
             series(lambda m: 0.0 if round(m * 60) % 10 >= 7 else 95.0, 0, 90, step=1 / 60), now=90, idle=False),
]


@pytest.mark.parametrize("case", RULE_CASES, ids=[c.name for c in RULE_CASES])
def test_idle_rule(case: RuleCase) -> None:
    verdict = default_idle_arbiter(job=make_job(lease=False), samples=case.samples, kernel=None, policy=JOB_POLICY,
                                   now=minutes(case.now), devices=case.devices)
    assert verdict.idle is case.idle
    if case.since is not None:
        assert verdict.idle_since == minutes(case.since)
    if case.idle:
        assert verdict.rule == "gpu" and verdict.mode is ReclaimMode.NOTIFY


def test_a_compute_loop_with_short_sleeps_is_never_warned() -> None:
    samples = series(lambda m: 0.0 if round(m * 60) % 10 >= 7 else 95.0, 0, 180, step=1 / 60)
    timeline = run_timeline(make_job(lease=False), samples, lambda m: None, JOB_POLICY, until=180)
    assert timeline == []


def test_activity_after_a_warning_clears_it() -> None:
    samples = series(lambda m: 90.0 if 55 <= m < 60 else 0.0, 0, 70)
    timeline = run_timeline(make_job(lease=False), samples, lambda m: None, JOB_POLICY, until=70)
    assert [(m, a.stage) for m, a in timeline] == [(50, "warn"), (55, "clear")]


def test_an_unknown_kernel_state_gets_the_lease_rule_a_bound_later_never_the_busy_kernel_rule() -> None:
    # red team 17, R8: unknown is not busy (it was the notify-only busy-kernel rule, a way to keep GPUs)
    samples = series(lambda m: 0.0, 0, 200)
    verdict = default_idle_arbiter(job=make_job(), samples=samples, kernel=None, policy=CASE_012, now=minutes(200))
    assert verdict.rule == "kernel_unknown" and verdict.limit_s == CASE_012.window_s + 60
    assert verdict.mode is CASE_012.lease_mode
    off = replace(CASE_012, busy_kernel_window_s=None)
    assert not default_idle_arbiter(job=make_job(), samples=samples, kernel=KernelActivity("busy"), policy=off,
                                    now=minutes(200)).idle


def test_kernel_activity_accepts_iso_text_from_jupyter_server() -> None:
    kernel = KernelActivity.from_mapping({"execution_state": "idle", "last_activity": "2026-03-02T13:00:00+00:00"})
    assert kernel == KernelActivity("idle", minutes(300))
    with pytest.raises(ValidationError, match="UTC offset"):
        KernelActivity.from_mapping({"execution_state": "idle", "last_activity": "2026-03-02T13:00:00"})


# ---- policy, hook, keepalive ----------------------------------------------------------------
def test_policies_per_priority_class() -> None:
    policies = IdlePolicies(default=JOB_POLICY, by_priority={"high": replace(JOB_POLICY, enabled=False)})
    high = make_job("hi", lease=False, priority=PriorityClass.HIGH)
    low = make_job("lo", lease=False, priority=PriorityClass.LOW)
    samples = series(lambda m: 0.0, 0, 120)
    snapshot = Snapshot(now=minutes(120), inventory=Inventory(), jobs=(high, low),
                        telemetry={j.id: IdleInput(samples=samples) for j in (high, low)})
    assert [a.job_id for a in evaluate_idle(snapshot, policies)] == ["lo"]


def test_an_admin_arbiter_hook_replaces_the_default_rule() -> None:
    seen: dict[str, object] = {}

    def never_on_fridays(*, job: Job, samples: Sequence[GpuSample], kernel: KernelActivity | None,
                         policy: IdlePolicy, now: datetime) -> IdleVerdict:
        seen.update(job=job.id, n=len(samples), kernel=kernel)
        return IdleVerdict(idle=False, reason="Friday")

    job = make_job()
    snapshot = Snapshot(now=minutes(300), inventory=Inventory(), jobs=(job,),
                        telemetry={job.id: IdleInput(samples=series(lambda m: 0.0, 0, 300))},
                        kernels={"k1": {"execution_state": "idle", "last_activity": T0}})
    assert evaluate_idle(snapshot, IdlePolicies(default=CASE_012), arbiter=never_on_fridays) == ()
    assert seen == {"job": "lease-1", "n": 301, "kernel": KernelActivity("idle", T0)}


def test_keepalive_extends_once_up_to_the_admin_max() -> None:
    samples = series(lambda m: 0.0, 0, 300)
    idle_kernel = {"execution_state": "idle", "last_activity": T0}
    job = make_job()
    ladder = LadderState(warned_at=minutes(105), warned_idle_since=T0)
    ladder = extend_keepalive(ladder, now=minutes(110), policy=CASE_012, requested_s=3600)
    assert ladder.keepalive_until == minutes(170) and ladder.keepalive_used and ladder.warned_at is None
    snapshot = Snapshot(now=minutes(120), inventory=Inventory(), jobs=(job,), kernels={"k1": idle_kernel},
                        telemetry={job.id: IdleInput(samples=samples, ladder=ladder)})
    assert evaluate_idle(snapshot, IdlePolicies(default=CASE_012)) == ()
    (warn,) = evaluate_idle(replace(snapshot, now=minutes(155)), IdlePolicies(default=CASE_012))
    assert warn.stage == "warn" and warn.deadline == minutes(170)
    with pytest.raises(ConflictError, match="already used"):
        extend_keepalive(ladder, now=minutes(156), policy=CASE_012)
    with pytest.raises(ValidationError) as info:
        extend_keepalive(LadderState(), now=minutes(0), policy=CASE_012, requested_s=3 * 3600)
    assert info.value.field == "keepalive.seconds"


def test_a_late_first_look_still_warns_before_reclaiming() -> None:
    job = make_job()
    snapshot = Snapshot(now=minutes(500), inventory=Inventory(), jobs=(job,),
                        kernels={"k1": {"execution_state": "idle", "last_activity": T0}},
                        telemetry={job.id: IdleInput(samples=series(lambda m: 0.0, 0, 500))})
    (warn,) = evaluate_idle(snapshot, IdlePolicies(default=CASE_012))
    assert warn.stage == "warn" and warn.deadline == minutes(515)
    warned = IdleInput(samples=series(lambda m: 0.0, 0, 515), ladder=LadderState(minutes(500), T0))
    assert evaluate_idle(replace(snapshot, now=minutes(510), telemetry={job.id: warned}),
                         IdlePolicies(default=CASE_012)) == ()
    (reclaim,) = evaluate_idle(replace(snapshot, now=minutes(515), telemetry={job.id: warned}),
                               IdlePolicies(default=CASE_012))
    assert reclaim.stage == "reclaim"


@pytest.mark.parametrize("kwargs,field", [
    (dict(threshold_pct=0), "idle.threshold_pct"),
    (dict(window_s=0), "idle.window_s"),
    (dict(warning_s=7200), "idle.warning_s"),
    (dict(busy_kernel_window_s=60), "idle.busy_kernel_window_s"),
], ids=["zero threshold", "zero window", "warning as long as the window", "busy-kernel limit below the window"])
def test_bad_policy_names_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        IdlePolicy(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field and info.value.hint


def test_newuser6_finding_14_a_restarted_job_is_never_idle_since_before_it_started() -> None:
    """New user 6, F14 (IMPORTANT): a job preempted, requeued and started again at 15:33 was
    warned "idle since 15:12" at once — its GPU's samples from earlier holders (and while free)
    counted as its own. Its idle period now starts no earlier than its current start, in the
    core (an admin's arbiter given older samples) and in the feed (which passes no older sample)."""
    policy = IdlePolicy(threshold_pct=5, window_s=30 * 60, warning_s=10 * 60)
    job = replace(make_job("low3", lease=False), started_at=minutes(21), admitted_at=minutes(21))
    samples = series(lambda m: 0.0, 0, 25)  # the GPU idle since minute 0, under another holder
    snapshot = Snapshot(now=minutes(25), inventory=Inventory(), jobs=(job,),
                        telemetry={job.id: IdleInput(samples=samples, ladder=LadderState(),
                                                     devices=((GPU_UUID, None),))})
    assert evaluate_idle(snapshot, IdlePolicies(default=policy)) == ()  # no warning 4 min after its start
    (candidate,) = idle_candidates(snapshot, IdlePolicies(default=policy))
    assert candidate.idle_since == minutes(21), candidate

    def old_samples_arbiter(**kwargs: object) -> IdleVerdict:
        return IdleVerdict(idle=True, idle_since=minutes(0), limit_s=policy.window_s, rule="gpu",
                           mode=ReclaimMode.NOTIFY, reason="custom")

    assert evaluate_idle(snapshot, IdlePolicies(default=policy), old_samples_arbiter) == ()
    later = replace(snapshot, now=minutes(45))  # 24 min after its start: the warning is due (30 - 10 min)
    (warned,) = evaluate_idle(later, IdlePolicies(default=policy), old_samples_arbiter)
    assert (warned.stage, warned.idle_since) == ("warn", minutes(21))

    store = SampleStore(retention_s=3600)
    store.add(samples)
    fed = idle_input(job, store, Inventory(), now=minutes(25), lookback_s=31 * 60, per_minute=False)
    assert fed.samples and min(s.timestamp for s in fed.samples) >= minutes(21)


def test_newuser6_finding_14_a_notify_only_warning_does_not_promise_a_reclaim() -> None:
    """New user 6, F14 (b): the queue line said "its GPUs are reclaimed at 15:43" for a job whose
    idle action is notify (nothing is freed)."""
    from jupyter_sched.wording.jobs import idle_note

    entry = {"stage": "warned", "action": "notify", "kind": "training", "idle_since": "2026-12-02T15:33:20Z",
             "deadline": "2026-12-02T16:03:20Z", "rule": "GPU < 5 % for 30 min"}
    note = idle_note(entry, None)
    assert "reported as idle (nothing is freed) at" in note and "reclaimed" not in note, note
