"""newuser40 n6: one lease, two idle-since clocks at the same moment — the waiting job's line said "its kernel idle
since 17:13 UTC" (the kernel's last activity), the lease's own line "idle since 17:14 UTC" (the idle detector's
period, which its release deadline and the waiter's ETA count from). The waiting job's line now takes the idle
detector's clock (``Snapshot.idle_since``, filled by the engine with ``idle_ends``); the kernel's last activity only
where the detector has no period for it (no idle policy)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from tests.core.core_builders import T0, make_job, make_node, running, snapshot
from tests.core.test_s34_newuser33_n6_own_lease_holds import _lease


def _reason(**extra: object) -> dict[str, object]:
    other = running(make_job("a-h", gpus=3, user="n40a", time_limit_s=3600), "g1", [0, 1, 2])
    wants = make_job("b-p", gpus=3, user="n40b", submitted=1, time_limit_s=3600)
    kernels = {"k-b": {"execution_state": "idle", "last_activity": (T0 - timedelta(minutes=6)).isoformat()}}
    snap = replace(snapshot([make_node("g1", gpus=4)], [other, _lease("l-b", "n40b", "g1", 3), wants]),
                   kernels=kernels, **extra)
    return reason_to_dict({p.job_id: p.reason for p in run_cycle(snap).pending}["b-p"])


def test_newuser40_n6_the_waiting_jobs_line_says_the_idle_detectors_clock() -> None:
    detector = T0 - timedelta(minutes=5)  # a minute after the kernel's last activity, as the tester saw it
    reason = _reason(idle_since={"l-b": detector})
    [entry] = reason["details"]["held_by_owner_leases"]  # type: ignore[index]
    assert entry["idle_since"] == detector.isoformat(), entry
    mine = render_reason(reason, now=T0, mine=True).summary
    assert "its kernel idle since 11:55 UTC" in mine and "11:54" not in mine, mine


def test_newuser40_n6_without_a_detector_period_the_kernels_activity_is_said() -> None:
    [entry] = _reason()["details"]["held_by_owner_leases"]  # type: ignore[index]
    assert entry["idle_since"] == (T0 - timedelta(minutes=6)).isoformat(), entry
