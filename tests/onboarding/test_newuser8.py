"""New user 8's findings on the CLI and the magics (/work/coord/notes/newuser8.md), each its own test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_NO_SERVER, EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line
from jupyter_sched.wording import job_line, state_word
from tests.accounts import os_accounts, shared_dir, skip_reason
from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]

# Runs as root until everything is imported, then takes the second account's effective ids (the
# venv's interpreter lives under /root, 0700, which that account could not start): every file
# check below is the kernel's and the CLI's own, with that account's permissions.
_AS_ACCOUNT = r"""
import contextlib, io, json, locale, os, sys
from IPython.core.interactiveshell import InteractiveShell
from jupyter_sched.cli.main import main
import jupyter_sched.cli.commands, jupyter_sched.magics.define  # imported lazily by their callers
from jupyter_sched.model.units import _zone_names
_zone_names()  # the CLI reads the zone list (importlib.resources) lazily: before the drop, /root may be 0700
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "jupyter_sched")
uid, gid, secret, private = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
os.setgroups([]); os.setegid(gid); os.seteuid(uid)
said = {}
for name, line in (("run", f"run {secret}/x.py --gpus 0"), ("notebook", f"notebook {secret}/s.ipynb --gpus 0"),
                   ("serve", f"serve {secret}/x.py --gpus 0 --port 18999"),
                   ("define", f"define {secret}/x.py --cron '0 7 * * *'"), ("file", f"run {private} --gpus 0")):
    try:
        shell.run_line_magic("schedule", line)
        said[name] = "accepted"
    except Exception as exc:
        said[name] = f"{type(exc).__name__}: {exc}"
for name, argv in (("cli-script", ["submit", "--gpus", "0", "--script", f"{secret}/x.py"]),
                   ("cli-notebook", ["submit", "--gpus", "0", "--notebook", f"{secret}/s.ipynb"]),
                   ("cli-define", ["definitions", "create", f"{secret}/s.ipynb", "--cron", "0 7 * * *"])):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            code = main(argv, out=io.StringIO(), err=err)
    except SystemExit as exc:
        code = exc.code
    said[name] = f"{code}|{err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ''}"
os.seteuid(0); os.setegid(0)  # back, for IPython's history at exit
print(json.dumps(said))
"""


@pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))
def test_newuser8_n7_a_path_the_user_may_not_read_is_one_usage_line_naming_the_cause() -> None:
    """N7: as a second account, a script in another account's 0700 folder was a PermissionError
    traceback from ``%schedule run|notebook|define`` and "no such file in /home/…" from the CLI."""
    with os_accounts(1) as (eve,), shared_dir() as shared:
        secret = shared / "secretdir"
        secret.mkdir(mode=0o700)
        (secret / "x.py").write_text("print('hi')\n")
        (secret / "s.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        private = shared / "private.py"  # the folder is open; the file is root's 0600
        private.write_text("print('secret')\n")
        private.chmod(0o600)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
        env.update({"PYTHONPATH": str(ROOT), "JUPYTER_SCHED_URL": "http://127.0.0.1:9/",
                    "IPYTHONDIR": str(shared / "ipython"), "HOME": eve.home})
        done = subprocess.run([sys.executable, "-c", _AS_ACCOUNT, str(eve.uid), str(eve.gid), str(secret),
                               str(private)], cwd=eve.home, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    denied = f"cannot be read by {eve.name} (permission denied on {secret})"
    # by its kind, as the CLI says it, not the usage line's SCRIPT (newuser31 n15)
    for name, what, path in (("run", "script", "x.py"), ("notebook", "notebook", "s.ipynb"),
                             ("serve", "script", "x.py"), ("define", "script", "x.py")):
        assert said[name].startswith(f"MagicError: {what} '{secret}/{path}' {denied}. Give a {what} this account "
                                     "can read, or ask its owner to share it."), said[name]
        assert "PermissionError" not in said[name] and "\n" not in said[name], said[name]
    assert said["file"].startswith(f"MagicError: script '{private}' cannot be read by {eve.name} "
                                   f"(permission denied on {private})."), said["file"]
    fix = "give a {} this account can read, or ask its owner to share it [usage_error]"
    assert said["cli-script"] == f"2|jupyter-sched submit: --script '{secret}/x.py' {denied} — {fix.format('script')}", said
    assert said["cli-notebook"] == (f"2|jupyter-sched submit: --notebook '{secret}/s.ipynb' {denied} — "
                                    f"{fix.format('notebook')}"), said
    assert said["cli-define"] == (f"2|jupyter-sched definitions create: notebook '{secret}/s.ipynb' {denied} — "
                                  f"{fix.format('notebook')}"), said
    assert eve.home not in json.dumps(said)  # was: "no such file in /home/<eve>" for an absolute path


# ---- against a real server -----------------------------------------------------------------------

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu8"), users=USERS, admin_users=["boss"], stop_grace_s=30,
                               simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)  # jobs outlive a killed server by design: stop this module's before killing it
        srv.kill()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A shell with no server to discover (an empty runtime dir) and only the variables given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT), **extra})
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def test_newuser8_n14_jupyter_sched_url_is_read_as_url_is_and_no_message_shows_a_token(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N14: ``JUPYTER_SCHED_URL=http://…/lab?token=T`` (what the discovery message says to set) got
    "/" appended after the query and failed as a redirect, with the whole token in the message."""
    pasted = _cli(_env(tmp_path, JUPYTER_SCHED_URL=f"{server.url}lab?token=tok-ann"), "status")
    assert pasted.returncode == EXIT_OK, pasted.stderr
    assert "tok-ann" not in pasted.stdout + pasted.stderr
    assert "note:" not in pasted.stderr  # the environment is not in `ps`: no --token note
    wrong = _cli(_env(tmp_path, JUPYTER_SCHED_URL=f"{server.url}lab?token=wrong-secret-77"), "status")
    assert wrong.returncode == EXIT_REFUSED and "refused the token in JUPYTER_SCHED_URL" in wrong.stderr, wrong.stderr
    assert "wrong-secret-77" not in wrong.stdout + wrong.stderr
    both = _cli(_env(tmp_path, JUPYTER_SCHED_URL=f"{server.url}lab?token=wrong-secret-77",
                     JUPYTER_SCHED_TOKEN="tok-ann"), "jobs")
    assert both.returncode == EXIT_OK, both.stderr  # JUPYTER_SCHED_TOKEN, set on purpose, wins over the URL's
    spaced = _cli(_env(tmp_path, JUPYTER_SCHED_URL=f"{server.url}lab?token=tok-ann x"), "status")
    assert spaced.returncode == EXIT_USAGE and "JUPYTER_SCHED_URL" in spaced.stderr, spaced.stderr
    assert "tok-ann" not in spaced.stderr and "token=…" in spaced.stderr, spaced.stderr
    flag = _cli(_env(tmp_path), "--url", f"{server.url}lab?token=tok-ann\tx", "status")
    assert flag.returncode == EXIT_USAGE and "tok-ann" not in flag.stderr, flag.stderr
    unreachable = _cli(_env(tmp_path, JUPYTER_SCHED_URL="http://127.0.0.1:9/lab?token=tok-ann"), "status")
    assert unreachable.returncode == EXIT_NO_SERVER and "http://127.0.0.1:9/" in unreachable.stderr
    assert "tok-ann" not in unreachable.stderr, unreachable.stderr


_KERNEL_LINES = r"""
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "jupyter_sched")
shell.run_line_magic("schedule", "run train.py --gpus 1 --env CUDA_DEVICE_ORDER=FASTEST_FIRST --name envtest --time-limit 1m")
print("=====", flush=True)
shell.run_cell_magic("schedule", "--gpus 1 --env CUDA_DEVICE_ORDER=FASTEST_FIRST --time-limit 1m", "print('cell')\n")
"""


def test_newuser8_n1_the_magics_print_the_submit_answers_warnings(server: EmbeddedServer, tmp_path: Path) -> None:
    """N1: ``%schedule run … --env CUDA_VISIBLE_DEVICES=0`` said only "Submitted …"; the CLI and REST
    said the value is not used (the answer's ``warnings``). An IPython shell as a notebook job's. (Red
    team 15, R1: CUDA_VISIBLE_DEVICES is refused now; CUDA_DEVICE_ORDER keeps the note.)"""
    (tmp_path / "train.py").write_text("print('trained')\n")
    env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann",
               IPYTHONDIR=str(tmp_path / "ipython"))
    try:
        done = subprocess.run([sys.executable, "-c", _KERNEL_LINES], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        run, cell = done.stdout.split("=====")
        note = "Note: env CUDA_DEVICE_ORDER is set by the scheduler from the job's allocation; the value given " \
               "is not used"
        for said in (run, cell):
            lines = said.strip().splitlines()
            assert lines[0].startswith("Submitted job j-") and note in lines[1:], said
        cli = _cli(_env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann"), "submit", "--gpus",
                   "1", "--env", "CUDA_DEVICE_ORDER=FASTEST_FIRST", "--time-limit", "1m", "--workdir", str(tmp_path), "--",
                   "python", "train.py")
        assert note.removeprefix("Note: ") in cli.stderr, cli.stderr  # the same words as the CLI's
    finally:
        clear(server)


_STUBBORN = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(300)\n"

_KERNEL_STATUS = r"""
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "jupyter_sched")
shell.run_line_magic("schedule", "status " + sys.argv[1])
"""


def test_newuser8_n13_work_in_its_cancel_grace_reads_stopping_not_running(server: EmbeddedServer,
                                                                          tmp_path: Path) -> None:
    """N13: for the grace after ``cancel`` (SIGTERM ignored here), ``jobs``, ``queue`` and
    ``%schedule status`` said "running" — issue 20's "reads as a failed cancel", one command later."""
    (tmp_path / "stubborn.py").write_text(_STUBBORN)
    env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann")
    ann = api(server, "tok-ann")
    try:
        made = _cli(env, "submit", "--gpus", "1", "--name", "stubborn", "--workdir", str(tmp_path), "--",
                    sys.executable, "stubborn.py")
        assert made.returncode == EXIT_OK, made.stderr
        job_id = made.stdout.split()[1].rstrip(":")
        deadline = time.monotonic() + 60
        while ann.get(f"jobs/{job_id}").json()["state"] != "running" or "up" not in ann.get(
                f"jobs/{job_id}/logs").text:
            assert time.monotonic() < deadline, ann.get(f"jobs/{job_id}").json()
            time.sleep(0.2)
        cancelled = _cli(env, "cancel", job_id)
        assert "stopping" in cancelled.stdout, cancelled.stdout + cancelled.stderr
        while not ann.get(f"jobs/{job_id}").json().get("stopping_since"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        row = ann.get(f"jobs/{job_id}").json()
        assert row["state"] == "running" and row["stop_requested"]["kill_at"], row  # the wire state stays
        kill = row["stop_requested"]["kill_at"][11:19]
        assert row["stop_requested"]["text"].startswith("stopping (cancel requested by ann at ")  # for the panel
        assert row["stop_requested"]["text"].endswith(f"killed at {kill} UTC if still running)"), row
        jobs = _cli(env, "jobs")
        (line,) = [ln for ln in jobs.stdout.splitlines() if ln.startswith(job_id)]
        assert line.split()[1] == "stopping", jobs.stdout
        assert "stopping (cancel requested by ann at " in jobs.stdout and f"killed at {kill} UTC" in jobs.stdout, \
            jobs.stdout
        queue = _cli(env, "queue")
        (line,) = [ln for ln in queue.stdout.splitlines() if ln.startswith(job_id)]
        assert " stopping " in line and " running " not in line, queue.stdout
        status = _cli(env, "wait", job_id, "--for", "1s")
        assert "stopping (cancel requested by ann" in status.stdout, status.stdout + status.stderr
        magic = subprocess.run([sys.executable, "-c", _KERNEL_STATUS, job_id], cwd=tmp_path, env={
            **env, "IPYTHONDIR": str(tmp_path / "ipython")}, capture_output=True, text=True, timeout=120)
        said = magic.stdout.strip()
        assert said.startswith(f"job {job_id} (stubborn): stopping (cancel requested by ann at "), said + magic.stderr
        assert f"killed at {kill} UTC" in said and ": running" not in said, said
    finally:
        clear(server)


def test_newuser8_n13_the_stopping_words_from_a_row() -> None:
    """The renderer alone: a list row with ``stop_requested``; one without (an older server's), from its message."""
    row = {"id": "j-7", "name": "stub", "kind": "training", "state": "running", "resources": {"gpus": 1},
           "stopping_since": "2026-12-03T04:08:01Z", "message": "cancel requested by root",
           "stop_requested": {"intent": "cancel", "by": "root", "at": "2026-12-03T04:08:01+00:00",
                              "kill_at": "2026-12-03T04:08:11+00:00"}}
    now = datetime(2026, 12, 3, 4, 8, 2, tzinfo=timezone.utc)
    assert state_word(row) == "stopping"
    assert job_line(row, now) == ("job j-7 (stub): stopping (cancel requested by root at 04:08 UTC; killed at "
                                  "04:08:11 UTC if still running)")
    bare = {k: v for k, v in row.items() if k != "stop_requested"}
    assert job_line(bare, now) == "job j-7 (stub): stopping (cancel requested by root at 04:08 UTC)"
    assert state_word({**row, "stopping_since": None}) == "running"


_KERNEL_QUEUE = r"""
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "jupyter_sched")
frame = shell.run_line_magic("schedule", "queue --all")
print("ROWS", len(frame))
try:
    shell.run_line_magic("schedule", "queue --all --limit 3")
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_newuser8_n5_schedule_queue_takes_all_as_the_cli_does(server: EmbeddedServer, tmp_path: Path) -> None:
    """N5: ``%schedule queue --all`` was "unknown argument --all" though the README and the CLI offer it."""
    assert parse_schedule_line("queue --all").scope == "all"
    assert parse_schedule_line("queue --limit 3").scope is None
    ann = api(server, "tok-ann")
    try:
        for _ in range(3):  # more than the 2 GPUs: one waits
            made = ann.post("jobs", json={"gpus": 1, "command": ["sleep", "60"], "time_limit": "5m"})
            assert made.status_code == 201, made.text
        env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann",
                   IPYTHONDIR=str(tmp_path / "ipython"))
        done = subprocess.run([sys.executable, "-c", _KERNEL_QUEUE], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
        assert "ROWS 3" in done.stdout, done.stdout + done.stderr
        assert "MagicError %schedule queue: give --all or --limit N, not both" in done.stdout, done.stdout
    finally:
        clear(server)


@pytest.mark.parametrize(("line", "said"), [
    # the words every GPU count's refusal has (new user 14, N3: handed case 019's), with N named as typed
    ("request two", '%gpu request: gpus must be an integer (got "two")'),
    ("request 0", "%gpu request: gpus must be > 0 (got 0)"),
    ("request --gpus 0", "--gpus must be > 0 (got 0)"),
])
def test_newuser8_n6_gpu_request_n_is_named_n_and_its_bound_is_above_zero(line: str, said: str) -> None:
    """N6: ``%gpu request two`` said "--gpus must be an integer … or a fraction" (no --gpus typed), and
    ``%gpu request 0`` "must be at least 1" though 0.5 is allowed."""
    with pytest.raises(ValidationError) as caught:
        parse_gpu_line(line)
    assert caught.value.message == said, caught.value.message
    assert ("--gpus" in caught.value.message) == ("--gpus" in line) and "at least 1" not in caught.value.message
    assert parse_gpu_line("request 0.5").options.gpus == 0.5
