"""New user 13's findings of branch nu13-fix (/work/coord/notes/newuser13.md, N1, N2, N5, N7: how a
job's fields are read over REST, in the magics and in the CLI), each its own test, against a real
embedded server (simulated GPUs), the installed ``jupyter-sched`` command and the magics driven in
this process with a real client. The rules live in one place, ``jupyter_sched.model.validation``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.core import MagicError
from jupyter_sched.model.validation import UNLIMITED_NO_GPU_WARNING
from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
GPUS_HINT = "use a whole number such as 1 or 4, or a fraction below 1 such as 0.5"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu13", USERS)


def _refused(server: EmbeddedServer, body: dict[str, Any], status: int = 400, path: str = "jobs") -> dict[str, Any]:
    """POST ``body`` (a command added) as ann: refused with ``status``; the error object."""
    answer = api(server, "tok-ann").post(path, json={"gpus": 0, "command": ["true"], **body})
    assert answer.status_code == status, (body, answer.text)
    error: dict[str, Any] = answer.json()["error"]
    return error


def _magic_refusal(server: EmbeddedServer, line: str) -> str:
    with pytest.raises((MagicError, UsageError)) as refused:
        _magics(server).schedule(line)
    return str(refused.value)


# ---- N1: a zero time limit means the same on every surface; a tiny one is refused -----------------------------

def test_newuser13_n1_time_limit_zero_is_no_limit_everywhere_and_below_a_second_is_refused(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """N1: ``"time_limit": "0"`` was "no limit" over REST (case 033: zero means unlimited, never "ends
    at once", and the answer says so) while ``%%schedule --time-limit 0`` and ``jupyter-sched submit
    --time-limit 0`` refused it; ``"0.0001s"`` was accepted (then even backfilled with an ETA) and
    ``""`` read as left out. One rule now (``model.validation.parse_time_limit``): 0 is no limit at
    all on every surface, with the same warning; below 1 s and empty text are refused, naming the
    field or option sent."""
    clear(server)
    ann = api(server, "tok-ann")
    for zero in ({"time_limit": "0"}, {"time_limit": 0}, {"time_limit_s": 0}, {"time_limit": "0s"}):
        made = ann.post("jobs", json={"gpus": 0, "command": ["true"], **zero})
        assert made.status_code == 201, made.text
        assert made.json()["time_limit_s"] is None and made.json()["warnings"] == [UNLIMITED_NO_GPU_WARNING], zero
    script = tmp_path / "nu13n1.py"
    script.write_text("print('n1')\n")
    capsys.readouterr()
    job_id = _magics(server).schedule(f"run --gpus 0 --time-limit 0 {script}")
    assert isinstance(job_id, str) and job_id.startswith("j-")
    assert UNLIMITED_NO_GPU_WARNING in capsys.readouterr().out
    assert ann.get(f"jobs/{job_id}").json()["time_limit_s"] is None
    env = _env(tmp_path, server)
    cli = _cli(env, "submit", "--gpus", "0", "--time-limit", "0", "--", "true")
    assert cli.returncode == EXIT_OK, cli.stderr
    assert f"jupyter-sched submit: note: {UNLIMITED_NO_GPU_WARNING}" in cli.stderr, cli.stderr

    for body, field in (({"time_limit": "0.0001s"}, "time_limit"), ({"time_limit_s": 0.5}, "time_limit_s")):
        error = _refused(server, body)
        assert error["field"] == field and error["message"].startswith(f"{field} must be at least 1 second"), error
    said = _magic_refusal(server, f"run --gpus 0 --time-limit 0.5s {script}")
    assert said.startswith("--time-limit must be at least 1 second (got '0.5s')"), said
    tiny = _cli(env, "submit", "--gpus", "0", "--time-limit", "0.5s", "--", "true")
    assert tiny.returncode == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert tiny.stderr.startswith("jupyter-sched submit: --time-limit must be at least 1 second (got '0.5s')"), tiny.stderr
    error = _refused(server, {"time_limit": ""})
    assert (error["field"], error["message"]) == ("time_limit", "time_limit must not be empty"), error
    said = _magic_refusal(server, f"run --gpus 0 --time-limit '' {script}")
    assert said.startswith("--time-limit must not be empty"), said
    clear(server)


# ---- N2: an error about the team names "queue" when the client sent queue ----------------------------------

def test_newuser13_n2_a_refusal_names_the_field_as_sent_queue_not_team(server: EmbeddedServer) -> None:
    """N2: ``{"queue": "nosuchqueue"}`` was refused "root may not charge team 'nosuchqueue'" with
    field ``team`` — a field the client never sent. A refusal made after the request was read (the
    admission rules speak of the job's ``team``) names the field as sent, says the hint in its terms
    and what the spelling is (``model.validation.as_sent``); the request's own checks name the
    spelling sent too (``time_limit_s``, ``min_memory_mib``, ``gpu_models``)."""
    for path in ("jobs", "dryrun"):
        error = _refused(server, {"queue": "nosuchqueue"}, 403, path)
        assert error["field"] == "queue", error
        assert "leave queue out" in error["hint"] and "queue is another name for team" in error["hint"], error
    team = _refused(server, {"team": "nosuchteam"}, 403)
    assert team["field"] == "team" and "another name" not in team["hint"], team
    for body, field in (({"time_limit_s": -1}, "time_limit_s"), ({"min_memory_mib": "2PiB"}, "min_memory_mib"),
                        ({"gpu_models": ["Z999"]}, "gpu_models")):
        error = _refused(server, body)
        assert error["field"] == field and error["message"].split()[0] in (field, "unknown"), error


# ---- N5: one message for "not a number of GPUs", naming the field sent ---------------------------------------

def test_newuser13_n5_every_value_that_is_not_a_number_of_gpus_reads_the_same(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N5: ``gpus`` "two" said ``must be an integer``, ``true`` ``must be a number or a string`` (hint
    "e.g. 1"), ``null`` ``must be a number of GPUs``: three wordings of one rule; and ``gpu_milli`` 50
    was refused naming ``gpus``. Every value that is not a number of GPUs now gets handed case 019
    b3's words with the hint that names fractions (REST, ``--gpus`` in the CLI and the magics), and
    a share below the server's smallest names ``gpu_milli`` when that is what was sent."""
    for value, got in (("two", '"two"'), ("1/2", '"1/2"'), (True, "true"), (None, "null"), ([1], "an array of 1")):
        error = _refused(server, {"gpus": value})
        assert (error["field"], error["message"], error["hint"]) == (
            "gpus", f"gpus must be an integer (got {got})", GPUS_HINT), error
    cli = _cli(_env(tmp_path, server), "submit", "--gpus", "1/2", "--", "true")
    assert cli.stderr == f'jupyter-sched submit: --gpus must be an integer (got "1/2") — {GPUS_HINT} [validation_error]\n'
    said = _magic_refusal(server, "run --gpus 1/2 x.py")
    assert said.startswith('--gpus must be an integer (got "1/2")'), said
    answer = api(server, "tok-ann").post("jobs", json={"command": ["true"], "gpu_milli": 50})  # gpus left out: 1
    assert answer.status_code == 400, answer.text
    milli = answer.json()["error"]
    assert milli["field"] == "gpu_milli" and "gpu_milli counts thousandths of one GPU" in milli["hint"], milli
    assert _refused(server, {"gpus": 0.05})["field"] == "gpus"


# ---- N7: an empty value is refused, naming the field; it never means "left out" ------------------------------

@pytest.mark.parametrize("field", ["model", "gpu_models", "team", "queue", "image", "working_dir", "mig_profile",
                                   "profile", "mem_per_gpu", "memory", "name"])  # tolerations: a list (newuser 14, N20)
def test_newuser13_n7_an_empty_value_is_refused_not_read_as_left_out(server: EmbeddedServer, field: str) -> None:
    """N7: ``"model": ""`` ran on any model, ``"team": ""`` in the default team, ``"image": ""`` was
    stored — empty text silently read as "left out". Every job field sent as empty (or blank) text is
    a 400 naming it, with what leaving it out means (``model.validation.empty_field``)."""
    error = _refused(server, {field: " " if field == "team" else ""})
    assert (error["field"], error["message"]) == (field, f"{field} must not be empty"), error
    assert error["hint"].startswith(f"give {field} a value, or leave it out"), error


def test_newuser13_n7_an_empty_script_beside_a_command_and_empty_options_are_refused(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N7: ``"script": ""`` beside ``command`` was accepted and stored while ``"script": "train.py"``
    beside it is "give only one of command, script, notebook"; a nested ``resources`` field too. The
    CLI's and the magics' empty options read as the server's field does, in their own option names;
    an image the local executor cannot use is accepted with a warning that says so (as before)."""
    error = _refused(server, {"script": ""})
    assert error["field"] == "script" and "command or notebook" in error["hint"], error
    assert _refused(server, {"resources": {"model": ""}})["field"] == "resources.model"
    cli = _cli(_env(tmp_path, server), "submit", "--gpus", "0", "--model", "", "--", "true")
    assert cli.returncode == EXIT_USAGE  # every empty option alike (new user 15, N2)
    assert cli.stderr.startswith("jupyter-sched submit: --model must not be empty — give --model a value, or leave "
                                 "it out for any kind of GPU"), cli.stderr
    said = _magic_refusal(server, "run --gpus 0 --model '' x.py")
    assert said.startswith("--model must not be empty. Give --model a value, or leave it out for any kind of GPU"), said
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"], "image": "evil/img"})
    assert made.status_code == 201 and "is not used: the local executor" in made.json()["warnings"][0], made.text
    clear(server)


# ---- N16: one check of displayed text: zero-width and line-separator characters too; a lease's notebook --------

@pytest.mark.parametrize("body, field, char", [
    ({"name": "nu13a\u200b-train"}, "name", "U+200B"),
    ({"name": "a\u2028b"}, "name", "U+2028"),
    ({"name": "a\u2029b"}, "name", "U+2029"),
    ({"name": "\ufeffa"}, "name", "U+FEFF"),
    ({"name": "a\u2060b"}, "name", "U+2060"),
    ({"name": "evil\x1b[2J"}, "name", "U+001B"),
], ids=["zero-width space", "line separator", "paragraph separator", "byte order mark", "word joiner", "escape"])
def test_newuser13_n16_a_name_with_an_invisible_character_is_refused(
        server: EmbeddedServer, body: dict[str, Any], field: str, char: str) -> None:
    """N16: ``"name": "a\\u200bb\\u2028c"`` was accepted and printed raw in everyone's queue (a
    zero-width character lets one user name a job like another's), while ``\\x1b`` was refused. The
    one check of displayed text (``admission.rules.visible_text``) refuses controls, format
    characters (zero-width, BOM, word joiner, bidi), and line/paragraph separators."""
    error = _refused(server, body)
    assert (error["field"], error["message"]) == (field, f"{field} contains the invisible character {char}"), error


def test_newuser13_n16_a_leases_notebook_is_checked_like_a_name(server: EmbeddedServer) -> None:
    """N16: ``POST leases {"kernel_notebook": "evil\\u001b[2Jx.ipynb"}`` was stored and answered raw:
    the field had no check at all. It gets the name's."""
    answer = api(server, "tok-ann").post("leases", json={"gpus": 0.5, "kernel_notebook": "evil\x1b[2Jx.ipynb"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["field"] == "kernel_notebook"
    assert "invisible character U+001B" in answer.json()["error"]["message"]


# ---- N12: small REST inconsistencies: the query argument named, "1 character", an empty kernel id --------------

def test_newuser13_n12_rest_names_the_argument_sent_and_counts_in_words(server: EmbeddedServer) -> None:
    """N12: ``telemetry/history?lease=<another's>`` answered 404 naming ``job_id`` (the argument is
    ``lease``); ``PUT quotas [{"team": ""}]`` said "at least 1 characters long"; ``POST leases
    {"kernel_id": ""}`` was a lease for no kernel (empty read as left out: N7's rule)."""
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    lease = boss.post("leases", json={"gpus": 0.5})
    assert lease.status_code == 201, lease.text
    for argument in ("lease", "job"):
        missing = ann.get("telemetry/history", params={argument: lease.json()["id"]})
        assert missing.status_code == 403 and missing.json()["error"]["field"] == argument, missing.text
    boss.delete(f"leases/{lease.json()['id']}")
    quota = boss.put("quotas", json={"quotas": [{"team": ""}]})
    assert quota.status_code == 400 and "at least 1 character long" in quota.json()["error"]["message"], quota.text
    empty = ann.post("leases", json={"gpus": 0.5, "kernel_id": ""})
    assert empty.status_code == 400 and empty.json()["error"]["field"] == "kernel_id", empty.text


def test_newuser13_n12_an_item_of_a_list_is_named_by_its_place_on_rest_and_in_the_config(server: EmbeddedServer) -> None:
    """N12: ``PUT quotas {"quotas": [{"team": "teamb", "guaranteed": -1}]}`` said ``quotas[0].guaranteed
    must be at least 0`` with field ``guaranteed`` (which line?), while the same line in
    ``c.SchedApp.quotas`` (``jupyter-sched serve``) and a submit's ``groups[1].name`` name the place.
    The field of an invalid item of a list is now its place, on REST and in the server's config alike."""
    from jupyter_sched.services.config import _quota_line

    boss = api(server, "tok-boss")
    line = {"team": "teamb", "guaranteed": -1}
    rest = boss.put("quotas", json={"quotas": [{"team": "teama", "guaranteed": 0}, line]})
    assert rest.status_code == 400, rest.text
    error = rest.json()["error"]
    assert error["field"] == "quotas[1].guaranteed", error
    assert error["message"].startswith("quotas[1].guaranteed must be at least 0"), error
    with pytest.raises(ValidationError) as config:
        _quota_line(1, line)
    assert config.value.field == error["field"], config.value
    unknown = boss.put("quotas", json={"quotas": [{"team": "teama", "guaranted": 1}]})
    assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "quotas[0].guaranted", unknown.text
    alone = boss.put("idle-policy", json={"grace_s": -5})  # not in a list: the field's name, as before
    assert alone.status_code == 400 and "[" not in str(alone.json()["error"]["field"]), alone.text


# ---- N17: a method a route does not take is answered naming the ones it does -----------------------------------

@pytest.mark.parametrize(("method", "route", "allowed"), [("PUT", "jobs", ["GET", "POST"]),
                                                          ("PATCH", "leases/l-nu13n17", ["GET", "DELETE"]),
                                                          ("GET", "jobs/cancel", ["POST"])])
def test_newuser13_n17_a_method_the_route_does_not_take_is_405_naming_those_it_does(
        server: EmbeddedServer, method: str, route: str, allowed: list[str]) -> None:
    """N17: ``PUT /jobs`` and ``PATCH /jobs/J`` answered ``405 {"message": "Method Not Allowed", "hint":
    "see openapi.yaml for the methods of this route"}`` (``PATCH /jobs/J`` is a route since hubadmin25 B18; a lease's
    is not). The answer now names the route's methods in
    the ``Allow`` header (RFC 9110) and in words, field ``method``, like every other refusal."""
    answer = api(server, "tok-ann").request(method, route, json={} if method in ("PUT", "PATCH") else None)
    assert answer.status_code == 405, answer.text
    assert answer.headers["Allow"] == ", ".join([*allowed, "OPTIONS"]), answer.headers
    error = answer.json()["error"]
    words = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} and {allowed[-1]}"
    pattern = ("jobs/{job_id}" if route.startswith("jobs/j-") else "leases/{lease_id}" if route.startswith("leases/l-")
               else route)  # the route as openapi.yaml names it (N13 of 20)
    assert error == {"code": "method_not_allowed", "message": f"{method} is not a method of {route}", "field": "method",
                     "hint": f"{pattern} takes {words} (see openapi.yaml)", "details": {"allowed": allowed}}, error


def test_newuser13_n17_an_audit_action_no_record_can_have_is_refused_naming_the_actions(server: EmbeddedServer) -> None:
    """N17: ``GET audit?action=bogus`` answered ``200 []`` — read as "nothing of that happened" — while
    ``jobs?state=bogus`` is a 400 naming the states. An action that is none of those audit records are
    written with (and that no stored record has) is now refused naming them; a real action that has
    not happened yet is still an empty list."""
    boss = api(server, "tok-boss")
    bogus = boss.get("audit", params={"action": "bogus"})
    assert bogus.status_code == 400, bogus.text
    error = bogus.json()["error"]
    assert (error["field"], error["message"]) == ("action", "unknown audit action 'bogus'"), error
    assert error["hint"].startswith("audit records have the actions ") and "refused" in error["hint"], error
    assert boss.get("audit", params={"action": "leader_resigned"}).status_code == 200  # none yet: []
    assert api(server, "tok-ann").post("jobs", json={"gpus": "two", "command": ["true"]}).status_code == 400
    refused = boss.get("audit", params={"action": "refused", "user": "ann"})
    assert refused.status_code == 200, refused.text


def test_newuser13_n17_every_action_an_audit_record_is_written_with_is_known() -> None:
    """The list ``GET audit?action=`` checks against holds every action the package writes: each
    ``action="…"`` keyword (not argparse's), each ``….audit(job, "…")``/``audit_id(…)`` and ``AuditRecord(action=…)``,
    and the constants and terminal states written through variables."""
    import ast

    import jupyter_sched
    from jupyter_sched.model import JobState
    from jupyter_sched.services.audit import AUDIT_ACTIONS

    written: dict[str, str] = {}
    for path in Path(jupyter_sched.__file__).parent.rglob("*.py"):
        text = path.read_text()
        if "action" not in text.lower() and "audit" not in text.lower():
            continue  # names neither (each kind below needs one: action=, audit(, AuditRecord(, NAME_ACTION)
        for node in ast.walk(ast.parse(text)):  # parsed and walked once per file (twice until session 41)
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id.endswith("_ACTION") and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):  # every module constant NAME_ACTION = "…" (team_moved)
                written[node.value.value] = str(path)
                continue
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            values = [kw.value for kw in node.keywords if kw.arg == "action" and name != "add_argument"]
            if name in ("audit", "audit_id") and len(node.args) > 1:  # the engine's writer: (job, action, …)
                values.append(node.args[1])
            if name == "AuditRecord" and node.args:  # the core's records: (action, job_id, …)
                values.append(node.args[0])
            for value in values:
                for part in ast.walk(value):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str) and part.value != "action":
                        written[part.value] = str(path)
    from jupyter_sched.admission.gate import REFUSED
    from jupyter_sched.hub.budgets import BUDGET_ACTION
    from jupyter_sched.services.progress import OVER_LIMIT

    written.update({REFUSED: "gate", BUDGET_ACTION: "budgets", OVER_LIMIT: "services/progress", "idle_warning": "engine/idle",
                    "idle_reclaim": "engine/idle", "idle_clear": "engine/idle"})
    written.update({state.value: "transitions.finish" for state in JobState if state.terminal})
    assert len(written) > 30
    missing = {action: where for action, where in written.items() if action not in AUDIT_ACTIONS}
    assert not missing, missing
