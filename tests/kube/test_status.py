"""Reading a job's state back from Job, Pod and Event objects (pure): phases, exit codes, and
Warning events turned into pending reasons with numbers."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.executors.kubernetes.status import observe_job, quota_reason, reason_from_event, scheduling_reason


def job(uid: str = "job-uid", *, conditions: list[dict[str, Any]] | None = None, suspend: bool = False,
        deadline: int | None = None, failed: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {"suspend": suspend}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return {"metadata": {"name": "js-j", "namespace": "ns", "uid": uid}, "spec": spec,
            "status": {"conditions": conditions or [], "failed": failed}}


def pod(phase: str, *, exit_code: int | None = None, index: int = 0, uid: str = "pod-uid") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"name": "main", "restartCount": 0, "state": {"terminated": {
            "exitCode": exit_code, "finishedAt": "2026-03-01T10:00:00Z"}}}]
    return {"metadata": {"name": f"js-j-{index}", "namespace": "ns", "uid": uid,
                         "annotations": {"batch.kubernetes.io/job-completion-index": str(index)}},
            "status": status}


def event(uid: str, reason: str, message: str, stamp: str = "2026-03-01T10:00:00Z") -> dict[str, Any]:
    return {"involvedObject": {"kind": "Job", "name": "js-j", "namespace": "ns", "uid": uid},
            "reason": reason, "message": message, "type": "Warning", "lastTimestamp": stamp}


FAILED = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "backoff",
          "lastTransitionTime": "2026-03-01T10:00:01Z"}
QUOTA = ("Error creating: pods \"js-j-abc\" is forbidden: exceeded quota: gpu-quota, requested: "
         "requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=3, limited: requests.nvidia.com/gpu=4")

CASES = [
    pytest.param(job(), [], [], "pending", None, id="a fresh Job with no pods is pending"),
    pytest.param(job(), [pod("Running")], [], "running", None, id="a running pod makes the job running"),
    pytest.param(job(conditions=[{"type": "Complete", "status": "True"}]), [pod("Succeeded", exit_code=0)], [],
                 "succeeded", 0, id="the Complete condition means exit code 0"),
    pytest.param(job(conditions=[FAILED]), [pod("Failed", exit_code=0, index=0), pod("Failed", exit_code=2, index=1)],
                 [], "failed", 2, id="a gang reports the first non-zero exit code"),
    pytest.param(job(conditions=[FAILED]), [pod("Running")], [], "failed", 1,
                 id="a failed Job whose pods still look running has a provisional exit code"),
    pytest.param(job(conditions=[FAILED], failed=1), [], [], "failed", 1,
                 id="a failed Job whose pods were not seen yet has a provisional exit code"),
    pytest.param(job(conditions=[FAILED]), [], [], "failed", 1, id="a failed Job that never had pods exits 1"),
]
PROVISIONAL = {"a failed Job whose pods still look running has a provisional exit code",
               "a failed Job whose pods were not seen yet has a provisional exit code"}


@pytest.mark.parametrize(("job_obj", "pods", "events", "want_phase", "want_exit"), CASES)
def test_phases_and_exit_codes(job_obj: dict[str, Any], pods: list[dict[str, Any]], events: list[dict[str, Any]],
                               want_phase: str, want_exit: int | None, request: pytest.FixtureRequest) -> None:
    observation = observe_job(job_obj, pods, events)
    assert (observation.phase, observation.exit_code) == (want_phase, want_exit)
    assert observation.settled is (request.node.callspec.id not in PROVISIONAL)


def test_a_job_past_its_time_limit_says_so() -> None:
    deadline = dict(FAILED, reason="DeadlineExceeded", message="Job was active longer than specified deadline")
    observation = observe_job(job(conditions=[deadline], deadline=3600), [], [])
    assert observation.message == "time limit exceeded (activeDeadlineSeconds=3600)"
    assert observation.finished_at is not None and observation.finished_at.isoformat() == "2026-03-01T10:00:01+00:00"


def test_a_suspended_job_waits_for_kueue() -> None:
    observation = observe_job(job(suspend=True), [], [], queue="team-geo")
    assert observation.suspended and observation.reason is not None
    assert observation.reason.message == "waiting for Kueue to admit it in LocalQueue team-geo"


def test_events_of_an_earlier_object_with_the_same_name_are_ignored() -> None:
    stale = event("old-uid", "FailedCreate", QUOTA)
    assert observe_job(job(), [], [stale]).reason is None
    current = event("job-uid", "FailedCreate", QUOTA)
    reason = observe_job(job(), [], [stale, current]).reason
    assert reason is not None and reason.message == "namespace ns GPU quota exhausted (3 of 4 in use)"


def test_the_newest_event_wins() -> None:
    older = event("job-uid", "FailedCreate", QUOTA, stamp="2026-03-01T09:00:00Z")
    newer = event("pod-uid", "FailedScheduling", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
                  stamp="2026-03-01T09:05:00Z")
    reason = observe_job(job(), [pod("Pending")], [newer, older]).reason
    assert reason is not None and reason.code == "Unschedulable"
    assert reason.details["causes"] == {"Insufficient nvidia.com/gpu": 4}


def test_non_quota_create_failures_and_other_events() -> None:
    reason = reason_from_event(event("u", "FailedCreate", 'pods "x" is forbidden: error looking up service account'))
    assert reason is not None and reason.code == "Unschedulable" and "service account" in reason.message
    assert reason_from_event(event("u", "BackOff", "Back-off restarting failed container")) is None
    assert quota_reason("something else entirely", namespace="ns") is None


def test_quota_on_mig_and_cpu_resources_names_them() -> None:
    mig = quota_reason("exceeded quota: q, requested: requests.nvidia.com/mig-1g.10gb=1, used: "
                       "requests.nvidia.com/mig-1g.10gb=7, limited: requests.nvidia.com/mig-1g.10gb=7", namespace="ns")
    assert mig is not None and mig.message == "namespace ns MIG 1g.10gb quota exhausted (7 of 7 in use)"
    cpu = quota_reason("exceeded quota: q, requested: requests.cpu=4, used: requests.cpu=30, limited: "
                       "requests.cpu=32", namespace="ns")
    assert cpu is not None and cpu.message == "namespace ns cpu quota exhausted (30 of 32 in use)"


def test_scheduling_reason_without_counts() -> None:
    reason = scheduling_reason("no nodes available to schedule pods", pod="p")
    assert reason.message == "no node fits (no nodes available to schedule pods)"
    assert reason.details["causes"] == {} and reason.details["categories"] == {
        "nodes": 0, "other": ["no nodes available to schedule pods"]}
