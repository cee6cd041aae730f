"""newuser38 n28: ``c.SchedApp.profiles = {"bert": {"gpus": 99}}`` on a host with fewer GPUs was taken silently, and a
user's ``jupyter-sched submit --profile bert -- true`` was told ``--gpus: needs 99 GPUs … ask for at most 4 GPUs`` —
blaming an option they never typed. Now the start warns of the profile, and the refusal names the profile, the value
it sets, the admin's fix and the override. Real parts: an embedded server (2 simulated GPUs) started with that
profile, REST, the CLI's main in this process."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_REFUSED, main
from tests.onboarding.test_cli_firsthour import api
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
PROFILES = {"bert": {"gpus": 99, "description": "too big here"}, "small": {"gpus": 1}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu38n28"), users=USERS, admin_users=["boss"],
                               simulated_gpus=2, profiles=PROFILES)
    try:
        yield srv
    finally:
        srv.kill()


def test_newuser38_n28_the_start_warns_of_a_profile_no_node_holds(server: EmbeddedServer) -> None:
    log = server.log_path.read_text(encoding="utf-8", errors="replace")
    said = [line for line in log.splitlines() if "c.SchedApp.profiles[" in line]
    assert len(said) == 1, said  # bert only; small fits
    assert ("c.SchedApp.profiles['bert'] asks for 99 GPUs per worker but the largest node has 2: every job of "
            "--profile bert is refused until it asks for at most 2 (or the job gives gpus itself)") in said[0], said


def test_newuser38_n28_a_profiles_refusal_names_the_profile_not_an_option_never_typed(server: EmbeddedServer,
                                                                                       tmp_path: Path) -> None:
    answer = api(server, "tok-ann").post("jobs", json={"profile": "bert", "command": ["true"]})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == "profile", error
    assert error["message"].startswith("profile 'bert' sets gpus 99: needs 99 GPUs"), error
    assert error["hint"].startswith("ask an admin to fix c.SchedApp.profiles['bert'], or give gpus yourself to "
                                    "override it"), error
    (tmp_path / "tok").write_text("tok-ann", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--url", server.url, "--token-file", str(tmp_path / "tok"), "submit", "--profile", "bert", "--",
                 "true"], out=out, err=err)
    assert code == EXIT_REFUSED, err.getvalue()
    line = err.getvalue().strip().splitlines()[-1]
    assert line.startswith("jupyter-sched submit: --profile 'bert' sets gpus 99: needs 99 GPUs of any model on one "
                           "node but the largest node has 2 — ask an admin to fix c.SchedApp.profiles['bert'], or "
                           "give gpus yourself to override it"), line
    assert "--gpus:" not in line, line
    typed = api(server, "tok-ann").post("jobs", json={"profile": "bert", "gpus": 99, "command": ["true"]})
    assert typed.status_code == 422 and typed.json()["error"]["field"] == "gpus", typed.text  # typed: its own field
    fits = api(server, "tok-ann").post("jobs", json={"profile": "bert", "gpus": 1, "command": ["true"]})
    assert fits.status_code == 201, fits.text  # the override
    api(server, "tok-ann").delete(f"jobs/{fits.json()['id']}")
