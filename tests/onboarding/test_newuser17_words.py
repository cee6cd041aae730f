"""New user 17 (/work/coord/notes/newuser17.md), N12: the magic and the CLI say one outcome.

A second ``%schedule cancel`` of a stopping job said "Cancelled … (was running; stopping, grace
10 s)" again, where the CLI said "it is already stopping (…)"; ``%schedule wait J --for 3s`` raised
``MagicError: still running after 3s`` where ``jupyter-sched wait`` prints "still running after
3 s" and exits 5. Against a real embedded server (simulated GPUs), the magics driven in this
process with a real client and the CLI as a subprocess.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_TIMEOUT
from tests import leftovers
from tests.onboarding.test_cli_firsthour import api, clear, cli, wait_state
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}

STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(300)"
"""A job that outlives SIGTERM: it stays stopping for the server's whole grace."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu17words"), users=USERS, admin_users=["boss"],
                               simulated_gpus=2, stop_grace_s=15)
    try:
        yield srv
    finally:
        clear(srv)
        srv.kill()


def _stubborn(server: EmbeddedServer, tmp_path: Path, name: str) -> str:
    made = api(server, "tok-ann").post("jobs", json={"gpus": 1, "name": name, "time_limit": "5m",
                                                     "working_dir": str(tmp_path),
                                                     "command": [sys.executable, "-c", STUBBORN]})
    assert made.status_code == 201, made.text
    job_id = str(made.json()["id"])
    wait_state(server, "tok-ann", job_id, "running")
    deadline = time.monotonic() + 30
    while "up" not in str(api(server, "tok-ann").get(f"jobs/{job_id}/logs").json().get("text")):  # SIGTERM ignored
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return job_id


def test_newuser17_n12_a_second_magic_cancel_says_already_stopping_as_the_cli_does(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    magics = _magics(server)
    job_id = _stubborn(server, tmp_path, "waitme")
    capsys.readouterr()
    magics.schedule(f"cancel {job_id}")
    first = capsys.readouterr().out.strip()
    assert first.startswith(f"Cancelled {job_id} (waitme; was running; stopping, grace 15 s)"), first  # named (newuser34 n1)
    magics.schedule(f"cancel {job_id}")
    second = capsys.readouterr().out.strip()
    assert second.startswith(f"Cancel of {job_id}: it is already stopping (cancel requested by ann at "), second
    assert "killed at " in second and "grace" not in second, second  # the first cancel's kill time, no new grace
    # the CLI, at the same moment, says the same outcome in the same words
    run = cli(server, "tok-ann", "cancel", job_id)
    assert run.code == 0, run.err
    assert run.out.strip() == second[0].lower() + second[1:].removesuffix("."), (run.out, second)
    # the REST answer says it as data: the second cancel changed nothing
    answer = api(server, "tok-ann").delete(f"jobs/{job_id}").json()
    assert answer["already_stopping"] is True and answer["stop_requested"]["intent"] == "cancel", answer
    # every word of the stop is read: the SIGKILL its 15 s grace ends with, now (waiting for it cost 15 s)
    leftovers.kill_sigterm_ignorers([job_id])
    wait_state(server, "tok-ann", job_id, "cancelled")


def test_newuser17_n12_a_magic_wait_that_runs_out_prints_what_the_cli_prints(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clear(server)
    magics = _magics(server)
    job_id = _stubborn(server, tmp_path, "slowone")
    capsys.readouterr()
    magics.schedule(f"wait {job_id} --for 1s")  # returns: no MagicError stops a Run-All
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert said.startswith(f"still running after 1s: job {job_id} (slowone): running"), said
    run = cli(server, "tok-ann", "wait", job_id, "--for", "1s")
    assert run.code == EXIT_TIMEOUT, run.err
    assert run.out.strip().startswith(f"still running after 1s: job {job_id} (slowone): running"), run.out
    clear(server)
