"""New user 20, N1 to N5: once any quota line exists, a team without one gets
``c.SchedApp.unlisted_team_borrowing_limit`` GPUs (default 0; red team 19, R3) — said where a new
user meets it: the refusal in the CLI's and the magics' words (N3), ``status`` / ``%gpu`` (N2),
PUT quotas' warnings with the work it strands (N4) and the start-up log.

Real parts: a SQLite store, the local executor, the services; the CLI's and the magics' refusal
renderers on the service's own errors.
"""

from __future__ import annotations

import pytest

from jupyter_sched.cli.main import error_line
from jupyter_sched.errors import QuotaError
from jupyter_sched.magics.core import _one_line
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from jupyter_sched.wording.flags import CELL, CLI, in_surface_terms


def _quotas(services: Services, body: dict[str, object]) -> None:
    services.quotas.set(services.caller("root", admin=True), SetQuotasRequest.model_validate(body))


def _refusal(services: Services, who: str, *, admin: bool, groups: list[str] | None = None,
             team: str | None = None) -> QuotaError:
    caller = services.caller(who, admin=admin, groups=groups)
    with pytest.raises(QuotaError) as refused:
        services.jobs.submit(caller, SubmitJobRequest(gpus=1, team=team, command=["true"]))
    return refused.value


def test_newuser20_n3_the_cli_names_no_team_option_nobody_typed_and_tells_an_admin_their_own_fix(
        services: Services) -> None:
    """N3: ``--team default has no quota line … ask an admin to add one for --team default (PUT
    quotas) or submit on a --team that has one (you are in none)`` — every noun "team" made the
    option, no ``--team`` typed, and "ask an admin" said to the admin."""
    services.store.unlisted_borrowing_limit = 0.0
    _quotas(services, {"quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 1}]})
    err = _refusal(services, "root", admin=True)
    line = error_line("submit", err)
    assert line.startswith("jupyter-sched submit: team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs"), line
    assert "--team" not in line, line  # no option typed, none with a line to choose: none named
    assert "ask an admin" not in line and "add a quota line for team default with PUT quotas" in line, line
    assert "none of your teams (default) has one" in line and "you are in none" not in line, line
    cell = _one_line(err, surface=CELL)
    assert cell.startswith("team default has no share of the GPUs (no quota line)") and "--team" not in cell, cell

    # a member of a team with a line: the option said once, where it is the fix; not "ask" an admin for a user
    err = _refusal(services, "cy", admin=False, groups=["ops", "ml"], team="ops")
    line = error_line("submit", err)
    assert line.count("--team") == 1 and "submit with --team <one of yours with a line: ml>" in line, line
    assert "ask an admin to add a quota line for team ops (PUT quotas)" in line, line


@pytest.mark.parametrize(("hint", "field", "details", "want"), [
    pytest.param("leave team out to use 'default'; your teams: ml", "team", {"team": "x"},
                 "leave --team out to use 'default'; your teams: ml", id="the field's word is the option"),
    pytest.param("add a line for team default, or use a team that has one", "team", {"team": "default"},
                 "add a line for team default, or use a team that has one", id="a noun after a or for stays"),
    pytest.param("team 'ml' has a line; leave team out", "team", None,
                 "team 'ml' has a line; leave --team out", id="before a quoted value it is the noun"),
    pytest.param("give the path of a notebook (.ipynb)", "notebook", None,
                 "give the path of a notebook (.ipynb)", id="a notebook is a file, not --notebook"),
])
def test_newuser20_n3_only_the_field_reference_becomes_the_option(hint: str, field: str,
                                                                   details: dict[str, str] | None, want: str) -> None:
    assert in_surface_terms("x is refused", hint, field, CLI, details)[1] == want


def _hold_and_queue(services: Services, *, running: int, pending: int) -> None:
    """Team default (bo) holds ``running`` 1-GPU jobs and queues ``pending`` more, with no quota lines."""
    bo = services.caller("bo", admin=False)
    for i in range(running):
        services.jobs.submit(bo, SubmitJobRequest(gpus=1, name=f"run{i}", command=["sleep", "60"]))
    services.engine.tick()
    for i in range(pending):
        services.jobs.submit(bo, SubmitJobRequest(gpus=1, name=f"wait{i}", command=["sleep", "5"]))


def test_newuser20_n2_status_says_the_queues_words_for_a_team_without_a_line(services: Services) -> None:
    """N2: ``status`` / ``%gpu`` said ``team default: guaranteed 0 GPUs, borrowing limit 0 (at most 0);
    3 GPUs in use … nothing more of the team starts until that much is released`` while the queue said
    "can never start": one renderer now, and a unit on every number."""
    services.store.unlisted_borrowing_limit = 0.0
    _hold_and_queue(services, running=3, pending=0)
    _quotas(services, {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 0}]})
    me = services.accounting.me(services.caller("bo", admin=False)).model_dump(mode="json")
    assert me["by_team"][0]["unlisted"] is True
    text = me["quota_text"]
    assert text.startswith("team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs "
                           "(c.SchedApp.unlisted_team_borrowing_limit); 3 GPUs in use by the team"), text
    assert "no GPU work of the team can start until it gets a line" in text, text
    assert "until that much is released" not in text and "(at most 0)" not in text, text

    services.store.unlisted_borrowing_limit = 1.0  # above 0: over it, what runs must be released first
    text = services.accounting.me(services.caller("bo", admin=False)).model_dump(mode="json")["quota_text"]
    assert "may use 1 GPU, none of them guaranteed" in text and "2 GPUs over the 1 GPU it may use" in text, text
    ml = services.accounting.me(services.caller("al", admin=False, groups=["ml"])).model_dump(mode="json")
    assert ml["quota_text"].startswith("team ml: guaranteed 1 GPU, borrowing limit 0 GPUs (at most 1 GPU)"), ml


def test_newuser20_n4_put_quotas_says_the_work_it_strands_the_admins_team_first(services: Services) -> None:
    """N4: a PUT that stranded 300 pending jobs and 3 running GPUs of team default said only "team
    default has no share of the GPUs (no quota line): it may use 0 GPUs (…); give them a line with PUT quotas"."""
    services.store.unlisted_borrowing_limit = 0.0
    _hold_and_queue(services, running=3, pending=5)
    services.jobs.submit(services.caller("cy", admin=False, groups=["ops"]),
                         SubmitJobRequest(gpus=0, team="ops", command=["sleep", "5"]))  # nothing of ops strands
    root = services.caller("root", admin=True)  # embedded: in team default
    answer = services.quotas.set(root, SetQuotasRequest.model_validate(
        {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 0}], "user_teams": {"al": "nlp"}}))
    warnings = [w for w in answer.warnings or () if "no quota line" in w]
    assert warnings[0] == (
        "team default has no share of the GPUs (no quota line): it may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit), you "
        "included; its 5 pending jobs can never start and its running work holds 3 GPUs, 3 GPUs over that (it runs on "
        "as borrowed work: another team's reclaim of its guaranteed GPUs can take it) — give it a line with PUT quotas, or raise c.SchedApp.unlisted_team_borrowing_limit"), warnings
    assert warnings[1].startswith("teams nlp, ops have no share of the GPUs (no quota line): each may use 0 GPUs") and \
        warnings[1].endswith("give them a line with PUT quotas"), warnings
    assert services.quotas.get(root).warnings == answer.warnings  # GET says the same


def test_newuser20_n4_the_start_up_log_warns_of_config_lines_that_strand_work(
        tmp_path: object, caplog: pytest.LogCaptureFixture) -> None:
    """N1/N4: ``c.SchedApp.quotas`` with the README's one line left the owner's team with 0 GPUs, and
    nothing in the log said so."""
    from pathlib import Path

    from jupyter_sched.services import build_services

    root = Path(str(tmp_path))
    settings = {"db_url": f"sqlite:///{root / 'sched.sqlite'}", "log_dir": str(root / "logs"),
                "inventory_source": "simulated", "telemetry_source": "off",
                "quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 1}]}
    with caplog.at_level("WARNING", logger="jupyter_sched"):
        built = build_services(settings)
    try:
        said = [r.getMessage() for r in caplog.records if "no quota line" in r.getMessage()]
        assert said == ["jupyter_sched: team default has no share of the GPUs (no quota line): it may use 0 GPUs "
                        "(c.SchedApp.unlisted_team_borrowing_limit); give it a line with PUT quotas"], said
    finally:
        built.store.close()


def test_newuser20_n5_a_dry_run_says_what_a_change_strands_and_stores_nothing(services: Services) -> None:
    """N4/N5: the admin notebook's preview could not say that applying it leaves every other team at
    0 GPUs; PUT quotas with ``dry_run`` answers the set and its warnings, storing and auditing nothing."""
    from jupyter_sched.errors import AuthorizationError
    from jupyter_sched.services.models import GetAuditRequest

    services.store.unlisted_borrowing_limit = 0.0
    _hold_and_queue(services, running=0, pending=2)
    root = services.caller("root", admin=True)
    would = services.quotas.set(root, SetQuotasRequest.model_validate(
        {"quotas": [{"team": "research", "guaranteed": 2, "borrowing_limit": 4}], "dry_run": True}))
    assert [q.team for q in would.quotas] == ["research"]
    assert would.warnings and would.warnings[0].startswith(
        "team default has no share of the GPUs (no quota line): it may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit), you included; "
        "its 2 pending jobs can never start"), would.warnings
    assert services.quotas.get(root).quotas == []
    assert services.audit.list(root, GetAuditRequest(action="quotas_changed")).root == []
    with pytest.raises(AuthorizationError):  # what others' work would strand is an admin's to read
        services.quotas.set(services.caller("bo", admin=False), SetQuotasRequest(quotas=[], dry_run=True))


def test_newuser20_n6_a_timed_out_lease_request_says_the_queues_reason_with_one_level_of_brackets(
        services: Services) -> None:
    """N6: ``no GPUs granted within 8s (queued #2 · ETA 22:45 UTC (in 1m01s), when fill3 (j-…) ends (if
    …)); lease request l-… withdrawn`` — brackets three deep, and the queue line's reason dropped."""
    from jupyter_sched.magics.core import _timed_out

    bo = services.caller("bo", admin=False)
    services.jobs.submit(bo, SubmitJobRequest(gpus=4, name="fill4", time_limit="4m", command=["sleep", "60"]))
    services.engine.tick()
    waiting = services.jobs.submit(bo, SubmitJobRequest(gpus=1, name="w", time_limit="1m", command=["true"]))
    services.engine.tick()
    view = services.jobs.get(bo, waiting.id).model_dump(mode="json")
    said = _timed_out(view, "l-1", 8)
    assert said.startswith("no GPUs granted within 8s; lease request l-1 withdrawn. It was #1 in the queue: "), said
    summary = view["reason"]["text"]["summary"].rstrip(".")
    assert summary in said and "fill4" in said, (said, summary)  # the reason, then the ETA and what it waits for
    depth = deepest = 0
    for ch in said:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    assert deepest <= 1 and depth == 0, said
