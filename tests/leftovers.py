"""Job wrappers a test leaves running, and how its teardown ends them (session 21: the wrapper of
``tests/services/test_newuser18_panel.py::test_newuser18_n8_rest_says_…`` was still alive minutes after
the full run; its ``services`` fixture closed the store and left the started job running).

Two parts:

* :func:`end_jobs` — the teardown of a fixture that owns a :class:`~jupyter_sched.executors.local.LocalExecutor`:
  every job it still watches is stopped at once (``SIGTERM``, ``SIGKILL`` with no grace) and polled until
  the executor reports it ended (its whole job group gone);
* :func:`wrappers_under` / :func:`kill_wrappers` — the net of ``tests/conftest.py``: after each test, the
  job wrappers this pytest process started whose job directory lies in that test's own ``tmp_path`` are
  ended and named in the session's summary (a fixture that forgot :func:`end_jobs`), and at the end of the
  session every wrapper under the session's temporary folder (module- and session-scoped fixtures).

A wrapper is told by its command line (``… --job-dir DIR … --launch -- ARGV``, :mod:`jupyter_sched.executors.wrapper`)
and is this process's child: a job of another test run, or a real server's, is never touched.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import psutil

__all__ = ["end_jobs", "job_dir_of", "kill_sigterm_ignorers", "kill_wrappers", "wrappers_under"]

_SIGTERM_BIT = 1 << (signal.SIGTERM - 1)  # in /proc/PID/status's SigIgn mask


def end_jobs(executor: Any, *, timeout_s: float = 20.0) -> list[str]:
    """Stop every job ``executor`` (a LocalExecutor) still watches, with no grace, and poll until it
    reports each ended.

    Returns:
        The ids of jobs still watched after ``timeout_s`` seconds (empty when all ended).
    """
    for job_id in sorted(executor.tracked()):
        executor.stop(job_id, grace_s=0.0)
    deadline = time.monotonic() + timeout_s
    while executor.tracked() and time.monotonic() < deadline:
        executor.poll()
        time.sleep(0.02)
    return sorted(executor.tracked())


def job_dir_of(process: psutil.Process) -> Path | None:
    """The ``--job-dir`` of a job wrapper's command line; None for any other process."""
    try:
        argv = process.cmdline()
    except psutil.Error:
        return None
    if "--launch" not in argv or "--job-dir" not in argv:
        return None
    at = argv.index("--job-dir")
    return Path(argv[at + 1]) if at + 1 < len(argv) and at < argv.index("--launch") else None


def _children(recursive: bool) -> list[psutil.Process]:
    """This process's children: on Linux the direct ones from ``/proc/self/task/*/children`` (a read per
    thread, not a scan of every process: this runs after every test); all descendants when ``recursive``."""
    if not recursive:
        try:
            pids = {int(pid) for task in Path("/proc/self/task").iterdir()
                    for pid in (task / "children").read_text().split()}
        except OSError:  # no such file (another kernel): the scan below
            pass
        else:
            found = []
            for pid in sorted(pids):
                with contextlib.suppress(psutil.Error):
                    found.append(psutil.Process(pid))
            return found
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def wrappers_under(folder: Path, *, recursive: bool = False) -> list[psutil.Process]:
    """The live job wrappers started by this process whose job directory lies in ``folder``: its direct
    children (an executor in this process starts them), or every descendant when ``recursive``."""
    found = []
    for child in _children(recursive):
        job_dir = job_dir_of(child)
        if job_dir is not None and job_dir.is_relative_to(folder):
            found.append(child)
    return found


def kill_wrappers(wrappers: list[psutil.Process], *, timeout_s: float = 10.0) -> list[Path]:
    """``SIGKILL`` each wrapper's process group (a wrapper leads its own session: its job runs in it) and
    wait until the wrappers are gone (reaped: they are this process's children).

    Returns:
        The job directories of the wrappers ended.
    """
    ended = []
    for wrapper in wrappers:
        job_dir = job_dir_of(wrapper)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(wrapper.pid, signal.SIGKILL)
        with contextlib.suppress(psutil.Error):
            wrapper.kill()
        if job_dir is not None:
            ended.append(job_dir)
    psutil.wait_procs(wrappers, timeout=timeout_s)
    return ended


def kill_sigterm_ignorers(job_ids: list[str]) -> list[int]:
    """``SIGKILL`` now the processes of these jobs (any wrapper on the host whose job directory is named by the
    id, and its descendants) that ignore ``SIGTERM``: a test's clean-up that has cancelled them, where such a
    process would hold its GPU for the whole stop grace (30 s in some modules) and end by the grace's own
    ``SIGKILL`` anyway. A process that does not ignore ``SIGTERM`` is left to the scheduler's stop.

    Returns:
        The pids killed.
    """
    wanted = set(job_ids)
    killed: list[int] = []
    if not wanted:
        return killed
    for process in psutil.process_iter():
        job_dir = job_dir_of(process)
        if job_dir is None or job_dir.name not in wanted:
            continue
        with contextlib.suppress(psutil.Error):
            for child in process.children(recursive=True):
                if _ignores_sigterm(child.pid):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(child.pid, signal.SIGKILL)
                        killed.append(child.pid)
    return killed


def _ignores_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & _SIGTERM_BIT)
    return False
