"""hubadmin25 B14: the CLI's admin words. An unknown ``--team`` read as a team with nothing to do (``queue
--summary --team nosuch``: "No team has work pending or running, and no team has a quota line" while teams had
both; ``cancel --all --team nosuch``: "nothing to cancel"); ``teams move nope`` was refused naming a ``--team``
option it has not; ``audit --action nosuch`` said ``jupyter-sched audit nosuch:`` and exited 1 where usage errors
exit 2; ``definitions delete`` asked nothing and refused ``--yes``, which ``cancel`` takes.

Real parts: the ``jupyter-sched`` program as a subprocess against the test server (tests/web/conftest.py: ivan a
user, boss an admin), and the CLI's ``main`` in-process on a terminal-like stdin for the question.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE, main

from .conftest import BOSS_TOKEN, IVAN_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)

TEAMS = "teams: default, nlp, vision"


async def test_hubadmin25_b14_an_unknown_team_is_said_everywhere_it_is_taken(api: Any, cli: Any) -> None:  # noqa: F811
    status, _ = await api("PUT", "quotas", {"quotas": [{"team": "nlp", "guaranteed": 1, "borrowing_limit": 1},
                                                      {"team": "vision", "guaranteed": 1, "borrowing_limit": 1},
                                                      {"team": "default", "guaranteed": 1, "borrowing_limit": 1}]},
                          token=BOSS_TOKEN)
    assert status == 200
    hold = [sys.executable, "-c", "import time; time.sleep(60)"]
    run = await cli("submit", "--gpus", "1", "--name", "b14", "--", *hold)
    assert run.code == EXIT_OK, run.err
    job_id = run.out.split()[1].rstrip(":")
    admin = ("--token", BOSS_TOKEN)
    try:
        for argv, command in ((("queue", "--summary", "--team", "nosuch"), "queue"), (("queue", "--team", "nosuch"), "queue"),
                              (("cancel", "--all", "--team", "nosuch", "--yes"), "cancel"),
                              (("jobs", "--all", "--team", "nosuch"), "jobs")):
            said = await cli(*argv, *admin)
            assert said.code == EXIT_USAGE, (argv, said)
            assert _last(said) == f"jupyter-sched {command}: --team: no team nosuch ({TEAMS}) [usage_error]", said.err
        typo = await cli("cancel", "--all", "--team", "nlpp", "--yes", *admin)
        assert typo.err.strip().endswith(f"no team nlpp ({TEAMS}) — did you mean nlp? [usage_error]"), typo.err
        # a known team with nothing to show is no error
        quiet = await cli("jobs", "--all", "--team", "vision", *admin)
        assert quiet.code == EXIT_OK and quiet.out.strip() == "No jobs of anyone in team vision.", quiet
        summary = await cli("queue", "--summary", "--team", "vision", *admin)
        assert summary.code == EXIT_OK and summary.out.splitlines()[1].split()[0] == "vision", summary.out
        # teams move says the team named (its positional TEAM), not a --team option it has not
        moved = await cli("teams", "move", "nope", "--to", "vision", *admin)
        assert moved.code != EXIT_OK and _last(moved).startswith(
            "jupyter-sched teams move: team 'nope' has no pending or running work, definitions or quota line to move"), \
            moved.err
        assert "--team" not in moved.err, moved.err
        # audit --action: the option, not its value, in the prefix; a usage error's exit status
        action = await cli("audit", "--action", "nosuch", *admin)
        assert action.code == EXIT_USAGE, action
        assert _last(action).startswith("jupyter-sched audit: --action"), action.err
        assert "audit nosuch:" not in action.err, action.err
    finally:
        assert (await cli("cancel", job_id, "--yes")).code == EXIT_OK


def _last(run: Any) -> str:
    """The error line (the first stderr line may be the note that --token shows in ps)."""
    return str(run.err.strip().splitlines()[-1])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_hubadmin25_b14_definitions_delete_asks_on_a_terminal_and_takes_yes(
        cli: Any, sched_app: Any, http_server_port: Any, jp_base_url: str, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / "nb.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    ids = []
    for name in ("defn-one", "defn-two"):
        made = await cli("--json", "definitions", "create", "nb.ipynb", "--name", name, "--cron", "0 3 * * *")
        assert made.code == EXIT_OK, made.err
        ids.append(json.loads(made.out)["id"])
    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"

    def delete(answer: str, *extra: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["--url", url, "--token", IVAN_TOKEN, "definitions", "delete", ids[0], *extra], out=out, err=err,
                    stdin=_Terminal(answer))
        return code, out.getvalue(), err.getvalue()

    code, out, err = await asyncio.to_thread(delete, "n\n")
    assert code == EXIT_OK and out.strip() == "nothing deleted" and "\nDelete definition " in err and err.endswith("(defn-one)? [y/N] "), (out, err)
    code, out, err = await asyncio.to_thread(delete, "", "--yes")  # asked nothing
    assert code == EXIT_OK and "Delete definition" not in err and "nothing deleted" not in out, (out, err)
    assert ids[0] not in (await cli("definitions", "list")).out
    # a script (no terminal) deletes as before, and --yes is taken there too
    gone = await cli("definitions", "delete", ids[1], "--yes")
    assert gone.code == EXIT_OK, gone.err
