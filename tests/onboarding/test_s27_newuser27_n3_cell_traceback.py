"""New user 27, N3: since newuser26 N9 a ``%%schedule`` cell runs through ``python -c "…runpy.run_path(…)"``, and
every failing cell's summary ("failed, exit code 1 — last lines: …") spent three of its five lines on the runner's
``<string>`` and ``<frozen runpy>`` frames. The runner's traceback now starts at the cell's own frame, as
``python CELL.py``'s does; a syntax error reads as Python's; an interrupt still ends the job as one."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.userfiles import start_folder_argv
from tests.onboarding.test_cli_firsthour import api, module_server, wait_state
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("source,code,want", [
    ('x = 1\nraise RuntimeError("boom at step 3")\n', 1,
     'Traceback (most recent call last):\n  File "cell.py", line 2, in <module>\n'
     '    raise RuntimeError("boom at step 3")\nRuntimeError: boom at step 3\n'),
    ("def f(:\n", 1, '  File "cell.py", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n'),
    ("import os\nos.kill(os.getpid(), 2)\n", -2,
     'Traceback (most recent call last):\n  File "cell.py", line 2, in <module>\n    os.kill(os.getpid(), 2)\n'
     "KeyboardInterrupt\n"),
], ids=["an error: from the cell's frame", "a syntax error: as Python says it", "an interrupt: still -SIGINT"])
def test_newuser27_n3_the_runner_leaves_its_own_frames_out(tmp_path: Path, source: str, code: int, want: str) -> None:
    (tmp_path / "cell.py").write_text(source)
    # SIGINT as a job gets it: a pytest-xdist worker ignores SIGINT, and a child that starts with it ignored never
    # raises KeyboardInterrupt (Python installs its handler only over the default)
    done = subprocess.run(start_folder_argv(sys.executable, "cell.py"), capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, preexec_fn=_default_sigint)
    assert (done.returncode, done.stderr) == (code, want)
    plain = subprocess.run([sys.executable, "cell.py"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                           preexec_fn=_default_sigint)
    # as `python CELL.py` says it (which names the file by its absolute path)
    assert (plain.returncode, plain.stderr.replace(f"{tmp_path}/", "")) == (done.returncode, done.stderr)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu27tb", USERS)


def test_newuser27_n3_a_failing_cell_jobs_last_lines_are_the_cells(server: EmbeddedServer, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job_id = _magics(server).schedule("--gpus 0 --time-limit 2m --name failing",
                                      'x = 1\nraise RuntimeError("boom at step 3")\n')
    job = wait_state(server, "tok-ann", job_id, "failed", "succeeded", "cancelled")
    assert job["state"] == "failed", job
    said = api(server, "tok-ann").get(f"jobs/{job_id}").json()["message"]
    assert "runpy" not in said and "<string>" not in said, said
    assert 'line 2, in <module> |     raise RuntimeError("boom at step 3") | RuntimeError: boom at step 3' in said, said
