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


@pytest.mark.parametrize("line,patched", [("wait {job} --for 5m", "job"), ("logs {job} -f", "follow_logs")],
                         ids=["wait", "logs -f"])
def test_newuser33_n5_an_interrupted_wait_or_follow_stops_the_cell_and_the_job_goes_on(
        server: EmbeddedServer, line: str, patched: str) -> None:
    """The user's interrupt (the kernel's SIGINT: KeyboardInterrupt in the magic's loop; raised here by the client
    call the loop is in, as the signal would) stopped the wait but the cell went on, and a Run All ran the next cells
    as if the job had succeeded. Now it raises MagicError (one line; the cell and a Run All stop), the job runs on."""
    from jupyter_sched.magics.core import MagicError

    job_id = _submit_sleeper(server)
    magics = _magics(server)
    client = magics.client
    calls = {"n": 0}
    real = getattr(client, patched)

    def interrupted(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] >= 2 or patched == "follow_logs":
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    setattr(client, patched, interrupted)
    with pytest.raises(MagicError) as raised:
        magics.schedule(line.format(job=job_id))
    assert str(raised.value) == (f"stopped {'waiting for' if patched == 'job' else 'following'} {job_id} (interrupted); "
                                 f"the job keeps running — %schedule cancel {job_id} stops it, "
                                 f"%schedule wait {job_id} waits again")
    # the job goes on: still live, in whichever live state the engine has it (run D of session 36 met 'admitted')
    assert api(server, "tok-ann").get(f"jobs/{job_id}").json()["state"] in ("pending", "admitted", "running")
    assert api(server, "tok-ann").delete(f"jobs/{job_id}").status_code in (200, 202)


def _submit_sleeper(server: EmbeddedServer) -> str:
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "name": "sleeper", "time_limit": "2m",
                                                     "command": ["sleep", "60"]})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])
