"""New user 38, n17: after an admin deleted hub user n38b, every other user's queue showed n38b's pending jobs
as "held · ETA unknown: it waits until its owner or an admin acts" — its owner can no longer act (deleted).

Now a job held because its owner is no longer a hub user (``OwnerRemoved``) reads "held · ETA unknown: it
waits for an admin" to any other reader; a job held because its owner left its team (``TeamMembership``:
the owner can still rejoin or cancel it) keeps "until its owner or an admin acts". The words are the one
renderer's (:func:`jupyter_sched.wording.reasons.held_for_others_wait`), on every surface built from the
wire reason: ``GET queue`` (``reason.text``, which the panel shows as it is, and ``eta_reason``), the CLI's
queue table and ``%schedule queue``'s. The owner and admins still read the full hold with its way out.

Real parts: the application services on a real SQLite store with the engine's cycle (its held gate), the
CLI's ``queue`` command and the magics' renderer over the services' own answers.
"""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.cli.commands import queue
from jupyter_sched.hub.offboard import REMOVED_WHY
from jupyter_sched.magics.render import queue_frame
from jupyter_sched.scheduling.snapshot import JobHold
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest
from jupyter_sched.services.models.jobs import SubmitJobRequest
from jupyter_sched.wording import render_reason
from tests.runtime.builders import T0
from tests.services.as_client import AsClient, said

GONE = "it waits for an admin"
OWNER_CAN_ACT = "it waits until its owner or an admin acts"


def test_newuser38_n17_a_deleted_owners_held_job_waits_for_an_admin_on_every_surface(services: Services) -> None:
    services.set_held_users(lambda: {"n38b": REMOVED_WHY})
    ids = {}
    for user in ("n38b", "dan"):
        ids[user] = services.jobs.submit(services.caller(user, admin=False),
                                         SubmitJobRequest(gpus=1, name=f"{user}-job", command=["true"])).id
    team = services.jobs.get(services.caller("dan", admin=False), ids["dan"]).to_wire()["team"]
    services.set_held_jobs(lambda: {ids["dan"]: JobHold(team=team, since=T0, teams=("nlp",))})
    services.tick()
    rows = {r["id"]: r for r in services.jobs.queue(services.caller("bob", admin=False), GetQueueRequest()).to_wire()}
    gone, left = rows[ids["n38b"]], rows[ids["dan"]]
    # the wire: what the panel shows (reason.text) and eta_reason (failed before: "until its owner or an admin acts")
    assert gone["reason"]["text"]["eta"] == f"ETA unknown: {GONE}", gone["reason"]
    assert gone["reason"]["eta_reason"] == GONE and gone["eta_reason"] == GONE, gone
    assert "owner" not in gone["reason"]["text"]["line"], gone["reason"]["text"]
    # its owner left a team, is still a user and can act: the words say so
    assert left["reason"]["text"]["eta"] == f"ETA unknown: {OWNER_CAN_ACT}", left["reason"]
    # the renderer the CLI and magics use, from the wire reason without its server text
    bare = {k: v for k, v in gone["reason"].items() if k != "text"}
    assert render_reason(bare, now=datetime.now(timezone.utc)).eta == f"ETA unknown: {GONE}"
    # the CLI's queue table, bob's
    text = said(queue, AsClient(services, "bob"), "queue")
    assert text.count(f"held · ETA unknown: {GONE}") == 1 and text.count(OWNER_CAN_ACT) == 1, text
    # %schedule queue's table: its ETA column
    frame = queue_frame(AsClient(services, "bob").queue(), datetime.now(timezone.utc)).to_dict("records")
    row = next(r for r in frame if r["id"] == ids["n38b"])
    assert GONE in str(row.values()) and "its owner" not in str(row.values()), row
    # an admin still reads the hold and the way out
    admin = {r["id"]: r for r in services.jobs.queue(services.caller("root", admin=True), GetQueueRequest()).to_wire()}
    assert "re-add n38b on the hub" in admin[ids["n38b"]]["reason"]["text"]["line"], admin[ids["n38b"]]
