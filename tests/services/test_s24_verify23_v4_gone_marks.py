"""Verify 23, V4: with work on a GPU the inventory no longer lists, ``jupyter-sched jobs``, ``status JOB``, the
magics and the panel said "GPU-… no longer in the inventory (it runs on unless its GPUs went with it; an admin
can cancel it)" — but the same work's ``jupyter-sched queue`` row said nothing of it (only its time limit or
progress), and the ``status`` summary read "my work 2 jobs running, on 2 GPUs".

Now the queue's row of such work and the summary (one line under ``my work`` per piece of work, jobs and leases)
say it in the one sentence of :func:`jupyter_sched.wording.jobs.gone_text`, as ``jobs`` does.

Real parts: the application services on a real SQLite store with a static inventory file (a node deleted from
it under running work), the CLI's ``queue``, ``jobs`` and ``status`` commands over the services' own answers
(:mod:`tests.services.as_client`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.commands import jobs, queue, status
from jupyter_sched.model import Allocation, JobKind, JobState
from jupyter_sched.services import Services, build_services
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job
from tests.services.as_client import AsClient, said

TWO_NODES = "nodes:\n  - {name: n1, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n" \
            "  - {name: n2, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n"
ONE_NODE = TWO_NODES.split("  - {name: n2")[0]
TAIL = "no longer in the inventory (it runs on unless its GPUs went with it; an admin can cancel it)"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(TWO_NODES)
    built = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                            "inventory_source": "static", "inventory_file": str(nodes), "inventory_refresh_s": 3600,
                            "telemetry_source": "off"})
    try:
        for job in (make_job("j-b2", user="ve23b", gpus=1, state=JobState.RUNNING,
                             allocation=Allocation("n2", ("GPU-static-n2-0",))),
                    make_job("j-b1", user="ve23b", gpus=1, state=JobState.RUNNING,
                             allocation=Allocation("n1", ("GPU-static-n1-0",))),
                    make_job("l-b3", user="ve23b", gpus=1, state=JobState.RUNNING, kind=JobKind.LEASE,
                             allocation=Allocation("n2", ("GPU-static-n2-1",)))):
            built.store.insert_job(JobRecord(job=job, executor="local"))
        nodes.write_text(ONE_NODE)  # n2 deleted from the inventory file under j-b2 and l-b3
        built.ctx.inventory_source.invalidate()
        yield built
    finally:
        built.store.close()


def test_s24_verify23_v4_queue_rows_mark_work_on_gpus_gone_as_jobs_does(services: Services) -> None:
    owner = AsClient(services, "ve23b")
    listed = said(jobs, owner, "jobs")
    assert f"GPU-static-n2-0 {TAIL}" in listed, listed  # as before
    for reader in (owner, AsClient(services, "ve23c")):  # public, as the allocation is
        text = said(queue, reader, "queue")
        # failed before: "j-b2 ve23b running normal 1 j-b2 no time limit" and nothing of the gone GPU
        assert f"GPU-static-n2-0 {TAIL}" in text and f"GPU-static-n2-1 {TAIL}" in text, text
        assert text.count(TAIL) == 2, text  # j-b1, on n1, is not marked


def test_s24_verify23_v4_status_summary_marks_my_work_on_gpus_gone(services: Services) -> None:
    text = said(status, AsClient(services, "ve23b"), "status")
    # failed before: "my work 2 jobs running, 1 lease, on 3 GPUs" and nothing more
    assert "my work 2 jobs running, 1 lease, on 3 GPUs" in text, text
    assert f"j-b2: GPU-static-n2-0 {TAIL}" in text and f"l-b3: GPU-static-n2-1 {TAIL}" in text, text
    assert text.count(TAIL) == 2, text
    assert TAIL not in said(status, AsClient(services, "ve23c"), "status"), "another user's work is not in my summary"
