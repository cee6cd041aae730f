"""Session 32, s32-words: one wording per thing on the panel, the magics and the CLI (newuser31 n15, n13,
n12 and n7's addendum nit).

Real parts: the application services on a SQLite store with a manual clock, the magics' own file check
(the working directory is a real folder), the CLI's log-note reader fed the service's answers. The
panel's half of each is in labextension/test/s32_words.test.ts; the CLI's against a real server in
tests/onboarding/test_cli_firsthour.py (``test_newuser31_n15_*``, ``test_newuser31_n13_*``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.client._wire import new_notes
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.core import MagicError, SchedMagics
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetJobLogsRequest, SubmitJobRequest
from jupyter_sched.services.models.jobs import ReportProgressRequest, UpdateJobRequest
from jupyter_sched.store import JobRecord
from jupyter_sched.wording.files import PANEL_NOT_EXECUTABLE_FIX, PANEL_PATH_FIX, path_fix
from tests.runtime.builders import T0, make_job

ANA = Caller(user="ana", teams=("default",))
MISSING_FIX = "give the path of the script to run, or check the spelling"


@pytest.fixture
def in_folder(tmp_path: Path) -> Iterator[Path]:
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


# ---- n15: a missing script, said one way ----------------------------------------------------------------------

def test_newuser31_n15_the_magics_say_a_missing_script_by_its_kind_and_the_clis_fix(in_folder: Path) -> None:
    # before: "SCRIPT 'missing.py': no such file in …. Give the path of an existing script." (a usage-line word)
    with pytest.raises(MagicError) as said:
        SchedMagics._existing("missing.py", "script")
    assert str(said.value) == f"script 'missing.py' does not exist in {in_folder}. Give the path of the script to " \
                              "run, or check the spelling.", str(said.value)
    (in_folder / "work.ipynb").mkdir()  # the other problems of the kind: a folder where a file was meant
    with pytest.raises(MagicError) as folder:
        SchedMagics._existing("work.ipynb", "notebook")
    assert str(folder.value) == (f"notebook 'work.ipynb' {in_folder / 'work.ipynb'} is a folder, not a file. Give "
                                 "the path of the notebook file itself."), str(folder.value)
    (in_folder / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")  # what it holds: REST's words, no SCRIPT
    with pytest.raises(MagicError) as content:
        SchedMagics._existing("passwd", "script")
    assert str(content.value).startswith("script 'passwd' is not a Python script: line 1"), str(content.value)


def test_newuser31_n15_the_server_says_a_missing_script_as_the_magics_do_with_each_surfaces_fix(
        services: Services, tmp_path: Path) -> None:
    # `-- python missing.py` (the CLI): before, "command: 'missing.py' does not exist in …" with a hint of its own
    with pytest.raises(ValidationError) as typed:
        services.jobs.submit(services.caller("ana", admin=False), SubmitJobRequest(gpus=0, command=["python3", "missing.py"],
                                                   working_dir=str(tmp_path)))
    err = typed.value
    assert err.field == "command" and err.message == (f"script 'missing.py' does not exist in {tmp_path} (the job's "
                                                      "working directory)"), err.message
    assert err.hint == MISSING_FIX == path_fix("script", "does not exist", "magics")
    # the panel's Script field: the same head, and the form's own fix beside REST's (it cannot send `source`)
    with pytest.raises(ValidationError) as form:
        services.jobs.submit(services.caller("ana", admin=False), SubmitJobRequest(gpus=0, script=str(tmp_path / "nope.py")))
    err = form.value
    assert err.message == f"script '{tmp_path / 'nope.py'}' does not exist on this server", err.message
    assert err.details["fixes"] == {"cli": MISSING_FIX, "magics": MISSING_FIX, "panel": PANEL_PATH_FIX}
    (tmp_path / "dir.py").mkdir()
    with pytest.raises(ValidationError) as folder:
        services.jobs.submit(services.caller("ana", admin=False), SubmitJobRequest(gpus=0, script=str(tmp_path / "dir.py")))
    assert folder.value.details["fixes"]["magics"] == "give the path of the script file itself", folder.value.details


def test_newuser31_n15_a_program_that_cannot_run_carries_the_forms_fix_too(services: Services, tmp_path: Path) -> None:
    # the kind: a program not executable, or missing (the panel sends any other file as a command's program)
    program = tmp_path / "data.txt"
    program.write_text("not a program\n")
    program.chmod(0o644)
    ana = services.caller("ana", admin=False)
    with pytest.raises(ValidationError) as info:
        services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=[str(program)]))
    assert info.value.details == {"fixes": {"panel": PANEL_NOT_EXECUTABLE_FIX}, "rule": "not_executable"}
    with pytest.raises(ValidationError) as gone:
        services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=[str(tmp_path / "gone.sh")]))
    assert gone.value.details == {"fixes": {"panel": PANEL_PATH_FIX}}, gone.value.details


def test_newuser31_n15_the_panels_fallback_words_are_the_renderers() -> None:
    """The panel keeps the renderer's words for a server that sends no ``details.fixes`` (an older one): the same."""
    source = (Path(__file__).resolve().parents[2] / "labextension/src/sections/submit.tsx").read_text()
    assert f"const PATH_HINT = '{PANEL_PATH_FIX}';" in source
    assert f"const NOT_EXECUTABLE_HINT = '{PANEL_NOT_EXECUTABLE_FIX}';" in source


# ---- n13: a dry run carries its submit's notes ----------------------------------------------------------------

def test_newuser31_n13_a_dry_run_carries_the_notes_its_submit_gives(services: Services) -> None:
    ana = services.caller("ana", admin=False)
    request = SubmitJobRequest(gpus=1, memory="64", time_limit="90", command=["true"])
    checked = services.jobs.dryrun(ana, request)  # before: no notes at all (only Submit said them)
    assert checked.fits, checked
    submitted = services.jobs.submit(ana, request)
    assert checked.warnings == submitted.warnings and checked.warnings, (checked.warnings, submitted.warnings)
    assert any(w.startswith("memory 64 is read as 64 MiB") for w in checked.warnings), checked.warnings
    assert any(w.startswith("time_limit 90 is 90 seconds") for w in checked.warnings), checked.warnings
    assert checked.to_wire()["warnings"] == checked.warnings
    bare = services.jobs.dryrun(ana, SubmitJobRequest(gpus=1, time_limit="2h", command=["true"]))
    assert bare.warnings == [], bare.warnings


# ---- n12: the pace note, in the past tense once its run is over ----------------------------------------------

def test_newuser31_n12_the_pace_note_reads_in_the_past_tense_after_the_end_and_is_shown_once(
        services: Services) -> None:
    job = make_job("j-slowpoke", state=JobState.RUNNING, allocation=Allocation(node="vm", gpu_uuids=("GPU-vm-0",)),
                   time_limit_s=60)
    services.store.insert_job(JobRecord(job=replace(job, started_at=T0)))
    services.ctx.clock.set(T0 + timedelta(seconds=33))  # type: ignore[attr-defined]
    services.progress.report(ANA, "j-slowpoke", ReportProgressRequest(done=16, total=100))
    live = services.jobs.logs(ANA, "j-slowpoke", GetJobLogsRequest()).model_dump()
    assert [n["text"] for n in live["notes"]] == [
        "jupyter_sched: at this pace (16 % done after 33s) the job needs ~3m26s in all; its 1m time limit stops it at "
        "12:01 UTC"], live["notes"]
    with services.store.transaction() as tx:  # stopped at its limit
        row = tx.get_job("j-slowpoke")
        assert row is not None
        tx.update_job(replace(row, job=replace(row.job, state=JobState.FAILED, finished_at=T0 + timedelta(seconds=60))))
    services.ctx.clock.set(T0 + timedelta(seconds=90))  # type: ignore[attr-defined]
    after = services.jobs.logs(ANA, "j-slowpoke", GetJobLogsRequest()).model_dump()
    assert [n["text"] for n in after["notes"]] == [
        "jupyter_sched: at 12:00:33 UTC its pace (16 % done after 33s) said the job needed ~3m26s in all; its 1m time "
        "limit was to stop it at 12:01 UTC"], after["notes"]
    assert after["notes"][0]["at"] == live["notes"][0]["at"]
    said: set[tuple[str, str]] = set()  # `logs -f` showed it live: the past-tense words are not a second note
    assert len(new_notes(live, said)) == 1 and new_notes(after, said) == []
    assert len(new_notes(after, set())) == 1  # a reader after the end gets it once, in the past tense


# ---- n7 addendum: a PATCH's bad priority, in the submit's words ------------------------------------------------

def test_newuser31_n7_an_update_to_no_class_is_refused_in_the_submits_words() -> None:
    # before: "priority must be 'high', 'normal' or 'low' (got 'urgent')", hinted 'e.g. "normal"'
    with pytest.raises(ValidationError) as refused:
        UpdateJobRequest.model_validate({"priority": "urgent"})
    assert refused.value.message == "priority must be high, normal or low (got 'urgent')", refused.value.message
    assert refused.value.hint == "e.g. priority low to let other work go first; high needs an admin's grant"
    assert UpdateJobRequest.model_validate({"priority": " High "}).priority == "high"
