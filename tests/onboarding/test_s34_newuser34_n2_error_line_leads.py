"""newuser34 N2: a failed job's error line leads every surface, not only a Python traceback's.

newuser33 N2 led a failure's sentence with the error only when the log ended in a Python traceback. A
``sys.exit("error: …")``, argparse's ``parser.error()``, a ``set -e`` shell script, any CLI tool end with their error as
the LAST log line, and the sentence said ``exited with code 1; last lines: epoch 0 … | epoch 1 … | … | error: …``: the
panel's toast (140 characters) kept the oldest lines and cut the one that said what went wrong; a 5,000-character
output line before it took the toast whole. Now the line most likely to be the error leads (``exited with code 1:
error: dataset not found … — check --data-dir; earlier lines: epoch 0 … | …``): the last line, or the last of the
quoted lines that reads as an error (:func:`~jupyter_sched.executors.outcome.lead_line`), each line cut.

Real parts: the logs are written by the real programs (Python, argparse, bash) run as a job's command would run;
the sentence is the executor's (:func:`describe_exit`, :func:`describe_termination`) and the line the CLI's ``status``
and ``%schedule status`` print is the one renderer's (:func:`job_line`). One real job through the local executor
checks what its end stopped is said before the quoted lines. The server path (REST message, ``jupyter-sched wait``)
is in tests/onboarding/test_cli_log_escapes.py, on that file's module server.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outcome import describe_exit, describe_termination, lead_line
from jupyter_sched.model import Allocation
from jupyter_sched.wording.jobs import job_line, split_log_quote
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event

TOAST_CHARS = 140
"""The panel's toast (labextension/src/notify.ts ``TOAST_CHARS``): ``<name> failed: <message>``, cut at the end."""

WEIRD = ("import sys\n"
         "for i in range(3):\n"
         "    print(f'epoch {i}: loading shard {i} of the training set from /data/train', flush=True)\n"
         "sys.exit('error: dataset not found at /data/train/shard-3.parquet — check --data-dir')\n")
ERROR = "error: dataset not found at /data/train/shard-3.parquet — check --data-dir"


def _run(tmp_path: Path, argv: list[str]) -> tuple[int, Path]:
    """Run ``argv`` as a job's command runs, stdout and stderr into one log; (its exit code, the log)."""
    log = tmp_path / "output.log"
    with open(log, "wb") as out:
        code = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path, timeout=60).returncode
    return code, log


def _line(message: str, name: str = "weird3") -> str:
    return job_line({"id": "j-1", "name": name, "state": "failed", "exit_code": 1, "message": message}, None)


def test_newuser34_n2_a_sys_exit_error_leads_the_sentence_and_the_toast(tmp_path: Path) -> None:
    (tmp_path / "weird2.py").write_text(WEIRD, encoding="utf-8")
    code, log = _run(tmp_path, [sys.executable, "weird2.py"])
    said = describe_exit(code, log=log)
    assert said == (f"exited with code 1: {ERROR}; earlier lines: epoch 0: loading shard 0 of the training set from "
                    "/data/train | epoch 1: loading shard 1 of the training set from /data/train | epoch 2: loading "
                    "shard 2 of the training set from /data/train"), said
    # the panel's toast keeps the head of the sentence: the error is in it
    assert ERROR in f"weird3 failed: {said}"[:TOAST_CHARS]
    # `jupyter-sched status JOB` and `%schedule status` print this line (one renderer); My work shows the message
    assert _line(said).startswith(f"job j-1 (weird3): failed, exit code 1 — {ERROR}; earlier lines: epoch 0: "), _line(said)
    # after `logs -f` printed the log: the error line stays, the other lines are not quoted again
    shown = job_line({"id": "j-1", "name": "weird3", "state": "failed", "exit_code": 1, "message": said}, None,
                     log_shown=True)
    assert shown == f"job j-1 (weird3): failed, exit code 1 — {ERROR}", shown


def test_newuser34_n2_a_5000_character_line_cannot_push_the_error_out(tmp_path: Path) -> None:
    script = "import sys\nprint('x' * 5000)\nsys.exit('fatal: dataset not found at /data/élan')\n"
    (tmp_path / "long.py").write_text(script, encoding="utf-8")
    code, log = _run(tmp_path, [sys.executable, "long.py"])
    said = describe_exit(code, log=log)
    assert said.startswith("exited with code 1: fatal: dataset not found at /data/élan; earlier lines: xxx"), said
    assert "fatal: dataset not found at /data/élan" in f"weird3 failed: {said}"[:TOAST_CHARS]
    assert len(said) < 400 and said.endswith("x…"), len(said)  # the long line is cut


def test_newuser34_n2_argparse_and_a_set_e_script_lead_with_their_error(tmp_path: Path) -> None:
    (tmp_path / "cli.py").write_text("import argparse\np = argparse.ArgumentParser(prog='train.py')\n"
                                     "p.add_argument('--data-dir', required=True)\np.parse_args()\n", encoding="utf-8")
    code, log = _run(tmp_path, [sys.executable, "cli.py"])
    assert code == 2
    assert describe_exit(code, log=log) == ("exited with code 2: train.py: error: the following arguments are "
                                            "required: --data-dir; earlier lines: usage: train.py [-h] --data-dir "
                                            "DATA_DIR")
    bash = shutil.which("bash")
    assert bash is not None
    (tmp_path / "run.sh").write_text("set -e\necho 'step 1: fetch'\nls /nonexistent-n34\necho 'never'\n")
    code, log = _run(tmp_path, [bash, "run.sh"])
    said = describe_exit(code, log=log)
    assert said.startswith("exited with code 2: ls: cannot access '/nonexistent-n34': No such file or directory; "
                           "earlier lines: step 1: fetch"), said


@pytest.mark.parametrize("lines, want", [
    pytest.param(["loading", "bad row 17"], 1, id="no error word: the last line"),
    pytest.param(["collected 3 items", "FAILED t.py::test_c - assert 1 == 2", "=== 1 failed, 2 passed ==="], 1,
                 id="a test runner's FAILED line before its summary"),
    pytest.param(["gcc -c a.c", "gcc: fatal error: no input files", "compilation terminated.",
                  "make: *** [Makefile:2: all] Error 1"], 1, id="the compiler's error, not make's echo of it"),
    pytest.param(["Error: Cannot find module 'x'", "    at Module._load (node:internal)", "Node.js v18"], 0,
                 id="an error line opening the quoted lines"),
    pytest.param(["java.io.IOException: disk full", "\tat a.b(C.java:3)"], 0, id="an exception's name"),
    pytest.param(["epoch 1 train error: 0.05", "epoch 2 train error: 0.04", "Killed"], 2,
                 id="a metric named error is not an error line"),
    pytest.param(["2026-12-06 ERROR loader: no shard 3", "shutting down"], 0, id="a log level in capitals"),
    pytest.param(["the errors were 0", "the error rate fell", "done"], 2, id="the word alone is not enough"),
])
def test_newuser34_n2_which_line_leads(lines: list[str], want: int) -> None:
    assert lead_line(lines) == want


def test_newuser34_n2_an_error_line_before_the_last_leads_and_the_last_lines_stay_whole(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text("collected 3 items\nt.py ..F\nFAILED t.py::test_c - assert 1 == 2\n=== 1 failed, 2 passed ===\n")
    said = describe_exit(1, log=log)
    assert said == ("exited with code 1: FAILED t.py::test_c - assert 1 == 2; last lines: collected 3 items | t.py ..F | "
                    "FAILED t.py::test_c - assert 1 == 2 | === 1 failed, 2 passed ==="), said
    # a signal's kill or a stop came whatever it printed last: that is no error line, the shape is as before
    assert describe_exit(-9, log=log).startswith("killed by SIGKILL; last lines: collected 3 items"), describe_exit(-9, log=log)
    assert describe_exit(1, log=log, stopped=True).startswith("exited with code 1; last lines: collected 3 items")
    # a container's end on Kubernetes, from its termination message: the same rule
    assert describe_termination(1, "epoch 1\nerror: no data\n") == "exited with code 1: error: no data; earlier lines: epoch 1"
    assert describe_termination(137, "epoch 1\nerror: no data\n", reason="OOMKilled") == (
        "killed by the out-of-memory killer — ask for more memory with --memory (jupyter-sched submit, %%schedule; the "
        "job card's Resubmit, Memory field), or make it use less; last lines: epoch 1 | error: no data")
    # a traceback's path is as it was (newuser33 N2)
    log.write_text('Traceback (most recent call last):\n  File "/w/t.py", line 2, in <module>\n    f()\nKeyError: 1\n')
    assert describe_exit(1, log=log).startswith("exited with code 1: KeyError: 1 (t.py, line 2); last lines: Traceback")


def test_newuser34_n2_the_line_renderer_reads_both_quotes(tmp_path: Path) -> None:
    """The renderer splits what a message says from the lines it quotes, either opening."""
    assert split_log_quote("exited with code 1: error: x; earlier lines: a | b") == (
        "exited with code 1: error: x", "; earlier lines: ", "a | b")
    assert split_log_quote("exited with code 1; last lines: a") == ("exited with code 1", "; last lines: ", "a")
    assert split_log_quote("exited with code 1: done") == ("exited with code 1: done", "", "")
    # the wrapper's 126 for a working directory it cannot enter, now the line that leads: still said as that
    line = job_line({"id": "j-1", "state": "failed", "exit_code": 126,
                     "message": "exited with code 126: jupyter_sched: cannot enter the working directory /x: denied"}, None)
    assert line == ("job j-1: failed, exit code 126 (its working directory cannot be entered) — jupyter_sched: cannot "
                    "enter the working directory /x: denied"), line


def test_newuser34_n2_what_a_jobs_end_stopped_is_said_before_the_quoted_lines(tmp_path: Path) -> None:
    """One real job through the local executor: it leaves a process behind and fails with its error last."""
    script = tmp_path / "left.py"
    script.write_text("import subprocess, sys\nsubprocess.Popen(['sleep', '997'])\nprint('epoch 0', flush=True)\n"
                      "sys.exit('error: no data')\n", encoding="utf-8")
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(make_job("j-1", command=(sys.executable, str(script)), working_dir=str(tmp_path)), Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 1
    assert ended.message.startswith("exited with code 1: error: no data; its main process left 1 process running"), \
        ended.message
    assert ended.message.endswith("; earlier lines: epoch 0"), ended.message
    assert _line(ended.message).startswith("job j-1 (weird3): failed, exit code 1 — error: no data; its main process "
                                           "left 1 process running"), _line(ended.message)
