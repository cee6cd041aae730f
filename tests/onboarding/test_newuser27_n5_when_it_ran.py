"""newuser27 N5: a finished job never said *when* it ran: ``jupyter-sched jobs`` (its detail line),
``status JOB`` and the magics (``job_line``) said how it ended and nothing of its start or end, only
``--json`` had the times. Now: ``ended 22:11 UTC (ran 4m02s)``, by the one clock and duration renderer."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from jupyter_sched.wording.jobs import ended_text, job_detail, job_line

NOW = datetime(2026, 12, 5, 22, 30, tzinfo=timezone.utc)
DONE = {"id": "j-1", "name": "hist-40", "state": "succeeded", "exit_code": 0, "kind": "training",
        "started_at": "2026-12-05T22:07:00Z", "finished_at": "2026-12-05T22:11:02Z"}


def test_newuser27_n5_a_finished_job_says_when_it_ended_and_how_long_it_ran() -> None:
    assert ended_text(DONE, NOW) == "ended 22:11 UTC (ran 4m02s)"
    assert job_line(DONE, NOW) == "job j-1 (hist-40): succeeded, exit code 0 · ended 22:11 UTC (ran 4m02s)"
    assert job_detail(DONE, NOW) == "exit code 0 · ended 22:11 UTC (ran 4m02s)"
    failed = {**DONE, "state": "failed", "exit_code": 1, "message": "exited with code 1; last lines: boom"}
    assert job_line(failed, NOW) == ("job j-1 (hist-40): failed, exit code 1 · ended 22:11 UTC (ran 4m02s) — "
                                     "last lines: boom")
    # cancelled before it started: when, no run time; another day: its date
    never = {**DONE, "state": "cancelled", "exit_code": None, "started_at": None, "finished_at": "2026-12-04T09:00:00Z"}
    assert ended_text(never, NOW) == "ended Dec 4 09:00 UTC"
    assert ended_text({**DONE, "finished_at": None}, NOW) == ""


def test_newuser27_n3_a_release_says_the_hold_time_as_a_clock() -> None:
    from jupyter_sched.wording.jobs import changed_line

    job = {"id": "j-1", "name": "train", "changed": ["released (held by root since 2026-12-05T22:14:15Z): it queues "
                                                     "again from now, behind work submitted while it was held"]}
    assert changed_line(job, NOW) == ("j-1 (train): released (held by root since 22:14 UTC): it queues again from "
                                      "now, behind work submitted while it was held")


def test_newuser27_n7_a_dry_run_of_a_job_without_gpus_says_no_gpus() -> None:
    from jupyter_sched.wording.jobs import dryrun_line

    assert dryrun_line({"fits": True, "allocation": {"node": "vm", "gpu_uuids": []}}, NOW) == \
        "Would start now on vm (no GPUs)"
    assert dryrun_line({"fits": True, "allocation": {"node": "vm", "gpu_uuids": ["GPU-a"]}}, NOW) == \
        "Would start now on vm: GPU-a"


@pytest.mark.parametrize("command", ["status", "jobs", "queue", "usage"])
def test_newuser27_n6_each_commands_help_lists_json(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.cli.main import main

    try:
        main([command, "--help"])
    except SystemExit:
        pass
    said = " ".join(capsys.readouterr().out.split())
    assert "--json print the server's JSON instead of lines and tables (also before the command)" in said, said


def test_newuser27_n8_the_readme_names_the_panels_menu_item_as_it_reads() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    labels = set(re.findall(r"trans\.__\('(Run on GPUs[^']*)'\)", (root / "labextension/src/index.ts").read_text()))
    assert labels == {"Run on GPUs", "Run on GPUs…"}, labels
    named = set(re.findall(r'"(Run on GPU[^"]*)"', readme))
    assert named and named <= {label.rstrip("…") for label in labels}, named


def test_newuser27_n10_a_number_for_a_text_parameter_says_how_to_pass_text() -> None:
    from jupyter_sched.definitions.parameters import parameters_note

    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "region = 'eu'\ndays = 7\n"}]}
    said = parameters_note(nb, {"region": 1.1}, "daily.ipynb")
    assert said == ("region is 'eu' (str) in daily.ipynb's parameters cell; the value given, 1.1, is a float, and the "
                    "notebook gets it as it is. To pass it as text, quote it as a JSON string: -p 'region=\"…\"'."), said
    assert "JSON string" not in parameters_note(nb, {"days": "abc"}, "daily.ipynb")
