"""newuser39 n6: ``jupyter-sched cancel/logs/status/wait/hold NAME`` of another user's job was refused by the client
itself (it found the name in the queue), so the server saw a read of the queue and the audit had no row; the same
job's id was refused by the server and audited. Now the server resolves a name for its caller (``GET
jobs?name=…&purpose=…``) and refuses another user's live work of that name itself: the same words as by id, audited
as the same request with the job's id — from the CLI, the magics and the REST API alike.

Real parts: an embedded jupyter server with the extension (simulated GPUs), the installed ``jupyter-sched`` in a
subprocess, the magics driven with a real client, the audit log read back by the admin over REST. Two identities
(ann, bob) and an admin (boss) are tokens of that one server (tests/onboarding's module server)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED
from jupyter_sched.client import connect
from jupyter_sched.magics.core import MagicError, SchedMagics
from tests.onboarding.test_cli_firsthour import api, clear, module_server, wait_state
from tests.onboarding.test_newuser10 import _env
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu39n6", USERS)


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def _submit(server: EmbeddedServer, token: str, name: str, *command: str) -> str:
    made = api(server, token).post("jobs", json={"gpus": 0, "name": name, "command": list(command) or ["true"]})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _refusals(server: EmbeddedServer, user: str, job_id: str, want: int) -> list[dict[str, Any]]:
    """The admin's read of ``user``'s refusal records of ``job_id`` (oldest first), once there are ``want``."""
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 15  # GET audit reads after the refusals answered before it: 0 wanted is read at once
    while True:
        rows = boss.get("audit", params={"user": user, "job_id": job_id, "action": "refused", "limit": 1000}).json()
        if len(rows) >= want or time.monotonic() > deadline:
            return sorted(rows, key=lambda row: row["id"])
        time.sleep(0.2)


# CLI command → (the request its refusal by id is audited as, the words that say what the caller may do)
BY_COMMAND = {
    "cancel": ("cancel job", "you may cancel only your own"),
    "logs": ("read logs", "you may read only your own jobs' logs"),
    "status": ("read job", "you may look into only your own jobs"),
    "wait": ("read job", "you may look into only your own jobs"),
    "hold": ("update job", "you may hold, release or change only your own"),
}


def test_newuser39_n6_cli_another_users_job_by_name_is_refused_by_the_server_and_audited_as_by_id(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """Each command that takes a JOB, given bob's live job by name: refused (rc 1, whose it is, in that command's
    words) and on the audit log as ann's refused request of that job — the request and the words the same job's id
    gets. The job is left alone."""
    clear(server)
    env = _env(tmp_path, server)
    live = _submit(server, "tok-bob", "half0", "sleep", "300")
    for n, (command, (request, words)) in enumerate(BY_COMMAND.items(), start=1):
        run = _cli(env, command, "half0")
        assert run.returncode == EXIT_REFUSED, (command, run.stdout + run.stderr)
        assert f"jupyter-sched {command}: 'half0' is bob's job {live} (" in run.stderr, run.stderr
        assert f"), not yours: {words}" in run.stderr and "ask bob or an admin [forbidden]" in run.stderr, run.stderr
        rows = _refusals(server, "ann", live, n)
        assert len(rows) == n, (command, rows)  # one record per attempt, none missing
        row = rows[-1]
        assert row["actor"] == "ann" and row["job_id"] == live, row
        assert row["details"]["request"] == request and row["details"]["status"] == 403, row
        assert f"'half0' is bob's job {live}" in row["message"] and words in row["message"], row
    by_id = _cli(env, "cancel", live)  # the same job by id: the same request, the same words
    assert by_id.returncode == EXIT_REFUSED and "you may cancel only your own" in by_id.stderr, by_id.stderr
    rows = _refusals(server, "ann", live, len(BY_COMMAND) + 1)
    assert rows[-1]["details"]["request"] == "cancel job" and "you may cancel only your own" in rows[-1]["message"]
    job = api(server, "tok-bob").get(f"jobs/{live}").json()
    assert job["state"] in ("pending", "admitted", "running") and not job.get("stop_requested"), job
    clear(server)


def test_newuser39_n6_magics_another_users_job_by_name_is_refused_by_the_server_and_audited(
        server: EmbeddedServer) -> None:
    """``%schedule cancel NAME`` / ``%schedule logs NAME`` of bob's job: the magics' words (``%schedule``), and
    ann's refused ``cancel job`` / ``read logs`` of that job on the audit log."""
    clear(server)
    live = _submit(server, "tok-bob", "mag0", "sleep", "300")
    magics = SchedMagics(None, client_factory=lambda: connect(server.url, "tok-ann"))
    with pytest.raises(MagicError) as cancel:
        magics.schedule("cancel mag0")
    assert str(cancel.value).startswith(f"'mag0' is bob's job {live} (") and "you may cancel only your own" in \
        str(cancel.value), cancel.value
    with pytest.raises(MagicError) as logs:
        magics.schedule("logs mag0")
    assert "you may read only your own jobs' logs" in str(logs.value), logs.value
    rows = _refusals(server, "ann", live, 2)
    assert [row["details"]["request"] for row in rows] == ["cancel job", "read logs"], rows
    clear(server)


def test_newuser39_n6_rest_a_name_lists_the_callers_own_and_refuses_only_another_users_live_work(
        server: EmbeddedServer) -> None:
    """``GET jobs?name=``: the caller's own of that name (never another user's beside them); none of theirs
    and bob's live one has it → 403 naming the field ``name``, in the words of ``purpose``, audited with bob's job
    id; bob's ENDED job of a name stays unnamed (200, empty: what the queue does not show is not said); an admin
    is given the id (400, not audited as a probe); bad input is a 400 naming the field."""
    clear(server)
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    bobs = _submit(server, "tok-bob", "shared0", "sleep", "300")
    anns = _submit(server, "tok-ann", "shared0", "sleep", "300")
    own = ann.get("jobs", params={"name": "shared0"})
    assert own.status_code == 200 and [row["id"] for row in own.json()] == [anns], own.text  # no refusal: hers
    only_bob = _submit(server, "tok-bob", "bobonly0", "sleep", "300")
    refused = ann.get("jobs", params={"name": "bobonly0", "purpose": "logs"})
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["code"] == "forbidden" and error["field"] == "name", error
    assert error["message"] == f"'bobonly0' is bob's job {only_bob} (" + error["message"].split("(", 1)[1], error
    assert "not yours: you may read only your own jobs' logs" in error["message"], error
    assert error["details"]["others"][0]["id"] == only_bob and error["details"]["admin"] is False, error
    rows = _refusals(server, "ann", only_bob, 1)
    assert len(rows) == 1 and rows[0]["details"]["request"] == "read logs" and rows[0]["details"]["field"] == "name"
    assert bobs not in refused.text  # only the job of that name is named

    ended = _submit(server, "tok-bob", "gone0", "true")
    wait_state(server, "tok-bob", ended, "succeeded")
    gone = ann.get("jobs", params={"name": "gone0", "purpose": "cancel"})
    assert gone.status_code == 200 and gone.json() == [], gone.text
    assert _refusals(server, "ann", ended, 0) == []  # none wanted: read once (waiting for one cost 15 s)

    admin = boss.get("jobs", params={"name": "bobonly0", "purpose": "cancel"})
    assert admin.status_code == 400 and admin.json()["error"]["field"] == "name", admin.text
    assert admin.json()["error"]["hint"] == f"give its id: {only_bob}", admin.text
    everyone = boss.get("jobs", params={"name": "shared0", "all": "true"})  # an admin's list of everyone's
    assert everyone.status_code == 200 and {row["id"] for row in everyone.json()} == {bobs, anns}, everyone.text

    for params, field in (({"name": "x" * 201}, "name"), ({"name": ""}, "name"),
                          ({"name": "bobonly0", "purpose": "destroy"}, "purpose"), ({"name": "a\x00b"}, "name")):
        bad = ann.get("jobs", params=params)
        assert bad.status_code == 400 and bad.json()["error"]["field"] == field, (params, bad.text)
    clear(server)


def test_newuser39_n6_the_server_looks_a_name_up_among_others_live_work_only(server: EmbeddedServer,
                                                                             tmp_path: Path) -> None:
    """A name several users' live work has: the caller's own is taken (the CLI acts on it, nobody is refused); of
    others' only, every owner is named, three at most one by one, each job named audited once."""
    clear(server)
    env = _env(tmp_path, server)
    mine = _submit(server, "tok-ann", "many0", "sleep", "300")
    bobs = _submit(server, "tok-bob", "many0", "sleep", "300")
    done = _cli(env, "cancel", "many0")  # hers and bob's have it: hers is meant, bob's is not touched nor probed
    assert done.returncode == EXIT_OK and mine in done.stdout and bobs not in done.stdout, done.stdout + done.stderr
    assert _refusals(server, "ann", bobs, 0) == []  # none wanted: read once (waiting for one cost 15 s)
    theirs = [_submit(server, token, "many1", "sleep", "300") for token in ("tok-bob", "tok-boss", "tok-bob")]
    refused = _cli(env, "logs", "many1")  # only others' live work has it
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "'many1' is the name of 3 jobs of other users in the queue, none of them yours" in refused.stderr, \
        refused.stderr
    assert all(job_id in refused.stderr for job_id in theirs) and "ask their owners or an admin" in refused.stderr
    for job_id in theirs:
        rows = _refusals(server, "ann", job_id, 1)
        assert len(rows) == 1 and rows[0]["details"]["request"] == "read logs", (job_id, rows)
    admin = _cli(_env(tmp_path, server, "tok-boss"), "cancel", "many1")  # an admin's own many1 is taken
    assert admin.returncode == EXIT_OK and theirs[1] in admin.stdout, admin.stdout + admin.stderr
    assert api(server, "tok-bob").get(f"jobs/{theirs[0]}").json()["state"] in ("pending", "admitted", "running")
    clear(server)


def test_newuser39_n6_a_server_before_name_look_ups_is_asked_as_before_and_odd_details_are_not_read() -> None:
    """A server from before ``GET jobs?name=`` refuses the argument (its answer as it sends it): the client then
    reads the caller's newest jobs and names them itself, as before; any other refusal stands. A refusal whose
    ``others`` are not objects (another server's) is said as it came, not read."""
    from jupyter_sched.client._wire import NAMED_FROM, error_from_response, name_refusal, named_lookup, unnamed_lookup

    asked = named_lookup("half0", "jupyter-sched cancel")
    assert asked is not None and asked.params == {"name": "half0", "purpose": "cancel", "limit": str(NAMED_FROM)}
    assert named_lookup("j-1m98d0fqv-mhzptb", "jupyter-sched cancel") is None  # an id needs no look-up
    old = error_from_response(400, '{"error": {"code": "validation_error", "message": "unknown query argument '
                                   '\'name\'", "field": "name", "hint": "GET jobs takes: all, cursor"}}')
    again = unnamed_lookup(old)
    assert again is not None and again.params == {"limit": str(NAMED_FROM)}, again
    assert unnamed_lookup(error_from_response(400, '{"error": {"code": "validation_error", "message": "name: at '
                                                   'most 200 characters", "field": "name"}}')) is None
    odd = error_from_response(403, '{"error": {"code": "forbidden", "message": "no", "field": "name", '
                                   '"details": {"name": "x", "others": ["j-1", 3], "admin": false}}}')
    assert name_refusal(odd, "jupyter-sched cancel") is odd
