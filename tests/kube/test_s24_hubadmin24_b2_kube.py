"""hubadmin24 B2/B7 on Kubernetes: a Job of ours that runs in the cluster for a job id the store does not
have (submitted after the restored backup, or a new empty store) is adopted as running on the GPUs its pod
template names — owner, team, GPUs, command and limit read back from the object — and watched from then on.

Real parts: the official client against the in-process fake API server (tests/kube/fake_apiserver.py), a
real SQLite store, the engine's start-up scan (:func:`jupyter_sched.engine.restored.adopt_unknown_live`).
"""

from __future__ import annotations

from pathlib import Path

from kubernetes import client

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.restored import adopt_unknown_live
from jupyter_sched.engine.transitions import JobWriter
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.model import JobState
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0

from .fake_apiserver import FakeKubernetes
from .kube_builders import allocation, make_job
from .test_integration import NS, _executor


def test_s24_hubadmin24_b2_a_running_job_object_the_store_lacks_is_adopted_on_its_gpus(
        fake: FakeKubernetes, api_client: client.ApiClient, inventory: KubernetesInventory, tmp_path: Path) -> None:
    before = _executor(api_client, inventory)
    handle = before.start(make_job("j-after", gpus=2, time_limit_s=600), allocation("g2", 2))
    before.start(make_job("j-done"), allocation("g1", 1))
    before.detach()  # the service stopped; the Jobs run on in the cluster
    fake.run_job(NS, "js-j-after")
    fake.finish_job(NS, "js-j-done", exit_code=0)  # ended: nothing to adopt

    store = Store(sqlite_url(tmp_path / "sched.sqlite"))  # the restored backup (or a new store) has neither
    after = _executor(api_client, inventory)
    events: list[dict[str, object]] = []
    try:
        writer = JobWriter(store, ManualClock(T0), events.append, simulated=lambda: False)
        assert adopt_unknown_live(store, after, writer, writer.clock) == ["j-after"]
        job = store.get_job("j-after").job
        assert job.state is JobState.RUNNING and job.allocation == allocation("g2", 2)
        assert (job.spec.user, job.spec.team, job.spec.resources.gpus) == ("alice", "team-ml", 2)
        assert job.spec.command == ("python", "train.py") and job.spec.time_limit_s == 600
        assert (store.get_job("j-after").handle or {})["uid"] == handle.data["uid"]
        assert after.tracked() == {"j-after"}
        assert [e.action for e in store.list_events(job_id="j-after", action="adopted")] == ["adopted"]
        assert [e["data"]["id"] for e in events] == ["j-after"]  # pushed at adoption
        assert [r.job.id for r in store.list_jobs()] == ["j-after"]
    finally:
        after.detach()
        store.close()
