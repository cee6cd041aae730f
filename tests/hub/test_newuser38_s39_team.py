"""newuser38 n21, n24 and N3's rest (session 39): what a teammate and the status summary say.

- n21: after n38a's ``%gpu release`` said "team vision's reclaims of other teams' borrowed GPUs wait until
  11:08 UTC", teammate n38b's ``status`` quota line (GET me, the panel's Quota section) said nothing; only a
  pending job's reason did, once one waited on it.
- n24: after n38b left team nlp, ``status`` said ``my work    1 pending`` of a job held for good.
- N3: a changed default team was said by GET me / ``status`` only, never on the next submit's answer.

Real parts: ``SchedulerService`` in-process (real SQLite store, real core, simulated GPUs; leases bound to no
kernel or to a kernel id, so no processes), the hub poll's user listing read from the loopback hub double of
the other hub tests (it speaks the hub's REST wire format: a real JupyterHub's group change is what its
changed listing stands for), GET me's answer as the REST handler serialises it (``to_wire``) and the CLI's
summary (:func:`~jupyter_sched.wording.status.status_lines`) rendered from it.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.default_team import TeamOrder, record_order
from jupyter_sched.hub.membership import hub_caller_of
from jupyter_sched.hub.offboard import Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobKind
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.jobs import SubmitJobRequest, UpdateJobRequest
from jupyter_sched.services.models.quotas import SetQuotasRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.quota import reclaim_cooldown_line
from jupyter_sched.wording.status import status_lines
from tests.hub.test_red15_offboarding import offboard_against
from tests.runtime.borrowed_world import borrowing_world
from tests.runtime.test_engine import state_of, wait_until

NOW = datetime(2026, 12, 7, 10, 40, tzinfo=timezone.utc)


def _me(svc: SchedulerService, user: str, groups: list[str] | None = None) -> dict[str, Any]:
    """GET me of ``user`` as the REST handler answers it (the wire's JSON)."""
    answer = svc.services.accounting.me(svc.services.caller(user, admin=False, groups=groups))
    wire: dict[str, Any] = answer.to_wire() if hasattr(answer, "to_wire") else answer.model_dump(mode="json")
    return wire


def _status(me: dict[str, Any], now: datetime) -> list[str]:
    return status_lines("http://x", {}, me, {"gpus": []}, now=now)


def test_newuser38_n21_a_teams_reclaim_cooldown_is_said_to_its_members_before_a_job_waits(tmp_path: Path) -> None:
    """Failed before: GET me had no reclaim_cooldowns and its quota_text (status's quota line, the panel's
    Quota section) said nothing while vision's reclaims waited out n38a's release."""
    svc, clock, _, _ = borrowing_world(sqlite_url(tmp_path / "s.sqlite"), tmp_path, "n38a", "n38b", "n38c")
    try:
        taker = svc.submit({"gpus": 1}, user="n38a", kind="lease")["id"]  # reclaims nlp's borrowed GPU
        wait_until(lambda: state_of(svc, taker) == "running", "the reclaiming lease to run", tick=svc.tick)
        [reclaim] = svc.audit(action="reclaim")
        until = datetime.fromisoformat(reclaim["at"]) + timedelta(seconds=900)
        clock.advance(2)
        svc.services.jobs.cancel(svc.services.caller("n38a", admin=False), taker, kind=JobKind.LEASE)
        svc.tick()  # the next cycle reads the release among the reclaims of the last hour

        me = _me(svc, "n38b")  # a teammate, who ran nothing
        [cool] = me["reclaim_cooldowns"]
        assert (cool["team"], cool["user"], cool["cause"], cool["lease"]) == ("vision", "n38a", "release", True)
        assert datetime.fromisoformat(cool["until"]) == until
        at = until.strftime("%H:%M")
        words = (f"vision: reclaims paused until {at} UTC (cool-down after n38a's release): its jobs take no "
                 "borrowed GPUs back until then")
        assert cool["text"] == words, cool
        lines = me["quota_text"].split("\n")
        assert lines[0].startswith("team vision: guaranteed 3 GPUs") and lines[1] == words, lines  # under its line
        said = _status(me, clock.now())
        quota = [i for i, line in enumerate(said) if line.startswith("quota")]
        assert quota and said[quota[0] + 1].strip() == words, said

        other = _me(svc, "n38c")  # nlp's member: not vision's, and never the releaser's name
        assert other["reclaim_cooldowns"] == [] and "n38a" not in other["quota_text"], other

        # GET quotas (`jupyter-sched quotas`): every team's cool-down; who ended the work to members and admins only
        def quotas_of(user: str, admin: bool = False) -> list[dict[str, Any]]:
            got = svc.services.quotas.get(svc.services.caller(user, admin=admin)).to_wire()
            return list(got.get("reclaim_cooldowns") or [])

        [anonymous] = quotas_of("n38c")
        assert anonymous == {"team": "vision", "until": cool["until"],
                             "text": f"vision: reclaims paused until {at} UTC (a reclaim cool-down): its jobs take no "
                                     "borrowed GPUs back until then"}, anonymous
        assert reclaim_cooldown_line(anonymous, clock.now()) == anonymous["text"]  # the CLI's line, as read
        assert [c["user"] for c in quotas_of("n38b")] == ["n38a"]
        assert [c["text"] for c in quotas_of("root", admin=True)] == [words]
        # GET quotas' whole answer sent back by PUT (a read-modify-write): its read-only cool-downs are ignored
        body = svc.services.quotas.get(svc.services.caller("root", admin=True)).to_wire()
        assert body["reclaim_cooldowns"]
        put = svc.services.quotas.set(svc.services.caller("root", admin=True), parse(SetQuotasRequest, {
            **body, "dry_run": True}))
        assert put.dry_run is True
        own = _me(svc, "n38a")  # the releaser reads their own act as theirs
        assert own["reclaim_cooldowns"][0]["text"] == words.replace("n38a's release", "your release"), own
        assert any(line.strip() == words.replace("n38a's release", "your release") for line in _status(own, clock.now()))

        clock.advance((until - clock.now()).total_seconds() + 1)  # over: no longer said
        later = _me(svc, "n38b")
        assert later["reclaim_cooldowns"] == [] and "reclaims paused" not in later["quota_text"]
        assert quotas_of("n38c") == []
        assert not any("reclaims paused" in line for line in _status(me, clock.now()))  # nor from an old answer
    finally:
        svc.store.close()


def _hub(tmp_path: Path) -> tuple[SchedulerService, Offboarding]:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)
    off = Offboarding(grace_s=0.0, caller_of=hub_caller_of(svc.services, lambda: ()))
    svc.services.set_held_users(off.held)
    svc.services.set_held_jobs(off.held_jobs)
    return svc, off


def _submit(svc: SchedulerService, user: str, groups: list[str], body: dict[str, Any]) -> Any:
    return svc.services.jobs.submit(svc.services.caller(user, admin=False, groups=groups),
                                    parse(SubmitJobRequest, body))


def test_newuser38_n24_status_says_held_jobs_apart_with_their_fix(tmp_path: Path) -> None:
    """Failed before: ``my work    2 pending`` while one of them never starts (n38b left team nlp)."""
    svc, off = _hub(tmp_path)
    roles: dict[str, dict[str, Any]] = {"n38a": {"groups": ["vision"]}, "n38b": {"groups": ["nlp", "vision"]}}
    users: dict[str, dict[str, bool]] = {"n38a": {"": False}, "n38b": {"": False}}
    try:
        busy = svc.submit({"gpus": 1, "kernel_id": "k-a"}, user="n38a", kind="lease")["id"]  # the one GPU
        wait_until(lambda: state_of(svc, busy) == "running", "n38a's lease", tick=svc.tick)
        nlp = _submit(svc, "n38b", ["nlp", "vision"], {"gpus": 1, "team": "nlp", "command": ["true"]}).id
        vision = _submit(svc, "n38b", ["nlp", "vision"], {"gpus": 1, "team": "vision", "command": ["true"]}).id
        assert asyncio.run(offboard_against(svc, off, users, roles, groups={"nlp"})) == []
        roles["n38b"]["groups"] = ["vision"]  # a hub admin removes n38b from group nlp (which goes on)
        asyncio.run(offboard_against(svc, off, users, roles, groups={"nlp"}))
        assert set(off.held_jobs()) == {nlp}
        svc.tick()
        assert svc.get_job(nlp, user="n38b")["reason"]["code"] == "TeamMembership"

        me = _me(svc, "n38b", ["vision"])
        assert me["pending"] == 2
        assert me["held"] == [{"code": "TeamMembership", "jobs": 1, "what": "never starts (you left team nlp)",
                               "fix": "cancel and resubmit with --team vision"}], me["held"]
        [work] = [line for line in _status(me, NOW) if line.startswith("my work")]
        assert work == ("my work    2 pending, 1 of them held: never starts (you left team nlp) — cancel and "
                        "resubmit with --team vision"), work

        # a second kind of hold (n38b holds the other job): each kind on its own line, with its own fix
        svc.services.jobs.update(svc.services.caller("n38b", admin=False, groups=["vision"]), vision,
                                 parse(UpdateJobRequest, {"held": True}))
        svc.tick()
        me = _me(svc, "n38b", ["vision"])
        said = _status(me, NOW)
        at = said.index("my work    2 pending, all held")
        assert said[at + 1:at + 3] == [  # by kind, the same order every time
            f"           1 held: held by n38b — release it: jupyter-sched release {vision}",
            "           1 held: never starts (you left team nlp) — cancel and resubmit with --team vision"], said

        svc.cancel(nlp, user="n38b")  # cancelled since the cycle: never counted above what is pending
        me = _me(svc, "n38b", ["vision"])
        assert sum(g["jobs"] for g in me["held"]) <= me["pending"] == 1, me
    finally:
        svc.store.close()


def test_newuser38_n24_every_hold_kind_reads_to_its_owner_with_a_fix() -> None:
    """The kind, not the one case: each standing hold's code reads in the owner's words with what to do."""
    from jupyter_sched.scheduling.gates import HELD_CODES
    from jupyter_sched.wording.held import held_groups, held_kind

    cases: dict[str, tuple[dict[str, Any], str, str]] = {
        "TeamMembership": ({"team": "nlp", "teams": ["vision", "cv"]}, "you left team nlp", "--team (one of vision, cv)"),
        "OwnerRemoved": ({"groups": ["nlp", "vision"]}, "no longer a user of this hub", "to your groups nlp, vision"),
        "OwnerUnconfirmed": ({}, "waits for the hub to confirm you", "nothing to do"),
        "Held": ({"by": "root", "admin": True}, "held by an admin (root)", "ask an admin to release it"),
        "QuotaRowUnreadable": ({"team": "nlp"}, "a quota row of team nlp does not read", "jupyter-sched doctor"),
        "Reinstalled": ({"service": False}, "reinstalled under the running server", "restart jupyter lab"),
    }
    assert set(cases) == set(HELD_CODES)  # a new hold kind must be given its words here
    for code, (details, what, fix) in cases.items():
        said, todo = held_kind(code, details, "held: …", "…", "j-1")
        assert what in said and fix in todo, (code, said, todo)
    vanished = held_kind("TeamMembership", {"team": "nlp", "teams": ["vision"], "vanished": True}, "", "", "j-1")
    assert vanished == ("never starts (team nlp is no hub group any more)", "cancel and resubmit with --team vision")
    two = held_groups([("j-1", "Held", {"by": "n38b"}, "", ""), ("j-2", "Held", {"by": "n38b"}, "", "")])
    assert two == [("Held", 2, "held by n38b", "release each: jupyter-sched release ID (jupyter-sched jobs lists them)")]


def test_newuser38_n3_the_next_submit_says_the_changed_default_team_once(tmp_path: Path) -> None:
    """Failed before: the submit's answer had no note; n38b's next job went to the default team in silence."""
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(4, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)
    try:
        order = TeamOrder(record=lambda user, teams: record_order(svc.store, user, teams))
        svc.services.admission.group_order = order.order  # as the central service wires them
        svc.services.admission.team_note = order.submit_note
        off = Offboarding(grace_s=0.0)
        off.on_models = lambda models: order.observe(models, NOW)
        users: dict[str, dict[str, bool]] = {"n38b": {"": False}}
        asyncio.run(offboard_against(svc, off, users, {"n38b": {"groups": ["vision"]}}))
        groups = ["nlp", "vision"]
        asyncio.run(offboard_against(svc, off, users, {"n38b": {"groups": groups}}))  # added to nlp
        note = "you are now also in nlp; new work still goes to vision — --team nlp to charge it"

        named = _submit(svc, "n38b", groups, {"gpus": 0, "team": "nlp", "command": ["true"]})
        assert note not in (named.warnings or [])  # named its team: the default played no part
        first = _submit(svc, "n38b", groups, {"gpus": 0, "command": ["true"]})
        assert first.team == "vision" and note in (first.warnings or []), first.warnings
        lease = svc.services.jobs.submit(svc.services.caller("n38b", admin=False, groups=groups),
                                         parse(SubmitJobRequest, {"gpus": 1}), kind=JobKind.LEASE)
        assert note not in (lease.warnings or [])  # once (%gpu request after the CLI's submit)
        assert order.note("n38b", NOW) == note  # GET me / status still say it for the day

        asyncio.run(offboard_against(svc, off, users, {"n38b": {"groups": ["nlp"]}}))  # a new change: said again
        again = _submit(svc, "n38b", ["nlp"], {"gpus": 0, "command": ["true"]})
        assert "you are no longer in vision; new work now goes to nlp" in (again.warnings or []), again.warnings
    finally:
        svc.store.close()


def test_newuser38_n21_the_cooldown_line_says_how_the_work_ended_and_whose_it_was() -> None:
    """Every way a taker ends reads in the line, "your" to its owner, and nothing of it to another team."""
    from jupyter_sched.wording.quota import reclaim_paused_text

    until = NOW + timedelta(minutes=15)

    def said(**kw: Any) -> str:
        text = reclaim_paused_text("vision", until, NOW, **kw)
        assert text.startswith("vision: reclaims paused until 10:55 UTC (") and text.endswith(
            "): its jobs take no borrowed GPUs back until then"), text
        return text[text.index("(") + 1:text.index("): its")]

    assert said(user="n38a", cause="release", lease=True) == "cool-down after n38a's release"
    assert said(user="n38a", cause="release", lease=True, reader="n38a") == "cool-down after your release"
    assert said(user="n38a", cause="cancel", actor="root") == "cool-down after root cancelled n38a's job"
    assert said(user="n38a", cause="cancel", actor="root", reader="root") == "cool-down after you cancelled n38a's job"
    assert said(user="n38a", cause="exit") == "cool-down after n38a's job gave up the GPUs it took back (it exited)"
    assert said(user="n38a", cause="time_limit", lease=False) == (
        "cool-down after n38a's job gave up the GPUs it took back (its time limit stopped it)")
    assert said() == "a reclaim cool-down"  # another team's reader: no name, no cause
