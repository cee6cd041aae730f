"""Verify 23, V2: every user's ``jupyter-sched queue`` showed another user's held job as "held: owner no
longer a user of this hub · … re-add ve23a on the hub … or cancel it … (admins)" — it told every user who had
been offboarded (and a team hold, "held: dan is no longer a member of team default", who had left which team).

Now a hold that says its owner's standing (``OwnerRemoved``, ``TeamMembership``) is read in full by its owner
and admins only; every other reader reads code ``Held``, "held · ETA unknown: it waits until its owner or an
admin acts", with none of the owner's standing in the code, the words or the details — on every surface built
from the wire reason: ``GET queue`` (the panel's and ``%schedule queue``'s data), the CLI's queue table and the
magics' queue table (:func:`jupyter_sched.services.withheld.reason_for`, the one place).

Real parts: the application services on a real SQLite store with the engine's cycle (its held gate), the CLI's
``queue`` command and the magics' renderer over the services' own answers (:mod:`tests.services.as_client`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.cli.commands import queue
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.hub.offboard import REMOVED_WHY
from jupyter_sched.magics.render import queue_frame
from jupyter_sched.scheduling.snapshot import JobHold
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, GetQueueRequest, ListJobsRequest
from jupyter_sched.services.models.jobs import SubmitJobRequest
from jupyter_sched.services.visibility import event_for
from jupyter_sched.services.withheld import HELD_CODE
from tests.runtime.builders import T0
from tests.services.as_client import AsClient, said

NEUTRAL = "held · ETA unknown: it waits until its owner or an admin acts"
GONE = "held · ETA unknown: it waits for an admin"
"""The neutral line where the owner is no longer a hub user (new user 38, n17: the owner cannot act)."""
STANDING = ("no longer", "hub", "re-add", "OwnerRemoved", "TeamMembership", "member", "nlp")
"""Words of the owners' standing that another reader's answer must not carry."""


def _held(services: Services) -> dict[str, str]:
    """eve is offboarded (no longer a hub user); dan left the team his job charges (now in nlp only)."""
    services.set_held_users(lambda: {"eve": REMOVED_WHY})
    ids = {}
    for user in ("eve", "dan"):
        job = services.jobs.submit(services.caller(user, admin=False),
                                   SubmitJobRequest(gpus=1, name=f"{user}-train", command=["true"]))
        ids[user] = job.id
    team = services.jobs.get(services.caller("dan", admin=False), ids["dan"]).to_wire()["team"]
    services.set_held_jobs(lambda: {ids["dan"]: JobHold(team=team, since=T0, teams=("nlp",))})
    services.tick()
    return ids


def _reasons(services: Services, user: str, *, admin: bool = False) -> dict[str, Any]:
    caller = services.caller(user, admin=admin)
    return {row["id"]: row for row in services.jobs.queue(caller, GetQueueRequest()).to_wire()}


def test_s24_verify23_v2_others_read_a_neutral_held_line_owner_and_admins_the_full_words(services: Services) -> None:
    ids = _held(services)
    # the owner and an admin: the full words, as before
    assert _reasons(services, "eve")[ids["eve"]]["reason"]["code"] == "OwnerRemoved"
    assert "re-add eve on the hub" in _reasons(services, "eve")[ids["eve"]]["reason"]["text"]["line"]
    admin = _reasons(services, "root", admin=True)
    assert admin[ids["eve"]]["reason"]["message"] == f"held: {REMOVED_WHY}", admin[ids["eve"]]
    assert "dan is no longer a member of team" in admin[ids["dan"]]["reason"]["message"], admin[ids["dan"]]
    assert "no longer a member" in _reasons(services, "dan")[ids["dan"]]["reason"]["message"]
    # anyone else (failed before: bob read "held: owner no longer a user of this hub … re-add eve on the hub")
    for job_id, row in _reasons(services, "bob").items():
        reason = row["reason"]
        line = GONE if job_id == ids["eve"] else NEUTRAL
        assert reason["code"] == HELD_CODE and reason["text"]["line"].endswith(line), reason
        assert row["eta_reason"] == line.removeprefix("held · ETA unknown: "), row
        wire = json.dumps(row)
        assert not [w for w in STANDING if w in wire], (job_id, wire)
    # dan reads eve's job (and eve dan's) as anyone else does
    assert _reasons(services, "dan")[ids["eve"]]["reason"]["code"] == HELD_CODE
    assert _reasons(services, "eve")[ids["dan"]]["reason"]["code"] == HELD_CODE
    # the other surfaces were the owner's and admins' already: GET jobs/{id} is refused to bob, GET jobs lists his
    # own, a job event of eve's is not sent to him (the panel's live rows), the audit log is admins'
    bob = services.caller("bob", admin=False)
    with pytest.raises(AuthorizationError):  # refused, 403 (newuser29 n5)
        services.jobs.get(bob, ids["eve"])
    assert services.jobs.list(bob, ListJobsRequest()).jobs.to_wire() == []
    wire = services.jobs.get(services.caller("root", admin=True), ids["eve"]).to_wire()
    assert event_for(bob, {"type": "job", "data": {**wire, "user": "eve"}}) is None
    with pytest.raises(AuthorizationError):
        services.audit.list(bob, GetAuditRequest())


def test_s24_verify23_v2_cli_and_magics_queue_tables_say_the_neutral_line(services: Services) -> None:
    ids = _held(services)
    bob = AsClient(services, "bob")
    text = said(queue, bob, "queue")
    assert text.count(NEUTRAL) == 1 and text.count(GONE) == 1, text
    assert not [w for w in STANDING if w in text], text
    now = datetime.now(timezone.utc)
    frame = queue_frame(bob.queue(), now).to_dict("records")
    assert {row["id"]: (row["reason"], row["detail"]) for row in frame} == {
        ids["eve"]: ("held", "held"), ids["dan"]: ("held", "held")}, frame
    # the owner's own table keeps the way out
    assert "re-add eve on the hub" in said(queue, AsClient(services, "eve"), "queue")
