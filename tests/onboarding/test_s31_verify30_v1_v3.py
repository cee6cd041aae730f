"""verify30 V1 to V3, through a real server, the CLI as a subprocess and the magics' own client.

* V1: a job whose script or program does not exist was refused by the CLI as ``--: 'missing.py' does not
  exist …``: the ``command`` field said as the CLI's separator, which is no name. A field a surface writes
  after ``--`` (or as the cell) gets no prefix; a message that opens with its name says what it is.
* V2: ``--time-limit 1h30`` (no unit on the last part), ``1:30``, ``2 hrs`` … were refused with only the
  syntax; now each near miss is told the duration it nearly is (``write 1h30m``), on REST, the CLI and the
  magics; a duration typed as words of its own (``--for 1h 30m``) likewise; ``1 30`` is no longer 130 s.
* V3: ``usage --as-scenario`` of a personal lab named its scenario "hub history …".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE
from jupyter_sched.cli.scenario_export import history_source
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.core import MagicError, _one_line
from jupyter_sched.model.units import duration_hint, duration_written, parse_duration
from jupyter_sched.model.validation import parse_time_limit
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.flags import CELL, CLI, GPU_REQUEST, GPU_REQUEST_N, in_surface_terms
from tests.onboarding.test_cli_firsthour import api, module_server, wait_state
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "v30", USERS)


def _refused(server: EmbeddedServer, tmp_path: Path, *argv: str, code: int = EXIT_USAGE) -> str:
    """The refusal's last line; its exit status 2, bad input, whoever found it (newuser38 n2)."""
    said = _cli(_env(tmp_path, server), *argv, cwd=tmp_path)
    assert said.returncode == code, (argv, said.stdout, said.stderr)
    return said.stderr.strip().splitlines()[-1]


# ---- V1: the field of a missing script or program ----------------------------------------------------------

def test_verify30_v1_a_missing_script_or_program_opens_with_what_was_typed_not_the_separator(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """V1: ``submit -- python missing.py`` said ``--: 'missing.py' does not exist``; each missing script or
    program now opens with the path as typed, and REST still names its field ``command``."""
    cases = {
        # by its kind, as the magics say a missing `%schedule run` script (newuser31 n15)
        ("python3", "missing.py"): f"jupyter-sched submit: script 'missing.py' does not exist in {tmp_path} (the "
                                   "job's working directory) — give the path of the script to run",
        ("python3", "/nope/missing.py"): "jupyter-sched submit: script '/nope/missing.py' does not exist — give the path",
        ("./missing.sh",): f"jupyter-sched submit: '{tmp_path}/missing.sh' does not exist on this server — check the "
                           "path and its spelling",
        ("nosuchprogram31",): "jupyter-sched submit: 'nosuchprogram31' is not a program on the job's PATH on this "
                              "server — give its full path, or check the spelling",
    }
    for command, opens in cases.items():
        line = _refused(server, tmp_path, "submit", "--gpus", "0", "--", *command)
        assert line.startswith(opens) and line.endswith("[validation_error]"), line
        assert "--:" not in line and ": :" not in line, line
    error = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["python3", "/nope/missing.py"]}).json()
    assert error["error"]["field"] == "command" and error["error"]["message"].startswith("script '/nope/missing.py'")


def test_verify30_v1_an_empty_program_and_a_huge_command_say_the_command_not_a_separator(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """V1, the kind: a message opening with the field's name (``command[0] is empty``, ``command is too large``)
    was ``-- …`` in the CLI; now it says what it is, and the hint's bare ``command`` likewise."""
    empty = _refused(server, tmp_path, "submit", "--gpus", "0", "--", "")
    assert empty.startswith("jupyter-sched submit: the command's first word is empty: it names the program to run — "
                            "say what to run: -- python train.py"), empty
    huge = _refused(server, tmp_path, "submit", "--gpus", "0", "--", "python3", "-c", "#" * 70_000)
    assert huge.startswith("jupyter-sched submit: the command after -- is too large ("), huge
    assert "keep the command after -- under 64 KiB" in huge and "keep command" not in huge, huge


@pytest.mark.parametrize("surface, noun", [(CLI, "the command after --"), (CELL, "the command"),
                                           (GPU_REQUEST, "the command"), (GPU_REQUEST_N, "the command")],
                         ids=["cli", "cell", "gpu request", "gpu request N"])
@pytest.mark.parametrize("message, want", [
    ("'missing.py' does not exist in /w (the job's working directory)", "'missing.py' does not exist in /w"),
    ("'x.sh' is not executable", "'x.sh' is not executable"),
    ("command is too large (70001 characters, at most 65536)", "{noun} is too large (70001 characters"),
    ("command must not contain NUL bytes", "{noun} must not contain NUL bytes"),
], ids=["a path as typed", "a program as typed", "too large", "NUL bytes"])
def test_verify30_v1_no_surface_puts_its_separator_or_its_cell_phrase_before_a_colon(
        surface: object, noun: str, message: str, want: str) -> None:
    """V1 on every surface's renderer (the server's refusal as the CLI and the magics receive it): never
    ``--:``, never ``the cell body (or %schedule run SCRIPT):`` — the magics' ``run`` — as a field."""
    said, hint = in_surface_terms(message, "keep command under 64 KiB", "command", surface)  # type: ignore[arg-type]
    assert said.startswith(want.format(noun=noun)), said
    assert not said.startswith(("--", "the cell body")) and ": '" not in said[:30], said
    assert hint == f"keep {noun} under 64 KiB"


def test_verify30_v1_the_magics_say_a_servers_missing_program_refusal_by_its_path() -> None:
    """V1 in the magics: the server's ``command`` refusal (a %schedule run whose script the server cannot
    see) was prefixed with the cell phrase; it reads as the path, then the fix."""
    err = ValidationError("command: '/nb/gone.py' does not exist", field="command",
                          hint="give the path of the script to run, or check the spelling")
    assert _one_line(err) == "'/nb/gone.py' does not exist. Give the path of the script to run, or check the spelling."


def test_verify30_v1_script_arguments_are_said_as_the_option_that_sets_them() -> None:
    """V1, the kind: ``args`` (a definition's script arguments) was ``--`` in the CLI, whose option is
    ``--args``; the magics write them after ``--``: the argument list."""
    assert in_surface_terms("args is too large (9 characters)", "keep args under 64 KiB", "args") == (
        "--args is too large (9 characters)", "keep --args under 64 KiB")
    assert in_surface_terms("args is too large (9 characters)", None, "args", CELL)[0] == \
        "the argument list is too large (9 characters)"


# ---- V2: near misses of a duration --------------------------------------------------------------------------

@pytest.mark.parametrize("typed, hint", [
    ("1h30", "write 1h30m (units d, h, m, s)"),
    ("2d4", "write 2d4h (units d, h, m, s)"),
    ("30m15", "write 30m15s (units d, h, m, s)"),
    ("1:30", "write 1h30m for 1 hour 30 minutes, or 1m30s (units d, h, m, s)"),
    ("0:45", "write 45m for 45 minutes, or 45s (units d, h, m, s)"),
    ("1:30:00", "write 1h30m (units d, h, m, s)"),
    ("90 min", "write 90m (units d, h, m, s)"),
    ("2 hrs", "write 2h (units d, h, m, s)"),
    ("1.5 hours", "write 1.5h (units d, h, m, s)"),
    ("1,5h", "write 1.5h (units d, h, m, s)"),
    ("1 hour 30 minutes", "write 1h30m (units d, h, m, s)"),
    ("1h, 30m", "write 1h30m (units d, h, m, s)"),
    ("1h30min", "write 1h30m (units d, h, m, s)"),
    ("PT1H30M", "write 1h30m (units d, h, m, s)"),
    ("forever", "use a number of seconds or units d/h/m/s, e.g. '45s', '10m', '2h30m'"),
    ("1 30", "use a number of seconds or units d/h/m/s, e.g. '45s', '10m', '2h30m'"),
])
def test_verify30_v2_every_near_miss_of_a_duration_is_told_the_one_it_nearly_is(typed: str, hint: str) -> None:
    with pytest.raises(ValidationError) as refused:
        parse_duration(typed, field="time_limit")
    assert refused.value.message == f"time_limit: cannot parse duration {typed!r}"
    assert refused.value.hint == hint
    written = hint.split()[1]
    if hint.startswith("write "):  # the fix is itself a duration the parser reads
        assert parse_duration(written, field="time_limit") == parse_duration(duration_written(typed) or written,
                                                                             field="time_limit")


def test_verify30_v2_accepted_forms_stay_accepted_and_numbers_parted_by_spaces_are_not_one_number() -> None:
    """``1.5h``, ``2 h 30 m`` and ``90`` are read as before; ``1 30`` was 130 seconds (the spaces dropped)."""
    assert parse_duration("1.5h", field="x") == 5400 and parse_duration("2 h 30 m", field="x") == 9000
    assert parse_duration("90", field="x") == 90 and parse_time_limit("0") == 0.0
    for parted in ("1 30", "1 30m"):
        with pytest.raises(ValidationError):
            parse_duration(parted, field="x")
    assert duration_hint("1h30") == "write 1h30m (units d, h, m, s)"


def test_verify30_v2_rest_the_cli_and_the_magics_say_the_fix_of_1h30(server: EmbeddedServer, tmp_path: Path) -> None:
    ann = api(server, "tok-ann")
    for typed, fix in (("1h30", "write 1h30m"), ("1:30", "write 1h30m for 1 hour 30 minutes, or 1m30s"),
                       ("2 hrs", "write 2h")):
        error = ann.post("jobs", json={"gpus": 0, "command": ["true"], "time_limit": typed}).json()["error"]
        assert (error["field"], error["hint"]) == ("time_limit", f"{fix} (units d, h, m, s)"), error
        line = _refused(server, tmp_path, "submit", "--gpus", "0", "--time-limit", typed, "--", "true")
        assert line == (f"jupyter-sched submit: --time-limit: cannot parse duration {typed!r} — {fix} (units d, h, m, s) "
                        "[validation_error]"), line
    with pytest.raises(MagicError) as refused:
        _magics(server).schedule("--gpus 0 --time-limit 1h30", "print(1)")
    assert str(refused.value) == "--time-limit: cannot parse duration '1h30'. Write 1h30m (units d, h, m, s)."


def test_verify30_v2_a_relative_change_keeps_its_sign_in_the_fix(server: EmbeddedServer, tmp_path: Path) -> None:
    """``update J --time-limit +1h30``: the fix is ``+1h30m`` (the server reads the part after the sign)."""
    ann = api(server, "tok-ann")
    made = ann.post("jobs", json={"gpus": 2, "command": ["sleep", "600"], "time_limit": "1h", "name": "hog31"})
    assert made.status_code == 201, made.text
    wait_state(server, "tok-ann", made.json()["id"], "running", "admitted")
    waiting = ann.post("jobs", json={"gpus": 2, "command": ["true"], "time_limit": "1h", "name": "w31"}).json()
    try:
        error = ann.patch(f"jobs/{waiting['id']}", json={"time_limit": "+1h30"}).json()["error"]
        assert (error["field"], error["hint"]) == ("time_limit", "write +1h30m (units d, h, m, s)"), error
        line = _refused(server, tmp_path, "update", waiting["id"], "--time-limit=-1:30")
        assert "cannot parse duration '-1:30' — write -1h30m for 1 hour 30 minutes, or -1m30s" in line, line
    finally:
        for job in (waiting, made.json()):
            ann.delete(f"jobs/{job['id']}")


def test_verify30_v2_a_duration_typed_as_words_of_its_own_is_told_how_to_join_them(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """``wait J --for 1h 30m`` was told to quote a job's name ("1h 30m"); ``--time-limit 1 hour 30 minutes``
    to write ``--time-limit 1h``, dropping the half hour."""
    wait = _refused(server, tmp_path, "wait", "j-x", "--for", "1h", "30m", code=EXIT_USAGE)
    assert "for 1h 30m write --for 1h30m" in wait and "quoted" not in wait, wait
    limit = _refused(server, tmp_path, "submit", "--gpus", "0", "--time-limit", "1", "hour", "30", "minutes", "--",
                     "true", code=EXIT_USAGE)
    assert "for 1 hour 30 minutes write --time-limit 1h30m" in limit, limit
    five = _refused(server, tmp_path, "submit", "--gpus", "0", "--time-limit", "5", "minutes", "--", "true",
                    code=EXIT_USAGE)
    assert "for 5 minutes write --time-limit 5m (a bare number is seconds)" in five, five


# ---- V3: a lab's history is a lab's ------------------------------------------------------------------------

def test_verify30_v3_a_personal_labs_history_scenario_is_named_after_the_lab(
        server: EmbeddedServer, tmp_path: Path) -> None:
    ran = api(server, "tok-ann").post("jobs", json={"gpus": 1, "command": ["true"], "name": "v3run"})
    assert ran.status_code == 201, ran.text
    wait_state(server, "tok-ann", ran.json()["id"], "succeeded")
    said = _cli(_env(tmp_path, server, "tok-boss"), "usage", "--as-scenario", "--since", "1h", cwd=tmp_path)
    assert said.returncode == EXIT_OK, said.stderr
    doc = json.loads(said.stdout)
    assert doc["name"].startswith("lab history ") and "hub" not in doc["name"], doc["name"]
    assert "hub" not in said.stderr, said.stderr


@pytest.mark.parametrize("config, want", [({"features": {"hub": True}}, "hub history"),
                                          ({"features": {"hub": False}}, "lab history"),
                                          ({}, "history"), (None, "history")])
def test_verify30_v3_the_history_is_named_by_the_server_that_answered(config: object, want: str) -> None:
    assert history_source(config) == want


def test_verify30_v3_a_personal_labs_doctor_says_its_jobs_isolation_without_hub_users_servers(tmp_path: Path) -> None:
    """V3, the other hub words a lab's owner met: ``jupyter-sched doctor`` of the embedded store said "user servers
    are fenced where the hub's spawner is …" / "any hub user's notebook server …" — a lab has no hub users. A
    hub's store (here named by its URL file, as ``serve`` reads it) still says it."""
    from tests.reliability.test_newuser13_doctor import _doctor

    lab = tmp_path / ".local" / "share" / "jupyter" / "jupyter_sched" / "sched.sqlite"
    Store(sqlite_url(lab)).close()
    run = _doctor(tmp_path)
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert "(the embedded server's default file)" in run.stdout, run.stdout
    isolation = next(line for line in run.stdout.splitlines() if line.startswith("isolation: "))
    assert "hub" not in isolation and "user servers" not in isolation, isolation
    hub = tmp_path / "service.sqlite"
    Store(sqlite_url(hub)).close()
    url_file = tmp_path / "db-url"
    url_file.write_text(sqlite_url(hub) + "\n")
    run = _doctor(tmp_path, JUPYTER_SCHED_DB_URL_FILE=str(url_file))
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    isolation = next(line for line in run.stdout.splitlines() if line.startswith("isolation: "))
    assert "user servers are " in isolation, isolation


@pytest.mark.parametrize("line, word, fix", [
    ("run train.py --time-limit 1 hour 30 minutes", "hour", "for 1 hour 30 minutes write --time-limit 1h30m"),
    ("run train.py --time-limit 2h 30m", "30m", "for 2h 30m write --time-limit 2h30m"),
    ("run --time-limit 5 minutes train.py", "minutes", "for 5 minutes write --time-limit 5m (a bare number is seconds)"),
    ("notebook report.ipynb --time-limit=1 h", "h", "for 1 h write --time-limit 1h (a bare number is seconds)"),
    ("serve app.py --port 8000 --time-limit 1 day", "day", "for 1 day write --time-limit 1d (a bare number is seconds)"),
])
def test_verify30_v2_a_magic_runs_duration_typed_as_words_is_refused_with_how_to_write_it(
        line: str, word: str, fix: str) -> None:
    """``%schedule run train.py --time-limit 1 hour 30 minutes`` ran train.py with the arguments ``hour 30 minutes``
    and a 1-second limit (only a note said it); the words after a duration option that make one duration with its
    value are refused, as the cell's and the CLI's are."""
    from jupyter_sched.magics.parsing import parse_schedule_line

    with pytest.raises(ValidationError) as refused:
        parse_schedule_line(line)
    assert refused.value.field == word and refused.value.message.endswith(f"is not read as part of the duration — {fix}"), \
        refused.value.message
    kept = parse_schedule_line("run train.py --time-limit 5 --epochs 3 1 hour")  # a script's own words stay its own
    assert kept.args == ("--epochs", "3", "1", "hour") and kept.options.time_limit_s == 5
    assert parse_schedule_line("run train.py -- --time-limit 5 minutes").args == ("--time-limit", "5", "minutes")
