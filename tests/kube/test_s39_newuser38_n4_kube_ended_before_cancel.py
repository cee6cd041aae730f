"""newuser38 N4 on Kubernetes: a job whose Job had already completed (or failed) when a cancel came was recorded
``cancelled`` — its pod's own end lost. On the local executor session 38 kept the job's own end
(``Exited.before_stop``); the Kubernetes executor now does too: a Job's ``Complete``/``Failed`` condition is its own
end (a Job deleted with background propagation is removed at once and gets no condition after), and ``stop`` reads
the Job's status (``GET …/jobs/NAME/status``, as ``batch/v1`` reports it) before the delete, since the watch may not
have brought the end yet. The record says succeeded / failed, its exit code, and "…; it had ended before the cancel
reached it"; a job still running when the cancel comes is cancelled as before.

Real parts: SchedulerService (engine, core) in-process, SQLite, the Kubernetes executor and inventory watch through
the official ``kubernetes`` client. The API server is ``fake_apiserver.FakeKubernetes``, the double of tests/kube that
speaks the API's real REST JSON (a real API server cannot run on this machine); its Job controller steps and a
lagging watch (``hold_watches``: a loaded API server's watch cache) are driven by the test, ticks held by the test.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.base import Exited, Started
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor, object_name
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.model import JobState
from jupyter_sched.store import Store, sqlite_url

from .fake_apiserver import FakeKubernetes
from .kube_builders import GPU_TAINT, allocation, make_job, make_node
from .test_gangs import PLACED, _config, _gang
from .test_integration import NS, _executor, of, poll_until

WAIT_S = 30.0
LATE = "; it had ended before the cancel reached it"


@pytest.fixture
def cluster(fake: FakeKubernetes, api_client: client.ApiClient) -> Iterator[tuple[KubernetesExecutor,
                                                                                KubernetesInventory]]:
    fake.put("nodes", make_node("g1", gpus=4, taints=[GPU_TAINT]))
    inventory = KubernetesInventory(client.CoreV1Api(api_client), watch_timeout_s=30)
    inventory.start()
    executor = KubernetesExecutor(api_client, KubernetesConfig(namespace=NS, default_image="python:3.12-slim"),
                                  inventory=inventory, watch_timeout_s=30)
    yield executor, inventory
    executor.detach()
    inventory.stop()


def wait_until(predicate: Callable[[], Any], what: str, tick: Callable[[], Any] = lambda: None) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        tick()
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _ended_in_cache(executor: KubernetesExecutor, name: str) -> bool:
    cached = executor._cached("jobs", NS, name)  # the executor's watch cache: what its next poll reads
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in ((cached or {}).get("status") or {}).get("conditions") or [])


CASES = [
    pytest.param(0, False, id="a Job that completed, its end already in the watch, keeps its end: succeeded"),
    pytest.param(0, True, id="a Job that completed, its end not yet in the watch, keeps its end: read at the stop"),
    pytest.param(3, True, id="a Job that failed with code 3, not yet in the watch, keeps its end: failed, code 3"),
]


@pytest.mark.parametrize(("code", "lagging"), CASES)
def test_newuser38_n4_kube_a_job_that_ended_before_the_cancel_keeps_its_own_end(
        tmp_path: Path, fake: FakeKubernetes, cluster: tuple[KubernetesExecutor, KubernetesInventory], code: int,
        lagging: bool) -> None:
    executor, inventory = cluster
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=inventory, executor=executor,
                           cycle_interval_s=0.0, stop_grace_s=1.0)
    done = svc.submit({"command": ["python", "train.py"], "gpus": 1, "name": "n4-done"}, user="ana")["id"]
    runs = svc.submit({"command": ["python", "train.py"], "gpus": 1, "name": "n4-runs"}, user="ana")["id"]
    for job_id in (done, runs):
        wait_until(partial(fake.get, "jobs", NS, object_name(job_id)), "the Job object", svc.tick)
        fake.run_job(NS, object_name(job_id), node="g1")
    wait_until(lambda: all(svc.get_job(j, user="ana")["message"] == "running" for j in (done, runs)),
               "both pods to run", svc.tick)

    # no tick from here to the cancel: the Job ends, and nothing settles it before the cancel is asked
    if lagging:
        fake.hold_watches("jobs", "pods")
    fake.finish_job(NS, object_name(done), exit_code=code)
    if not lagging:
        wait_until(lambda: _ended_in_cache(executor, object_name(done)), "the watch to bring the Job's end")
    svc.cancel(done, user="ana")
    svc.cancel(runs, user="ana")
    if lagging:
        svc.tick()  # the stops reach the executor: it reads the Job's status, then deletes it
        assert fake.get("jobs", NS, object_name(done)) is None  # deleted all the same (its Service, Secret too)
        assert svc.get_job(done, user="ana")["state"] == "running"  # its end waits for its pods to be gone
        fake.release_watches("jobs", "pods")

    want = JobState.SUCCEEDED.value if code == 0 else JobState.FAILED.value
    job = wait_until(lambda: (j := svc.get_job(done, user="ana"))["state"] in ("succeeded", "failed", "cancelled")
                     and j, "the done job's end", svc.tick)
    assert job["state"] == want, job
    assert job["exit_code"] == code, job
    assert job["message"].endswith(LATE), job["message"]
    assert "cancelled" not in job["message"], job["message"]
    if code == 0:
        assert job["message"] == f"exited with code 0{LATE}", job["message"]
    if lagging:  # what the executor read before the delete
        assert ("GET", f"/apis/batch/v1/namespaces/{NS}/jobs/{object_name(done)}/status") in fake.requests

    other = wait_until(lambda: (j := svc.get_job(runs, user="ana"))["state"] == "cancelled" and j,
                       "the running job to be cancelled", svc.tick)
    assert other["message"].startswith("cancelled by ana (stopped: Job "), other["message"]
    assert "had ended before" not in other["message"]


def test_newuser38_n4_kube_a_gang_whose_groups_all_completed_before_the_stop_reports_its_own_end(
        fake: FakeKubernetes, api_client: client.ApiClient) -> None:
    """A gang of worker groups (one Job per group): each group's Job is read at the stop."""
    executor = KubernetesExecutor(api_client, _config(), watch_timeout_s=30)
    try:
        job = _gang("j-n4gang")
        executor.start(job, PLACED)
        fake.run_job(NS, "js-j-n4gang")
        fake.run_job(NS, "js-j-n4gang-g1")
        poll_until(executor, lambda evs: bool(of(Started, evs)))
        fake.hold_watches("jobs", "pods")
        fake.finish_job(NS, "js-j-n4gang")
        fake.finish_job(NS, "js-j-n4gang-g1")
        executor.stop(job.id, grace_s=30, reason="cancelled by ana")
        fake.release_watches("jobs", "pods")
        (ended,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
        assert (ended.exit_code, ended.before_stop, ended.message) == (0, True, "exited with code 0")
        for name in ("js-j-n4gang", "js-j-n4gang-g1"):
            assert ("GET", f"/apis/batch/v1/namespaces/{NS}/jobs/{name}/status") in fake.requests
    finally:
        executor.detach()


def test_newuser38_n4_kube_a_job_still_running_at_the_stop_is_stopped(
        fake: FakeKubernetes, api_client: client.ApiClient) -> None:
    """The read at the stop finds it running: its end is the stop's (SIGTERM), not its own."""
    executor = _executor(api_client)
    try:
        job = make_job("j-n4run")
        executor.start(job, allocation("g1", 1))
        fake.run_job(NS, "js-j-n4run")
        poll_until(executor, lambda evs: bool(of(Started, evs)))
        executor.stop(job.id, grace_s=30, reason="cancelled by ana")
        (ended,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
        assert (ended.exit_code, ended.before_stop) == (-15, False)
        assert ended.message.startswith(f"stopped: Job {NS}/js-j-n4run deleted"), ended.message
    finally:
        executor.detach()
