"""Red team 15, R6: kernel states in the user servers' kernel reports, as the central service
takes them (bounded, validated) and hands them to the idle rules (stale and older reports say
*unknown*, never *busy*)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.hub.forward import ForwardingService
from jupyter_sched.hub.liveness import STATE_STALE_S, KernelReport, KernelReports, KernelState, parse_states
from jupyter_sched.model import Allocation, Job, JobKind, JobSpec, JobState
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.reclaim import IdlePolicy, KernelActivity, default_idle_arbiter
from jupyter_sched.reclaim.idle import USER_SERVER_REPORT

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc)
KERNELS = frozenset({"k-1", "k-2"})


@pytest.mark.parametrize(
    "states",
    [
        pytest.param([], id="states must be an object"),
        pytest.param({"k-9": {"execution_state": "idle"}}, id="a state only for a reported kernel"),
        pytest.param({"k-1": "idle"}, id="each state is an object"),
        pytest.param({"k-1": {"execution_state": "idle", "pid": 7}}, id="no other fields"),
        pytest.param({"k-1": {"execution_state": "x" * 33}}, id="the state text is bounded"),
        pytest.param({"k-1": {"execution_state": 1}}, id="the state is text"),
        pytest.param({"k-1": {"execution_state": "idle", "last_activity": "2026-12-04T10:00:00"}},
                     id="last_activity carries its offset"),
        pytest.param({"k-1": {"execution_state": "idle", "last_activity": "9" * 65}}, id="last_activity is bounded"),
    ],
)
def test_red15_r6_bad_states_are_refused_naming_the_field(states: Any) -> None:
    with pytest.raises(ValidationError) as err:
        parse_states({"server": "", "kernels": sorted(KERNELS), "states": states}, KERNELS, now=NOW)
    assert err.value.field == "states"


def test_red15_r6_states_are_taken_with_unknown_words_and_future_times_tamed() -> None:
    body = {"states": {"k-1": {"execution_state": "idle", "last_activity": "2026-12-04T09:00:00+00:00"},
                       "k-2": {"execution_state": "exploding", "last_activity": "2099-01-01T00:00:00Z"}}}
    got = parse_states(body, KERNELS, now=NOW)
    assert got == {"k-1": KernelState("idle", NOW - timedelta(hours=1)), "k-2": KernelState("unknown", NOW)}
    assert parse_states({"kernels": ["k-1"]}, KERNELS, now=NOW) == {}  # an older server: ids only


def test_red15_r6_the_engine_source_gives_fresh_states_and_unknown_for_stale_or_stateless_reports() -> None:
    from jupyter_sched.scheduling.snapshot import kernel_activity_of  # keyed by the reporting user (red team 18, R3)

    reports = KernelReports()
    reports.record(KernelReport(user="ana", server="", kernels=frozenset({"k-1"}), received_at=NOW,
                                states={"k-1": KernelState("idle", NOW - timedelta(minutes=5))}))
    reports.record(KernelReport(user="ana", server="old", kernels=frozenset({"k-2"}), received_at=NOW))
    fresh = reports.activity(NOW + timedelta(seconds=30))
    assert kernel_activity_of(fresh, "ana", "k-1") == {"execution_state": "idle", "last_activity": NOW - timedelta(minutes=5),
                                                       "source": USER_SERVER_REPORT}  # the user's word (red39 R8)
    assert kernel_activity_of(fresh, "ana", "k-2")["execution_state"] == "unknown"
    assert kernel_activity_of(fresh, "ana", "k-2")["unknown_why"].startswith("kernel state unknown in hub mode: its server reports no kernel")
    stale = reports.activity(NOW + timedelta(seconds=STATE_STALE_S + 90))
    assert kernel_activity_of(stale, "ana", "k-1")["execution_state"] == "unknown"
    assert "last kernel report is 3 min old" in kernel_activity_of(stale, "ana", "k-1")["unknown_why"]
    reports.forget("ana", ())
    assert reports.activity(NOW) == {}


def _lease() -> Job:
    spec = JobSpec(name="l-1", user="ana", kind=JobKind.LEASE, kernel_id="k-1")
    return Job(id="l-1", spec=spec, state=JobState.RUNNING, started_at=NOW - timedelta(hours=2),
               allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))


@pytest.mark.parametrize(
    "kernel, want_rule, want_words, not_words",
    [
        pytest.param(KernelActivity("idle", NOW - timedelta(hours=1)), "kernel_and_gpu", "kernel idle", "busy",
                     id="an idle kernel falls under the normal window"),
        pytest.param(KernelActivity("busy"), "gpu_busy_kernel", "while the kernel is busy", "unknown",
                     id="a busy kernel under the busy-kernel window"),
        pytest.param(KernelActivity("unknown", unknown_why="kernel state unknown in hub mode: its server's last "
                                    "kernel report is 3 min old"), "kernel_unknown",
                     "kernel state unknown in hub mode", "busy", id="an unknown state is said unknown, never busy"),
        pytest.param(None, "kernel_unknown", "kernel state unknown", "busy",
                     id="no state at all is unknown too"),
    ],
)
def test_red15_r6_the_arbiter_names_the_kernel_state_it_judged(kernel: KernelActivity | None, want_rule: str,
                                                               want_words: str, not_words: str) -> None:
    samples = [GpuSample(gpu_uuid="GPU-1", mig_instance=None, timestamp=NOW - timedelta(minutes=m), utilization_pct=0.0,
                         memory_used_mib=0.0, memory_total_mib=81920.0) for m in range(0, 50)]
    verdict = default_idle_arbiter(job=_lease(), samples=samples, kernel=kernel, now=NOW,
                                   policy=IdlePolicy(window_s=600, warning_s=60, busy_kernel_window_s=1800))
    assert verdict.idle and verdict.rule == want_rule
    assert want_words in verdict.reason and not_words not in verdict.reason, verdict.reason


def test_red15_r6_a_user_server_reports_what_idle_culler_reads() -> None:
    active = NOW - timedelta(minutes=7)
    service = ForwardingService("http://127.0.0.1:1/services/sched/", "t", kernel_ids=lambda: ["k-2", "k-1"],
                                kernel_states=lambda: {"k-1": {"execution_state": "idle", "last_activity": active,
                                                               "pid": 42},
                                                       "k-3": {"execution_state": "busy"}})
    body = service.kernel_report_body()
    assert body == {"server": "", "kernels": ["k-1", "k-2"],
                    "states": {"k-1": {"execution_state": "idle", "last_activity": active.isoformat()}}}
    taken = parse_states(body, frozenset(body["kernels"]), now=NOW)  # what the central service makes of it
    assert taken == {"k-1": KernelState("idle", active)}
