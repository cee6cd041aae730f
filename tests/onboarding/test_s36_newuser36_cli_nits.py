"""newuser36 N4 and n4 (CLI wording; issue 20's first hour).

N4: ``jupyter-sched --json doctor`` (``--utc``/``--url …`` before ``doctor``, ``simulate``, ``fetch-traces``) ended in
a ``KeyError: 'doctor'`` traceback, and ``jupyter-sched --utc serve --help`` said "--help: not an option": those
commands were dispatched only when they were the first word. Now every command takes each of the program's options
(``jupyter-sched --help`` lists them) before it or after it, or refuses it in one line naming the option — checked
here for every command and every option the program's parser has, so a new command or option is covered.

n4: a submit during a restart of the hub's service said "the submit was not received; sending it again", then "it
may have reached the scheduler … looking whether train is there": two accounts of one submit, and a job name read as a
file. The second now says what changed (the resend got no answer) and names "your job "train"".

Real parts: the CLI's ``main`` in this process (its real parsers, the doctor on a real missing store, the simulator's
own usage check, fetch-traces' plan). The n4 test's hub service is a stdlib HTTP double speaking the wire (the hub
proxy's 503 page, a connection closed before an answer, the service's JSON): a real restart cannot be timed against
the two sends; the ride-out's pauses are counted, not slept.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import ClassVar

import pytest

from jupyter_sched.cli import main as cli_main
from jupyter_sched.cli.commands import COMMANDS
from jupyter_sched.cli.main import ADMIN_VIEW_NAMES, COMMAND_NAMES, EXIT_OK, EXIT_USAGE, OFFLINE_COMMANDS, main
from tests.hub_service_double import ServiceDoubleHandler, serve_service_double, step_the_ride_out_clock


def _program_options() -> dict[str, bool]:
    """The program's options as ``jupyter-sched --help`` lists them (``-h`` aside): whether each takes a value."""
    known = cli_main.build_parser(cli_main._NO_COMMAND)._option_string_actions
    return {flag: action.nargs != 0 for flag, action in known.items()
            if flag.startswith("--") and flag not in ("--help", "--version")}


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = main(list(argv), out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def test_newuser36_n4_every_command_takes_or_refuses_each_program_option_before_and_after_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = _program_options()
    assert {"--json", "--utc", "--url", "--token", "--token-file", "--timeout"} <= set(options), options
    token = tmp_path / "token"
    token.write_text("t0k\n", encoding="utf-8")
    values = {"--url": "http://127.0.0.1:9/", "--token": "t0k", "--token-file": str(token), "--timeout": "5"}
    # the cause: a command the parser routes to that neither the server commands' table nor the offline ones
    # dispatch (doctor reached COMMANDS[...] behind an option: KeyError)
    whole = cli_main.build_parser()
    commands = set(whole._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert commands == set(COMMAND_NAMES) | set(ADMIN_VIEW_NAMES), commands
    assert commands == set(COMMANDS) | set(OFFLINE_COMMANDS), commands ^ (set(COMMANDS) | set(OFFLINE_COMMANDS))
    # the server commands: each option before (the program's) and after (_common_options) the command
    for command in sorted(COMMANDS):
        sub = cli_main._subparser(whole, command)
        assert set(options) <= set(sub._option_string_actions), (command, set(options) - set(sub._option_string_actions))
    # the offline ones, run for real: before or after the command, taken (the command's own answer) or refused in
    # one line that names the option; never a traceback; --help after the command is its help whatever the options
    store = f"sqlite:///{tmp_path / 'none.sqlite'}"  # no store there: the doctor says so (exit 3), creates none
    runs = {"doctor": (["--db", store, "list"], "no store at"),
            # its own refusal of a missing source, said before the simulator's libraries load (seconds of imports)
            "simulate": (["--seed", "7"], "give one of scenario, --openb, --tiresias"),
            "fetch-traces": (["--dest", str(tmp_path / "traces"), "--only", "spot", "--dry-run"], " -> "),
            "serve": (None, "")}  # taken nowhere: it would start the service
    monkeypatch.chdir(tmp_path)
    for command, rule in OFFLINE_COMMANDS.items():
        rest, answer = runs[command]
        for flag, valued in options.items():
            given = [flag, values[flag]] if valued else [flag]
            for argv in ([*given, command, *(rest or [])], [command, *(rest or []), *given]):
                rc, out, err = _run(*argv)
                if flag in rule.passed or flag in rule.ignored:
                    assert rest is not None and answer in out + err, (argv, rc, out, err)
                    assert f": {flag}: " not in err and "Traceback" not in err, (argv, err)
                else:
                    assert rc == EXIT_USAGE and not out, (argv, rc, out, err)
                    assert err.startswith(f"jupyter-sched {command}: {flag}: ") and err.count("\n") == 1, (argv, err)
                    assert f"leave {flag} out" in err and err.rstrip().endswith("[usage_error]"), err
                rc, out, err = _run(*given, command, "--help")
                assert (rc, err) == (EXIT_OK, "") and "usage:" in out.lower(), (given, command, rc, out, err)
    assert not (tmp_path / "none.sqlite").exists()
    # doctor's own --json, passed on wherever it was typed: the JSON answer, not the lines
    for argv in (["--json", "doctor", "--db", store, "list"], ["doctor", "--db", store, "list", "--json"]):
        rc, out, err = _run(*argv)
        assert rc == 3 and "no store at" in err and "store:" not in out, (argv, rc, out, err)


class _HubRestart(ServiceDoubleHandler):
    """The hub's proxy and service through a restart (newuser36's repro): the first submit gets the proxy's 503
    page (never received), the second a connection closed before an answer (lost), the look after it a 503 once;
    then the service answers again and takes the submit (its key: made now, 201)."""

    posts: ClassVar[int] = 0
    looks: ClassVar[int] = 0
    CONFIG = json.dumps({"mode": "hub", "executors": ["local"], "features": {"submit_keys": True}}).encode()
    JOB = json.dumps({"id": "j-n36n4", "name": "train", "state": "pending", "user": "n36a", "gpus": 1}).encode()


    def do_GET(self) -> None:
        if type(self).posts >= 2:
            type(self).looks += 1
            if type(self).looks == 1:
                return self._send(503, b"<html><h1>Service Unavailable</h1></html>", "text/html")
        self._send(200, self.CONFIG)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).posts += 1
        if type(self).posts == 1:
            return self._send(503, b"<html><h1>Service Unavailable</h1></html>", "text/html")
        if type(self).posts == 2:
            self.close_connection = True  # the answer is lost with the service's process
            return
        self._send(201, self.JOB)



def test_newuser36_n4nit_a_submit_through_a_hub_restart_tells_one_story_and_names_the_job(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pauses = step_the_ride_out_clock(monkeypatch)
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    _HubRestart.posts = _HubRestart.looks = 0
    with serve_service_double(_HubRestart) as url:
        monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", url)
        monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "user-token")
        monkeypatch.setenv("JUPYTER_SCHED_SERVICE_TOKEN", "user-token")
        rc, out, err = _run("submit", "--gpus", "1", "--time-limit", "1m", "--name", "train", "--", "/bin/sleep", "5")
    assert rc == EXIT_OK and out.startswith("submitted j-n36n4 (train)"), (rc, out, err)
    assert _HubRestart.posts == 3 and 0 < sum(pauses) <= 120, (_HubRestart.posts, pauses)
    lines = [line for line in err.splitlines() if "likely restarting" in line]
    assert len(lines) == 2, err
    assert "the submit was not received; sending it again" in lines[0], lines
    # before: "… it may have reached the scheduler: once it answers, looking whether train is there"
    assert "sending it again got no answer, so this time it may have reached the scheduler" in lines[1], lines
    assert 'looking whether your job "train" is there, to send it again only if not' in lines[1], lines
    assert "not received" not in lines[1] and "whether train is" not in err, err
    assert "the scheduler did not get it before the restart; sent again once it answered" in err, err


def test_newuser36_n4_doctors_own_options_are_taken_after_its_action_too(tmp_path: Path) -> None:
    # before: `doctor list --db URL` was "--db: not an option of jupyter-sched doctor list" (its options only before ACTION)
    first, last = tmp_path / "first.sqlite", tmp_path / "last.sqlite"
    for argv in (["doctor", "list", "--db", f"sqlite:///{last}"], ["doctor", "list", "--json", "--db", f"sqlite:///{last}"],
                 ["doctor", "--db", f"sqlite:///{first}", "ends", "--db", f"sqlite:///{last}"]):
        rc, out, err = _run(*argv)
        assert rc == 3 and f"no store at {last}" in err and "not an option" not in err, (argv, rc, out, err)
    rc, out, err = _run("doctor", "--db", f"sqlite:///{first}", "list")  # before the action, as it always was
    assert rc == 3 and f"no store at {first}" in err, (rc, out, err)
    assert not first.exists() and not last.exists()
