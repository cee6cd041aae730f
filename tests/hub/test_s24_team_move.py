"""hubadmin23 A9 leftover / hubadmin24 B12: an admin act that moves a renamed team's work.

JupyterHub renames a group by creating the new one (cv) and deleting the old (vision). Before this,
vision's work could not be moved: its pending jobs were held ("cancel and submit again charged to
cv"), its running jobs borrowed all they held, and a job another team reclaimed was held for good
(B12: 23 minutes of a 2-GPU run lost, no way to start it again). ``POST teams/vision/move {"to":
"cv"}`` (``jupyter-sched teams move vision --to cv``) re-charges to cv the live work and definitions
of vision's owners who are members of cv; the others are listed and left with why.

Real parts: a ``SchedulerService`` on a real SQLite store, jobs as real processes on simulated GPUs,
the real offboarding check against the hub double's user models (as test_s23_hubadmin23_a9_a11_rename).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.admission.caller import PriorityGrants
from jupyter_sched.errors import AuthorizationError, ValidationError
from jupyter_sched.services.hub_teams import groups_of_models
from jupyter_sched.services.models import GetUsageReportRequest, SetQuotasRequest, parse
from jupyter_sched.services.models.teams import MoveTeamRequest
from tests.hub.test_red18_team import SLEEP, _job, _submit
from tests.hub.test_s23_hubadmin23_a9_a11_rename import RENAMED, _clock_advance, _rename, _renamed_service
from tests.in_process import cancel_all_and_close, tick_until


def _hub_mode(svc: Any, roles: dict[str, dict[str, Any]]) -> None:
    """What the central service does at each hub poll: the hub's groups, read-only, for GET quotas and the move."""
    quotas = svc.services.quotas
    quotas.teams_from_hub = True
    quotas.hub_groups = groups_of_models(roles, svc.clock.now())


def _move(svc: Any, team: str, body: dict[str, Any], *, user: str = "admin", admin: bool = True) -> dict[str, Any]:
    caller = svc.services.caller(user, admin=admin)
    answer = svc.services.teams.move(caller, team, parse(MoveTeamRequest, body))
    return dict(answer.model_dump(mode="json"))


def test_s24_hubadmin24_b12_a_reclaimed_job_of_the_renamed_team_is_moved_and_starts(tmp_path: Path) -> None:
    """B12: reclaimed by nlp after the rename, f-long was held for good; its words now name the admin's
    act, and after ``teams move vision --to cv`` it is charged to cv and starts (failed before: no act,
    and the hold — on vision — kept it pending whatever its team)."""
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        f_long = _submit(svc, "ha23f", ["vision"], {"gpus": 3, "team": "vision", "command": SLEEP, "name": "f-long"})
        tick_until(svc, "f-long to run", lambda: _job(svc, f_long)["state"] == "running")
        _rename(svc, hub)
        _hub_mode(svc, hub.roles)
        _clock_advance(svc, 900)
        b_job = _submit(svc, "ha23b", ["nlp"], {"gpus": 1, "team": "nlp", "command": SLEEP, "name": "b-nlp"})
        tick_until(svc, "nlp's reclaim to requeue f-long", lambda: _job(svc, f_long)["state"] == "pending")
        hub.check()
        for _ in range(3):
            svc.tick()
        reason = _job(svc, f_long)["reason"]
        assert reason["code"] == "TeamMembership", reason
        assert "ask an admin to move vision's work (jupyter-sched teams move vision --to cv)" in reason["unblock"], reason

        plan = _move(svc, "vision", {"to": "cv", "dry_run": True})
        assert plan["dry_run"] is True and plan["moved"] == 1 and plan["left"] == 0, plan
        (item,) = plan["items"]
        assert item["id"] == f_long and item["outcome"] == "moved" and "charged to cv" in item["why"], item
        assert _job(svc, f_long)["team"] == "vision"  # a dry run changes nothing
        assert not [r for r in svc.audit(limit=1000) if r["action"] == "team_moved"]

        done = _move(svc, "vision", {"to": "cv"})
        assert done["moved"] == 1 and _job(svc, f_long)["team"] == "cv", done
        (row,) = [r for r in svc.audit(limit=1000) if r["action"] == "team_moved"]
        assert row["actor"] == "admin" and row["details"]["moved"] == [f_long], row
        svc.cancel(b_job, user="ha23b")
        tick_until(svc, "f-long to run again, charged to cv", lambda: _job(svc, f_long)["state"] == "running")
    finally:
        cancel_all_and_close(svc)


def test_s24_hubadmin23_a9_running_work_moves_others_are_left_with_why_and_usage_keeps_its_team(tmp_path: Path) -> None:
    """A running job of vision is charged to cv at once (the preview says cv's holding against its
    guarantee); the job of an owner who is not in cv is listed and left; usage keeps vision."""
    svc, hub = _renamed_service(tmp_path, gpus=4)
    hub.roles["ha23x"] = {"groups": ["vision"], "admin": False}
    hub.users["ha23x"] = {"": True}
    try:
        hub.check()
        f_run = _submit(svc, "ha23f", ["vision"], {"gpus": 3, "team": "vision", "command": SLEEP, "name": "f-run"})
        tick_until(svc, "f-run to run", lambda: _job(svc, f_run)["state"] == "running")
        x_pend = _submit(svc, "ha23x", ["vision"], {"gpus": 2, "team": "vision", "command": SLEEP, "name": "x-pend"})
        _rename(svc, hub)
        hub.roles["ha23x"]["groups"] = ["nlp"]  # ha23x went to nlp, not cv
        hub.check()
        _hub_mode(svc, hub.roles)
        plan = _move(svc, "vision", {"to": "cv", "dry_run": True})
        by_id = {i["id"]: i for i in plan["items"]}
        assert by_id[f_run]["outcome"] == "moved" and by_id[f_run]["gpus"] == 3, by_id
        assert by_id[x_pend]["outcome"] == "left", by_id
        assert "ha23x is not a member of cv (their teams: nlp)" in by_id[x_pend]["why"], by_id
        holding = plan["holding"]
        assert (holding["in_use"], holding["in_use_after"], holding["guaranteed"], holding["ceiling"]) == (0, 3, 2, 3)
        assert holding["borrowed_after"] == 1, holding
        assert "1 GPU above its guarantee of 2: borrowed work" in holding["text"], holding
        assert "reclaim" in holding["text"], holding

        done = _move(svc, "vision", {"to": "cv"})
        assert done["moved"] == 1 and done["left"] == 1, done
        assert _job(svc, f_run)["team"] == "cv" and _job(svc, f_run)["state"] == "running"
        assert _job(svc, x_pend)["team"] == "vision"
        svc.tick()
        rows = svc.store.usage_rows()
        assert rows and {r.team for r in rows if r.job_id == f_run} == {"vision"}, rows  # history keeps its team
        _clock_advance(svc, 600)  # ten minutes of f-run's run in the report
        report = svc.services.accounting.report(svc.services.caller("admin", admin=True),
                                                parse(GetUsageReportRequest, {"by": "team", "all": True}))
        by_team = {r["team"]: r for r in report.to_wire()}
        assert "vision's work was moved to cv at" in by_team["vision"]["moved"], by_team  # one line links the rows
    finally:
        cancel_all_and_close(svc)


def test_s24_hubadmin23_a9_the_move_refuses_non_admins_and_bad_input_naming_the_field(tmp_path: Path) -> None:
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        _submit(svc, "ha23h", ["vision"], {"gpus": 1, "team": "vision", "command": SLEEP, "name": "h-pend"})
        _rename(svc, hub)
        _hub_mode(svc, hub.roles)
        with pytest.raises(AuthorizationError):
            _move(svc, "vision", {"to": "cv"}, user="ha23h", admin=False)
        assert [r for r in svc.audit(limit=1000) if r["action"] == "refused" and r["user"] == "ha23h"]
        cases = [("vision", {"to": "vision"}, "to", ""), ("vision", {"to": "cvv"}, "to", "did you mean cv"),
                 ("vision", {"to": "c\u202ev"}, "to", ""), ("visio", {"to": "cv"}, "team", "did you mean vision"),
                 ("vision", {"to": "cv", "with_quota": True}, "with_quota", "cv has a quota line already")]
        for team, body, field, words in cases:
            with pytest.raises(ValidationError) as err:
                _move(svc, team, body)
            assert err.value.field == field, (body, err.value)
            assert words in f"{err.value.message} {err.value.hint}", (body, err.value)
    finally:
        cancel_all_and_close(svc)


def test_s24_hubadmin23_a9_with_quota_moves_the_line(tmp_path: Path) -> None:
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        _submit(svc, "ha23h", ["vision"], {"gpus": 1, "team": "vision", "command": SLEEP, "name": "h-pend"})
        hub.rename("vision", "cv")  # the hub only: vision keeps its line
        hub.check()
        _hub_mode(svc, hub.roles)
        done = _move(svc, "vision", {"to": "cv", "with_quota": True})
        assert done["quota"] == "1 quota line(s) of vision moved to cv", done
        teams = {q.team for q in svc.store.quota_set().quotas}
        assert "cv" in teams and "vision" not in teams, teams
        assert RENAMED["quotas"][0]["team"] == "cv"
    finally:
        cancel_all_and_close(svc)


def test_s24_hubadmin24_b10_after_a_rename_the_warnings_name_the_move_and_flag_budgets_and_grants_of_no_group(
        tmp_path: Path) -> None:
    """B10: GET/PUT quotas told the admin to give the vanished team vision a quota line (which would let
    its held work run charged to a team nobody is in); a budget for the typo ``nlpp`` and a priority
    grant to vision were taken without a word (failed before: none of these sentences)."""
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        f_run = _submit(svc, "ha23f", ["vision"], {"gpus": 2, "team": "vision", "command": SLEEP, "name": "f-run"})
        tick_until(svc, "f-run to run", lambda: _job(svc, f_run)["state"] == "running")
        _submit(svc, "ha23h", ["vision"], {"gpus": 2, "team": "vision", "command": SLEEP, "name": "h-pend"})
        _rename(svc, hub)
        _hub_mode(svc, hub.roles)
        admission = svc.services.admission
        admission.policy = replace(admission.policy, grants=PriorityGrants(teams={"vision": frozenset({"high"})}))
        admin = svc.services.caller("admin", admin=True)
        warnings = svc.services.quotas.get(admin).warnings
        said = [w for w in warnings if w.startswith("team vision")]
        assert any("team vision is no hub group any more (its members are now in cv): its 1 pending job is held and "
                   "its running work (2 GPUs) runs on charged to vision as borrowed work" in w
                   and "jupyter-sched teams move vision --to cv" in w for w in said), warnings
        assert not any("vision" in w and "give it a line" in w for w in warnings), warnings
        assert any("team vision: no hub group of that name (no hub user is in one), so its priority grant "
                   "(c.SchedApp.priority_grants.teams) applies to nobody" in w for w in said), warnings
        answer = svc.services.quotas.set(admin, parse(SetQuotasRequest, {
            "budgets": [{"team": "nlpp", "gpu_hours": 5}], "dry_run": True}))
        assert any(w.startswith("team nlpp: no hub group of that name (no hub user is in one), so its budget "
                                "(budgets[0]) applies to nobody — did you mean nlp?") for w in answer.warnings), answer
    finally:
        cancel_all_and_close(svc)


def test_s24_hubadmin24_b10_the_first_hub_read_warns_of_a_grant_and_a_budget_naming_no_hub_group(
        caplog: pytest.LogCaptureFixture) -> None:
    """B10 at start: ``grep grant service.log`` found nothing at any start although the grant named the
    renamed team (failed before: no such line)."""
    from datetime import datetime, timezone
    from types import SimpleNamespace

    from jupyter_sched.hub.central import HubSchedApp
    from jupyter_sched.model import Budget, Quota, QuotaSet

    now = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)
    lines = QuotaSet(quotas=(Quota(team="cv", guaranteed=2.0, borrowing_limit=1.0),
                             Quota(team="nlp", guaranteed=1.0, borrowing_limit=0.0)),
                     budgets=(Budget(team="nlpp", gpu_hours=5.0),))
    policy = SimpleNamespace(default_team="default", grants=PriorityGrants(teams={"vision": frozenset({"high"})}))
    services = SimpleNamespace(quotas=SimpleNamespace(hub_groups=None), clock=SimpleNamespace(now=lambda: now),
                               store=SimpleNamespace(quota_set=lambda: lines, unlisted_borrowing_limit=0.0, live_jobs=list),
                               admission=SimpleNamespace(policy=policy))
    app = SimpleNamespace(services=services, _provider=lambda: None)
    with caplog.at_level(logging.WARNING, logger="jupyter_sched"):
        HubSchedApp._seen_models(app, {"ha24a": {"groups": ["cv"]}, "ha24l": {"groups": ["nlp"]}})
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert ("jupyter_sched: team nlpp: no hub group of that name (no hub user is in one), so its budget (budgets[0]) "
            "applies to nobody — did you mean nlp?") in said, said
    assert any(s.startswith("jupyter_sched: team vision: no hub group of that name") and "priority grant" in s
               for s in said), said


def test_s24_hubadmin23_a9_a_definition_of_the_renamed_team_is_moved_and_its_next_run_is_charged_to_cv(
        tmp_path: Path) -> None:
    """Before, its firing was rejected ("ha23h may not charge team 'vision'"); after the move its run is cv's."""
    from jupyter_sched.services.models.definitions import CreateDefinitionRequest

    svc, hub = _renamed_service(tmp_path, gpus=3)
    svc.services.definitions.owner_caller = lambda user: svc.services.caller(
        user, admin=False, groups=list(hub.roles[user]["groups"]))
    try:
        script = tmp_path / "nightly.py"
        script.write_text("print('x')\n")
        nightly = svc.services.definitions.create(
            svc.services.caller("ha23h", admin=False, groups=["vision"]),
            parse(CreateDefinitionRequest, {"name": "nightly", "script": str(script), "schedule": "* * * * *",
                                            "timezone": "UTC", "gpus": 1, "team": "vision"})).id
        _rename(svc, hub)
        _hub_mode(svc, hub.roles)
        done = _move(svc, "vision", {"to": "cv"})
        assert [(i["id"], i["kind"], i["outcome"]) for i in done["items"]] == [(nightly, "definition", "moved")], done
        _clock_advance(svc, 120)
        svc.services.definitions.fire_due()
        (run,) = svc.list_jobs(user="ha23h", state=None)
        assert run["state"] != "rejected" and run["team"] == "cv", run
    finally:
        cancel_all_and_close(svc)


def test_s24_hubadmin24_b15_a_vanished_group_listed_again_is_said_once_with_where_its_members_are(
        caplog: pytest.LogCaptureFixture) -> None:
    """B15: the hub's restart re-created vision from load_groups; nothing in the service log said so
    (failed before: no line)."""
    from datetime import datetime, timezone
    from types import SimpleNamespace

    from jupyter_sched.hub.central import HubSchedApp
    from jupyter_sched.model import Quota, QuotaSet

    now = datetime(2026, 12, 5, 12, 25, tzinfo=timezone.utc)
    lines = QuotaSet(quotas=(Quota(team="cv", guaranteed=2.0, borrowing_limit=1.0),))
    services = SimpleNamespace(quotas=SimpleNamespace(hub_groups=None), clock=SimpleNamespace(now=lambda: now),
                               store=SimpleNamespace(quota_set=lambda: lines, unlisted_borrowing_limit=0.0, live_jobs=list),
                               admission=SimpleNamespace(policy=SimpleNamespace(default_team="default")))
    app = SimpleNamespace(services=services, _provider=lambda: None)
    HubSchedApp._seen_models(app, {"ha24a": {"groups": ["vision"]}, "ha24b": {"groups": ["vision"]}})
    HubSchedApp._seen_models(app, {"ha24a": {"groups": ["cv"]}, "ha24b": {"groups": ["cv"]}})  # the rename
    with caplog.at_level(logging.WARNING, logger="jupyter_sched"):
        back = {"ha24a": {"groups": ["cv", "vision"]}, "ha24b": {"groups": ["cv", "vision"]}}
        HubSchedApp._seen_models(app, back)  # the hub restarted: load_groups re-created vision
        HubSchedApp._seen_models(app, back)  # said once
    said = [r.getMessage() for r in caplog.records if "is back" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith(
        "jupyter_sched: hub group vision is back (2 members, all also in cv):"), said
    assert "c.JupyterHub.load_groups" in said[0], said
