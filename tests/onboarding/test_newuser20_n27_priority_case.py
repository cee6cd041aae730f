"""New user 20, N27: ``%gpu request 1 --priority HIGH`` was refused (``must be high, normal or low (got
'HIGH')``) — a class name in another case. One rule now, on every surface that names a class: case and
surrounding blanks are folded (:func:`~jupyter_sched.model.validation.fold_priority`); anything else
is still the one refusal naming the three classes, in the same words on REST, the CLI and the magics."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.magics.parsing import job_body, lease_body, parse_gpu_line, parse_schedule_line
from jupyter_sched.queues.limits import TimeLimitRule
from jupyter_sched.queues.windows import TimeWindow
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0

SPELLINGS = ["LOW", "Low", " low ", "NORMAL"]


def _services(root: Path) -> Services:
    clock = ManualClock(T0)
    return Services(store=Store(sqlite_url(root / "s.sqlite"), now=clock.now), inventory=SimulatedInventory(2, node="vm"),
                    executor=LocalExecutor(root / "jobs"), clock=clock)


def _submitted_priority(services: Services, body: dict[str, Any]) -> str:
    job = services.jobs.submit(services.caller("bo", admin=False), SubmitJobRequest.model_validate(body))
    return str(job.model_dump(mode="json")["priority"])


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_newuser20_n27_rest_cli_and_magics_fold_a_priority_class_name(tmp_path: Path, spelling: str) -> None:
    services = _services(tmp_path)
    want = spelling.strip().lower()
    try:
        # REST: the request model POST jobs / leases / dryrun / definitions validate with
        assert _submitted_priority(services, {"gpus": 0, "command": ["true"], "priority": spelling}) == want
        # the CLI sends --priority as typed; the server's answer is what it prints
        sent: list[dict[str, Any]] = []

        def server(request: httpx.Request) -> httpx.Response:
            body = json.loads(request.content)
            sent.append(body)
            return httpx.Response(201, json={**body, "id": "j-1", "state": "pending",
                                             "priority": _submitted_priority(services, body)})

        from jupyter_sched.cli.commands import submit
        from jupyter_sched.cli.main import Streams, build_parser
        from jupyter_sched.client import SchedClient
        from jupyter_sched.client.discovery import Connection

        client = SchedClient(Connection("http://sched.test/"), transport=httpx.MockTransport(server))
        argv = ["submit", "--gpus", "0", "--priority", spelling, "--json", "--", "true"]
        out = io.StringIO()
        submit(client, build_parser("submit").parse_args(argv), Streams(out=out, err=io.StringIO(), stdin=io.StringIO()))
        assert sent and json.loads(out.getvalue())["priority"] == want, out.getvalue()
        # the magics: %gpu request and %schedule run send the class folded
        lease = lease_body(parse_gpu_line(f"request 1 --priority '{spelling}'").options, kernel_id="k-1")
        assert lease["priority"] == want
        run = parse_schedule_line(f"run train.py --gpus 0 --priority '{spelling}'")
        assert job_body(run.options, command=["python", "train.py"])["priority"] == want
    finally:
        services.store.close()


def test_newuser20_n27_a_word_that_is_no_class_is_one_refusal_naming_the_classes(tmp_path: Path) -> None:
    services = _services(tmp_path)
    try:
        with pytest.raises(ValidationError) as rest:
            _submitted_priority(services, {"gpus": 0, "command": ["true"], "priority": "Urgent"})
    finally:
        services.store.close()
    with pytest.raises(ValidationError) as magic:
        parse_gpu_line("request 1 --priority Urgent")
    assert rest.value.message == "priority must be high, normal or low (got 'Urgent')", rest.value.message
    assert magic.value.message == "--priority must be high, normal or low (got 'Urgent')", magic.value.message


def test_newuser20_n27_admin_settings_fold_class_names_too() -> None:
    """Team policies' allowed_priorities (PUT quotas), c.SchedApp.priority_grants, PUT idle-policy's
    by_priority, time-limit rules and time windows: "High" was a 400 in most, and matched no job,
    silently, in the windows."""
    from jupyter_sched.reclaim.codec import idle_policies_from_dict

    idle = idle_policies_from_dict({"by_priority": {"Low": {"window_s": 1800}}})
    assert set(idle.by_priority) == {"low"} and idle.by_priority["low"].window_s == 1800
    with pytest.raises(ValidationError, match="names class low twice"):
        idle_policies_from_dict({"by_priority": {"Low": {"window_s": 1800}, "low": {"window_s": 60}}})
    teams = SetQuotasRequest.model_validate({"teams": [{"team": "ml", "allowed_priorities": ["High", "NORMAL"]}]})
    assert teams.teams is not None and teams.teams[0].allowed_priorities == ["high", "normal"]
    policy = AdmissionPolicy.from_settings({"priority_grants": {"users": {"ana": ["High"]}, "teams": {"ml": [" LOW"]}}})
    assert policy.grants.users["ana"] == frozenset({"high"}) and policy.grants.teams["ml"] == frozenset({"low"})
    assert TimeLimitRule(priority="Low", max_s=60).priority == "low"
    assert TimeWindow(name="night", start="20:00", end="06:00", priorities=("LOW",)).priorities == ("low",)
    with pytest.raises(ValidationError, match=r"must be high, normal or low \(got 'urgent'\)"):
        TimeWindow(name="night", start="20:00", end="06:00", priorities=("urgent",))

