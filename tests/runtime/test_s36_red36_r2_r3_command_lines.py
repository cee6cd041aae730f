"""Reads of a job process's command line on the engine's thread are bounded (red36 R2, R3).

R2: a stop named every process of the job with its whole ``/proc/<pid>/cmdline`` (psutil reads up to ARG_MAX, ~2 MB)
and escaped every character before cutting: 300 processes of a 1.9 MB argv held the engine 41 s per stop step. Now
at most LISTED processes are read, each at most COMMAND_BYTES, and the rest counted.
R3: ``_wrapped_job_ids`` read the whole command line of every host process (600 outside processes: 34 s at an
account's first launch after a restart); now only job groups' members (cgroup tracker), each at most a few KiB.

Real parts: the local executor, its wrapper, real processes with a ~1.9 MB argv (a few, not hundreds). The spy
wraps ``open`` in :mod:`jupyter_sched.executors.wrapper` (the one reader) and counts what each read returned;
psutil's whole-line read is made to fail so no caller can use it unseen.
"""

from __future__ import annotations

import builtins
import itertools
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from jupyter_sched.executors import local as local_mod
from jupyter_sched.executors import tracking
from jupyter_sched.executors import wrapper as wrapper_mod
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.wrapper import COMMAND_BYTES, COMMAND_CHARS, LISTED, command_text
from jupyter_sched.model import Allocation
from tests.runtime.test_local_executor import FakeMonotonic, job_for, wait_event, wait_until

GPU = Allocation("n1", ("GPU-0",))
BIG_ARGS = 15
"""15 arguments of 131,000 characters (each under MAX_ARG_STRLEN): ~1.9 MB of argv, red36's size."""
CHILDREN = LISTED + 3


class _ReadSpy:
    """``open`` of the wrapper module: records the bytes each read of a ``/proc/<pid>/cmdline`` returned."""

    def __init__(self) -> None:
        self.reads: list[tuple[int, int]] = []  # (pid, bytes)

    def __call__(self, path: Any, *args: Any, **kwargs: Any) -> Any:
        handle = builtins.open(path, *args, **kwargs)
        match = re.fullmatch(r"/proc/(\d+)/cmdline", str(path))
        if match is None:
            return handle
        spy, pid, read = self, int(match.group(1)), handle.read

        def counted(*a: Any) -> Any:
            data = read(*a)
            spy.reads.append((pid, len(data or b"")))
            return data

        handle.read = counted
        return handle


@pytest.fixture()
def spy(monkeypatch: pytest.MonkeyPatch) -> _ReadSpy:
    reads = _ReadSpy()
    monkeypatch.setattr(wrapper_mod, "open", reads, raising=False)

    def whole(self: psutil.Process) -> list[str]:
        raise AssertionError(f"psutil read the whole command line of {self.pid}")

    monkeypatch.setattr(psutil.Process, "cmdline", whole)
    return reads


def _big_argv_process() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", *["A" * 131_000] * BIG_ARGS],
                            start_new_session=True)


def test_red36_r2_command_text_cuts_before_escaping() -> None:
    argv = ["python", "\x1b[31m" + "A" * 2_000_000]
    assert command_text(argv) == command_text([*argv[:1], argv[1][:COMMAND_CHARS]])
    text = command_text(argv)
    assert len(text) == COMMAND_CHARS and text.startswith("python \\x1b[31mAAA") and text.endswith("…")
    assert command_text(["a", "\x07"], limit=5) == "a \\x07"[:4] + "…"  # the escape still counts toward the cut
    assert command_text(["ab", "c"], limit=4) == "ab c"  # exactly the limit: whole


def test_red36_r2_a_stop_names_at_most_listed_processes_each_from_a_bounded_read(tmp_path: Path, spy: _ReadSpy) -> None:
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3, monotonic=FakeMonotonic())  # SIGTERM only
    job = job_for(tmp_path, f"""
kids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", *["A" * 131000] * {BIG_ARGS}])
        for _ in range({CHILDREN})]
json.dump([k.pid for k in kids], open("pids.json", "w"))
print("ready", flush=True)
time.sleep(300)
""")
    ex.start(job, GPU)
    wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to start its children")
    kids = json.loads((tmp_path / "pids.json").read_text())
    ex.stop(job.id, grace_s=60, reason="cancelled by ana")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited)
    assert spy.reads and max(size for _, size in spy.reads) <= COMMAND_BYTES, spy.reads
    assert len({pid for pid, _ in spy.reads}) <= LISTED, spy.reads  # the rest counted, never read
    lines = ex.logs(job.id)[0].splitlines()
    at = lines.index("ready")
    assert lines[at + 1] == (f"[jupyter_sched] the scheduler sent SIGTERM to the job's {CHILDREN + 1} processes to "
                             "stop it:"), lines
    # the stop's own block only: a child still ending on SIGTERM when the main process ended is listed again
    # below it by the wrapper's leftover lines (CI on 1cb96fca: 11 pid lines after "ready")
    shown = list(itertools.takewhile(lambda line: re.match(r"\[jupyter_sched\]   pid \d+: ", line), lines[at + 2:]))
    assert len(shown) == LISTED, lines
    named_kid = next(line for line in shown if int(line.split()[2].rstrip(":")) in kids)
    command = named_kid.split(": ", 1)[1]
    assert command.startswith(f"{sys.executable} -c import time; time.sleep(1000) AAA") and command.endswith("…")
    assert len(command) == COMMAND_CHARS, command
    assert lines[at + 2 + LISTED] == f"[jupyter_sched]   and {CHILDREN + 1 - LISTED} processes more", lines


def test_red36_r3_wrapped_job_ids_reads_a_bounded_part_of_job_processes_only(tmp_path: Path, spy: _ReadSpy) -> None:
    outside = _big_argv_process()  # a process outside the scheduler (a terminal's): never read by a cgroup tracker
    ex = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, f"""
kid = subprocess.Popen([sys.executable, "-I", "-c", "import time; time.sleep(1000)", *["A" * 131000] * {BIG_ARGS}])
print("ready", flush=True)
time.sleep(300)
""", job_id="j-r3")
    try:
        ex.start(job, GPU)
        wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to start its child")
        # a real wrapper's id still found; the job's own `python -I -c` child (not a wrapper's source) read 4 KiB only
        assert job.id in local_mod._wrapped_job_ids(ex.tracker)
        assert spy.reads and max(size for _, size in spy.reads) <= local_mod._WRAPPER_HEAD_BYTES, spy.reads
        if isinstance(ex.tracker, local_mod.CgroupTracker):
            assert outside.pid not in {pid for pid, _ in spy.reads}, spy.reads
        # the marker tracker's scan (no writable cgroup) reads every process, each at most the same few KiB
        spy.reads.clear()
        assert job.id in local_mod._wrapped_job_ids(local_mod.MarkerTracker())
        assert max(size for _, size in spy.reads) <= local_mod._WRAPPER_HEAD_BYTES, spy.reads
        assert (outside.pid, local_mod._WRAPPER_HEAD_BYTES) in spy.reads or all(p != outside.pid for p, _ in spy.reads)
    finally:
        outside.send_signal(signal.SIGKILL)
        outside.wait()
        ex.stop(job.id, grace_s=0, reason="test over")
        wait_event(ex, Exited)


def test_red36_r3_a_wrapper_started_with_its_source_as_c_is_still_read_past_its_source(spy: _ReadSpy) -> None:
    """No memfd (or an older version): ``python -I -c <~60 KB source> --job-dir D --launch -- ARGV``."""
    code = f'{local_mod._WRAPPER_SOURCE_START}."""\n# {"x" * 60_000}\nimport time; time.sleep(1000)\n'
    process = subprocess.Popen([sys.executable, "-I", "-c", code, "--job-dir", "/nowhere/users/ana/j-c", "--launch", "--",
                                *["A" * 131_000] * BIG_ARGS], start_new_session=True)
    try:
        wait_until(lambda: "--launch" in (local_mod._wrapper_args(process.pid) or []), "the process to exec")
        spy.reads.clear()
        args = local_mod._wrapper_args(process.pid)
        assert args is not None and args[args.index("--job-dir") + 1] == "/nowhere/users/ana/j-c", args
        assert max(size for _, size in spy.reads) <= local_mod._WRAPPER_ARGV_BYTES, spy.reads
    finally:
        process.kill()
        process.wait()


def test_red36_r2_a_marker_scan_reads_a_bounded_part_of_each_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The marker tracker (no writable cgroup) reads each process of the job's uid: at most ENVIRON_BYTES each."""
    group = tracking.MarkerTracker().create(f"j-env{os.getpid()}", uid=os.getuid())
    reads: list[tuple[str, int]] = []

    def counted_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        handle = builtins.open(path, *args, **kwargs)
        read = handle.read

        def counted(*a: Any) -> Any:
            data = read(*a)
            reads.append((str(path), len(data or b"")))
            return data

        handle.read = counted
        return handle

    monkeypatch.setattr(tracking, "open", counted_open, raising=False)
    env = {"PATH": os.environ.get("PATH", ""), tracking.MARKER_ENV: group.name,
           **{f"BIG{i}": "B" * 131_000 for i in range(BIG_ARGS)}}  # the spec's variables come after the marker
    member = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"], env=env, start_new_session=True)
    try:
        wait_until(lambda: member.pid in tracking.MarkerTracker().members(group), "the marked process to be found")
        assert reads and max(size for _, size in reads) <= tracking.ENVIRON_BYTES, max(reads, key=lambda r: r[1])
    finally:
        member.kill()
        member.wait()
