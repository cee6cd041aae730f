"""newuser38 n9: a non-admin's ``jupyter-sched usage --by team`` printed ``vision 0.010 … JOBS 1`` — their own share,
under the team's name (the team's total was 0.040); only the footnote said "n38a's usage". The server's rows already
say whose they are (red15 R14: ``user`` on each row by team); the table now shows that USER column and a line saying
the rows are the reader's own share, a team's total being an admin's report. An admin's rows stay team totals.
Real parts: an embedded server (simulated GPUs), real jobs, the CLI's main in this process."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, main
from tests.onboarding.test_cli_firsthour import api, module_server, wait_state
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu38n9", USERS)


def _usage(server: EmbeddedServer, tmp_path: Path, token: str, *argv: str) -> list[str]:
    (tmp_path / token).write_text(token, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--url", server.url, "--token-file", str(tmp_path / token), "usage", *argv], out=out, err=err)
    assert code == EXIT_OK, err.getvalue()
    return out.getvalue().splitlines()


def test_newuser38_n9_a_members_usage_by_team_says_whose_share_it_is(server: EmbeddedServer, tmp_path: Path) -> None:
    for token in ("tok-ann", "tok-boss"):
        job = api(server, token).post("jobs", json={"gpus": 1, "command": ["sleep", "1"], "name": "n9"}).json()
        wait_state(server, token, job["id"], "succeeded", "failed")
    lines = _usage(server, tmp_path, "tok-ann", "--by", "team")
    assert lines[0].split()[:3] == ["TEAM", "USER", "GPU-HOURS"], lines
    rows = [line.split() for line in lines[1:] if line.split()[:1] == ["default"]]
    assert rows and all(row[1] == "ann" for row in rows), lines
    assert "by team: ann's own share of each team's use; a team's total is an admin's report" in lines, lines
    assert lines[-1].startswith("ann's usage, "), lines
    admin = _usage(server, tmp_path, "tok-boss", "--by", "team")  # the admin's: team totals, no USER column
    assert admin[0].split()[:2] == ["TEAM", "GPU-HOURS"], admin
    assert not any(line.startswith("by team:") for line in admin), admin
    by_month = _usage(server, tmp_path, "tok-ann", "--by", "team,period", "--period", "month")
    assert by_month[0].split()[:3] == ["TEAM", "PERIOD", "USER"], by_month
