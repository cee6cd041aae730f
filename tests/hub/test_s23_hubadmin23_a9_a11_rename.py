"""hubadmin23 A9 (medium) and A11 (HIGH): a team renamed on the hub.

JupyterHub has no group rename: the admin creates group ``cv`` with ``vision``'s members, deletes
``vision``, and replaces vision's quota line with one for cv. Before:

* A11: the team's own running job, still charged to ``vision`` (no line now: all of it borrowed),
  was reclaimed "to return borrowed quota to cv" for a cv member — the same people's work;
* A9: the pending job charged to vision said only "team vision has no quota line … ETA never": the
  hold's words (its owner left vision) were replaced by the quota's, naming neither cv nor a way out;
* the PUT quotas warning promised of vision's running work "(it keeps running)";
* a ``team_left`` record said "never started" of a job that had run until it was reclaimed.

Real parts: a ``SchedulerService`` on a real SQLite store, real jobs as processes on simulated GPUs,
the real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback hub double (its user models
carry ``groups`` as the hub's do), the real offboarding check that reads them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_sched.engine import SchedulerService
from jupyter_sched.hub.membership import TEAM_LEFT_ACTION
from jupyter_sched.hub.offboard import Offboarding
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest, GetDefinitionRequest
from tests.hub.test_red15_offboarding import offboard_against
from tests.hub.test_red18_team import SLEEP, _job, _records, _service, _submit
from tests.in_process import cancel_all_and_close, tick_until

VISION = {"quotas": [{"team": "vision", "guaranteed": 2, "borrowing_limit": 1},
                     {"team": "nlp", "guaranteed": 1, "borrowing_limit": 0}]}
RENAMED = {"quotas": [{"team": "cv", "guaranteed": 2, "borrowing_limit": 1},
                      {"team": "nlp", "guaranteed": 1, "borrowing_limit": 0}]}


class _Hub:
    """The hub double's users and groups, and one offboarding check against it."""

    def __init__(self, svc: SchedulerService, off: Offboarding, groups: dict[str, list[str]]) -> None:
        self.svc, self.off = svc, off
        self.users: dict[str, dict[str, bool]] = {u: {"": True} for u in groups}
        self.roles: dict[str, dict[str, Any]] = {u: {"groups": list(g), "admin": False} for u, g in groups.items()}

    def rename(self, old: str, new: str) -> None:
        """Create group ``new`` with ``old``'s members and delete ``old`` (JupyterHub has no rename)."""
        for role in self.roles.values():
            role["groups"] = [new if g == old else g for g in role["groups"]]

    def check(self) -> None:
        asyncio.run(offboard_against(self.svc, self.off, self.users, self.roles))


def _renamed_service(tmp_path: Path, gpus: int) -> tuple[SchedulerService, _Hub]:
    svc, off = _service(tmp_path, gpus=gpus)
    svc.store.unlisted_borrowing_limit = 0.0  # the hub service's default (c.SchedApp.unlisted_team_borrowing_limit)
    svc.set_quotas(VISION, actor="admin")
    hub = _Hub(svc, off, {"ha23f": ["vision"], "ha23g": ["vision"], "ha23h": ["vision"], "ha23b": ["nlp"]})
    return svc, hub


def _rename(svc: SchedulerService, hub: _Hub) -> dict[str, Any]:
    """The admin's rename: the hub groups, then PUT quotas with cv in place of vision (its answer)."""
    hub.rename("vision", "cv")
    answer = svc.set_quotas(RENAMED, actor="admin")
    hub.check()
    return answer


def _clock_advance(svc: SchedulerService, seconds: float) -> None:
    svc.clock.advance(seconds)  # type: ignore[attr-defined]  # ManualClock


def test_s23_hubadmin23_a11_the_renamed_team_never_reclaims_its_own_members_running_job(tmp_path: Path) -> None:
    """Failed before: cv's job reclaimed f-long (charged to vision, owner ha23f now in cv)."""
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        f_long = _submit(svc, "ha23f", ["vision"], {"gpus": 3, "team": "vision", "command": SLEEP, "name": "f-long"})
        tick_until(svc, "f-long to run", lambda: _job(svc, f_long)["state"] == "running")
        answer = _rename(svc, hub)
        (left,) = _records(svc, TEAM_LEFT_ACTION, 1)
        assert left["details"]["running"] == [f_long], left
        _clock_advance(svc, 900)  # past the minimum runtime: nothing protects f-long but the rule under test
        g_wait = _submit(svc, "ha23g", ["cv"], {"gpus": 2, "team": "cv", "command": SLEEP, "name": "g-wait"})
        for _ in range(8):
            svc.tick()
        assert _job(svc, f_long)["state"] == "running", _job(svc, f_long)
        assert _job(svc, g_wait)["state"] == "pending"
        assert not [r for r in svc.audit(limit=1000) if r["action"] == "reclaim"]

        # point 3: the PUT quotas answer did not promise that vision's running work keeps running
        said = " ".join(str(w) for w in answer.get("warnings", ()))
        assert "vision" in said and "keeps running" not in said, said
        assert "reclaim" in said and "can take it" in said, said
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a11_reclaimed_by_another_team_it_is_held_with_the_rename_words_and_its_record_says_it_ran(
        tmp_path: Path) -> None:
    """Another team (nlp, within its guarantee) may still reclaim work charged to vision, which borrows
    all it holds now; the requeued job is then held with the rename's words, and the ``team_left``
    record written for it says it ran (failed before: "never started", and the reason "ETA never"
    under the quota's words)."""
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        f_long = _submit(svc, "ha23f", ["vision"], {"gpus": 3, "team": "vision", "command": SLEEP, "name": "f-long"})
        tick_until(svc, "f-long to run", lambda: _job(svc, f_long)["state"] == "running")
        _rename(svc, hub)
        _clock_advance(svc, 900)
        b_job = _submit(svc, "ha23b", ["nlp"], {"gpus": 1, "team": "nlp", "command": SLEEP, "name": "b-nlp"})
        tick_until(svc, "nlp's reclaim to requeue f-long", lambda: _job(svc, f_long)["state"] == "pending")
        tick_until(svc, "b-nlp to run", lambda: _job(svc, b_job)["state"] == "running")
        hub.check()
        (row,) = [r for r in _records(svc, TEAM_LEFT_ACTION, 2) if r["details"]["held"]]  # newest first
        assert row["details"]["held"] == [f_long], row
        assert "never started" not in row["message"], row
        assert "1 pending job(s) held that ran before (requeued), not started again charged to vision" \
            in row["message"], row
        for _ in range(3):
            svc.tick()
        reason = _job(svc, f_long)["reason"]
        assert reason["code"] == "TeamMembership", reason
        assert "team vision is no hub group any more" in reason["message"], reason
        assert "ha23f is now in team cv" in reason["message"], reason
        assert reason["unblock"].lower().startswith(f"cancel it (jupyter-sched cancel {f_long}) and submit it again "
                                                    "charged to cv"), reason
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a9_a_pending_job_on_the_renamed_team_says_why_and_the_way_out(tmp_path: Path) -> None:
    """Failed before: "team vision has no quota line … can never start on it", naming neither cv nor
    a way out, although ha23h's job was held because ha23h left vision."""
    svc, hub = _renamed_service(tmp_path, gpus=3)
    try:
        hub.check()
        f_long = _submit(svc, "ha23f", ["vision"], {"gpus": 3, "team": "vision", "command": SLEEP, "name": "f-long"})
        tick_until(svc, "f-long to run", lambda: _job(svc, f_long)["state"] == "running")
        h_pend = _submit(svc, "ha23h", ["vision"], {"gpus": 1, "team": "vision", "command": SLEEP, "name": "h-pend"})
        svc.tick()
        assert _job(svc, h_pend)["state"] == "pending"
        _rename(svc, hub)
        svc.cancel(f_long, user="ha23f")  # GPUs free: the held job still never starts charged to vision
        tick_until(svc, "f-long to stop", lambda: _job(svc, f_long)["state"] == "cancelled")
        for _ in range(5):
            svc.tick()
        job = _job(svc, h_pend)
        assert job["state"] == "pending", job
        reason = job["reason"]
        assert reason["code"] == "TeamMembership", reason
        assert reason["message"].startswith("held: team vision is no hub group any more"), reason
        assert "ha23h is now in team cv" in reason["message"], reason
        assert reason["details"]["vanished"] is True and reason["details"]["teams"] == ["cv"], reason
        assert f"jupyter-sched cancel {h_pend}" in reason["unblock"] and "charged to cv" in reason["unblock"], reason
        assert "cv" in reason["eta_reason"] and "no hub group any more" in reason["eta_reason"], reason
        (left,) = [r for r in _records(svc, TEAM_LEFT_ACTION, 2) if r["user"] == "ha23h"]
        assert "1 pending job(s) held, never started charged to vision" in left["message"], left
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a9_a_member_of_several_teams_is_told_to_choose_one(tmp_path: Path) -> None:
    svc, hub = _renamed_service(tmp_path, gpus=3)
    hub.roles["ha23h"]["groups"] = ["vision", "nlp"]
    try:
        hub.check()
        f_long = _submit(svc, "ha23f", ["vision"], {"gpus": 3, "team": "vision", "command": SLEEP, "name": "f-long"})
        tick_until(svc, "f-long to run", lambda: _job(svc, f_long)["state"] == "running")
        h_pend = _submit(svc, "ha23h", ["vision", "nlp"], {"gpus": 1, "team": "vision", "command": SLEEP})
        _rename(svc, hub)
        for _ in range(3):
            svc.tick()
        reason = _job(svc, h_pend)["reason"]
        assert reason["code"] == "TeamMembership", reason
        assert sorted(reason["details"]["teams"]) == ["cv", "nlp"], reason
        assert "(choose it with --team)" in reason["unblock"], reason
    finally:
        cancel_all_and_close(svc)


def _fired_after_the_rename(tmp_path: Path, name: str) -> tuple[SchedulerService, str, dict[str, Any]]:
    """ha23h's minutely definition ``name`` charging vision, vision renamed cv, its first firing since: the service,
    the definition's id and its one (rejected) run. The caller closes the service."""
    svc, hub = _renamed_service(tmp_path, gpus=3)
    # the owner resolved as the hub identity does: their groups from the hub's user model
    svc.services.definitions.owner_caller = lambda user: svc.services.caller(
        user, admin=False, groups=list(hub.roles[user]["groups"]))
    script = tmp_path / f"{name}.py"
    script.write_text("print('x')\n")
    definition = svc.services.definitions.create(
        svc.services.caller("ha23h", admin=False, groups=["vision"]),
        parse(CreateDefinitionRequest, {"name": name, "script": str(script), "schedule": "* * * * *",
                                        "timezone": "UTC", "gpus": 1, "team": "vision"})).id
    _rename(svc, hub)
    _clock_advance(svc, 120)
    svc.services.definitions.fire_due()
    (run,) = svc.list_jobs(user="ha23h", state=None)
    return svc, definition, run


def test_s23_hubadmin23_a9_a_definition_on_the_renamed_team_says_its_way_out_at_its_firing(tmp_path: Path) -> None:
    """Failed before: the rejected run said only "ha23h may not charge team 'vision'" — not the owner's
    team now, nor that the definition's team is what to change (``definitions edit … --team cv``)."""
    svc, nightly, run = _fired_after_the_rename(tmp_path, "nightly")
    try:
        assert run["state"] == "rejected", run
        said = run["message"]
        assert "vision" in said and "ha23h's team is now cv" in said, said
        assert f"jupyter-sched definitions edit {nightly} --team cv" in said, said
    finally:
        cancel_all_and_close(svc)


def test_newuser37_nit8_a_definition_refused_for_its_team_is_paused_at_that_firing_and_says_why(tmp_path: Path) -> None:
    """Failed before: every firing of a minutely definition whose owner left its team made one more rejected run
    (six cards in My work before its owner paused it) and `definitions show` never said its runs were refused. Now
    that firing pauses it, audited with the way out; the next minutes make no run."""
    svc, minutely, run = _fired_after_the_rename(tmp_path, "minutely")
    try:
        assert run["state"] == "rejected", run
        owner = svc.services.caller("ha23h", admin=False, groups=["cv"])
        assert svc.services.definitions.get(owner, minutely, GetDefinitionRequest()).paused
        (paused,) = [r for r in _records(svc, "definition_updated", 1) if r["details"].get("why") == "team_refused"]
        assert paused["message"].startswith(f"definition {minutely} ('minutely', ha23h) paused: its runs are refused"), paused
        assert f"definitions edit {minutely} --team cv" in paused["message"], paused
        assert f"jupyter-sched definitions resume {minutely}" in paused["message"], paused
        _clock_advance(svc, 180)
        svc.services.definitions.fire_due()
        assert len(svc.list_jobs(user="ha23h", state=None)) == 1  # no run a minute while it cannot run
    finally:
        cancel_all_and_close(svc)
