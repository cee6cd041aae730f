"""newuser36 N6: the quickstart's demo lease and jobs ask for free GPUs only (``--no-preempt``), on every surface.

On a shared hub the README's first notebook evicted another team's running job for a 1-second lease and then held
its own team's reclaims for 15 minutes, telling of neither. The option exists on ``%gpu request``, ``%%schedule`` /
``%schedule run``, ``jupyter-sched submit`` and REST (``no_preempt``); bad input is refused naming the field; the
quickstart's request lines carry it and its text says why; a release's cost is said by the one renderer. Pure:
parsers, request models, the notebook's JSON, the wording.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.cli.main import build_parser
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import job_body, lease_body, parse_gpu_line, parse_schedule_line
from jupyter_sched.model import JobKind, spec_from_request
from jupyter_sched.model.codec import spec_from_dict, spec_to_dict
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models.base import parse
from jupyter_sched.wording import cancel_outcome

ROOT = Path(__file__).resolve().parents[2]
WHY = "on a shared hub this waits for a free GPU rather than stopping a colleague's job"


def test_newuser36_n6_quickstart_requests_carry_no_preempt_and_say_why() -> None:
    cells = json.loads((ROOT / "notebooks" / "quickstart.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    asks = [line for text in code for line in text.splitlines()
            if line.lstrip().startswith(("%gpu request", "%%schedule", "job = %schedule run"))]
    assert len(asks) == 3 and all("--no-preempt" in line for line in asks), asks
    said = " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    assert WHY in said


def test_newuser36_n6_magics_and_cli_send_no_preempt() -> None:
    lease = parse_gpu_line("request 1 --timeout 5m --no-preempt")
    assert lease_body(lease.options, kernel_id="k-1")["no_preempt"] is True
    assert "no_preempt" not in lease_body(parse_gpu_line("request 1").options, kernel_id="k-1")
    cell = parse_schedule_line("--gpus 1 --no-preempt", cell=True)
    assert job_body(cell.options, command=["python", "x.py"])["no_preempt"] is True
    run = parse_schedule_line("run train.py --epochs 2 --gpus 1 --no-preempt")
    assert job_body(run.options, command=["python", "train.py"])["no_preempt"] is True
    args = build_parser().parse_args(["submit", "--gpus", "1", "--no-preempt", "--", "python", "x.py"])
    assert args.no_preempt is True


def test_newuser36_n6_rest_takes_no_preempt_and_refuses_a_non_boolean_naming_it() -> None:
    request = parse(SubmitJobRequest, {"gpus": 1, "kernel_id": "k-1", "no_preempt": True})
    spec = spec_from_request(request.body(), user="ann", default_kind=JobKind.LEASE)
    assert spec.no_preempt is True and spec_from_dict(spec_to_dict(spec)).no_preempt is True
    plain = spec_from_request({"gpus": 1, "command": ["python", "x.py"]}, user="ann")
    assert "no_preempt" not in spec_to_dict(plain)  # stored rows of other jobs unchanged
    with pytest.raises(ValidationError) as model_refusal:
        parse(SubmitJobRequest, {"gpus": 1, "no_preempt": "yes"})
    assert model_refusal.value.field == "no_preempt"
    with pytest.raises(ValidationError) as core_refusal:
        spec_from_request({"gpus": 1, "command": ["python", "x.py"], "no_preempt": 1}, user="ann")
    assert core_refusal.value.field == "no_preempt" and "true or false" in str(core_refusal.value)


def test_newuser36_n6_release_says_what_it_costs_the_teams_reclaims() -> None:
    now = datetime(2026, 12, 7, 4, 37, 28, tzinfo=timezone.utc)
    before = {"id": "l-1", "kind": "lease", "state": "running", "user": "n36a",
              "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-2"], "gpu_milli": 1000}}
    after = {**before, "state": "cancelled", "reclaim_cooldown": {
        "team": "vision", "until": "2026-12-07T04:52:26+00:00", "took_at": "2026-12-07T04:37:26+00:00",
        "held_s": 1.0, "cooldown_s": 900.0, "text": "…"}}
    line = cancel_outcome(before, after, now=now)
    assert line.endswith("; team vision's reclaims of other teams' borrowed GPUs wait until 04:52 UTC (a reclaim "
                         "cool-down: the GPUs you took back were used for 1s)"), line
    never = {**after, "reclaim_cooldown": {**after["reclaim_cooldown"], "held_s": None}}
    assert cancel_outcome(before, never, now=now).endswith("the GPUs you took back were never used)")
    assert "reclaim" not in cancel_outcome(before, {**before, "state": "cancelled"}, now=now)
