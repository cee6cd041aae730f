"""New user 28, N1: a script with Windows (CRLF) line endings (``#!/bin/bash\\r``) was accepted at submit,
waited for its GPUs, then failed 127 "no such program on PATH or file in the working directory" — the
file was there; its interpreter ``/bin/bash\\r`` was not. The submit now reads the program's ``#!`` line
(as it reads a named script's head, new user 14 N23) and refuses it (400, field ``command``) naming the
line and the fixes; a job that meets an exec ENOENT of a file that exists (started before, or changed
since) says its interpreter line in its log, not "no such program"."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation, spec_from_request
from tests.accounts import os_accounts, shared_dir, skip_reason
from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.onboarding.test_hub_paths import hub_executor, owned
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
BASH_SAID = ("starts with '#!/bin/bash\\r': Windows (CRLF) line endings, so the system looks for a program "
             "'/bin/bash\\r', which does not exist")
BASH_FIX = ("convert it to Unix line endings (sed -i 's/\\r$//' ./crlf.sh, or dos2unix ./crlf.sh), or run it with its "
            "interpreter (CLI: -- bash ./crlf.sh)")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu28n1", USERS)


def _file(folder: Path, name: str, text: bytes) -> Path:
    path = folder / name
    path.write_bytes(text)
    path.chmod(0o755)
    return path


def test_newuser28_n1_a_crlf_script_is_refused_at_submit_naming_its_interpreter_line_and_the_fix(
        server: EmbeddedServer, tmp_path: Path) -> None:
    _file(tmp_path, "crlf.sh", b'#!/bin/bash\r\necho "crlf bash ok"\r\n')
    _file(tmp_path, "crlfpy", b"#!/usr/bin/env python3\r\nprint('crlf py ok')\r\n")
    _file(tmp_path, "lf.sh", b'#!/bin/bash\necho "lf ok"\n')
    ann = api(server, "tok-ann")
    body = {"gpus": 0, "time_limit": "1m", "working_dir": str(tmp_path)}
    refused = ann.post("jobs", json={**body, "command": ["./crlf.sh"]})
    assert refused.status_code == 400, refused.text
    said = refused.json()["error"]
    assert said["field"] == "command", said
    assert said["message"] == f"command: './crlf.sh' {BASH_SAID}", said
    assert said["hint"] == BASH_FIX, said
    by_env = ann.post("jobs", json={**body, "command": [str(tmp_path / "crlfpy")]}).json()["error"]
    assert by_env["field"] == "command" and "so env looks for a program 'python3\\r'" in by_env["message"], by_env
    assert f"(CLI: -- python3 {tmp_path / 'crlfpy'})" in by_env["hint"], by_env
    # the panel sends the same REST body; a file with Unix endings is accepted as before
    assert ann.post("jobs", json={**body, "command": ["./lf.sh"]}).status_code == 201
    clear(server)


def test_newuser28_n1_the_cli_submit_of_a_crlf_script_is_refused_before_any_wait(
        server: EmbeddedServer, tmp_path: Path) -> None:
    _file(tmp_path, "crlf.sh", b'#!/bin/bash\r\necho "crlf bash ok"\r\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)})
    done = subprocess.run([CLI, "submit", "--gpus", "0", "--time-limit", "1m", "--", "./crlf.sh"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, done.stdout
    said = " ".join(done.stderr.split())
    assert BASH_SAID in said and BASH_FIX in said, said
    assert "no such program" not in said and "submitted" not in done.stdout, said


def test_newuser28_n1_at_the_start_an_existing_file_names_its_interpreter_line_not_no_such_program(
        tmp_path: Path) -> None:
    """What the submit cannot see (a file changed after it, a job adopted from before) the start says."""
    _file(tmp_path, "crlf.sh", b'#!/bin/bash\r\necho "crlf bash ok"\r\n')
    _file(tmp_path, "gone.sh", b"#!/no/such/shell\necho hi\n")
    ex = LocalExecutor(tmp_path / "jobs")
    for job_id, program in (("j-crlf", "./crlf.sh"), ("j-gone", "./gone.sh"), ("j-none", "./nosuch.sh")):
        ex.start(make_job(job_id, command=(program,), working_dir=str(tmp_path)), Allocation("local", ()))
        ended = wait_event(ex, Exited, [])
        assert isinstance(ended, Exited) and ended.exit_code == 127, ended
    crlf = ex.logs("j-crlf")[0]
    assert f"jupyter_sched: cannot start './crlf.sh': it {BASH_SAID} — {BASH_FIX}" in crlf, crlf
    gone = ex.logs("j-gone")[0]
    assert ("cannot start './gone.sh': the file is there, but the interpreter its first line names is not: "
            "'#!/no/such/shell'") in gone, gone
    assert "no such program on PATH or file in the working directory" in ex.logs("j-none")[0]


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_newuser28_n1_on_a_hub_the_programs_first_line_is_read_as_its_owner() -> None:
    with os_accounts(2) as (alice, bob), shared_dir() as root:
        executor = hub_executor(root)
        mine = owned(Path(alice.home) / "crlf.sh", alice, 0o755, "#!/bin/bash\r\necho hi\r\n")
        secret = owned(root / "secret.sh", bob, 0o700, "#!/bin/bash\r\necho secret\r\n")

        def heads(program: Path) -> list[tuple[str, str, bytes]]:
            spec = spec_from_request({"gpus": 0, "command": [str(program)]}, user=alice.name)
            return executor.named_file_heads(spec, 64)

        assert heads(mine) == [("command", str(mine), b"#!/bin/bash\r\necho hi\r\n")]
        assert heads(secret) == []  # alice may not read it: nothing is said of it to her
