"""Tiny supervisor that runs one job's command and records how it ended.

Run as ``python <this file> --job-dir DIR -- ARGV...`` (or ``python -m
jupyter_sched.executors.wrapper``) by the local executor, as the leader of the job's process group.

Why it exists: after a server restart the job's process is no longer a child of the server,
so its exit status cannot be collected with ``wait()``. The wrapper is the child's parent for the
whole run; it writes, atomically:

* ``DIR/wrapper.json`` at start: ``{"pid", "create_time"}`` (its own identity; the group id is
  its pid), so a job whose handle was not yet persisted can still be found;
* ``DIR/exit.json`` at the end: ``{"exit_code", "finished_at", "signal"}`` — ``exit_code`` as
  :mod:`subprocess` reports it (negative = killed by that signal).

A re-adopted job whose wrapper left ``exit.json`` ends with its true state; one that left none
(the wrapper itself got ``SIGKILL``) is reported lost. The wrapper survives SIGTERM/SIGUSR1/
SIGINT/SIGHUP sent to the group (the child gets them; one that arrives before the child exists is
forwarded to it once it does), so it can record the child's end; it then sends SIGTERM to any
leftovers in the group, so stray grandchildren do not hold GPUs.

Only the standard library is imported: the wrapper starts in tens of milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType

__all__ = ["main", "write_json_atomic"]


def write_json_atomic(path: Path, data: dict[str, object]) -> None:
    """Write ``data`` as JSON to ``path`` via a temporary file and rename (never half-written)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _process_start_time(pid: int) -> float | None:
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # psutil missing or process gone: the executor falls back to the pid
        return None


_early: list[int] = []
_child_started = False


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    """Keep the wrapper alive (a handler, not SIG_IGN, which the child would inherit across exec).

    A signal that arrives before the child exists (a stop right after start) is remembered and
    forwarded once the child runs; later ones reach the child directly through the group.
    """
    if not _child_started:
        _early.append(signum)


def main(argv: list[str] | None = None) -> int:
    """Run the command after ``--`` and record its end; return an exit status for the wrapper."""
    global _child_started
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[0] != "--job-dir" or args[2] != "--":
        print("usage: wrapper.py --job-dir DIR -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    job_dir, command = Path(args[1]), args[3:]
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, _on_signal)
    write_json_atomic(job_dir / "wrapper.json", {"pid": os.getpid(), "create_time": _process_start_time(os.getpid())})
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        print(f"jupyter_sched: cannot start {command[0]!r}: {exc}", file=sys.stderr, flush=True)
        code, signame = 127, None
    else:
        _child_started = True
        for early in _early:
            child.send_signal(early)
        code = child.wait()
        signame = signal.Signals(-code).name if code < 0 else None
    write_json_atomic(job_dir / "exit.json", {"exit_code": code, "signal": signame,
                                              "finished_at": datetime.now(timezone.utc).isoformat()})
    try:
        os.killpg(os.getpgrp(), signal.SIGTERM)  # leftovers of the job; our own handler ignores it
        time.sleep(0.05)
    except OSError:
        pass
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
