"""New user 9's findings on the CLI (/work/coord/notes/newuser9.md), each its own test, against a
real embedded server (simulated GPUs) and the installed ``jupyter-sched`` command."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.commands import default_name
from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.wording import cancel_outcome
from jupyter_sched.wording.jobs import ends_by
from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
_STUBBORN = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(300)\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu9"), users=USERS, admin_users=["boss"], stop_grace_s=30,
                               simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)  # jobs outlive a killed server by design: stop this module's before killing it
        srv.kill()


def _env(tmp_path: Path, server: EmbeddedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT),
                "JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann"})
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def _stopping_job(env: dict[str, str], ann: httpx.Client, tmp_path: Path) -> dict[str, Any]:
    """A running job with a 10m time limit that ignores SIGTERM, cancelled once: in its stop's grace."""
    (tmp_path / "stubborn.py").write_text(_STUBBORN)
    made = _cli(env, "submit", "--gpus", "1", "--time-limit", "10m", "--name", "stubborn", "--workdir",
                str(tmp_path), "--", sys.executable, "stubborn.py")
    assert made.returncode == EXIT_OK, made.stderr
    job_id = made.stdout.split()[1].rstrip(":")
    deadline = time.monotonic() + 60
    while ann.get(f"jobs/{job_id}").json()["state"] != "running" or "up" not in ann.get(f"jobs/{job_id}/logs").text:
        assert time.monotonic() < deadline, ann.get(f"jobs/{job_id}").json()
        time.sleep(0.2)
    cancelled = _cli(env, "cancel", job_id)
    assert cancelled.returncode == EXIT_OK and "stopping" in cancelled.stdout, cancelled.stdout + cancelled.stderr
    while not ann.get(f"jobs/{job_id}").json().get("stopping_since"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    row: dict[str, Any] = ann.get(f"jobs/{job_id}").json()
    assert row["stop_requested"]["kill_at"], row
    return row


def test_newuser9_stopping_lines_say_the_stop_not_the_time_limit(server: EmbeddedServer, tmp_path: Path) -> None:
    """A stopping job's ``queue`` line said "ends by 07:42 UTC (in 8m59s), its 10m time limit" and its
    ``jobs`` line said "killed at … if still running" and "ends by … its time limit" both."""
    env, ann = _env(tmp_path, server), api(server, "tok-ann")
    try:
        row = _stopping_job(env, ann, tmp_path)
        job_id, kill = row["id"], row["stop_requested"]["kill_at"][11:19]
        for command in ("queue", "jobs"):
            said = _cli(env, command)
            assert said.returncode == EXIT_OK, said.stderr
            lines = said.stdout.splitlines()
            (at,) = [i for i, line in enumerate(lines) if line.startswith(job_id)]
            shown = lines[at] + "\n" + lines[at + 1]  # the row and its detail line
            assert " stopping " in lines[at], said.stdout
            assert f"killed at {kill} UTC" in shown, said.stdout
            assert "time limit" not in shown and "ends by" not in shown, said.stdout
        # the magics' queue table takes its ETA column from the same words
        now = datetime.now(timezone.utc)
        assert ends_by(row, now).startswith("cancel requested by ann at ")
        assert ends_by(row, now).endswith(f"killed at {kill} UTC if still running")
        assert ends_by({**row, "stopping_since": None, "stop_requested": None}, now).startswith("ends by ")
    finally:
        clear(server)


def test_newuser9_cancel_of_a_stopping_job_says_it_is_already_stopping(server: EmbeddedServer,
                                                                         tmp_path: Path) -> None:
    """``cancel J`` a second time said "cancelled J (was running; stopping, grace 10 s)": it was
    already stopping (since the first cancel), to be killed at a time the first cancel set."""
    env, ann = _env(tmp_path, server), api(server, "tok-ann")
    try:
        row = _stopping_job(env, ann, tmp_path)
        job_id, kill = row["id"], row["stop_requested"]["kill_at"][11:19]
        again = _cli(env, "cancel", job_id)
        assert again.returncode == EXIT_OK, again.stderr
        said = again.stdout.strip()
        assert said.startswith(f"cancel of {job_id}: it is already stopping (cancel requested by ann at "), said
        assert said.endswith(f"killed at {kill} UTC if still running)"), said
        assert "was running" not in said and "cancelled" not in said, said
    finally:
        clear(server)
    # a first cancel's words are unchanged
    first = cancel_outcome({"id": "j-1", "state": "running"}, {"id": "j-1", "state": "running"}, grace_s=10)
    assert first == "cancelled j-1 (was running; stopping, grace 10 s)"


def test_newuser9_mem_per_gpu_bare_number_is_noted_as_mib(server: EmbeddedServer, tmp_path: Path) -> None:
    """``--mem-per-gpu 20`` was taken as 20 MiB (a bare number is MiB, as REST documents) and said
    nowhere; a data scientist meant 20 GiB. The server's answer notes it, so CLI, magics and REST say
    the same; 40960 (a plausible MiB figure) and 20GiB get no note. (With a GPU: on a job asking for
    none, mem_per_gpu is refused — new user 14, N21.)"""
    env = _env(tmp_path, server)
    note = "mem_per_gpu 20 is read as 20 MiB (a bare number is MiB): for GiB per GPU give the unit, e.g. 20GiB"
    try:
        bare = _cli(env, "submit", "--gpus", "1", "--mem-per-gpu", "20", "--workdir", str(tmp_path), "--", "true")
        assert bare.returncode == EXIT_OK, bare.stderr
        assert f"jupyter-sched submit: note: {note}" in bare.stderr, bare.stderr
        for fine in ("20GiB", "40960"):
            said = _cli(env, "submit", "--gpus", "1", "--mem-per-gpu", fine, "--workdir", str(tmp_path), "--", "true")
            assert said.returncode == EXIT_OK and "mem_per_gpu" not in said.stderr, said.stderr
        rest = api(server, "tok-ann").post("jobs", json={"gpus": 1, "mem_per_gpu": 20, "command": ["true"]})
        assert rest.status_code in (200, 201) and note in rest.json()["warnings"], rest.text
    finally:
        clear(server)


def test_newuser9_a_job_is_named_after_its_script(server: EmbeddedServer, tmp_path: Path) -> None:
    """``jupyter-sched submit -- python train.py`` was named "job" (a ``jobs`` table full of "job"); the
    magics name a job after its script's stem, and so does the CLI now."""
    assert default_name({"command": ["python", "train.py"]}) == "train"
    assert default_name({"command": ["python", "-u", "src/train.py", "--lr", "0.1"]}) == "train"
    assert default_name({"command": ["python", "-m", "pkg.train"]}) == "pkg.train"
    assert default_name({"command": ["/usr/bin/nvidia-smi"]}) == "nvidia-smi"
    assert default_name({"script": "a/eval.py"}) == "eval" and default_name({"notebook": "r.ipynb"}) == "r"
    env = _env(tmp_path, server)
    (tmp_path / "train.py").write_text("print('ok')\n")
    try:
        made = _cli(env, "submit", "--gpus", "0", "--workdir", str(tmp_path), "--", "python", "train.py")
        assert made.returncode == EXIT_OK, made.stderr
        job_id = made.stdout.split()[1].rstrip(":")
        assert api(server, "tok-ann").get(f"jobs/{job_id}").json()["name"] == "train"
        named = _cli(env, "submit", "--gpus", "0", "--name", "mine", "--workdir", str(tmp_path), "--", "python",
                     "train.py")
        assert api(server, "tok-ann").get(f"jobs/{named.stdout.split()[1].rstrip(':')}").json()["name"] == "mine"
    finally:
        clear(server)


def test_newuser9_a_job_name_where_an_id_goes_is_not_called_hidden(server: EmbeddedServer, tmp_path: Path) -> None:
    """``%schedule logs cellA`` (the job's ``--name``) said "no job 'cellA' visible to you", as if the
    job existed but was hidden; a name is not an id. An id that is not there keeps its words."""
    ann = api(server, "tok-ann")
    named = ann.get("jobs/cellA/logs")
    assert named.status_code == 404, named.text
    # the route takes ids; the CLI and the magics also take a name of the caller's own (new user 11, N2)
    assert named.json()["error"]["message"] == "no job has the id 'cellA': this route takes an id (j-…, leases l-…), not a name"
    said = _cli(_env(tmp_path, server), "logs", "cellA")
    assert said.returncode != EXIT_OK and "none of your jobs is named 'cellA', and no job has that id" in said.stderr, \
        said.stderr
    assert "visible to you" not in said.stderr, said.stderr
    assert ann.get("jobs/j-nosuch").json()["error"]["message"] == "no job 'j-nosuch' visible to you"


@pytest.mark.parametrize(("body", "field", "words"), [
    pytest.param({"command": [""]}, "command", "command[0] is empty: it names the program to run", id="empty-program"),
    pytest.param({"command": ["  ", "x"]}, "command", "command[0] is empty", id="blank-program"),
    pytest.param({"resources": {"gpus": 1}, "gpus": 2, "command": ["true"]}, "gpus",
                 "gpus is given twice, as 2 and as resources.gpus 1", id="gpus-twice"),
])
def test_newuser9_rest_refuses_an_empty_program_and_a_field_given_twice(server: EmbeddedServer, body: dict[str, Any],
                                                                        field: str, words: str) -> None:
    """``{"command": [""]}`` was 201, then failed "permission denied … chmod +x" (nothing to chmod);
    ``{"resources": {"gpus": 1}, "gpus": 2}`` was 201 with 2 GPUs, one of the two silently dropped."""
    answer = api(server, "tok-ann").post("jobs", json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["field"] == field and error["message"].startswith(words), answer.text
    assert error["hint"], answer.text
    same = api(server, "tok-ann").post("jobs", json={"resources": {"gpus": 0}, "gpus": 0, "command": ["true"]})
    assert same.status_code in (200, 201), same.text  # the same value twice is no conflict
    clear(server)


def test_newuser9_a_value_starting_with_a_dash_is_shown_how_to_pass(tmp_path: Path) -> None:
    """``--time-limit -5m`` (a space, not "=") was argparse's bare "expected one argument"; the CLI and
    the magics now say how to pass such a value (``--time-limit=-5m`` gets the real refusal)."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.magics.parsing import parse_schedule_line

    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"PYTHONPATH": str(ROOT), "JUPYTER_SCHED_URL": "http://127.0.0.1:9/"})
    said = _cli(env, "submit", "--time-limit", "-5m", "--", "true")
    hint = "--time-limit: must not be negative (got -5m)"  # at once, not "join it" (newuser23 N1)
    assert said.returncode == 2 and said.stderr.strip().endswith(f"{hint} — e.g. --time-limit 30m [usage_error]"), \
        said.stderr
    with pytest.raises(ValidationError) as magic:
        parse_schedule_line("--time-limit -5m", cell=True)
    assert hint in magic.value.message and magic.value.field == "--time-limit", magic.value.message


@pytest.mark.parametrize("key", ["JUPYTER_SCHED_DB_URL", "JUPYTER_SCHED_HUB_URL",
                                 "JUPYTER_SCHED_JOB_MARKER", "JUPYTERHUB_USER", "JPY_API_TOKEN"])
def test_newuser9_env_may_not_set_the_schedulers_or_the_hubs_own_variables(server: EmbeddedServer, key: str) -> None:
    """In hub mode ``env`` JUPYTER_SCHED_DB_URL / JUPYTERHUB_USER=<another user> /
    JUPYTER_SCHED_JOB_MARKER were 201, silently (the marker silently replaced): refused, naming
    ``env.<KEY>``, and audited; the variables the executor sets from the allocation keep their note."""
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    refused = ann.post("jobs", json={"gpus": 0, "command": ["true"], "env": {"SEED": "1", key: "x"}})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == f"env.{key}" and key in error["message"] and error["hint"], error
    deadline = time.monotonic() + 15  # the refusal's audit record may land just after the answer
    while True:
        audited = boss.get("audit", params={"user": "ann", "limit": 1000}).json()
        if any((r.get("details") or {}).get("field") == f"env.{key}" for r in audited):
            break
        assert time.monotonic() < deadline, audited
        time.sleep(0.2)
    # one rule for JUPYTER_SCHED_* (new user 11, N9): only the client's connection passes; JOB_ID is refused
    # like the rest now (it was accepted with a note), CUDA_DEVICE_ORDER keeps its note (CUDA_VISIBLE_DEVICES
    # is refused since red team 15, R1)
    replaced = ann.post("jobs", json={"gpus": 0, "command": ["true"], "env": {
        "CUDA_DEVICE_ORDER": "FASTEST_FIRST", "JUPYTER_SCHED_URL": "http://x/", "JUPYTER_SCHED_TOKEN": "t"}})  # the client's own
    assert replaced.status_code in (200, 201), replaced.text
    assert any("CUDA_DEVICE_ORDER is set by the scheduler" in w for w in replaced.json()["warnings"]), replaced.text
    clear(server)
