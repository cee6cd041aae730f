"""hubadmin25 B16: no admin view of every budget's standing. GET quotas listed budgets as set (``{'team': 'nlp',
'gpu_hours': 400.0, 'period': 'month'}``) with nothing used; admin ``status`` showed none; ``queue --summary``
only a spent one. Now GET quotas answers an admin ``budget_standings`` — used, left, reset, what running work
may still use by its time limits, pending GPU jobs, and in words what a new job may use — and ``queue
--summary`` prints them under its table. A user's GET quotas has none (a team's total is admin-only).

Real parts: the services on a SQLite store (tests/services/conftest.py: four simulated GPUs, a manual
clock at T0 = Nov 29 12:00 UTC), job rows and usage intervals as the engine writes them, the CLI's
``queue --summary`` over the services' own answers.
"""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import timedelta
from typing import Any

from jupyter_sched.cli.main import Streams, build_parser
from jupyter_sched.cli.queue_summary import summary
from jupyter_sched.model import Allocation, Budget, JobState, QuotaSet
from jupyter_sched.services import Services
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job
from tests.services.as_client import AsClient

MODEL = "Simulated GPU 80GB"


def _month(services: Services) -> None:
    """nlp's budget 10 GPU-hours a month, bo's own 2 in nlp; ann used 3 GPU-hours on Nov 10; bo's 2-GPU job,
    3 h limit, runs since 11:00 (2 GPU-hours so far, 4 more by its limit); ann has one GPU job pending."""
    started = T0 - timedelta(hours=1)
    running = make_job("j-run", user="bo", gpus=2, team="nlp", time_limit_s=3 * 3600.0, state=JobState.RUNNING,
                       allocation=Allocation(node="vm", gpu_uuids=("GPU-sim-vm-0", "GPU-sim-vm-1")),
                       submitted_at=started)
    store = services.store
    with store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(budgets=(Budget(team="nlp", gpu_hours=10.0, period="month"),
                                               Budget(team="nlp", user="bo", gpu_hours=2.0, period="month"))))
        tx.open_usage(job_id="j-old", attempt=1, user="ann", team="nlp", kind="training",
                      gpus=[("GPU-sim-vm-2", MODEL, 1.0)], started_at=T0.replace(day=10))
        tx.close_usage("j-old", T0.replace(day=10, hour=15))
        tx.open_usage(job_id="j-run", attempt=1, user="bo", team="nlp", kind="training",
                      gpus=[("GPU-sim-vm-0", MODEL, 1.0), ("GPU-sim-vm-1", MODEL, 1.0)], started_at=started)
    store.insert_job(JobRecord(job=replace(running, started_at=started)))
    store.insert_job(JobRecord(job=make_job("j-wait", user="ann", gpus=1, team="nlp", submitted_at=T0)))


def test_hubadmin25_b16_get_quotas_says_every_budgets_standing_to_an_admin(services: Services) -> None:
    _month(services)
    answer: dict[str, Any] = services.quotas.get(services.caller("root", admin=True)).to_wire()
    team, bo = answer["budget_standings"]
    assert {k: team[k] for k in ("team", "user", "gpu_hours", "period", "used_gpu_hours", "left_gpu_hours", "resets_at",
                                 "running_may_use_gpu_hours", "pending_gpu_jobs")} == {
        "team": "nlp", "user": None, "gpu_hours": 10.0, "period": "month", "used_gpu_hours": 5.0,
        "left_gpu_hours": 5.0, "resets_at": "2026-12-01T00:00:00Z", "running_may_use_gpu_hours": 4.0,
        "pending_gpu_jobs": 1}, team
    assert team["text"] == (
        "nlp: 5 of 10 GPU-hours this month (50%), 5 left until Dec 1 00:00 UTC; running work may use 4 more by its "
        "time limits; a new GPU job fits while its GPUs times time limit is at most 5 GPU-hours (e.g. 1 GPU for "
        "5h00m, 8 GPUs for 37m30s); 1 pending GPU job"), team["text"]
    assert (bo["user"], bo["used_gpu_hours"], bo["left_gpu_hours"], bo["pending_gpu_jobs"]) == ("bo", 2.0, 0.0, 0), bo
    assert bo["text"].endswith("new GPU jobs wait until it resets or an admin raises it"), bo["text"]
    # a user's GET quotas: the budgets as set, no standings (another team's total is not theirs to read)
    assert "budget_standings" not in services.quotas.get(services.caller("ann", admin=False)).to_wire()
    # the GET answer sent back as a PUT (the admin notebook's read-modify-write) is taken: standings ignored
    services.quotas.set(services.caller("root", admin=True), _put(answer))


def _put(answer: dict[str, Any]) -> Any:
    from jupyter_sched.services.models import SetQuotasRequest

    return SetQuotasRequest.model_validate(answer)


class _Admin(AsClient):
    def call(self, req: Any) -> Any:
        assert req.path == "quotas", req
        return self.services.quotas.get(self.caller).to_wire()


def test_hubadmin25_b16_queue_summary_prints_the_budgets_under_its_table(services: Services) -> None:
    _month(services)
    out = io.StringIO()
    args = build_parser().parse_args(["queue", "--summary"])
    assert summary(_Admin(services, "root", admin=True), args, Streams(out=out, err=io.StringIO(), stdin=io.StringIO()),
                   None) == 0
    lines = out.getvalue().splitlines()
    start = lines.index("Budgets now:")
    assert lines[start + 1].startswith("  nlp: 5 of 10 GPU-hours this month (50%), 5 left until Dec 1 00:00 UTC"), lines
    assert lines[start + 2].startswith("  user bo in nlp: 2 of 2 GPU-hours this month (100%), 0 left"), lines
