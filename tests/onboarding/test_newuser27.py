"""New user 27 (session 27's first hour), the findings s27-nu fixed; each test fails before its fix.

- N2: a job got the *server's* PATH, not the submitter's: after ``source .venv/bin/activate``,
  ``submit -- ./run.sh`` whose script calls ``python`` ran another Python (pyenv's, without the venv's
  packages), with no note; its ``PWD`` was the server's folder. The CLI (and the magics) now send the
  submitter's PATH, VIRTUAL_ENV and CONDA_PREFIX with a job that runs on this machine (``--env PATH=…``
  given is kept), say so once, and the job's PWD is the folder it starts in.

Real parts: the installed ``jupyter-sched`` entry point in a subprocess against an embedded server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu27", USERS)


def cli(server: EmbeddedServer, env: dict[str, str], cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "VIRTUAL_ENV", "CONDA_PREFIX"))}
    full.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT), **env})
    return subprocess.run([CLI, *argv], env=full, cwd=cwd, capture_output=True, text=True, timeout=180)


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    """A folder standing for an activated venv (its bin/python, a marker its python prints) and a
    project folder with run.sh, whose `python` is what the PATH finds."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"
    fake.write_text("#!/bin/sh\necho \"venv python ran\"\n", encoding="utf-8")
    fake.chmod(0o755)
    proj = tmp_path / "proj"
    proj.mkdir()
    script = proj / "run.sh"
    script.write_text("#!/bin/sh\necho \"python is $(command -v python)\"\npython\n"
                      "echo \"PWD=$PWD VIRTUAL_ENV=$VIRTUAL_ENV\"\n"
                      "exec /usr/bin/env sh -c 'echo envPWD=$PWD'\n", encoding="utf-8")
    script.chmod(0o755)
    return venv, proj


def test_newuser27_n2_a_launcher_script_runs_with_the_submitters_path_and_says_so(
        server: EmbeddedServer, tmp_path: Path) -> None:
    venv, proj = _venv(tmp_path)
    env = {"PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(venv)}
    done = cli(server, env, proj, "submit", "--gpus", "0", "--time-limit", "1m", "--name", "n2run", "--wait", "--",
               "./run.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    note = " ".join(done.stderr.split())
    assert f"note: runs with your PATH ({venv / 'bin'} first) and VIRTUAL_ENV; --env PATH=… gives it another" in note, \
        note
    assert note.count("runs with your PATH") == 1, note
    logs = cli(server, {}, proj, "logs", "n2run").stdout
    assert f"python is {venv / 'bin' / 'python'}" in logs, logs
    assert "venv python ran" in logs, logs
    assert f"VIRTUAL_ENV={venv}" in logs, logs
    # the folder it starts in, for a program that reads PWD without a shell resetting it
    assert f"envPWD={proj}" in logs, logs


def test_newuser27_n2_a_path_the_user_gives_is_kept(server: EmbeddedServer, tmp_path: Path) -> None:
    venv, proj = _venv(tmp_path)
    env = {"PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}"}
    given = "/usr/local/bin:/usr/bin:/bin"
    done = cli(server, env, proj, "--json", "submit", "--gpus", "0", "--dry-run", "--env", f"PATH={given}",
               "--", "./run.sh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "runs with your PATH" not in done.stderr, done.stderr
    job = cli(server, env, proj, "--json", "submit", "--gpus", "0", "--env", f"PATH={given}", "--", "./run.sh")
    assert json.loads(job.stdout)["env"]["PATH"] == given, job.stdout


def test_newuser27_n2_the_submitter_env_bounds_and_words() -> None:
    from jupyter_sched.client.submitter_env import submitter_env, submitter_note
    from jupyter_sched.model.validation import MAX_ENV_VALUE_CHARS

    sent, too_long = submitter_env({"PATH": "/v/bin:/usr/bin", "CONDA_PREFIX": "/c", "VIRTUAL_ENV": ""}, {})
    assert sent == {"PATH": "/v/bin:/usr/bin", "CONDA_PREFIX": "/c"} and too_long == []
    assert submitter_note(sent, too_long) == "runs with your PATH (/v/bin first) and CONDA_PREFIX; --env PATH=… gives it another"
    sent, too_long = submitter_env({"PATH": "x" * (MAX_ENV_VALUE_CHARS + 1)}, {})
    assert sent == {} and too_long == ["PATH"]
    assert "PATH not passed: longer than the server takes" in submitter_note(sent, too_long)
    assert submitter_env({"PATH": "/v/bin"}, {"PATH": "/mine"}) == ({}, [])


def test_newuser27_n2_a_cell_job_gets_the_kernels_path_and_n1_the_magics_own_variables_are_not_named(
        server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``%%schedule`` sends this kernel's PATH (a cell calling ``subprocess.run(['python', …])`` runs the
    kernel's environment's python); n1: ``%gpu request`` + ``%gpu release`` set JUPYTER_SCHED_GPU_MILLI in the
    kernel, and the cell's note named it as a variable the user set."""
    from tests.onboarding.test_newuser11 import _magics

    venv, proj = _venv(tmp_path)
    here = os.getcwd()
    os.chdir(proj)
    try:
        magics = _magics(server)
        monkeypatch.setenv("PATH", f"{venv / 'bin'}:{os.environ.get('PATH', '')}")
        monkeypatch.setenv("JUPYTER_SCHED_GPU_MILLI", "1000")  # as %gpu request sets it
        job_id = magics.schedule("--gpus 0 --time-limit 2m --name n2cell",
                                 "import subprocess; subprocess.run(['python'], check=True)\n")
        said = " ".join(capsys.readouterr().out.split())
    finally:
        os.chdir(here)
    assert f"Runs with this kernel's PATH ({venv / 'bin'} first); --env PATH=… gives it another." in said, said
    assert "JUPYTER_SCHED_GPU_MILLI" not in said and "not passed: PATH" not in said, said
    from tests.onboarding.test_cli_firsthour import api, wait_state

    assert wait_state(server, "tok-ann", job_id, "succeeded", "failed")["state"] == "succeeded"
    assert "venv python ran" in api(server, "tok-ann").get(f"jobs/{job_id}/logs").json()["text"]


def test_newuser27_n7_the_callers_zone_is_read_from_tz_else_etc_localtime(tmp_path: Path) -> None:
    from jupyter_sched.client.local_zone import local_zone

    assert local_zone({"TZ": "Europe/Berlin"}) == ("Europe/Berlin", "TZ")
    assert local_zone({"TZ": ":Asia/Kolkata"}) == ("Asia/Kolkata", "TZ")
    assert local_zone({"TZ": "CET-1CEST"}) is None and local_zone({"TZ": "Etc/UTC"}) is None
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/America/New_York")
    assert local_zone({}, str(link)) == ("America/New_York", str(link))
    utc = tmp_path / "utc"
    utc.symlink_to("/usr/share/zoneinfo/Etc/UTC")
    assert local_zone({}, str(utc)) is None and local_zone({}, str(tmp_path / "none")) is None


def test_newuser27_n7_a_definitions_cron_is_read_in_the_shells_zone_and_said(server: EmbeddedServer,
                                                                             tmp_path: Path) -> None:
    notebook = tmp_path / "params.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    made = cli(server, {"TZ": "Europe/Berlin"}, tmp_path, "definitions", "create", str(notebook), "--cron", "0 9 * * *",
               "--name", "berlin9", "--gpus", "0")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "(Europe/Berlin)" in made.stdout, made.stdout
    assert ("definitions create: note: the schedule is read in your time zone, Europe/Berlin (from TZ): --tz UTC "
            "reads it in UTC") in made.stderr, made.stderr
    given = cli(server, {"TZ": "Europe/Berlin"}, tmp_path, "definitions", "create", str(notebook), "--cron",
                "0 9 * * *", "--name", "utc9", "--gpus", "0", "--tz", "UTC")
    assert given.returncode == 0 and "(UTC)" in given.stdout and "your time zone" not in given.stderr, given


def test_newuser27_n7_the_magic_reads_the_kernels_zone(server: EmbeddedServer, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from tests.onboarding.test_newuser11 import _magics

    notebook = tmp_path / "magicdef.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    monkeypatch.setenv("TZ", "Europe/Berlin")
    _magics(server).schedule(f'define {notebook} --cron "0 9 * * *" --gpus 0 --name magic9')
    said = " ".join(capsys.readouterr().out.split())
    assert "(Europe/Berlin)" in said and "Note: The schedule is read in your time zone, Europe/Berlin (from TZ)" in said, \
        said


def test_newuser27_n6_gpu_status_says_the_budget_as_status_does(server: EmbeddedServer, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``%gpu`` said "no limit" while a GPU-hour budget held every GPU request; ``jupyter-sched status`` said it."""
    import httpx

    from tests.onboarding.test_newuser11 import _magics

    admin = httpx.Client(base_url=server.api, headers={"Authorization": f"token {OWNER_TOKEN}"}, timeout=30)
    before = admin.get("quotas").json()
    put = admin.put("quotas", json={**before, "budgets": [{"team": "default", "gpu_hours": 5, "period": "day"}]})
    assert put.status_code == 200, put.text
    try:
        _magics(server).gpu("")
        said = capsys.readouterr().out
        status = cli(server, {}, tmp_path, "status").stdout
    finally:
        admin.put("quotas", json=before)
    line = next(line for line in status.splitlines() if line.startswith("budget"))[len("budget"):].strip()
    assert line.startswith("team default: 0 of 5 GPU-hours used today, resets "), status
    assert f"Budget: {line}" in said, said


def test_newuser27_n6_schedule_usage_is_the_clis_usage_as_a_dataframe(server: EmbeddedServer, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``%schedule usage`` was "unknown subcommand 'usage'"; the CLI has ``usage``, the panel a table."""
    from tests.onboarding.test_newuser11 import _magics

    done = cli(server, {}, tmp_path, "submit", "--gpus", "1", "--name", "n6use", "--wait", "--", "sleep", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    magics = _magics(server)
    frame = magics.schedule("usage")
    said = capsys.readouterr().out
    assert "ann's usage, in the last 7 days (since " in said, said
    assert list(frame.columns) == ["user", "gpu_hours", "utilized", "efficiency", "cost", "jobs"], frame
    row = frame[frame["user"] == "ann"].iloc[0]
    table = cli(server, {}, tmp_path, "usage").stdout
    cells = next(line.split() for line in table.splitlines() if line.startswith("ann "))
    assert float(cells[1]) == pytest.approx(row["gpu_hours"], abs=0.01) and int(cells[-1]) == row["jobs"] >= 1, table


def test_newuser31_n14_status_and_gpu_say_who_waits_for_my_gpus(server: EmbeddedServer, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """newuser31 n14 (on this module's server): ann holds both GPUs, boss's job waits for them; ann's ``status`` and
    ``%gpu`` say so — boss's name, never his job's (``never-shown``)."""
    import time

    from tests.onboarding.test_cli_firsthour import api, clear, wait_state
    from tests.onboarding.test_newuser11 import _magics

    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    try:
        held = ann.post("jobs", json={"gpus": 2, "name": "hold-both", "command": ["sleep", "300"], "time_limit": "10m"})
        assert held.status_code == 201, held.text
        wait_state(server, "tok-ann", held.json()["id"], "running")
        waits = boss.post("jobs", json={"gpus": 1, "name": "never-shown", "command": ["true"], "time_limit": "1m"})
        assert waits.status_code == 201, waits.text
        said = "1 job of another user (boss) waits for GPUs you hold"
        deadline = time.monotonic() + 60  # the next full cycle names ann's job as what boss's waits on
        while (ann.get("me").json().get("waiting_on_you") or {}).get("text") != said:
            assert time.monotonic() < deadline, ann.get("me").json()
            time.sleep(0.2)
        status = cli(server, {}, tmp_path, "status").stdout
        _magics(server).gpu("")
        magic = capsys.readouterr().out
    finally:
        clear(server)
    assert f"\n           {said}\n" in status and "never-shown" not in status, status
    assert f"Waiting on you: {said}." in magic and "never-shown" not in magic, magic


def test_newuser34_n3_a_spent_budgets_queue_says_the_plan_from_the_reset_on_rest_and_the_cli(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """Failed before: every job a spent budget held said "ETA … 00:00 UTC, when the day's budget resets", the last of
    four on two GPUs too. Now the first two say the reset; the last says its plan, "not before" the reset, behind 3."""
    import time

    import httpx

    admin = httpx.Client(base_url=server.api, headers={"Authorization": f"token {OWNER_TOKEN}"}, timeout=30)
    ann = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-ann"}, timeout=30)
    before = admin.get("quotas").json()
    put = admin.put("quotas", json={**before, "budgets": [{"team": "default", "gpu_hours": 0, "period": "day"}]})
    assert put.status_code == 200, put.text
    ids: list[str] = []
    try:
        for i in range(4):  # two GPUs: two start at the reset, two an hour later (their 1h limits)
            made = ann.post("jobs", json={"command": ["sleep", "1"], "gpus": 1, "time_limit": "1h", "name": f"n34b{i}"})
            assert made.status_code in (200, 201), made.text
            ids.append(made.json()["id"])
        deadline, last = time.monotonic() + 60, {}
        while time.monotonic() < deadline:  # until the engine has numbered the queue and projected the last one
            last = ann.get(f"jobs/{ids[-1]}").json()
            reason = last.get("reason") or {}
            code = (reason.get("details") or {}).get("eta_code")
            if reason.get("position") == 4 and code not in (None, "Provisional"):  # a full cycle's, not a live one's
                break
            time.sleep(0.2)
        eta = last["reason"]["text"]["eta"]
        assert "(when the day's budget resets), then behind 3 jobs queued ahead of it" in eta and "not before " in eta, \
            last["reason"]
        first = ann.get(f"jobs/{ids[0]}").json()["reason"]["text"]["eta"]
        assert first.endswith("when the day's budget resets") and "not before" not in first, first
        status = cli(server, {}, tmp_path, "status", ids[-1]).stdout
        assert "then behind 3 jobs queued ahead of it" in " ".join(status.split()), status
    finally:
        if ids:
            gone = ann.post("jobs/cancel", json={"ids": ids})
            assert gone.status_code == 200, gone.text
        admin.put("quotas", json=before)
