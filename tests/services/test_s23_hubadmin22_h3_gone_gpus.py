"""Hubadmin22 H3 (left by session 22): the job answers mark work on GPUs the inventory no longer lists.

Session 22 said it in the log, in ``GET inventory`` (admins) and on ``jupyter-sched jobs`` lines — the CLI
asking ``GET inventory`` and comparing itself. The panel (My work, the Queue) and ``%schedule jobs`` /
``%gpu`` said nothing: a job on a node deleted from the inventory file read "Running on n2" as if nothing
had happened. Now the server puts ``gone_gpus`` on each answer of such work (``GET jobs``, ``GET queue``,
``GET jobs/{id}``), computed from the inventory the answer is built with, and every client says the one
sentence of :func:`jupyter_sched.wording.jobs.gone_text` (the panel's ``goneLine`` its twin).

The kept pages (issue 17's read cache) are kept per inventory too: a page built before the node left is
not served after it (nor is one built after it served once the node is back).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.model import Allocation, JobState
from jupyter_sched.services import Services, build_services
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest
from jupyter_sched.store.codec import JobRecord
from jupyter_sched.wording.jobs import gone_text, job_detail, job_line
from tests.runtime.builders import make_job

TWO_NODES = "nodes:\n  - {name: n1, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n" \
            "  - {name: n2, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n"
ONE_NODE = TWO_NODES.split("  - {name: n2")[0]
SENTENCE = ("GPU-static-n2-0, GPU-static-n2-1 no longer in the inventory (it runs on unless its GPUs went with it; "
            "an admin can cancel it)")


@pytest.fixture
def nodes(tmp_path: Path) -> Path:
    path = tmp_path / "nodes.yaml"
    path.write_text(TWO_NODES)
    return path


@pytest.fixture
def services(tmp_path: Path, nodes: Path) -> Iterator[Services]:
    built = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                            "inventory_source": "static", "inventory_file": str(nodes), "inventory_refresh_s": 3600,
                            "telemetry_source": "off"})
    try:
        for job in (make_job("j-b", user="ha22b", gpus=2, state=JobState.RUNNING,
                             allocation=Allocation("n2", ("GPU-static-n2-0", "GPU-static-n2-1"))),
                    make_job("j-a", user="ha22a", gpus=1, state=JobState.RUNNING,
                             allocation=Allocation("n1", ("GPU-static-n1-0",))),
                    make_job("j-p", user="ha22b", gpus=1)):
            built.store.insert_job(JobRecord(job=job, executor="local"))
        yield built
    finally:
        built.store.close()


def _reread(services: Services, nodes: Path, text: str) -> None:
    nodes.write_text(text)
    services.ctx.inventory_source.invalidate()


def _gone(rows: Any) -> dict[str, Any]:
    return {row["id"]: row.get("gone_gpus") for row in rows}


def test_s23_hubadmin22_h3_job_answers_mark_work_on_gpus_gone_from_the_inventory(
        services: Services, nodes: Path) -> None:
    # before: no answer said it (the CLI alone compared GET inventory with the allocation)
    owner, other = services.caller("ha22b", admin=False), services.caller("ha22c", admin=False)
    before = services.jobs.list(owner, ListJobsRequest())
    assert _gone(before.jobs.to_wire()) == {"j-b": None, "j-p": None}
    assert services.jobs.list(owner, ListJobsRequest()) is before, "kept while nothing changed"
    _reread(services, nodes, ONE_NODE)  # n2 deleted from the inventory file under j-b
    after = services.jobs.list(owner, ListJobsRequest()).jobs.to_wire()
    assert _gone(after) == {"j-b": ["GPU-static-n2-0", "GPU-static-n2-1"], "j-p": None}, after
    entries = services.jobs.queue(other, GetQueueRequest()).to_wire()  # public, as the allocation is
    assert _gone(entries) == {"j-p": None, "j-b": ["GPU-static-n2-0", "GPU-static-n2-1"], "j-a": None}, entries
    one = services.jobs.get(owner, "j-b").to_wire()
    assert one["gone_gpus"] == ["GPU-static-n2-0", "GPU-static-n2-1"], one
    # the same inventory read afresh: the kept page stands; the node back: no mark any more
    kept = services.jobs.list(owner, ListJobsRequest())
    services.ctx.inventory_source.invalidate()
    assert services.jobs.list(owner, ListJobsRequest()) is kept
    assert services.jobs.kept_list("ha22b", ListJobsRequest()) is kept, "the event loop's path serves it too"
    _reread(services, nodes, TWO_NODES)
    services.ctx.inventory()  # read (the engine's cycle reads it): the loop's path could answer without waiting
    assert services.jobs.kept_list("ha22b", ListJobsRequest()) is None, "a page of the old inventory is not served"
    assert _gone(services.jobs.list(owner, ListJobsRequest()).jobs.to_wire()) == {"j-b": None, "j-p": None}


def test_s23_hubadmin22_h3_the_lines_of_the_cli_and_the_magics_say_the_one_sentence(
        services: Services, nodes: Path) -> None:
    _reread(services, nodes, ONE_NODE)
    job = services.jobs.get(services.caller("ha22b", admin=False), "j-b").to_wire()
    now = datetime(2026, 12, 5, 6, 10, tzinfo=timezone.utc)
    assert gone_text(job) == SENTENCE
    # `jupyter-sched jobs` (its detail line), `jupyter-sched status JOB`, `%schedule status JOB`, `%gpu`'s kernel line
    assert job_detail(job, now).startswith(f"on n2: GPU-static-n2-0, GPU-static-n2-1 · {SENTENCE}"), job_detail(job, now)
    assert f"running on n2: GPU-static-n2-0, GPU-static-n2-1 · {SENTENCE}" in job_line(job, now), job_line(job, now)
    ended = {**job, "state": "succeeded"}
    assert gone_text(ended) == "" and SENTENCE not in job_detail(ended, now), "ended work holds nothing"


def test_s23_hubadmin22_h3_schedule_jobs_and_gpu_tables_say_the_gpus_gone(services: Services, nodes: Path) -> None:
    # before: `%schedule jobs` said nothing of it, and `%gpu`'s table dropped the GPUs (and j-b on them) entirely
    from jupyter_sched.magics.render import GONE_HEALTH, gpu_frame, queue_frame

    _reread(services, nodes, ONE_NODE)
    owner = services.caller("ha22b", admin=False)
    now = datetime(2026, 12, 5, 6, 10, tzinfo=timezone.utc)
    jobs = queue_frame(services.jobs.list(owner, ListJobsRequest()).jobs.to_wire(), now)  # %schedule jobs
    assert dict(zip(jobs["id"], jobs["detail"], strict=True))["j-b"] == SENTENCE, jobs.to_dict("records")
    inventory = services.system.inventory(owner).to_wire()
    table = gpu_frame(inventory, services.jobs.queue(owner, GetQueueRequest()).to_wire(), now=now)  # %gpu
    rows = {row["uuid"]: row for row in table.to_dict("records")}
    assert list(rows) == ["GPU-static-n1-0", "GPU-static-n1-1", "GPU-static-n2-0", "GPU-static-n2-1"], list(rows)
    for uuid in ("GPU-static-n2-0", "GPU-static-n2-1"):
        assert rows[uuid]["node"] == "n2" and rows[uuid]["health"] == GONE_HEALTH and rows[uuid]["index"] == "", \
            rows[uuid]
        assert rows[uuid]["allocated_to"] == "ha22b: training j-b (j-b)", rows[uuid]
    assert rows["GPU-static-n1-0"]["health"] != GONE_HEALTH and rows["GPU-static-n1-0"]["allocated_to"].startswith(
        "ha22a: training j-a"), rows["GPU-static-n1-0"]
