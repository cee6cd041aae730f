"""Tiny supervisor that runs one job's command, as the job's owner, and records how it ended.

Run by the local executor as ``python <this file> --job-dir DIR --launch -- ARGV`` (as another
account: ``python -I /dev/fd/N ...``, a sealed in-memory copy of this file), already switched to the job's OS account and in the job's own
session, so it leads the job's process group. Only the standard library is imported (psutil
when available): the wrapper starts in tens of milliseconds with any Python 3.10+ interpreter the
account can run, wherever jupyter_sched itself is installed.

Launch (``--launch``): the wrapper first reads one JSON line from stdin and does nothing before
it arrives — the executor sends it once the wrapper sits in the job's cgroup, so not even a
first child can escape. EOF instead of a line means the executor gave up: exit 125, nothing run.
The line says ``{"cwd": dir or null, "files": {name: text}, "banner": text or null,
"env": {the job's own variables} or absent, "workers": [{env overlay}, ...] or absent, "members": the
``cgroup.procs`` of the job's tracking group or absent}``; as the
job's owner the wrapper then creates ``DIR`` (mode 0700), writes ``files`` into it (bare names,
mode 0600: carried cell, script or notebook content), opens ``DIR/output.log`` (0600, append)
as its stdout and stderr, writes ``banner`` there, enters ``cwd`` and starts ARGV with ``env``
added to its own environment: the job's own variables (``LD_PRELOAD``, ``PATH``…) reach only the
job's processes, never the wrapper (new user 12, N5). Everything
the job's owner can read is therefore created by the owner: the service never writes into a
user's directory.

Records, written atomically into ``DIR``:

* ``wrapper.json`` at start: ``{"pid", "create_time"}`` (its own identity; the group id is its
  pid), so a job whose handle was not yet persisted can still be found;
* with ``--report-fd N`` (a pipe the executor made, not the job's to write: the command does not inherit it), one line
  ``{"commands": [[pid, start time], …]}`` once its command (a gang: each worker) started: the executor keeps it in
  its own record and asks, when a stop comes, whether the command itself still ran (:func:`report_commands`; s41,
  verify40 V2: an ``exit.json`` the job wrote before a stop, while its command ran on, read as its own end);
* ``exit.json`` at the end: ``{"exit_code", "finished_at", "signal", "said", "worded", "before_signal"}`` —
  ``exit_code`` as :mod:`subprocess` reports it (negative = killed by that signal), ``said`` how many of a stop's signal
  records the log got, ``worded`` whether it got the stop's words, ``before_signal`` whether the command had ended
  before any signal reached the wrapper (its own end, whatever stop came later: its words are then not written;
  red39 R2) — written again once the leftovers
  ended, with ``"left": {"processes": [[pid, command, fate], …], "count", "grace_s", "gang"}`` when there were
  any (the executor says them in the job's message).

A stop's words (``{"stop": "cancelled by alice"}``, written as the log's last line once the job and its
leftovers ended) and, each sent before its signal, a record of the processes each of the stop's signals
went to (``{"signal": "SIGTERM", "processes": [[pid, command], …], …}``: :func:`signal_lines`, written
right after the job's output; newuser30 n16) come down the executor's pipe (stdin after the launch line)
or, from a server that adopted the job after a restart, through ``stop.fifo`` in ``DIR``
(:data:`STOP_FIFO`). What a wrapper the stop's SIGKILL ends first could not write, the executor writes
from outside.

The wrapper survives SIGTERM/SIGUSR1/SIGINT/SIGHUP sent to the group (the child gets them; one
that arrives before the child exists is forwarded once it does). It is a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``): a grandchild that calls ``setsid()`` and is orphaned is
re-parented to the wrapper, not to init, so it stays findable. When the command ends the wrapper
records its exit, sends SIGTERM to everything it still has below it (the processes of its tracking group where the
launch line names it, else its descendants — never a walk of the host's processes per process of the job: red37 R2,
:func:`_descendants`), SIGKILLs what is left after
``--leftover-grace`` seconds (default 3) and only then exits — the log then names each process it ended
(pid, command line escaped and cut: :func:`command_text`) and the signal it took (:func:`left_lines`;
newuser30 n16: a job's ``tensorboard &`` or ``sleep 1000 &`` was stopped and nobody was told).

A gang on this host (``workers``: one environment overlay per worker, e.g. its own
``CUDA_VISIBLE_DEVICES`` and ``RANK``) runs the command once per worker, all in the job's group,
all writing to ``output.log``. The gang is all-or-nothing: when one worker fails, the others get
SIGTERM; the job's exit code is the first failing worker's (0 when every worker succeeded).

What a job leaves in its folder (red team 26, R4): once the job and its leftovers ended, files and
folders in ``DIR`` beside the wrapper's own and the carried ones are removed when they are more than
:data:`LEFT_FILES` or hold more than :data:`LEFT_BYTES`, and the log's last line says so
(:func:`_sweep_left`): the folder sits on the service's log disk and is kept for the retention days.

Log cap (``--max-log-bytes N``, from ``c.SchedApp.max_log_mib``, or lower from the owner's total of kept logs
``c.SchedApp.max_user_log_mib``, then named by ``--log-cap-setting``; red-team 15, R12: one ``yes``
grew its log at 321 MiB/s toward a full disk under the store): the job keeps writing straight into
``output.log`` (no pipe the wrapper would have to copy at the job's rate), and a thread looks at the
file's size every 0.1 s (0.02 s once cut: :data:`_CAP_CHECK_S`). Past ``N`` bytes it cuts the file back to its first
``N`` bytes, writes one line ``[jupyter_sched] log truncated at … MiB (c.SchedApp.max_log_mib); the
job keeps running …`` after them, and from then on cuts whatever the job appends after that line.
The job keeps running; between two looks the file can hold what the job wrote in that time more
(it is cut at the next look, and for good once the job and its leftovers ended). The wrapper runs as the
job's account, which may stop it: the service keeps the cap too, from outside (:mod:`.outside_caps`,
red30 R3), writing the same line (:func:`truncated_line`).
"""

from __future__ import annotations

if __name__ == "__main__":
    # First thing, before the imports below: not dumpable (PR_SET_DUMPABLE 0), so the job — the same account — cannot
    # ptrace the wrapper or read, open or swap its descriptors through /proc (red33 R1: the job made the wrapper's
    # stdout a terminal it held; the service opened it). The job's own processes exec, which makes them dumpable
    # again. The window left is this interpreter's start-up, from its execve to this line.
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: there is no /proc/<pid>/fd to swap either
        pass

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType

__all__ = ["OWN_JSON_BYTES", "STOP_FIFO", "held_bytes", "main", "process_start_time", "tally", "truncated_line", "write_json_atomic"]

_PR_SET_CHILD_SUBREAPER = 36
_CAP_CHECK_S = (0.1, 0.02)  # seconds between looks at the log's size: before the cap, once it was reached
_NOT_LAUNCHED = 125
_NO_WORKDIR = 126


def write_json_atomic(path: Path, data: dict[str, object]) -> None:
    """Write ``data`` as JSON to ``path`` via a temporary file and rename (never half-written).

    The temporary file has a fresh random name and is created exclusively (``O_EXCL``), never
    through a symlink (``O_NOFOLLOW``) and without waiting (``O_NONBLOCK``): whatever the job's
    owner planted in the job directory — a FIFO or a symlink at a name it could guess — makes the
    write fail at once instead of hanging the wrapper (red-team finding 13) or writing elsewhere.

    Raises:
        OSError: the file could not be written (the temporary file is removed).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOCTTY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    for attempt in range(5):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(8).hex()}.tmp")
        try:
            fd = os.open(tmp, flags, 0o600)
            break
        except FileExistsError:
            if attempt == 4:
                raise
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def process_start_time(pid: int) -> float | None:
    """Start time of ``pid`` in seconds since the epoch, as psutil's ``create_time()`` gives it
    (``/proc/stat`` btime + start ticks / CLK_TCK when psutil is not importable); None if gone."""
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except ImportError:
        pass
    except Exception:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        with open("/proc/stat") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime"))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


_early: list[int] = []
_child_started = False
_woken: list[int] = []
"""The read end of the wrapper's wakeup pipe (:func:`signal.set_wakeup_fd`): Python's C-level handler writes a byte
into it the moment a signal reaches the wrapper, before the ``wait`` that returns the command's end goes back to Python
(:func:`_signalled`; red39 R2)."""


def _watch_signals() -> None:
    """Open the wakeup pipe (before the handlers: no signal is missed); nothing where it cannot be had."""
    try:
        read, write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (OSError, ValueError, AttributeError):  # not Linux, or not the main thread (a test calling main)
        return
    _woken[:] = [read]


def _signalled() -> bool | None:
    """Whether a signal had reached the wrapper when it saw its command end (the job's group gets a stop's signals, the
    wrapper — its leader — at the same instant as its processes, so none of them can have ended by one the wrapper had
    not got yet); None: not known (no wakeup pipe)."""
    if not _woken:
        return None
    try:
        return bool(os.read(_woken[0], 64)) or bool(_early)
    except BlockingIOError:
        return bool(_early)
    except OSError:
        return None


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    """Keep the wrapper alive (a handler, not SIG_IGN, which the child would inherit across exec).

    A signal that arrives before the child exists (a stop right after start) is remembered and
    forwarded once the child runs; later ones reach the child directly through the group.
    """
    if not _child_started:
        _early.append(signum)


def _become_subreaper() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: orphans go to init, as without the wrapper
        pass


PROC_STAT_BYTES = 4096
"""Most bytes of a ``/proc/<pid>/stat`` read (its state and parent follow the command name, at most 16 characters:
the whole line is well under this)."""
_members_file: list[str] = []
"""The job's tracking group's member list — ``cgroup.procs`` of its cgroup, named by the launch line (``"members"``)
when the executor tracks the job by a cgroup: exactly the job's processes, read without looking at anyone else's."""
_children_files: list[bool] = []
"""Whether this kernel has ``/proc/<pid>/task/<tid>/children`` (CONFIG_PROC_CHILDREN), found at the first look."""


def _stat_fields(pid: int | str) -> list[bytes]:
    """The fields of ``/proc/<pid>/stat`` after the command name (``[state, ppid, …]``); [] when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb", buffering=0) as fh:
            raw = fh.read(PROC_STAT_BYTES)
    except OSError:
        return []
    return raw[raw.rfind(b")") + 1:].split()


def _group_members() -> list[int] | None:
    """The processes of the job's tracking group but the wrapper (:data:`_members_file`); None where there is none,
    it cannot be read, or it does not hold this wrapper (then it is not this job's group)."""
    if not _members_file:
        return None
    try:
        with open(_members_file[0], "rb") as fh:
            raw = fh.read()  # the job's own processes, as many as its pids limit lets it have
    except OSError:
        return None
    pids = list(dict.fromkeys(int(word) for word in raw.split() if word.isdigit()))  # v1 may repeat one
    me = os.getpid()
    return [pid for pid in pids if pid != me] if me in pids else None


def _children_listed(pid: int) -> list[int] | None:
    """``pid``'s children from ``/proc/<pid>/task/*/children`` (each thread's); None where the kernel has no such
    file; [] when ``pid`` is gone."""
    if not _children_files:
        _children_files.append(os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"))
    if not _children_files[0]:
        return None
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(word) for word in fh.read().split() if word.isdigit())
        except OSError:
            continue
    return out


def _descendants() -> dict[int, str]:
    """Every process of the job below the wrapper, with its state letter (``/proc/<pid>/stat``; gone ones left out).

    Read from the job's tracking group where the executor named it (:data:`_members_file`), else by following
    ``/proc/<pid>/task/*/children`` down from the wrapper, else from ONE pass over ``/proc`` (each process's
    ``stat`` read once, bounded) building a parent → children map: never a pass over the host's processes per
    process of the job (red37 R2: with another account's 15,000 processes, one pass per descendant per look held a
    job's end — its GPUs, its billing — 36 s for 8 leftovers, 119 s for 48). Each process of the job has its
    ``stat`` read once per call."""
    states: dict[int, str] = {}
    members = _group_members()
    if members is not None:
        for pid in members:
            if fields := _stat_fields(pid):
                states[pid] = fields[0].decode("ascii", "replace")
        return states
    me = os.getpid()
    if _children_listed(me) is not None:
        todo = [me]
        while todo:
            for child in _children_listed(todo.pop()) or []:
                if child not in states and child != me and (fields := _stat_fields(child)):
                    states[child] = fields[0].decode("ascii", "replace")
                    todo.append(child)
        return states
    below: dict[int, list[tuple[int, str]]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs
        return states
    for name in entries:
        if name.isdigit() and len(fields := _stat_fields(name)) > 1 and fields[1].isdigit():
            below.setdefault(int(fields[1]), []).append((int(name), fields[0].decode("ascii", "replace")))
    todo = [me]
    while todo:
        for child, state in below.get(todo.pop(), []):
            if child not in states and child != me:
                states[child] = state
                todo.append(child)
    return states


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_leftovers(grace_s: float) -> list[list[object]]:
    """SIGTERM the group and every descendant, SIGKILL what remains after ``grace_s`` seconds.

    Returns:
        What was ended, in the order found: ``[pid, command, fate]`` — its command line as
        :func:`command_text` shows it, and ``"SIGTERM"`` (it ended after SIGTERM), ``"SIGKILL"`` (still
        running ``grace_s`` later) or ``"unkillable"`` (still there after SIGKILL: uninterruptible sleep; the
        executor keeps ending it). Listed before the first signal: a process that ends on it is named too
        (newuser30 n16: a job's leftovers were stopped and nobody was told).
    """
    found: dict[int, list[object]] = {}

    def look() -> dict[int, str]:  # the job's live processes with their state letters: one read of each
        left = {pid: state for pid, state in _descendants().items() if state not in ("Z", "X")}
        for pid in left:
            if pid not in found:
                found[pid] = [pid, _command_of(pid), "SIGTERM"]
        return left

    _reap()
    look()
    try:
        os.killpg(os.getpgrp(), signal.SIGTERM)  # our own handler ignores it
    except OSError:
        pass
    deadline = time.monotonic() + grace_s
    signum = signal.SIGTERM
    while True:
        _reap()
        left = look()
        if not left:
            return list(found.values())
        for pid in left:
            try:
                os.kill(pid, signum)
            except OSError:
                pass
            if signum == signal.SIGKILL:
                found[pid][2] = "SIGKILL"
        if signum == signal.SIGKILL and time.monotonic() > deadline + grace_s and (
                time.monotonic() > deadline + grace_s + KILLED_WAIT_S or all(s == "D" for s in left.values())):
            # a SIGKILLed process not in uninterruptible sleep is still dying (a loaded host takes a while to tear
            # one down): it is waited for, up to KILLED_WAIT_S. Only one in uninterruptible sleep (state D) is
            # called unkillable — from its state, never from the time passed (red37 R2: slow looks made 1,000 dying
            # processes "uninterruptible sleep"); the others keep "sent SIGKILL". The executor goes on ending both.
            for pid, state in left.items():
                if state == "D":
                    found[pid][2] = "unkillable"
            return list(found.values())
        if time.monotonic() >= deadline:
            signum = signal.SIGKILL
        time.sleep(0.05)


KILLED_WAIT_S = 10.0
"""Seconds past its grace a job's leftover sent SIGKILL is waited for while it is not in uninterruptible sleep (it is
dying) before it is called unkillable."""
COMMAND_CHARS = 120
"""Most characters of a process's command line a job's log names it by (the rest is cut, ``…``)."""
LISTED = 10
"""Most processes named one per line in a job's log where its end or a stop signals them; more are counted."""


def command_text(argv: list[str], *, limit: int = COMMAND_CHARS) -> str:
    """A process's command line as ``ps`` shows it — its arguments joined by spaces — with what would
    command a terminal shown, never obeyed (a control or format character as ``\\x1b``, ``\\u202e``: the
    line is the job's own and read by its owner and admins), cut to ``limit`` characters (``…``).

    Only the first ``limit + 1`` characters are joined and escaped: an escape only lengthens a character, so
    they decide the cut text (a 2 MB argv costs what 121 characters cost; red36 R2)."""
    parts: list[str] = []
    size = 0
    for arg in argv:
        parts.append((arg if not parts else " " + arg)[:limit + 1])
        size += len(parts[-1])
        if size > limit:
            break
    head = "".join(parts)[:limit + 1]
    text = "".join(ch if ch.isprintable() or ch == " " else
                   (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000
                    else f"\\U{ord(ch):08x}")
                   for ch in head)
    return text if len(text) <= limit else text[:limit - 1] + "…"


COMMAND_BYTES = COMMAND_CHARS * 8
"""Most bytes of a process's ``/proc/<pid>/cmdline`` read to name it (:func:`read_argv`): its command line is as
long as its owner made it (up to ARG_MAX, ~2 MB and more), the name shows :data:`COMMAND_CHARS` (red36 R2)."""


def read_argv(pid: int, most: int = COMMAND_BYTES) -> list[str]:
    """The arguments in the first ``most`` bytes of ``pid``'s ``/proc/<pid>/cmdline`` (the last one cut where the
    read stops; undecodable bytes as U+FFFD); [] where it has none (a zombie, a kernel thread). One read of at most
    ``most`` bytes whatever the process's size — every reader of another account's command line goes through here.

    Raises:
        OSError: it cannot be read (gone: FileNotFoundError/ProcessLookupError; hidden: PermissionError).
    """
    with open(f"/proc/{pid}/cmdline", "rb", buffering=0) as fh:
        raw = fh.read(most)
    argv = [a.decode("utf-8", errors="replace") for a in (raw or b"").split(b"\0")]
    if argv and argv[-1] == "":
        argv.pop()
    return argv


def _command_of(pid: int) -> str:
    """``pid``'s command line (:func:`command_text`); ``[name]`` where it has none (a zombie, a process
    that cleared it), ``?`` where it cannot be read."""
    try:
        argv = read_argv(pid)
        if argv:
            return command_text(argv)
        with open(f"/proc/{pid}/comm", "rb") as fh:
            return command_text([f"[{fh.read().decode('utf-8', errors='replace').strip()}]"])
    except OSError:
        return "?"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('s') else 's'}"


def process_lines(processes: list[list[object]], more: int = 0) -> list[str]:
    """One log line per process (``[pid, command]`` or ``[pid, command, fate]``), at most :data:`LISTED`,
    then how many more (``more``: others not in the list)."""
    fates = {"SIGTERM": "ended on SIGTERM", "SIGKILL": "sent SIGKILL",
             "unkillable": "still there after SIGKILL: uninterruptible sleep; the service goes on ending it"}
    lines = []
    for entry in processes[:LISTED]:
        fate = fates.get(str(entry[2]), str(entry[2])) if len(entry) > 2 else None
        lines.append(f"[jupyter_sched]   pid {entry[0]}: {entry[1]}" + (f" ({fate})" if fate else ""))
    rest = len(processes) - LISTED + more if len(processes) > LISTED else more
    if rest > 0:
        lines.append(f"[jupyter_sched]   and {_plural(rest, 'process')} more")
    return lines


def processes_in(raw: object, *, most: int = LISTED) -> list[list[object]]:
    """``[[pid, command, fate?], ...]`` from a record another process wrote (the executor's down the pipe, the
    wrapper's in ``exit.json``; the job's owner may write either place): well-formed entries only, at most
    ``most``, each command shown as :func:`command_text` shows one (never obeyed, cut)."""
    out: list[list[object]] = []
    for entry in raw if isinstance(raw, list) else []:
        if len(out) >= most:
            break
        if not isinstance(entry, list) or len(entry) < 2 or not isinstance(entry[0], int) or isinstance(entry[0], bool):
            continue
        out.append([entry[0], command_text([str(entry[1])]),
                    *([command_text([str(entry[2])], limit=40)] if len(entry) > 2 else [])])
    return out


def count_in(raw: object, least: int = 0) -> int:
    """A count from such a record: a non-negative int (bounded), else ``least``."""
    return max(least, min(raw, 1 << 30)) if isinstance(raw, int) and not isinstance(raw, bool) else least


def left_lines(processes: list[list[object]], *, ended: str, grace_s: float, more: int = 0, gang: bool = False) -> list[str]:
    """The log's lines for what a job's main process (``gang``: its workers) left running and the wrapper ended
    (newuser30 n16): ``ended``, how it ended (``exit code 0``, ``killed by SIGTERM``); ``processes`` as
    :func:`_end_leftovers` returns them; ``grace_s``, the seconds between SIGTERM and SIGKILL."""
    count = len(processes) + more
    killed = sum(1 for entry in processes if len(entry) > 2 and entry[2] in ("SIGKILL", "unkillable"))
    they = "it was" if count == 1 else "they were"
    then = f", then SIGKILL to the {killed} still running {grace_s:g} s later" if killed else ""
    return [f"[jupyter_sched] the job's {'workers' if gang else 'main process'} ended ({ended}) and left "
            f"{_plural(count, 'process')} running; "
            f"jobs do not leave processes behind, so {they} sent SIGTERM{then}:", *process_lines(processes, more)]


def signal_lines(record: dict[str, object]) -> list[str]:
    """The log's lines for one signal the service sent a job's processes (a record of the executor's:
    ``{"why": "stop" | "wrapper", "signal": "SIGTERM", "after_s": seconds since the first, "processes":
    [[pid, command], ...], "more": others not listed}``; newuser30 n16): a stop's (cancel, preemption, time
    limit: before the stop's words, the log's last line) or those of a job whose wrapper ended and left processes
    running."""
    processes = processes_in(record.get("processes"))
    more = count_in(record.get("more"))
    count = len(processes) + more
    name = command_text([str(record.get("signal") or "a signal")], limit=20)
    after_s = record.get("after_s")
    after = float(after_s) if isinstance(after_s, (int, float)) and 0 < after_s < 1e9 else 0.0
    what = f"{name} (ask to checkpoint)" if name == "SIGUSR1" else name
    if record.get("why") == "wrapper":
        head = (f"{after:g} s later the service sent {what} to the {count} still running:" if after else
                f"the job's wrapper ended and left {_plural(count, 'process')} running; jobs do not leave processes "
                f"behind, so the service sent {what} to {'it' if count == 1 else 'them'}:")
    else:
        head = (f"{after:g} s after the stop began, the scheduler sent {what} to the {count} still running:" if after
                else f"the scheduler sent {what} to the job's {_plural(count, 'process')} to stop it:")
    return [f"[jupyter_sched] {head}", *process_lines(processes, more)]


_control: list[object] = []
"""``[fd, bytes already read]`` of the executor's pipe (this process's stdin before the job ran),
which stays open after the launch line: a stop sends ``{"stop": "cancelled by alice"}`` on it
before any signal, and the wrapper ends the log with those words once the job ended."""


LAUNCH_INLINE_BYTES = 4096
"""The longest launch line sent down the pipe itself (PIPE_BUF: written at once, never waited on); a longer one — a
carried script or notebook — comes in an in-memory file whose descriptor the line names (red32 R7)."""


def _read_launch_file(fd: object) -> bytes:
    """All of the in-memory file ``fd`` the service passed (then closed: the job never inherits it)."""
    if not isinstance(fd, int) or isinstance(fd, bool) or fd < 3:
        raise ValueError("the launch line names no launch file")
    data = bytearray()
    try:
        while chunk := os.read(fd, 1 << 20):
            data += chunk
    finally:
        os.close(fd)
    return bytes(data)


def _read_launch_line() -> bytes:
    """The first line of stdin, read from the descriptor itself: a buffered reader could take the
    line after it too (a stop's, sent right after the start), which :func:`_heard` reads."""
    data = bytearray()
    while b"\n" not in data:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        data += chunk
    line, _, rest = bytes(data).partition(b"\n")
    _control[:] = [os.dup(0), rest]  # a dup is not inherited by the job (PEP 446)
    return line


STOP_FIFO = "stop.fifo"
"""The FIFO in the job directory on which the wrapper also hears a stop's words: from a server that
re-adopted the job after a restart, whose pipe to this wrapper died with the server that spawned it
(new user 19, N3). Created by the wrapper as the owner (mode 0600); its read end is held open until
the wrapper ends, so a writer's non-blocking open finds a reader."""
_stop_fifo: list[int] = []


def _listen_for_stops(job_dir: Path) -> None:
    """Create :data:`STOP_FIFO` afresh and hold its read end (non-blocking, not inherited by the job);
    nothing when the job directory cannot have one (the pipe still carries the words)."""
    path = job_dir / STOP_FIFO
    try:
        path.unlink(missing_ok=True)
        os.mkfifo(path, 0o600)
        _stop_fifo[:] = [os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_NOFOLLOW", 0))]
    except OSError:
        _stop_fifo.clear()


def _stop_listening(job_dir: Path) -> None:
    """Close :data:`STOP_FIFO`'s read end and remove it (the job and its leftovers ended)."""
    if not _stop_fifo:
        return
    try:
        os.close(_stop_fifo.pop())
        (job_dir / STOP_FIFO).unlink(missing_ok=True)
    except OSError:
        pass


def _drained(fd: int, data: bytes = b"") -> bytes:
    """``data`` and whatever ``fd`` holds now, read without waiting."""
    os.set_blocking(fd, False)
    try:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    except OSError:  # nothing more now (EAGAIN), or the pipe is gone
        pass
    return data


def _heard() -> tuple[str | None, list[dict[str, object]]]:
    """What the servers sent: the last stop reason — from the one that spawned this wrapper down its
    pipe, or one that re-adopted the job through :data:`STOP_FIFO` (None: the job was not stopped by the
    scheduler) — and the records of the signals a stop sent the job's processes (``{"signal": …}``,
    :func:`signal_lines`; each sent before its signal), in the order sent."""
    data = b""
    if _control:
        fd, sent = _control
        assert isinstance(fd, int) and isinstance(sent, bytes)
        data = _drained(fd, sent)
    if _stop_fifo:
        data += b"\n" + _drained(_stop_fifo[0])  # later: a server that adopted the job is the newer one
    words = None
    records: list[dict[str, object]] = []
    for line in data.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and isinstance(message.get("stop"), str):
            words = message["stop"][:500]
        elif isinstance(message, dict) and isinstance(message.get("signal"), str) and len(records) < 20:
            records.append(message)
    return words, records


def _line_break(job_dir: Path) -> str:
    """``"\\n"`` when the job's output does not end a line (its last line is not joined to ours)."""
    try:
        fd = os.open(job_dir / "output.log", os.O_RDONLY | os.O_NOCTTY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return ""
    try:
        size = os.fstat(fd).st_size
        return "\n" if size and os.pread(fd, 1, size - 1) != b"\n" else ""
    except OSError:
        return ""
    finally:
        os.close(fd)

def truncated_line(cap: int, setting: str, *, joined: bool) -> bytes:
    """The line a log cut at its ``cap`` (bytes) ends with, after its first ``cap`` bytes (``joined``: they do
    not end a line, so it starts with one). The one wording of the cut: the wrapper's and the service's
    (:mod:`.outside_caps`, red30 R3) write the same bytes, so either may cut the file again."""
    return (("\n" if joined else "") + f"[jupyter_sched] log truncated at {cap / 2**20:g} MiB ({setting}); the "
            "job keeps running, its further output is not kept\n").encode()


class _LogCap:
    """Keeps ``output.log`` to its first ``cap`` bytes plus one closing line (module docstring)."""

    def __init__(self, job_dir: Path, cap: int, setting: str = "c.SchedApp.max_log_mib") -> None:
        self.cap = cap
        self.setting = setting
        self.keep: int | None = None  # the size the file is held to once the cap was reached
        self.fd = os.open(job_dir / "output.log",
                          os.O_RDWR | os.O_NOCTTY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="log-cap", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(_CAP_CHECK_S[self.keep is not None]):
            self.check()

    def check(self) -> None:
        """Cut the file back to the cap (the first time: and write the closing line after it)."""
        try:
            if self.keep is None:
                if os.fstat(self.fd).st_size <= self.cap:
                    return
                os.ftruncate(self.fd, self.cap)
                line = truncated_line(self.cap, self.setting,
                                      joined=self.cap > 0 and os.pread(self.fd, 1, self.cap - 1) != b"\n")
                os.pwrite(self.fd, line, self.cap)  # over whatever the job appended since the cut
                self.keep = self.cap + len(line)
            if os.fstat(self.fd).st_size > self.keep:
                os.ftruncate(self.fd, self.keep)
        except OSError:  # the job replaced or broke its own log: nothing left to hold
            pass

    def stop(self) -> None:
        """Stop watching and hold the file to the cap once more (the job's processes ended)."""
        self._done.set()
        self._thread.join()
        self.check()

    def close(self) -> None:
        """After the leftovers ended: cut what they appended after the last line (once capped)."""
        if self.keep is not None:
            try:
                if os.fstat(self.fd).st_size > self.keep:
                    os.ftruncate(self.fd, self.keep)
            except OSError:
                pass
        os.close(self.fd)


LEFT_FILES = 256
"""The most files and folders a job may leave in its job folder beside the wrapper's own and the
carried ones (:func:`_sweep_left`)."""
LEFT_BYTES = 64 << 20
"""The most bytes they may hold (64 MiB)."""
OWN_JSON_BYTES = 64 << 10
"""The most bytes ``exit.json``, ``wrapper.json`` or ``outcome.json`` may hold after the job (a few hundred
written by the wrapper or the notebook runner): a bigger one is the job's own write under that name and is
removed (red28 R5)."""
_OWN_JSON = frozenset({"exit.json", "wrapper.json", "outcome.json"})
CARRIED_NOTEBOOK = "input.ipynb"
"""The name a carried notebook (``notebook_json``) is written under in the job folder, whatever it is called."""
OWN_NAMES = frozenset({"output.log", "executed.ipynb", STOP_FIFO, CARRIED_NOTEBOOK, *_OWN_JSON})
"""Every name the wrapper, the notebook runner and the executor write or read in a job folder — the ONE list: a
carried script (or notebook) may take none of them (red39 R10: ``script: "output.log"`` became the job's log,
``wrapper.json`` was replaced by the wrapper's own record and the user's script never ran)."""


def _own_file(entry: os.DirEntry[str], *, notebook: bool, log_key: tuple[int, int] | None = None) -> bool:
    """Whether ``entry`` is a file the wrapper or runner keeps in the job folder after the job (red28 R5):
    ``output.log`` (bounded by the log caps) when it is a regular file and, with ``log_key`` (the ``(st_dev,
    st_ino)`` of this wrapper's stdout), that very file; one of :data:`_OWN_JSON` that is a regular file of at
    most :data:`OWN_JSON_BYTES`; ``executed.ipynb`` of a notebook job, a regular file (counted in its owner's
    total of kept job folders: :mod:`.log_budget`). Any other name, a ``.*.tmp`` included (the wrapper's atomic
    writes leave none behind), is the job's — and so is a folder, link or other file under the log's name
    (red33 R4: a job renamed a file, or a folder of 30,000 files, over ``output.log`` and the sweep kept it
    by its name)."""
    if entry.name in ("output.log", "executed.ipynb"):
        if entry.name == "executed.ipynb" and not notebook:
            return False
        info = regular_file(entry)
        return info is not None and (entry.name != "output.log" or log_key is None
                                     or (info.st_dev, info.st_ino) == log_key)
    if entry.name not in _OWN_JSON:
        return False
    try:
        return entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_size <= OWN_JSON_BYTES
    except OSError:
        return False


def regular_file(entry: os.DirEntry[str]) -> os.stat_result | None:
    """``entry``'s own ``stat`` (no link followed) when it is a regular file; None otherwise or unreadable."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def stdout_key() -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of this process's stdout when it is a regular file (the wrapper's: the log); None
    otherwise."""
    try:
        info = os.fstat(1)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


TREE_DEPTH = 64
"""The most folders held open at once when a job folder's leftovers are counted or removed. Trees are
walked with an explicit stack, never by recursion (red29 R5: a job that left a 3,000-deep chain of
folders made ``os.fwalk`` raise RecursionError in the engine's tick, at every later launch of its
account, and in this wrapper's own sweep): a folder deeper than this is counted as too many (so it is
removed) and, when removing, moved up to the top folder and removed from there."""
TREE_MOST = 100_000
"""The most entries counted in one tree: past it a count reads as ``TREE_MOST + 1`` ("more than")."""


def _open_folder(name: str, dir_fd: int | None) -> int:
    """A descriptor of the folder ``name`` (in ``dir_fd``), never through a link (OSError: not a folder)."""
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0),
                   dir_fd=dir_fd)


def held_bytes(info: os.stat_result) -> int:
    """The bytes an entry is counted for where its owner's total is kept (:mod:`.log_budget`): its length or the
    disk it holds, whichever is more (red35 R1: a file given blocks past its end — ``fallocate`` with
    ``FALLOC_FL_KEEP_SIZE`` — reads 0 bytes long; a folder of many entries holds blocks of its own)."""
    return max(info.st_size, getattr(info, "st_blocks", 0) * 512)


def _listing(fd: int, most: int, files_only: bool = False, allocated: bool = False) -> tuple[list[str], int, int]:
    """``(subfolder names, entries, bytes)`` directly in the folder ``fd`` (at most ``most`` entries read;
    ``files_only``: entries and bytes of what is not a folder, bytes of regular files; ``allocated``: each
    entry's :func:`held_bytes`)."""
    folders: list[str] = []
    count = size = 0
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                folder = stat.S_ISDIR(info.st_mode)
                if folder:
                    folders.append(entry.name)
                if not files_only:
                    count, size = count + 1, size + (held_bytes(info) if allocated else info.st_size)
                elif not folder:
                    count, size = count + 1, size + (info.st_size if stat.S_ISREG(info.st_mode) else 0)
                if count > most:
                    break
    except OSError:
        pass
    return folders, count, size


def tree_size(top: int, *, most: int = TREE_MOST, files_only: bool = False,
              allocated: bool = False) -> tuple[int, int]:
    """``(entries, bytes)`` below the open folder ``top`` (closed here), nothing followed, walked with a
    stack of at most :data:`TREE_DEPTH` open folders; more than ``most`` entries, or a folder deeper than
    :data:`TREE_DEPTH`, reads as ``most + 1`` entries. ``files_only``: what is not a folder, and the bytes
    of regular files; ``allocated``: each entry's :func:`held_bytes`."""
    count = size = 0
    frames: list[tuple[int, list[str]]] = []
    try:
        folders, count, size = _listing(top, most, files_only, allocated)
        frames.append((top, folders))
        while frames and count <= most:
            fd, folders = frames[-1]
            if not folders:
                os.close(frames.pop()[0])
                continue
            name = folders.pop()
            if len(frames) >= TREE_DEPTH:
                count = most + 1  # too deep to be anything a job folder keeps
                break
            try:
                child = _open_folder(name, fd)
            except OSError:
                continue
            inner, n, b = _listing(child, most - count, files_only, allocated)
            frames.append((child, inner))
            count, size = count + n, size + b
    finally:
        for fd, _ in frames:
            os.close(fd)
    return min(count, most + 1), size


def tally(entry: os.DirEntry[str], dir_fd: int | None = None, *, most: int = TREE_MOST,
          allocated: bool = False) -> tuple[int, int]:
    """``(files and folders, bytes)`` at ``entry``, a folder counted with all below it (never through a link,
    never by recursion: :func:`tree_size`; more than ``most`` reads as ``most + 1``);
    ``dir_fd``: the descriptor ``entry`` was listed from (``os.scandir(fd)``); ``allocated``: each entry's
    :func:`held_bytes`, the folder's own included."""
    try:
        if not entry.is_dir(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)
            return 1, held_bytes(info) if allocated else info.st_size
        top = _open_folder(entry.name if dir_fd is not None else entry.path, dir_fd)
        own = held_bytes(os.fstat(top)) if allocated else 0
    except OSError:
        return 1, 0
    count, size = tree_size(top, most=most, allocated=allocated)
    return min(count + 1, most + 1), size + own


def remove_tree(name: str, dir_fd: int) -> None:
    """Remove ``name`` in the folder ``dir_fd`` (a folder with all below it; a file or link itself), never
    through a link and never by recursion: a stack of at most :data:`TREE_DEPTH` open folders, a deeper
    folder moved up into ``dir_fd`` (as ``.jupyter_sched-removing-N``) and removed from there. Errors are
    ignored (what cannot be removed stays); the work is bounded (a tree someone keeps growing meanwhile
    is left part removed) and linear in the entries: each folder is listed once for all its entries — its
    files unlinked, its empty folders removed, the others kept to go down into — and once more when they are
    done (red34 R2: a listing per subfolder made a folder of 40,000 empty folders ~10⁹ entry reads)."""
    work, moved, steps = [name], 0, 0
    while work and steps < 4 * TREE_MOST:
        top_name = work.pop()
        try:
            top = _open_folder(top_name, dir_fd)
        except OSError:
            with _suppressed():
                os.unlink(top_name, dir_fd=dir_fd)
            continue
        frames = [_Frame(top, top_name)]
        try:
            while frames and steps < 4 * TREE_MOST:
                steps += 1
                frame = frames[-1]
                if not frame.below and frame.listings < _LISTINGS:
                    frame.below = _clear_listing(frame.fd, frame.stuck)
                    frame.listings += 1
                if not frame.below:
                    os.close(frame.fd)
                    frames.pop()
                    if frames:
                        try:
                            os.rmdir(frame.name, dir_fd=frames[-1].fd)
                        except OSError:  # something in it could not go: never gone down into again
                            frames[-1].stuck.add(frame.name)
                    continue
                sub = frame.below.pop()
                if len(frames) >= TREE_DEPTH:
                    moved += 1
                    new = f".jupyter_sched-removing-{os.getpid()}-{moved}"
                    try:
                        os.rename(sub, new, src_dir_fd=frame.fd, dst_dir_fd=dir_fd)
                        work.append(new)
                    except OSError:
                        frame.stuck.add(sub)
                    continue
                try:
                    frames.append(_Frame(_open_folder(sub, frame.fd), sub))
                except OSError:
                    frame.stuck.add(sub)
        finally:
            for frame in frames:
                os.close(frame.fd)
        with _suppressed():
            os.rmdir(top_name, dir_fd=dir_fd)


_LISTINGS = 3
"""Most listings of one folder by :func:`remove_tree`: all its entries, then what its subfolders' removal left
(and anything made meanwhile), then once more; a folder still growing after that is left part removed."""


class _Frame:
    """A folder :func:`remove_tree` is in: its descriptor and name, names in it that could not be removed, its
    subfolders still to go down into (from its last listing) and how often it was listed."""

    __slots__ = ("below", "fd", "listings", "name", "stuck")

    def __init__(self, fd: int, name: str) -> None:
        self.fd, self.name = fd, name
        self.stuck: set[str] = set()
        self.below: list[str] = []
        self.listings = 0


def _clear_listing(fd: int, stuck: set[str]) -> list[str]:
    """One listing of the folder ``fd``: every non-folder unlinked, every empty subfolder removed; the names of
    the subfolders left (not empty) to go down into ([] when the folder cannot be listed)."""
    below: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.name in stuck:
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        try:
                            os.rmdir(entry.name, dir_fd=fd)
                        except OSError:
                            below.append(entry.name)
                        continue
                    os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    stuck.add(entry.name)
    except OSError:
        return []
    return below


class _suppressed:
    """``with _suppressed():`` ignores an OSError (contextlib costs the wrapper's start-up an import)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, trace: object) -> bool:
        return isinstance(value, OSError)


def _sweep_left(job_dir: Path, carried: set[str], *, notebook: bool = False,
                log_key: tuple[int, int] | None = None) -> str | None:
    """After the job and its leftovers ended: what the job left in its own folder beside the wrapper's
    files (:func:`_own_file`: ``output.log``, ``exit.json``… at their real sizes; ``executed.ipynb`` only
    for a ``notebook`` job) and the ``carried`` ones, removed when it is more than :data:`LEFT_FILES`
    files or :data:`LEFT_BYTES` bytes; a file under the wrapper's own names over :data:`OWN_JSON_BYTES`
    (or not a regular file) is the job's and removed whatever the rest holds (red28 R5: 100 MiB each
    under ``outcome.json``, ``wrapper.json``, ``.big.tmp`` were kept); ``output.log`` is the wrapper's only as
    the inode ``log_key`` (its stdout, :func:`stdout_key`) when given (red33 R4). Returns the log line that says
    so (None: nothing removed).

    The job folder lies on the service's log disk (often the root file system) and is kept with the
    job for ``retention_finished_jobs_days``; a job writes there as its owner, so one job could leave
    300 MB and 20,000 files in it, outside ``max_log_mib`` (red team 26, R4). A job's outputs belong in
    its owner's home or another folder of theirs; a few small files left here (a job whose working
    folder is this one) are kept.
    """
    try:
        folder = _open_folder(str(job_dir), None)
    except OSError:
        return None
    try:
        return _sweep_folder(folder, job_dir, carried, notebook=notebook, log_key=log_key)
    finally:
        os.close(folder)


def _sweep_folder(folder: int, job_dir: Path, carried: set[str], *, notebook: bool,
                  log_key: tuple[int, int] | None) -> str | None:
    """:func:`_sweep_left` in the open job folder ``folder`` (trees counted and removed by descriptor,
    never by recursion: red29 R5)."""
    try:
        with os.scandir(folder) as listing:
            entries = [e for e in listing
                       if e.name not in carried and not _own_file(e, notebook=notebook, log_key=log_key)]
    except OSError:
        return None
    files = size = 0
    for entry in entries:
        count, used = tally(entry, folder)
        files, size = files + count, size + used
    if files <= LEFT_FILES and size <= LEFT_BYTES:
        entries = [e for e in entries if e.name in _OWN_JSON or e.name in ("executed.ipynb", "stop.fifo")
                   or e.name.endswith(".tmp")]  # a name the service's files are written through
        if not entries:
            return None
        files = size = 0
        for entry in entries:
            count, used = tally(entry, folder)
            files, size = files + count, size + used
        names = ", ".join(sorted(e.name for e in entries))
        for entry in entries:
            remove_tree(entry.name, folder)
        return (f"[jupyter_sched] the job left {size / 2**20:.3g} MiB in its job folder {job_dir} under the "
                f"service's own file names ({names}): they were removed; write a job's outputs into your home or "
                "another folder of yours")
    for entry in entries:
        remove_tree(entry.name, folder)
    # past the count's bound: that many, or folders nested deeper than it walks (red29: 3,000 folders deep read
    # "more than 100,000 files")
    said = (f"more than {TREE_MOST:,} files or folders nested over {TREE_DEPTH} deep" if files > TREE_MOST
            else f"{files:,} files")
    return (f"[jupyter_sched] the job left {said} ({size / 2**20:.3g} MiB) in its job folder {job_dir} beside "
            f"its log, over the {LEFT_FILES} files / {LEFT_BYTES >> 20} MiB a job folder keeps: they were removed; "
            "write a job's outputs into your home or another folder of yours")


def _launch(job_dir: Path) -> dict[str, object] | None:
    """Read the launch line, then set up the job directory as the owner (see module docstring)."""
    line = _read_launch_line()
    if not line.strip():
        return None
    launch = json.loads(line)
    if isinstance(launch, dict) and set(launch) == {"launch_fd"}:
        launch = json.loads(_read_launch_file(launch["launch_fd"]))
    if not isinstance(launch, dict):
        raise ValueError("the launch line is not a JSON object")
    job_dir.mkdir(mode=0o700, exist_ok=True)
    for stale in ("exit.json", "wrapper.json", "outcome.json"):  # a restarted service's previous run
        (job_dir / stale).unlink(missing_ok=True)
    files = launch.get("files") or {}
    for name, text in files.items():
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"bad carried file name {name!r}")
        fd = os.open(job_dir / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NOCTTY, 0o600)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(str(text))
    log = os.open(job_dir / "output.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NOCTTY, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    if launch.get("banner"):
        print(str(launch["banner"]), flush=True)
    _listen_for_stops(job_dir)
    return launch


_report_fd: list[int] = []
"""``--report-fd``: the write end of the executor's pipe for :func:`report_commands` (none: not asked)."""


def report_commands(pids: list[int]) -> None:
    """Tell the executor, down its pipe (``--report-fd``), which processes are the job's command — each pid with its
    start time (a pid reused later is not taken for it); one whose start time cannot be read is gone already and
    left out — and close the pipe. The command did not inherit it (``close_fds``); the job cannot write it."""
    if not _report_fd:
        return
    fd = _report_fd.pop()
    found = [[pid, started] for pid in pids if (started := process_start_time(pid)) is not None]
    try:
        os.write(fd, (json.dumps({"commands": found}) + "\n").encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    """Run the command after ``--`` and record its end; return an exit status for the wrapper."""
    global _child_started
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" not in args:
        return _usage()
    options, command = args[:args.index("--")], args[args.index("--") + 1:]
    launch_mode, grace_s, job_dir_arg, max_log, cap_setting = False, 3.0, None, 0, "c.SchedApp.max_log_mib"
    while options:
        option = options.pop(0)
        if option == "--launch":
            launch_mode = True
        elif option == "--leftover-grace" and options:
            grace_s = float(options.pop(0))
        elif option == "--max-log-bytes" and options:
            max_log = int(options.pop(0))
        elif option == "--log-cap-setting" and options:
            cap_setting = options.pop(0)
        elif option == "--job-dir" and options:
            job_dir_arg = options.pop(0)
        elif option == "--report-fd" and options:
            _report_fd[:] = [int(options.pop(0))]
        else:
            return _usage()
    if job_dir_arg is None or not command:
        return _usage()
    job_dir = Path(job_dir_arg)
    _watch_signals()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, _on_signal)
    cwd: str | None = None
    launch: dict[str, object] | None = None
    if launch_mode:
        launch = _launch(job_dir)
        if launch is None:
            return _NOT_LAUNCHED
        cwd = str(launch["cwd"]) if launch.get("cwd") else None
        if isinstance(launch.get("members"), str):
            _members_file[:] = [str(launch["members"])]
    _become_subreaper()
    write_json_atomic(job_dir / "wrapper.json", {"pid": os.getpid(), "create_time": process_start_time(os.getpid())})
    code: int
    signame: str | None = None
    cap = _LogCap(job_dir, max_log, cap_setting) if launch_mode and max_log > 0 else None
    try:
        if cwd is not None:
            os.chdir(cwd)
    except OSError as exc:
        print(f"jupyter_sched: cannot enter the working directory {cwd!r} as {_account()}: {exc.strerror}",
              file=sys.stderr, flush=True)
        code = _NO_WORKDIR
    else:
        overlays = _worker_overlays(launch)
        own = launch.get("env") if launch else None
        job_env = {**os.environ, **({str(k): str(v) for k, v in own.items()} if isinstance(own, dict) else {})}
        job_env["PWD"] = os.getcwd()  # the folder it starts in, as a shell sets it (newuser27 N2: the server's)
        try:
            children = [subprocess.Popen(command, env={**job_env, **overlay}) for overlay in overlays]
        except OSError as exc:
            why = (_not_found_why(command[0], job_env) if isinstance(exc, FileNotFoundError)
                   else _permission_why(command[0], job_env) if isinstance(exc, PermissionError)
                   else exc.strerror or str(exc))
            print(f"jupyter_sched: cannot start {command[0]!r}: {why}", file=sys.stderr, flush=True)
            # 126 (found, cannot be run), as a shell says it; 127 is "not found" (new user 6, F20)
            found = isinstance(exc, PermissionError) and "was not found on the job's PATH" not in why
            children, code = [], 126 if found else 127
        report_commands([child.pid for child in children])
        if children:
            _child_started = True
            for early in _early:
                for child in children:
                    child.send_signal(early)
            code = children[0].wait() if len(children) == 1 else \
                _wait_gang(children, [str(o.get("RANK", i)) for i, o in enumerate(overlays)])
            signame = signal.Signals(-code).name if code < 0 else None
    # red39 R2: decided here, at the command's end — a stop that comes while the wrapper finishes (its record, the
    # leftovers' grace) changes nothing of how the job ended; its signals are sent to what is left
    own_end = _signalled() is False
    if cap is not None:
        cap.stop()
    words, records = _heard()
    words = None if own_end else words  # the stop did not end it: its words ("… waits in the queue again") would lie
    lines = [line for record in records for line in signal_lines(record)]  # which processes a stop signalled,
    _say(job_dir, lines + _gang_said, cap)  # and with what; a gang's stop (newuser30 n16); these stay, what
    # leftovers append after them does not
    ended: dict[str, object] = {"exit_code": code, "signal": signame, "finished_at": datetime.now(timezone.utc).isoformat(),
                                "said": len(records), "worded": False,  # what the executor need not say from outside
                                "before_signal": own_end,
                                **({"gang": _gang_stop} if _gang_stop else {})}
    _record_end(job_dir, ended)
    left = _end_leftovers(grace_s)
    if left:  # newuser30 n16: what the job left running was ended, and its log says so
        how = f"killed by {signame}" if signame else f"exit code {code}"
        _say(job_dir, left_lines(left, ended=how, grace_s=grace_s, gang=len(_worker_overlays(launch)) > 1), cap)
        ended["left"] = {"processes": left[:LISTED], "count": len(left), "grace_s": grace_s,
                         "gang": len(_worker_overlays(launch)) > 1}
    if words:  # the log's last line says why it stops here (issue 20, F15)
        _say(job_dir, [f"[jupyter_sched] {words}"], cap)
        ended["worded"] = True
    if left or words:
        _record_end(job_dir, ended, quiet=True)
    _stop_listening(job_dir)  # the job ended: no stop left to hear, one inode fewer kept (red team 26, R4)
    carried = launch.get("files") if launch else None
    swept = _sweep_left(job_dir, {str(n) for n in carried} if isinstance(carried, dict) else set(),
                        notebook=bool(launch.get("notebook")), log_key=stdout_key()) if launch else None
    if swept:
        print(f"{_line_break(job_dir)}{swept}", flush=True)
        if cap is not None and cap.keep is not None:
            cap.keep = os.fstat(1).st_size
    if cap is not None:
        cap.close()
    return code if code >= 0 else 128 - code


def _say(job_dir: Path, lines: list[str], cap: _LogCap | None) -> None:
    """Write ``lines`` at the end of the log (on a line of their own), kept by its cap: a cut log holds them."""
    if not lines:
        return
    print(_line_break(job_dir) + "\n".join(lines), flush=True)
    if cap is not None and cap.keep is not None:
        cap.keep = os.fstat(1).st_size


def _record_end(job_dir: Path, ended: dict[str, object], *, quiet: bool = False) -> None:
    """Write ``exit.json`` (``quiet``: a failure is not said again in the log)."""
    try:
        write_json_atomic(job_dir / "exit.json", ended)
    except OSError as exc:  # the job broke its own directory: end anyway (the executor sees the exit)
        if not quiet:
            print(f"jupyter_sched: could not record the job's end in {job_dir}: {exc.strerror}", file=sys.stderr,
                  flush=True)


def _worker_overlays(launch: dict[str, object] | None) -> list[dict[str, str]]:
    """One environment overlay per worker of a gang on this host; ``[{}]`` for a single process."""
    workers = launch.get("workers") if launch else None
    if not isinstance(workers, list) or not workers:
        return [{}]
    return [{str(k): str(v) for k, v in w.items()} if isinstance(w, dict) else {} for w in workers]


_gang_said: list[str] = []
"""The log's lines of a gang's all-or-nothing stop (:func:`_wait_gang`), written with the job's end."""
_gang_stop: dict[str, object] = {}
"""The same for ``exit.json`` (``"gang"``: the job's message says it): ``{"worker", "ended", "processes", "count"}``."""


def _wait_gang(children: list[subprocess.Popen[bytes]], ranks: list[str] | None = None) -> int:
    """Wait for every worker; when one fails, SIGTERM the others (all-or-nothing), and keep the log's lines
    that say so — which worker failed, which workers got SIGTERM and how each ended (:data:`_gang_said`;
    newuser30 n16: they were stopped silently). ``ranks``: each worker's ``RANK``.

    Returns:
        The first failing worker's exit code (negative = killed by that signal), else 0.
    """
    first_failure: int | None = None
    running = list(children)
    stopped: list[tuple[subprocess.Popen[bytes], str]] = []
    rank = how = failed = ""
    while running:
        for child in list(running):
            code = child.poll()
            if code is None:
                continue
            running.remove(child)
            if code != 0 and first_failure is None:
                first_failure = code
                rank = ranks[children.index(child)] if ranks else str(children.index(child))
                how = f"killed by {signal.Signals(-code).name}" if code < 0 and -code in _SIGNALS else f"exit code {code}"
                failed = f"worker {rank} (pid {child.pid}) failed ({how})"
                stopped = [(other, _command_of(other.pid)) for other in running]
                for other in running:
                    other.send_signal(signal.SIGTERM)
        if running:
            time.sleep(0.05)
    if stopped:
        fates = [[other.pid, command, "SIGTERM" if other.returncode == -signal.SIGTERM else
                  f"exited with code {other.returncode}" if (other.returncode or 0) >= 0 else
                  f"killed by signal {-(other.returncode or 0)}"] for other, command in stopped]
        _gang_said[:] = [f"[jupyter_sched] {failed}; a gang runs all or nothing, so the other "
                         f"{_plural(len(stopped), 'worker')} {'was' if len(stopped) == 1 else 'were'} sent SIGTERM:",
                         *process_lines(fates)]
        _gang_stop.update(worker=rank, ended=how, processes=fates[:LISTED], count=len(fates))
    return first_failure if first_failure is not None else 0


_SIGNALS = frozenset(int(s) for s in signal.Signals)


def _usage() -> int:
    print("usage: wrapper.py [--leftover-grace S] [--max-log-bytes N] [--log-cap-setting WORDS] --job-dir DIR [--launch] -- COMMAND [ARGS...]", file=sys.stderr)
    return 2


def _permission_why(program: str, env: dict[str, str] | None = None) -> str:
    """Why ``program`` could not be started with EACCES, as the account the job runs as: a folder on
    its path it cannot enter (new user 6, F20: a venv python linked into /root, mode 0700, read "it is
    not executable (chmod +x …)" while the file was executable), else the file itself."""

    env = dict(os.environ) if env is None else env  # the job's (its own PATH included)
    closed = [d for d in env.get("PATH", "").split(os.pathsep) if d and not os.access(d, os.X_OK)]
    if os.sep not in program and shutil.which(program, path=env.get("PATH")) is None and closed:
        # new user 10, N10: env PATH=/home/amy/bin read "it is not executable for eve (chmod +x …)": exec
        # met a folder it could not search and said EACCES for a program it never found
        return (f"{program!r} was not found on the job's PATH: {', '.join(repr(d) for d in closed[:3])} cannot be "
                f"searched as {_account()} — give the program's full path, or an env PATH of folders "
                f"{_account()} can enter")
    found = shutil.which(program, path=env.get("PATH")) or program
    for path in dict.fromkeys((os.path.abspath(found), os.path.realpath(found))):
        for folder in reversed(Path(path).parents):
            if not os.access(folder, os.X_OK):
                return (f"permission denied as {_account()}: the folder {str(folder)!r} on its path is not open to "
                        f"{_account()} — use a program every job account can reach (in hub mode c.HubSchedApp.job_python)")
    return (f"permission denied as {_account()}: it is not executable for {_account()} (chmod +x, or run it with its "
            "interpreter, e.g. python script.py)")


SHEBANG_BYTES = 256
"""How much of a program's first line the kernel reads for its ``#!`` interpreter line (Linux's
``BINPRM_BUF_SIZE``): what is read of a command's program to judge that line."""


def crlf_interpreter_line(head: bytes) -> str | None:
    """The ``#!`` first line of a file whose first bytes are ``head`` when it ends in a carriage
    return (``#!/bin/bash\\r``: Windows, CRLF, line endings; newuser28 N1), decoded without its line
    break; else None."""
    if not head.startswith(b"#!"):
        return None
    line = head.split(b"\n", 1)[0]
    return line.decode("utf-8", errors="replace") if line.endswith(b"\r") else None


def crlf_refusal(program: str, line: str) -> tuple[str, str]:
    """``(problem, fix)`` for the program ``program`` (as the command names it) whose interpreter line
    :func:`crlf_interpreter_line` is ``line``: what the system does with the ``\\r`` (looks for a
    program ``'/bin/bash\\r'``, or ``env`` for ``'python3\\r'``, or passes ``'-e\\r'`` to one) and the
    fixes: convert the file (``sed``/``dos2unix``) or run it with its interpreter (``-- bash FILE``).
    The words of the submit's refusal (``command`` field) and of the start's log line alike."""
    import shlex

    words = line[2:].split(" ")
    words = [word for word in words if word.strip(" \t")]
    first = words[0].strip() if words else ""
    runner = first.rsplit("/", 1)[-1]
    if runner == "env":
        runner = next((w.strip() for w in words[1:] if not w.startswith("-") and "=" not in w), "")
    if len(words) <= 1:
        does = f"the system looks for a program {words[0] if words else chr(13)!r}, which does not exist"
    elif first.rsplit("/", 1)[-1] == "env" and len(words) == 2:
        does = f"env looks for a program {words[1]!r}, which does not exist"
    else:
        does = f"{first} is given {words[-1]!r}"
    shown = shlex.quote(program)
    problem = f"starts with {line!r}: Windows (CRLF) line endings, so {does}"
    fix = (f"convert it to Unix line endings (sed -i 's/\\r$//' {shown}, or dos2unix {shown}), or run it with "
           f"its interpreter (CLI: -- {runner or 'bash'} {shown})")
    return problem, fix


def _not_found_why(program: str, env: dict[str, str]) -> str:
    """Why exec said ENOENT for ``program``: not found at all (the usual words), or — the file is
    there — the interpreter its ``#!`` line names is not (a CRLF line: :func:`crlf_refusal`), or
    what a binary needs to start (its loader) is not (newuser28 N1: an existing ``./crlf.sh`` read
    "no such program on PATH or file in the working directory")."""

    found = program if os.sep in program else shutil.which(program, path=env.get("PATH"))
    if not found or not os.path.isfile(found):
        return "no such program on PATH or file in the working directory"
    try:
        with open(found, "rb") as fh:
            head = fh.read(SHEBANG_BYTES)
    except OSError:
        head = b""
    if (line := crlf_interpreter_line(head)) is not None:
        problem, fix = crlf_refusal(program, line)
        return f"it {problem} — {fix}"
    if head.startswith(b"#!"):
        line = head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
        return (f"the file is there, but the interpreter its first line names is not: {line!r} — install that "
                f"program, or fix the line (e.g. #!/usr/bin/env bash)")
    return ("the file is there, but something it needs to start is not (a binary built for another system: its "
            "loader is missing) — run a program built for this machine")


def _account() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.getuid()}"


if __name__ == "__main__":
    sys.exit(main())
