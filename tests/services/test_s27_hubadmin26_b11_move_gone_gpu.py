"""hubadmin26 B11: ``teams move`` with a moved job on a GPU gone from the inventory said ``cv on unknown holds 0
GPUs now, 1 after the move: …; above its limit of 0 by 1: nothing is stopped, but no new cv work on unknown starts
until it holds less than 0`` (and ``1 GPUs`` in the CLI's plan): the gone GPU was counted as a model "unknown"
against a limit nobody set. It is now said as what it is, and not counted."""

from __future__ import annotations

import io
from types import SimpleNamespace

from jupyter_sched.cli.teams import _show
from jupyter_sched.inventory.simulated import DEFAULT_SIMULATED_MODEL
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, parse
from jupyter_sched.services.models.teams import MoveTeamRequest
from jupyter_sched.services.team_move import holding_text
from jupyter_sched.store import JobRecord
from tests.runtime.builders import make_job


def test_hubadmin26_b11_a_moved_job_on_a_gone_gpu_is_said_so_not_held_to_a_limit_of_0(services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {
        "quotas": [{"team": "cv", "gpu_model": DEFAULT_SIMULATED_MODEL, "guaranteed": 2, "borrowing_limit": 0},
                   {"team": "vision", "gpu_model": DEFAULT_SIMULATED_MODEL, "guaranteed": 2, "borrowing_limit": 0}],
        "user_teams": {"ana": ["cv"]}}))
    job = make_job("j-after-backup", user="ana", team="vision", state=JobState.RUNNING,
                   allocation=Allocation(node="node-b", gpu_uuids=("GPU-b0",)))
    services.store.insert_job(JobRecord(job=job))
    plan = services.teams.move(boss, "vision", parse(MoveTeamRequest, {"to": "cv", "dry_run": True}))
    text = plan.model_dump(mode="json")["holding"]["text"]
    assert "unknown" not in text and "less than 0" not in text, text
    assert text.endswith("1 job on GPU-b0, no longer in the inventory: not counted against cv's lines"), text
    out = io.StringIO()
    _show(plan.model_dump(mode="json"), SimpleNamespace(out=out))
    assert "  running  1 GPU: " in out.getvalue(), out.getvalue()


def test_hubadmin26_b11_a_limit_of_0_is_not_said_as_until_it_holds_less_than_0() -> None:
    said = holding_text("cv", 0, 1, 0, 0, model="A100-80GB")
    assert said.endswith("above its limit of 0 by 1: nothing is stopped, but no new cv work on A100-80GB starts while "
                         "it holds any (its limit there is 0)"), said
