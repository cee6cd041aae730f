"""hubadmin23 A13 on Kubernetes: a store restored from a backup has a job as pending while its Job object
runs in the cluster — the new leader adopts that Job as running on the GPUs its pod template names, and
never creates a second one.

Real parts: the official client against the in-process fake API server (tests/kube/fake_apiserver.py), a
real SQLite store, the engine's restore scan (:func:`jupyter_sched.engine.restored.adopt_running_pending`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kubernetes import client

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.restored import adopt_running_pending
from jupyter_sched.engine.transitions import JobWriter
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord, Store, sqlite_url
from tests.runtime.builders import T0

from .fake_apiserver import FakeKubernetes
from .kube_builders import allocation, make_job
from .test_integration import NS, _executor


def test_s23_hubadmin23_a13_a_running_job_object_of_a_pending_job_is_adopted_not_created_again(
        fake: FakeKubernetes, api_client: client.ApiClient, inventory: KubernetesInventory, tmp_path: Path) -> None:
    admitted = make_job("j-restored", gpus=2)
    before = _executor(api_client, inventory)
    handle = before.start(admitted, allocation("g2", 2))
    before.detach()  # the service stopped; the Job runs on in the cluster
    fake.run_job(NS, "js-j-restored")

    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    pending = replace(admitted, state=JobState.PENDING, submitted_at=T0)
    store.insert_job(JobRecord(job=pending))  # what the restored backup holds
    after = _executor(api_client, inventory)
    try:
        found = after.live_copy(pending)
        assert found is not None and found[0].data["uid"] == handle.data["uid"]
        assert found[1] == allocation("g2", 2)  # the node and GPUs its pod template was pinned to
        writer = JobWriter(store, ManualClock(T0), lambda event: None, simulated=lambda: False)
        assert adopt_running_pending(store, after, writer, writer.clock) == ["j-restored"]
        row = store.get_job("j-restored")
        assert row.job.state is JobState.RUNNING and row.job.allocation == allocation("g2", 2)
        assert row.handle is not None and row.handle["uid"] == handle.data["uid"]
        assert after.tracked() == {"j-restored"}
        assert [e.action for e in store.list_events(job_id="j-restored", action="adopted")] == ["adopted"]
        assert (fake.get("jobs", NS, "js-j-restored") or {})["metadata"]["uid"] == handle.data["uid"]  # the first
        fake.finish_job(NS, "js-j-restored", exit_code=0)
        assert after.live_copy(replace(pending, id="j-other")) is None  # no object: nothing to adopt
    finally:
        after.detach()
        store.close()
