"""Hubadmin22 H3 on Kubernetes: a node that leaves under running work is said in the log.

Session 22 logged one WARNING at start and at each refresh naming the work that holds GPUs the
inventory no longer lists — but the hook lived in ``CachedInventory``, and a Kubernetes inventory (its
own watch cache) is not wrapped: a GPU node deleted from the cluster under a running job was said in
``GET inventory`` (admins) and the job's line, never in the service's log. Now the watch's changes reach
the same :class:`~jupyter_sched.services.inventory_watch.InventoryWatch`. The cluster is the fake API
server the kube tests use (real REST JSON and chunked watches to the official client).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.inventory.kubernetes import gpu_uuid
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.model.off_inventory import off_inventory_warning
from jupyter_sched.services import build_services
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job

from .fake_apiserver import FakeKubernetes
from .kube_builders import make_node


def _settings(tmp_path: Path, fake: FakeKubernetes) -> dict[str, Any]:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "fake", "cluster": {"server": fake.url}}],
        "users": [{"name": "tester", "user": {"token": "fake-token"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "tester", "namespace": "ml"}}],
        "current-context": "fake"}), encoding="utf-8")
    return {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
            "executor": "kubernetes", "kubeconfig": str(kubeconfig), "inventory_source": "auto",
            "telemetry_source": "off", "kubernetes": {"namespace": "ml", "default_image": "python:3.12-slim"}}


def _gone_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "held off the inventory" in r.getMessage()]


def test_s23_hubadmin22_h3_a_kubernetes_node_gone_under_running_work_is_logged_once(
        tmp_path: Path, fake: FakeKubernetes, caplog: pytest.LogCaptureFixture) -> None:
    # before: nothing in the log (only CachedInventory called the watch; this inventory is not wrapped)
    fake.put("nodes", make_node("g1", gpus=4))
    fake.put("nodes", make_node("g2", gpus=2))
    settings = _settings(tmp_path, fake)
    first = build_services(settings)
    try:
        job = make_job("j-k", user="ha22b", gpus=2, state=JobState.RUNNING,
                       allocation=Allocation("g2", (gpu_uuid("g2", 0), gpu_uuid("g2", 1))))
        first.store.insert_job(JobRecord(job=job, executor="kubernetes"))
    finally:
        asyncio.run(first.stop())
    with caplog.at_level(logging.WARNING, logger="jupyter_sched"):
        services = build_services(settings)  # at start: g2 is there, nothing to say
        try:
            assert _gone_lines(caplog) == []
            fake.remove("nodes", "", "g2")  # the node leaves the cluster; the job's record runs on
            deadline = time.monotonic() + 20
            while not _gone_lines(caplog) and time.monotonic() < deadline:
                time.sleep(0.05)
            # another change that leaves the same work off the inventory: not said again
            fake.update("nodes", "", "g1", lambda node: node["metadata"]["labels"].update({"rack": "r7"}))
            while services.ctx.inventory().nodes[0].labels.get("rack") != "r7" and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            asyncio.run(services.stop())
    tail = off_inventory_warning([], allocated=0, in_inventory=0).split(". ", 1)[1]
    assert _gone_lines(caplog) == [
        f"jupyter_sched: 2 GPUs held off the inventory by 1 piece of work (2 GPUs allocated in all, 4 in the "
        f"inventory) — job j-k (ha22b, \"j-k\") on {gpu_uuid('g2', 0)}, {gpu_uuid('g2', 1)} (node g2 is gone). {tail}"], \
        caplog.text
