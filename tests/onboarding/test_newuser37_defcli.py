"""newuser37 N1, n1, n2: a definition's last run and a failed job's file error, in words.

N1: ``jupyter-sched definitions list`` never said a definition's last run failed, while ``%schedule define list``
(``last_state`` / ``last_reason``) and GET definitions (``last_run``) did: both now say it through one renderer,
:func:`jupyter_sched.wording.definitions.last_run_parts` (the CLI's line: ``last: failed, exit code 1 · …``).
n1: ``definitions show`` left out ``1 GPU`` for a definition made without ``--gpus`` (each run takes 1).
n2: a run that failed on ``open("data/train.csv")`` said neither where a relative path is read from nor what to do,
and its "last lines" began with Python 3.11's ``^^^^`` underline row.

Pure tests over real tracebacks (a real Python run on a script in tmp_path); the CLI's end to end is
``tests/web/test_cli.py::test_newuser37_n1_definitions_list_ends_with_the_last_runs_outcome``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.executors.outcome import LOG_TAIL_LINES, describe_exit, file_error_hint
from jupyter_sched.wording.definitions import last_run_parts, last_run_text, runs_text
from jupyter_sched.wording.jobs import split_log_quote


@dataclass(frozen=True)
class FileCase:
    id: str
    opens: str  # what the script's load() opens (a Python expression)
    setup: str  # made in the job's folder first: "" / "dir" (data/train.csv a folder) / "file" (data a file)
    want_hint: str  # {cwd}: the job's folder


FILE_CASES = [
    FileCase("a relative path names the job's folder and the fix", "'data/train.csv'", "",
             "a relative path is read from the job's working folder, {cwd}, and there is no {cwd}/data/train.csv: "
             "check the path, or give an absolute one"),
    FileCase("an absolute path is only checked", "'/nonexistent-nu37/train.csv'", "",
             "there is no /nonexistent-nu37/train.csv: check the path"),
    FileCase("a folder opened as a file", "'data/train.csv'", "dir",
             "a relative path is read from the job's working folder, {cwd}, and {cwd}/data/train.csv is a folder, not "
             "a file: give the path of a file in it"),
    FileCase("a file taken for a folder", "'data/train.csv'", "file",
             "a relative path is read from the job's working folder, {cwd}, and a part of {cwd}/data/train.csv is a "
             "file, not a folder: check the path"),
]


def _failed_run(tmp_path: Path, opens: str, setup: str) -> Path:
    """Run a script that opens ``opens`` from inside a function (so Python 3.11 underlines both calls) in tmp_path,
    as the job's wrapper would; its output is the job's log."""
    if setup == "dir":
        (tmp_path / "data" / "train.csv").mkdir(parents=True)
    elif setup == "file":
        (tmp_path / "data").write_text("")
    script = tmp_path / "missing_data.py"
    script.write_text(f"def load(path):\n    return open(path).read()\n\nrows = load({opens}).splitlines()\n")
    log = tmp_path / "output.log"
    with open(log, "wb") as out:
        subprocess.run([sys.executable, str(script)], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, timeout=60)
    return log


@pytest.mark.parametrize("case", FILE_CASES, ids=[c.id for c in FILE_CASES])
def test_newuser37_nit2_a_file_error_says_where_a_relative_path_is_read_and_what_to_do(case: FileCase,
                                                                                     tmp_path: Path) -> None:
    log = _failed_run(tmp_path, case.opens, case.setup)
    said, opening, quoted = split_log_quote(describe_exit(1, log=log, cwd=str(tmp_path)))
    assert said.endswith(f" (missing_data.py, line 2) — {case.want_hint.format(cwd=tmp_path)}"), said
    assert said.startswith("exited with code 1: ") and opening == "; last lines: "
    # n2's other half: whole lines only, never an underline row cut from its code (it was the first line quoted)
    lines = quoted.split(" | ")
    assert len(lines) == LOG_TAIL_LINES and lines[0].lstrip().startswith('File "'), quoted
    assert not any(set(line.strip()) <= set("^~") for line in lines), quoted
    assert "^^^" in log.read_text()  # the log itself keeps them (Python 3.11+ wrote them)


def test_newuser37_nit2_a_permission_error_and_a_notebook_cell_say_the_same_kind() -> None:
    """A file the job may not open, and a notebook's cell (the runner's ``cell N raised …``; its kernel starts in the
    job's folder); no folder known (a container's): the relative path is still said to be one."""
    denied = "PermissionError: [Errno 13] Permission denied: 'out/model.pt'"
    assert file_error_hint(denied, "/w") == ("a relative path is read from the job's working folder, /w, and the "
                                             "job's account may not open /w/out/model.pt: check its owner and mode "
                                             "(ls -l /w/out/model.pt)")
    cell = "cell 3 raised FileNotFoundError: [Errno 2] No such file or directory: 'data/x.csv' (cell starts: df = …)"
    assert file_error_hint(cell, "/w/nb", notebook=True) == (
        "a relative path is read from the folder the notebook ran in, /w/nb, and there is no /w/nb/data/x.csv: check "
        "the path, or give an absolute one")
    assert file_error_hint(cell, None) == ("a relative path is read from the job's working folder and there is no "
                                           "data/x.csv: check the path, or give an absolute one")
    assert file_error_hint("KeyError: 'data/x.csv'", "/w") is None


def test_newuser37_nit2_a_notebook_run_s_reason_gets_the_hint(tmp_path: Path) -> None:
    """The notebook runner's ``outcome.json`` reason (what a notebook job's message is) gets the same fix."""
    reason = "cell 2 raised FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv' (cell starts: import)"
    (tmp_path / "outcome.json").write_text(json.dumps({"status": "failed", "reason": reason}))
    said = describe_exit(1, job_dir=tmp_path, cwd="/home/a/work")
    assert said == (f"{reason} — a relative path is read from the folder the notebook ran in, /home/a/work, and there "
                    "is no /home/a/work/data/train.csv: check the path, or give an absolute one")


@dataclass(frozen=True)
class GpuCase:
    id: str
    job: dict[str, Any]
    want: str


GPU_CASES = [
    GpuCase("no --gpus: the default 1 GPU is said", {"time_limit": "5m"}, "runs /w/t.py · 1 GPU · time limit 5m"),
    GpuCase("--gpus 1 says the same", {"gpus": 1, "time_limit": "5m"}, "runs /w/t.py · 1 GPU · time limit 5m"),
    GpuCase("--gpus 0 stays no GPU", {"gpus": 0}, "runs /w/t.py · 0 GPUs"),
    GpuCase("resources.gpus is the count", {"resources": {"gpus": 2}, "time_limit": 60}, "runs /w/t.py · 2 GPUs · time limit 1m"),
    GpuCase("a profile's count is not guessed", {"profile": "big"}, "runs /w/t.py · profile big"),
]


@pytest.mark.parametrize("case", GPU_CASES, ids=[c.id for c in GPU_CASES])
def test_newuser37_nit1_show_says_the_gpus_each_run_takes(case: GpuCase) -> None:
    assert runs_text({"script": "/w/t.py", "job": case.job}) == case.want


def test_newuser37_n1_the_last_run_in_one_renderer_for_the_cli_and_the_magic() -> None:
    """The CLI list's ``last: …`` and the magic's ``last_state`` / ``last_reason`` are one rendering of GET definitions'
    ``last_run`` (its job as GET jobs/{id} carries it), without the log lines its message quotes."""
    from jupyter_sched.magics.define import definitions_frame

    message = ("exited with code 1: FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv' (a.py, "
               "line 2) — a relative path is read from the job's working folder, /w, and there is no /w/data/train.csv: "
               "check the path, or give an absolute one; last lines: File \"/w/a.py\", line 2 | FileNotFoundError: …")
    job = {"id": "j-1", "name": "nodata, scheduled", "kind": "training", "state": "failed", "exit_code": 1,
           "message": message, "started_at": "2026-12-07T07:38:00Z", "finished_at": "2026-12-07T07:38:02Z"}
    run = {"job_id": "j-1", "job": job, "trigger": "schedule", "scheduled_for": "2026-12-07T07:38:00Z"}
    state, reason = last_run_parts(run, None)
    assert state == "failed"
    assert reason == ("exit code 1 · ended Dec 7 07:38 UTC (ran 2s) — " + split_log_quote(message)[0].split(": ", 1)[1])
    assert last_run_text(run, None) == f"last: {state}, {reason}"
    frame = definitions_frame([{"id": "d-1", "name": "nodata", "script": "/w/a.py", "schedule": "0 6 * * *",
                                "timezone": "UTC", "paused": False, "next_run_at": None, "last_run": run}])
    row = frame.iloc[0] if hasattr(frame, "iloc") else frame.data.iloc[0]
    assert (row["last_state"], row["last_reason"]) == last_run_parts(run, _now())
    # no run yet / its job gone: said alike
    assert last_run_parts(None, None) == ("", "") and last_run_text(None, None) == ""
    assert last_run_text({"job_id": "j-2", "job": None}, None) == "last: its job is no longer stored"


def _now() -> Any:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)


def test_newuser37_nit4_an_out_of_memory_kill_says_what_to_do_and_no_likely_when_counted(tmp_path: Path) -> None:
    """n4: ``killed by SIGKILL (likely out of memory: its memory cgroup counted 1 out-of-memory kill; memory limit
    512 MiB)`` — "likely" though the kill was counted, and no word of what to do. Each of the kind (a script's counted
    kill, a notebook kernel's, a Kubernetes OOMKilled) now says what to do; the panel still knows each sentence
    (``said_out_of_memory``, its Resubmit's Memory), a message stored before included."""
    from jupyter_sched.executors.outcome import describe_termination, kernel_death_sentence, said_out_of_memory

    log = tmp_path / "output.log"
    log.write_text("100 MiB\n200 MiB\n300 MiB\n400 MiB\n")
    fix = ("ask for more memory than its 512 MiB, e.g. --memory 1GiB (jupyter-sched submit, %%schedule; the job "
           "card's Resubmit, Memory field), or make it use less")
    said = describe_exit(-9, log=log, oom_kills=1, memory_limit_mib=512)
    assert said == ("killed by SIGKILL (out of memory: its memory cgroup counted 1 out-of-memory kill; memory limit "
                    f"512 MiB) — {fix}; last lines: 100 MiB | 200 MiB | 300 MiB | 400 MiB"), said
    kernel = kernel_death_sentence(9, peak_mib=500, oom_killed=True, limit_mib=512, cell_index=2, first_line="x = 1")
    assert kernel.endswith(f"; memory limit 512 MiB — {fix}"), kernel
    assert describe_termination(137, "", reason="OOMKilled") == (
        "killed by the out-of-memory killer — ask for more memory with --memory (jupyter-sched submit, %%schedule; "
        "the job card's Resubmit, Memory field), or make it use less")
    stored = "killed by SIGKILL (likely out of memory: its memory cgroup counted 1 out-of-memory kill)"
    assert all(said_out_of_memory(s) for s in (said, kernel, describe_termination(137, "", reason="OOMKilled"), stored))
    # a SIGKILL nothing counted stays as it is, with no fix (red15 R15, newuser25 N7)
    assert describe_exit(-9, log=log, oom_kills=0).startswith("killed by SIGKILL; last lines: ")
