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

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import AuthorizationError, ValidationError
from jupyter_sched.services.hub_teams import groups_of_models
from jupyter_sched.services.models import GetUsageReportRequest, parse
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
        assert "1 GPUs above its guarantee of 2: borrowed work" in holding["text"], holding
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
