"""newuser25's nits (/work/coord/notes/newuser25.md, "Nits"), each its own test."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, main
from jupyter_sched.errors import ValidationError
from jupyter_sched.model.validation import spec_from_request
from jupyter_sched.wording import job_line
from jupyter_sched.wording.jobs import lease_end_words
from tests.reliability.harness import EmbeddedServer, no_strays
from tests.runtime.test_local_executor import wait_until


def test_newuser25_nit_n1_status_help_has_a_description_paragraph(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    try:
        main(["status", "--help"], out=out, err=err)
    except SystemExit:
        pass
    said = capsys.readouterr()
    text = " ".join((out.getvalue() + err.getvalue() + said.out + said.err).split())
    assert "Where you stand: the server this command talks to" in text, text
    assert "as %schedule status JOB says it" in text and "%%" not in text, text


def test_newuser25_nit_n2_my_own_cancelled_job_reads_cancelled_by_you() -> None:
    mine = {"id": "j-1", "kind": "training", "state": "cancelled", "user": "root", "mine": True, "exit_code": -15,
            "message": "cancelled by root (killed by SIGTERM; it ran 4s)"}
    assert lease_end_words(mine) == "cancelled by you (killed by SIGTERM; it ran 4s)"
    assert job_line(mine, None) == "job j-1: cancelled by you (killed by SIGTERM; it ran 4s)"  # newuser26 n9
    assert lease_end_words({**mine, "mine": False}) == "cancelled by its owner (killed by SIGTERM; it ran 4s)"
    by_admin = {**mine, "message": "cancelled by boss (killed by SIGTERM)"}
    assert lease_end_words(by_admin) == "cancelled by boss (killed by SIGTERM)"  # another's: named
    # the owner not known (an older answer): as it is
    assert lease_end_words({**mine, "user": None}) == mine["message"]
    # a lease's words are unchanged
    lease = {"kind": "lease", "user": "root", "mine": True, "message": "released by root"}
    assert lease_end_words(lease) == "released by you"


@pytest.mark.parametrize(("name", "said", "hint"), [
    ("x" * 300, "name must be 1-200 characters (got 300)", "give a shorter name"),
    ("x" * 201, "name must be 1-200 characters (got 201)", "give a shorter name"),
])
def test_newuser25_nit_n6_a_name_too_long_says_its_length(name: str, said: str, hint: str) -> None:
    with pytest.raises(ValidationError) as refused:
        spec_from_request({"gpus": 0, "command": ["true"], "name": name}, user="ann")
    assert refused.value.message == said and refused.value.hint == hint and refused.value.field == "name"


def test_newuser25_nit_n3_schedule_queue_summary_prints_the_clis_table(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``%schedule queue --summary`` was "unknown argument --summary" while the CLI has it: the magic prints
    the same table, from the same function."""
    from jupyter_sched.client import Connection, SchedClient
    from jupyter_sched.magics.core import SchedMagics
    from jupyter_sched.magics.parsing import parse_schedule_line

    assert parse_schedule_line("queue --summary").summary is True
    assert parse_schedule_line("queue --summary --mine").mine is True
    with no_strays(tmp_path):
        server = EmbeddedServer.start(tmp_path, simulated_gpus=2)
        try:
            made = server.client().post("jobs", json={"gpus": 1, "command": ["sleep", "60"], "time_limit": "5m"})
            assert made.status_code == 201, made.text
            # the two tables are read a moment apart: compare them once the job no longer moves (running)
            wait_until(lambda: server.client().get(f"jobs/{made.json()['id']}").json()["state"] == "running",
                       "the job to run")
            code, table, err = server.cli("queue", "--summary")
            assert code == EXIT_OK and table.startswith("TEAM"), (table, err)
            capsys.readouterr()
            magics = SchedMagics(None, client_factory=lambda: SchedClient(Connection(server.url, token=server.token)))
            assert magics.schedule("queue --summary") is None
            said = capsys.readouterr().out
            # the same table (its OLDEST WAIT column may have moved on by a second)
            assert said.splitlines()[0] == table.splitlines()[0] and said.splitlines()[-1] == table.splitlines()[-1], said
            assert said.splitlines()[1].split()[:2] == table.splitlines()[1].split()[:2], said
            server.cli("cancel", made.json()["id"])
        finally:
            server.terminate()


@pytest.mark.parametrize(("typed", "flag", "file"), [
    (["--notebook", "x.ipynb"], "--notebook", "x.ipynb"),
    (["--notebook=y.ipynb"], "--notebook", "y.ipynb"),
    (["--script", "t.py"], "--script", "t.py"),
])
def test_newuser25_nit_n4_definitions_create_notebook_flag_says_the_file_comes_first(
        typed: list[str], flag: str, file: str, capsys: pytest.CaptureFixture[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--url", "http://127.0.0.1:1/", "definitions", "create", *typed, "--cron", "0 6 * * *"], out=out, err=err)
    said = err.getvalue() + capsys.readouterr().err
    assert code == 2, said
    assert said.strip() == (f"jupyter-sched definitions create: {flag}: not an option of jupyter-sched definitions "
                            f"create — the notebook or script is the first argument: jupyter-sched definitions create "
                            f"{file} --cron '0 6 * * *' … [usage_error]"), said


def test_newuser25_nit_n7_usage_on_a_single_lab_does_not_name_a_hub_setting() -> None:
    from jupyter_sched.cli.admin_views import no_prices_said

    lab = no_prices_said({"features": {"hub": False}})
    assert lab == ("COST: none, no prices are set here (GPU prices are a JupyterHub setting; a single jupyter lab "
                   "has none)") and "c.HubSchedApp" not in lab
    assert no_prices_said({"features": {"hub": True}}) == "COST: none, no prices are set (c.HubSchedApp.gpu_prices)"
    assert no_prices_said({}) == "COST: none, no prices are set (c.HubSchedApp.gpu_prices)"  # an older server
