"""newuser38 n24, end to end: ``jupyter-sched status`` says a held job apart, with its fix.

n38b's ``status`` read ``my work    1 pending`` — nothing else — of a job held for good. Here through every layer:
a real ``jupyter server`` subprocess (SQLite, 4 simulated GPUs, its engine's cycles), the CLI as a subprocess:
ivan's 4-GPU job holds every GPU, his 1-GPU job waits and is then held by him (``jupyter-sched hold``: the one
hold kind a user can make alone; the others' words are tested in tests/hub/test_newuser38_s39_team.py), and
``status`` says ``1 pending, held: held by ivan — release it: jupyter-sched release j-…``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_server import Run, server_for_module
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = shutil.which("jupyter-sched", path=str(Path(sys.executable).parent)) or "jupyter-sched"


def _cli(server: EmbeddedServer, *args: str) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": OWNER_TOKEN, "TZ": "UTC",
                "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")})
    done = subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=120)
    return Run(done.returncode, done.stdout, done.stderr)


def _stop_all(server: EmbeddedServer) -> None:
    _cli(server, "cancel", "--mine", "--yes")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from server_for_module(tmp_path_factory, "s39team", {OWNER_TOKEN: "ivan"}, before_kill=_stop_all)


def test_newuser38_n24_cli_status_says_a_held_job_apart_with_its_fix(server: EmbeddedServer) -> None:
    big = _cli(server, "submit", "--gpus", "4", "--name", "all4", "--", sys.executable, "-c",
               "import time; time.sleep(120)")
    assert big.code == 0, big
    queued = _cli(server, "submit", "--gpus", "1", "--name", "one", "--", "true")
    assert queued.code == 0, queued
    job = next((w for w in queued.out.split() if w.startswith("j-")), "")  # "submitted j-… (one): pending, …"
    assert job, queued
    held = _cli(server, "hold", job)
    assert held.code == 0, held
    want = f"my work    1 job running, on 4 GPUs; 1 pending, held: held by ivan — release it: jupyter-sched release {job}"
    deadline = time.monotonic() + 60  # the engine's next cycles (every 0.2 s) see the hold: a bound, not a timing
    while True:
        status = _cli(server, "status")
        assert status.code == 0, status
        line = next((x for x in status.out.splitlines() if x.startswith("my work")), "")
        if line == want or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert line == want, status.out
