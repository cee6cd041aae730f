"""newuser38 n2: the exit status of a bad option value followed where it was checked — ``submit --time-limit 2x`` 1
(the server's ``[validation_error]``), ``--time-limit -5m`` 2 (the CLI's ``[usage_error]``); ``--workdir /nonexistent``
1, ``--script nosuch.py`` 2 — so a script could not tell a mistake of its own from a refusal. One rule for every
subcommand, said in ``jupyter-sched --help``: 2 for bad input whoever finds it, 1 for a well-formed request the server
refuses. Real parts: an embedded server (simulated GPUs), the CLI's main in this process."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_STATUS_HELP, EXIT_USAGE, main
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
Capture = pytest.CaptureFixture[str]
INPUT = ("[usage_error]", "[validation_error]", "[invalid_timestamp]")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu38n2", USERS)


@pytest.fixture(scope="module")
def job(server: EmbeddedServer) -> str:
    """A job of the owner's that waits (more GPUs than are free), for the commands that name one."""
    answer = api(server, OWNER_TOKEN).post("jobs", json={"gpus": 2, "command": ["sleep", "300"], "name": "n2w"})
    assert answer.status_code == 201, answer.text
    blocker = api(server, OWNER_TOKEN).post("jobs", json={"gpus": 2, "command": ["sleep", "300"], "name": "n2b"})
    assert blocker.status_code == 201, blocker.text
    return str(blocker.json()["id"])


def _cli(server: EmbeddedServer, capsys: Capture, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code, _, err = server.cli(*argv)
    return code, err + capsys.readouterr().err


BAD_INPUT = [
    (["submit", "--time-limit", "2x", "--", "true"], "time limit as a word: the server finds it"),
    (["submit", "--time-limit", "-5m", "--", "true"], "a negative time limit: the CLI finds it"),
    (["submit", "--gpus", "two", "--", "true"], "GPUs as a word"),
    (["submit", "--gpus", "1.5", "--", "true"], "GPUs not whole and above 1"),
    (["submit", "--cpu", "lots", "--gpus", "0", "--", "true"], "cores as a word"),
    (["submit", "--priority", "urgent", "--", "true"], "no such class"),
    (["submit", "--script", "nosuch.py"], "a script that is not there"),
    (["submit", "--workdir", "/nonexistent/n38", "--", "true"], "a folder that is not there: the server finds it"),
    (["submit", "--gpsu", "1", "--", "true"], "a mistyped option"),
    (["queue", "--limit", "0"], "queue --limit 0"),
    (["jobs", "--since", "the day before"], "jobs --since a phrase"),
    (["logs", "{job}", "--tail", "many"], "logs --tail a word"),
    (["wait", "{job}", "--for", "2x"], "wait --for a word"),
    (["update", "{job}", "--time-limit", "2x"], "update --time-limit a word"),
    (["update", "{job}", "--priority", "urgent"], "update --priority no such class"),
    (["audit", "--since", "someday"], "audit --since a word"),
    (["usage", "--month", "2026-13"], "usage --month no such month"),
    (["definitions", "create", "--cron", "every morning", "--", "true"], "a cron that is none"),
    (["--timeout", "soon", "status"], "the program's own option"),
]


@pytest.mark.parametrize("argv, _why", BAD_INPUT, ids=[why for _, why in BAD_INPUT])
def test_newuser38_n2_bad_input_is_exit_2_whoever_finds_it(server: EmbeddedServer, job: str, capsys: Capture,
                                                           argv: list[str], _why: str) -> None:
    code, err = _cli(server, capsys, *[word.replace("{job}", job) for word in argv])
    last = err.strip().splitlines()[-1] if err.strip() else ""
    assert code == EXIT_USAGE, (argv, code, err)
    assert last.endswith(INPUT), (argv, err)


REFUSED = [
    (["cancel", "j-nosuch38"], "no such job"),
    (["hold", "j-nosuch38"], "hold of no such job"),
    (["logs", "j-nosuch38"], "logs of no such job"),
    (["update", "j-nosuch38", "--priority", "low"], "update of no such job"),
]


@pytest.mark.parametrize("argv, _why", REFUSED, ids=[why for _, why in REFUSED])
def test_newuser38_n2_a_refusal_of_a_well_formed_request_is_exit_1(server: EmbeddedServer, capsys: Capture,
                                                                  argv: list[str], _why: str) -> None:
    code, err = _cli(server, capsys, *argv)
    assert code == EXIT_REFUSED, (argv, code, err)
    assert not err.strip().splitlines()[-1].endswith(INPUT), err


def test_newuser38_n2_one_bad_job_of_several_makes_the_bulk_exit_by_the_rule(server: EmbeddedServer, job: str,
                                                                             capsys: Capture) -> None:
    """``update A B``: each job's line is said and the others go on; the status is 2 when one was bad input, 1 when
    the worst was a refusal."""
    code, err = _cli(server, capsys, "update", job, "j-nosuch38", "--time-limit", "2x")
    assert code == EXIT_USAGE, (code, err)
    code, err = _cli(server, capsys, "hold", "j-nosuch38", "j-nosuch39")
    assert code == EXIT_REFUSED, (code, err)


def test_newuser38_n2_the_help_says_the_rule(capsys: Capture) -> None:
    out = io.StringIO()
    assert main(["--help"], out=out, err=io.StringIO()) == EXIT_OK
    said = " ".join((out.getvalue() + capsys.readouterr().out).split())
    assert " ".join(EXIT_STATUS_HELP.split()) in said, said[-800:]
    assert f"{EXIT_USAGE} bad input" in said and f"{EXIT_REFUSED} refused" in said
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "Every command exits 2 for bad input" in readme and "1 when the scheduler refuses" in readme
