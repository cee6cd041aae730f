"""How a run ended, in one sentence a user can act on (case 028).

The notebook runner (:mod:`.run_notebook`) writes ``outcome.json`` beside the executed notebook
with what it saw: the failing cell and exception, a dead kernel's signal and peak memory, a cell
timeout. For other work (scripts, commands) there is no such file, and the sentence is built from
the exit code and the last lines of the job's log. The local executor reports the sentence as the
job's message, which becomes the reason of a failed run. On Kubernetes the executor sees neither
file: :func:`describe_termination` builds the same sentences from a failed container's
termination message (the end of its log; the runner's last ``[jupyter_sched] failed: …`` line
carries its reason).

Sentences (exact shapes; tests pin them):

* ``cell 3 raised ImportError: No module named 'mypkg' (cell starts: import mypkg)``
* ``kernel died (signal 9; killed by the out-of-memory killer) during cell 5 (cell starts: x = load()); peak memory 1.9 GiB; memory limit 2.0 GiB
  — ask for more memory than its 2.0 GiB, e.g. --memory 4GiB (…), or make it use less`` (:func:`memory_fix`)
* ``kernel died (signal 9, SIGKILL; no out-of-memory kill was counted) during cell 3 (cell starts: import os); peak memory 51 MiB``
* ``cell 5 did not finish within the 600 s cell time limit (cell starts: train())``
* ``exited with code 1: ValueError: bad input (train.py, line 7); last lines: Traceback ... | ValueError: bad input``
  (a Python traceback's error first: newuser33 N2)
* ``exited with code 3: error: bad row 17 — check --data-dir; earlier lines: loading | epoch 1`` (any other log: its
  error line first, :func:`lead_line`; newuser34 N2), ``exited with code 1: FAILED t.py::a; last lines: … | FAILED
  t.py::a | 1 failed`` (the error line was not the last: the last lines as they were), ``exited with code 3: done``;
  ``killed by SIGKILL; last lines: epoch 1 | epoch 2`` (a signal, or a stop: what it printed last is not why)

Only the standard library is imported: the runner and the executor both use it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import untrusted_json
from ..textsafe import printable_line
from .module_names import importable_names, near_module
from .safeopen import read_untrusted_bytes

__all__ = [
    "OUTCOME_FILE",
    "RUN_MARKERS",
    "LOG_TAIL_LINES",
    "MESSAGE_MAX",
    "NEAR_LIMIT",
    "describe_exit",
    "first_on_path",
    "describe_termination",
    "file_error_hint",
    "format_mib",
    "lead_line",
    "kernel_death_sentence",
    "log_tail",
    "memory_fix",
    "missing_module_hint",
    "python_error",
    "no_jupyter_sched_hint",
    "read_outcome",
    "said_out_of_memory",
    "signal_name",
    "stopped_processes",
    "write_outcome",
]

OUTCOME_FILE = "outcome.json"
LOG_TAIL_LINES = 5
"""Lines of a script's log quoted in its failure reason."""
_TAIL_BYTES = 16 * 1024
_LINE_MAX = 300
MESSAGE_MAX = 2000
"""Most characters of a reason taken from the runner's words (``outcome.json``, a container's
termination message): the owner can write them, and the message is stored and shown with the job."""


def signal_name(signum: int) -> str:
    """``SIGKILL`` for 9, ``signal 77`` for numbers without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def format_mib(mib: float) -> str:
    """``512 MiB`` / ``1.9 GiB``."""
    return f"{mib / 1024:.1f} GiB" if mib >= 1024 else f"{mib:.0f} MiB"


def memory_fix(limit_mib: float | None) -> str:
    """What to do about work the out-of-memory killer ended (newuser37 n4: the sentence said what and why, not what
    to do; newuser37 n10: the plain Submit form has no Memory field, a Resubmit of the killed job shows it): ``ask
    for more memory than its 512 MiB, e.g. --memory 1GiB (jupyter-sched submit, %%schedule; the
    job card's Resubmit, Memory field), or make it use less`` (``limit_mib``: its memory limit, None or 0: not known)."""
    if limit_mib:
        twice = int(limit_mib * 2)
        more = f" than its {format_mib(limit_mib)}, e.g. --memory {twice // 1024}GiB" if twice % 1024 == 0 else \
            f" than its {format_mib(limit_mib)}, e.g. --memory {twice}MiB"
    else:
        more = " with --memory"
    return f"ask for more memory{more} (jupyter-sched submit, %%schedule; the job card's Resubmit, Memory field), or make it use less"


NEAR_LIMIT = 0.9
"""A kernel killed by SIGKILL whose sampled peak reached this share of its memory limit is said to be
likely out of memory (the peak is sampled: the allocation that crossed the limit may be unseen)."""


def kernel_death_sentence(signum: int | None, *, peak_mib: float | None, oom_killed: bool,
                          cell_index: int | None, first_line: str | None, limit_mib: float | None = None,
                          oom_counted: bool = False) -> str:
    """The reason of a run whose kernel died, e.g. ``kernel died (signal 9; killed by the
    out-of-memory killer) during cell 5 (cell starts: x = load()); peak memory 1.9 GiB; memory limit
    2.0 GiB``.

    Memory is named only with evidence (new user 25, N7: "likely out of memory" with a 51 MiB peak and
    no limit, for a kernel that had killed itself): a memory cgroup that counted an OOM kill
    (``oom_killed``: certain), or a SIGKILL with a sampled peak of at least :data:`NEAR_LIMIT` of the
    memory limit ``limit_mib`` (likely; the limit is said). Any other SIGKILL is said as it is —
    ``kernel died (signal 9, SIGKILL; no out-of-memory kill was counted)`` when ``oom_counted`` (the
    cgroup's counter was read, and did not move), else ``kernel died (signal 9, SIGKILL)``. Other
    signals are named as they are (SIGSEGV: a crash in native code). The peak memory follows when known.
    """
    near = bool(peak_mib and limit_mib and peak_mib >= NEAR_LIMIT * limit_mib)
    if signum is None:
        what = "kernel died"
    elif oom_killed:
        what = f"kernel died (signal {signum}; killed by the out-of-memory killer)"
    elif signum == signal.SIGKILL and near:
        what = f"kernel died (signal {signum}; likely out of memory: its peak reached its memory limit)"
    elif signum == signal.SIGKILL and oom_counted:
        what = f"kernel died (signal {signum}, {signal_name(signum)}; no out-of-memory kill was counted)"
    else:
        what = f"kernel died (signal {signum}, {signal_name(signum)})"
    if cell_index is not None:
        what += f" during cell {cell_index}"
        if first_line:
            what += f" (cell starts: {first_line})"
    if peak_mib:
        what += f"; peak memory {format_mib(peak_mib)}"
    if limit_mib and (oom_killed or near):
        what += f"; memory limit {format_mib(limit_mib)}"
    if oom_killed or near:
        what += f" — {memory_fix(limit_mib)}"
    return what


_OUT_OF_MEMORY = re.compile(r"kernel died \(signal \d+; (?:killed by the out-of-memory killer|likely out of memory)"
                            r"|killed by (?:the out-of-memory killer|SIGKILL \((?:likely )?out of memory)")
"""The heads of this module's sentences for work the out-of-memory killer ended (:func:`kernel_death_sentence`,
:func:`describe_termination`, :func:`describe_exit`)."""


def said_out_of_memory(message: str | None) -> bool:
    """Whether a failed job's ``message`` is one of this module's sentences for work the out-of-memory killer
    ended (certain, or likely: its cgroup counted a kill, or its peak reached its limit). Read from the sentence's
    head only, before its ``last lines:``/``earlier lines:`` and the log line it may lead with (the job's own
    output), so nothing a job prints makes it so. The panel's
    Resubmit of such a job opens the Submit form with Memory to change (s34-panel; newuser33 n9's next step)."""
    head = (message or "").split("last lines:", 1)[0].split("earlier lines:", 1)[0]
    lead = _EXIT_LEAD.match(head)  # "exited with code 1: <the job's own line> — …" (newuser34 N2's lead line)
    return _OUT_OF_MEMORY.search(head[:lead.end()] if lead else head) is not None


_EXIT_LEAD = re.compile(r"exited with code -?\d+: ")
"""How a sentence that leads with the job's own log line begins (:func:`_log_words`): what follows is the job's."""


def write_outcome(directory: Path, outcome: Mapping[str, Any]) -> Path:
    """Write ``outcome`` as ``directory/outcome.json`` atomically; return the path."""
    path = directory / OUTCOME_FILE
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(dict(outcome), fh, indent=1)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def read_outcome(directory: Path, *, owner_uid: int | None = None) -> dict[str, Any] | None:
    """The runner's ``outcome.json`` in ``directory``, or None when absent or unreadable (read
    without following symlinks, and only if ``owner_uid`` owns it when given: :mod:`.safeopen`)."""
    try:
        data = untrusted_json.loads(read_untrusted_bytes(directory / OUTCOME_FILE, owner_uid=owner_uid, limit=1 << 20))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def log_tail(path: Path, lines: int = LOG_TAIL_LINES, *, owner_uid: int | None = None) -> list[str]:
    """The last ``lines`` non-empty lines of a log (read from its last 16 KiB; long lines cut;
    read as :func:`read_outcome` reads)."""
    return _shown(_run_lines(_log_text(path, owner_uid))[-lines:])


def _log_text(path: Path, owner_uid: int | None) -> str:
    """The last 16 KiB of a log ("" when it cannot be read: see :func:`read_outcome`)."""
    try:
        return read_untrusted_bytes(path, owner_uid=owner_uid, limit=_TAIL_BYTES, tail=True).decode(
            "utf-8", errors="replace")
    except OSError:
        return ""


def _run_lines(text: str) -> list[str]:
    """The non-empty lines of ``text`` of the current run that are not the runner's own, as written."""
    every = text.splitlines()
    # the current run's lines only: a requeued or restarted job's log holds each run, a marker line
    # between them (new user 21, N9: "last lines: tick 280 | tick 290 | tick 0" mixed two runs)
    start = max((i + 1 for i, line in enumerate(every) if line.startswith(RUN_MARKERS)), default=0)
    return [line.rstrip() for line in every[start:] if line.strip() and not line.startswith("[jupyter_sched]")]


def _shown(kept: Sequence[str]) -> list[str]:
    """Log lines as a message quotes them: long ones cut."""
    # the log is the job's: its escape sequences and control characters are shown, never obeyed, by
    # whoever reads the message (an admin's `jupyter-sched jobs --all`, red team 6)
    shown = [printable_line(line, limit=1 << 30) for line in kept]
    return [line if len(line) <= _LINE_MAX else line[:_LINE_MAX] + "…" for line in shown]


def _tail_lines(text: str, lines: int) -> list[str]:
    """The last ``lines`` non-empty lines of ``text`` that are not the runner's own, long ones cut."""
    return _shown(_run_lines(text)[-lines:])


_FRAME = re.compile(r'\s*File "(.+)", line (\d+)')
_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?::(?:\s.*)?)?")
"""A traceback's last line: ``KeyError: 'missing'``, ``KeyboardInterrupt``, ``torch.OutOfMemoryError: …``."""
_ERROR_CHARS = 200
_NOT_THE_USERS = re.compile(r"^<|/(?:site|dist)-packages/|/lib/python\d")
"""A frame's file that is not the user's code: ``<frozen runpy>``, an installed package's, the standard library's."""
_CELL_FILES = "/.jupyter_sched/cells/"
"""Where ``%%schedule`` saves a cell it runs (:data:`jupyter_sched.magics.core.CELLS_DIR`)."""
_HUB_CELL = re.compile(r"cell-[0-9a-f]{10}\.py")
"""The name a hub kernel's ``%%schedule`` cell is carried under in the job's folder (``carried_script``)."""
_NAME_ERROR = re.compile(r"NameError: name '([A-Za-z_]\w*)' is not defined")


def _cell_file(path: str) -> bool:
    """Whether ``path`` is a ``%%schedule`` cell's saved file (a local kernel's or a hub kernel's)."""
    return _CELL_FILES in path or path.startswith(_CELL_FILES[1:]) or bool(_HUB_CELL.fullmatch(path.rsplit("/", 1)[-1]))


def cell_name_hint(error: str, path: str) -> str | None:
    """The why and the fix of a ``%%schedule`` cell's ``NameError`` (newuser34 N6: ``NameError: name 'lr' is not
    defined (cell-f50ef667bf.py, line 1)`` named a file the user never made, and not that a job does not see the
    kernel's variables), or None for another error or file."""
    found = _NAME_ERROR.match(error)
    if found is None or not _cell_file(path):
        return None
    name = found.group(1)
    return (f"this cell ran as its own Python file (saved as {path.rsplit('/', 1)[-1]}), and a job does not see the "
            f"kernel's variables: if {name} was set in an earlier cell, set it in this cell, pass it with "
            f"--env {name.upper()}=… (os.environ[\"{name.upper()}\"]), or save it to a file the cell reads")


def python_error(lines: Sequence[str]) -> tuple[str, str] | None:
    """``("KeyError: 'missing'", "crash.py, line 2")``: the error line of the last Python traceback in a log's
    ``lines`` and where it was raised — the last frame in the user's own code (not a package's or the standard
    library's; the last frame when all are), by its file's name (``the cell`` for a ``%%schedule`` cell) — or None
    when ``lines`` hold none (newuser33 N2: every surface led a failure with "Traceback (most recent call last): |
    File …", and the panel's toast cut the error off). A syntax error's frame has no traceback header: it counts.
    The error must be among the log's last :data:`LOG_TAIL_LINES` lines (those the message quotes): a traceback a
    program logged and went on from is not why it ended."""
    found = _python_error(lines)
    return None if found is None else (found[0], found[1])


def _python_error(lines: Sequence[str]) -> tuple[str, str, str] | None:
    """:func:`python_error`'s error and where, and the frame's file path as the log wrote it."""
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    if not frames:
        return None
    # the error line: the first after the last frame that is not its code or its carets (those are indented)
    at = next((i for i in range(frames[-1] + 1, len(lines)) if not lines[i][:1].isspace()), None)
    if at is None or at < len(lines) - LOG_TAIL_LINES or not _EXCEPTION.fullmatch(error := lines[at]):
        return None
    # that traceback's frames (a chained error's earlier tracebacks are left out)
    start = max((i for i in range(frames[-1]) if lines[i].startswith("Traceback (most recent call last)")), default=0)
    found = [m for i in frames if i >= start and (m := _FRAME.match(lines[i])) is not None]
    frame = next((m for m in reversed(found) if not _NOT_THE_USERS.search(m.group(1))), found[-1])
    path = frame.group(1)
    name = "the cell" if _cell_file(path) else path.rsplit("/", 1)[-1]
    return (printable_line(error, limit=_ERROR_CHARS),
            f"{printable_line(name, limit=_ERROR_CHARS)}, line {frame.group(2)}", path)


_ERROR_LINE = re.compile(
    r"(?i:\b(?:error|fatal)\b\s*[:!](?!\s*[-+]?\.?\d))"  # error: / Error: / ERROR: / prog: error: / fatal: (not a
    #                                                  metric's "error: 0.05")
    r"|\b(?:ERROR|FATAL|CRITICAL|FAILED|FAILURE)\b"  # a log level, a test runner's verdict: in capitals only
    r"|^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)\b"  # opens with an exception's name (java.io.IOException)
    r"|^panic: ")  # Go's
"""A log line that reads as an error (:func:`lead_line`)."""


def lead_line(tail: Sequence[str]) -> int:
    """The index in ``tail`` (a log's last lines, oldest first; not empty) of the line a failure's sentence leads with:
    the last one that reads as an error — ``error:`` / ``fatal:`` in any case (``prog: error: …``, argparse's line after
    its usage; not a metric's ``error: 0.05``), ``ERROR``, ``FATAL``, ``CRITICAL``, ``FAILED``, ``FAILURE`` in capitals,
    a line opening with an exception's name (``ValueError: …``, ``java.io.IOException``), Go's ``panic:`` — else the
    last line (newuser34 N2: ``sys.exit("error: …")``, a shell script, any CLI tool end with their error last, and the
    sentence led with the lines before it, which the panel's toast kept and cut the error off). Predictable on purpose:
    a word list over the lines quoted, no scoring."""
    return next((i for i in range(len(tail) - 1, -1, -1) if _ERROR_LINE.search(tail[i])), len(tail) - 1)


def _log_words(kept: Sequence[str], python: str | None, *, shared: bool = False, owner_uid: int | None = None,
               fixes: bool = True, lead: bool = True, folder: str | None = None, cwd: str | None = None,
               container: Sequence[str] | None = None) -> str:
    """What a failed run's message says of its log after its exit code: ``: KeyError: 'missing' (crash.py, line 2);
    last lines: Traceback … | KeyError: 'missing'`` — the error and where first when the log ends in a Python traceback
    (:func:`python_error`), an import's fix after it (:func:`missing_module_hint`); for any other log its error line
    first (:func:`lead_line`) and its fix, then ``; earlier lines: …`` (the lines before it, when it was the last) or
    ``; last lines: …`` (all of them, when lines came after it) — ``: error: no data — check --data-dir; earlier lines:
    epoch 0 | epoch 1`` (newuser34 N2) — only where ``lead``: the program exited by itself, so its last words are about
    why (a signal's kill, a stop's end, came whatever it had printed last: ``; last lines: …`` then, with the
    ``fixes`` still read from the last line); ``fixes``: a container's image is not installed into as a Python is; ""
    for an empty log. Each line is cut at :data:`_LINE_MAX` characters: a long one cannot push the error out.
    A file's error (``FileNotFoundError: … 'data/train.csv'``) gets :func:`file_error_hint` (``cwd``: the folder the
    job started in; ``container``: the mounts of the container it ran in, None for a run on this host). Python 3.11's ``^^^^`` / ``~~~^^`` underline rows are not quoted: out of their column they
    point at nothing, and they took the place of whole lines (newuser37 n2: "last lines:        ^^^^^^ | File …")."""
    kept = [line for line in kept if not _UNDERLINE.fullmatch(line)]
    tail = _shown(kept[-LOG_TAIL_LINES:])
    if not tail:
        return ""
    last = "; last lines: " + " | ".join(tail)
    error = _python_error(kept)

    def fix(said: str) -> str | None:
        hint = missing_module_hint(said, python, shared=shared, owner_uid=owner_uid, folder=folder) if fixes else None
        return hint or file_error_hint(said, cwd, container=container)

    if error is None and not lead:
        hint = fix(tail[-1])
        return last + (f" — {hint}" if hint else "")
    if error is None:
        at = lead_line(tail)
        hint = fix(tail[at])
        said = f": {tail[at]}" + (f" — {hint}" if hint else "")
        if at < len(tail) - 1:  # lines came after it: quoted as they were, it among them
            return said + last
        return said + (f"; earlier lines: {' | '.join(tail[:-1])}" if len(tail) > 1 else "")
    said, where, path = error
    hint = missing_module_hint(said, python, shared=shared, owner_uid=owner_uid, folder=folder) if fixes else None
    if hint is None and (named := cell_name_hint(said, path)):  # the log's path: shown, never obeyed
        hint = printable_line(named, limit=_ERROR_CHARS * 3)
    hint = hint or file_error_hint(said, cwd, container=container)
    return f": {said} ({where})" + (f" — {hint}" if hint else "") + last


_UNDERLINE = re.compile(r"\s+[~^]+[~^ ]*")
"""A traceback's underline row under the code it points at (Python 3.11+: ``    ^^^^^``, ``    ~~~~^^^~~``)."""

_FILE_ERROR = re.compile(r"\b(FileNotFoundError|PermissionError|IsADirectoryError|NotADirectoryError): "
                         r"\[Errno \d+\] [^:]*: (?:'([^']*)'|\"([^\"]*)\")")
"""An error of a file's: ``FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'`` (the open's
path as ``repr`` writes it), in a traceback's last line or a notebook cell's ``cell 3 raised …``."""

_FILE_FIXES = {
    "FileNotFoundError": "there is no {path}: check the path{absolute}",
    "PermissionError": "the job's account may not open {path}: check its owner and mode (ls -l {path})",
    "IsADirectoryError": "{path} is a folder, not a file: give the path of a file in it",
    "NotADirectoryError": "a part of {path} is a file, not a folder: check the path",
}


def file_error_hint(said: str, cwd: str | None, *, notebook: bool = False,
                    container: Sequence[str] | None = None) -> str | None:
    """What to do about a run that failed to open a file — ``said`` (its error line, or the notebook runner's reason)
    holds ``FileNotFoundError`` / ``PermissionError`` / ``IsADirectoryError`` / ``NotADirectoryError`` with the path
    it opened — and, for a relative path, where it was read from (newuser37 n2: ``pd.read_csv("data/train.csv")``
    said neither): ``a relative path is read from the job's working folder, /w, and there is no /w/data/train.csv:
    check the path, or give an absolute one``; ``there is no /data/x.csv: check the path`` for an absolute one.
    ``cwd``: the folder the job started in (None: not known, then not named); ``notebook``: a notebook's kernel read
    it (it starts in that folder too). A program that changed its folder reads from there: "started in" is what is
    known. None when ``said`` holds no such error. Pure: nothing is looked at on disk.

    ``container``: the run was a Kubernetes container's, with volumes mounted at these paths (the admin's: the home
    volume…; empty: none) — its files are its image's and those volumes', not the server's (session 37 left: a pod's
    file error named no folder at all). The fix then says what the container holds, where a relative path was read
    with no working folder named (the image's: ``working_dir`` chooses it), and Python's ``can't open file '…'``
    (``python train.py`` of a script the container has not) counts as the file's error it is."""
    found = _FILE_ERROR.search(said)
    if found is not None:
        kind, raw = found.group(1), found.group(2) if found.group(2) is not None else found.group(3)
    elif container is not None and (cant := _CANT_OPEN.search(said)) is not None and int(cant.group(2)) in _ERRNO_KINDS:
        kind, raw = _ERRNO_KINDS[int(cant.group(2))], cant.group(1)
    else:
        return None
    if not raw:
        return None
    path = printable_line(raw, limit=_ERROR_CHARS)
    relative = not raw.startswith("/")
    fix = _FILE_FIXES[kind]
    inside = "" if container is None else _container_files(container)
    if not relative:
        return fix.format(path=path, absolute="") + inside
    where = "the folder the notebook ran in" if notebook else "the job's working folder"
    if container is not None:  # a notebook's kernel starts in it too
        where = "the job's working folder in its container"
        if not cwd:
            where += " (its image's: the job named none — give working_dir to choose it)"
    full = printable_line(os.path.normpath(os.path.join(cwd, raw)), limit=_ERROR_CHARS * 2) if cwd else path
    said_where = f"{where}, {printable_line(cwd, limit=_ERROR_CHARS)}," if cwd else where
    return (f"a relative path is read from {said_where} and " + fix.format(path=full, absolute=", or give an absolute one")
            + inside)


_CANT_OPEN = re.compile(r"can't open file '([^']*)': \[Errno (\d+)\]")
"""Python's own word for a script it cannot run: ``python: can't open file '/home/jovyan/train.py': [Errno 2] No such
file or directory`` (read for a container's run only: on this host the launcher's own file says so, install_check)."""
_ERRNO_KINDS = {errno.ENOENT: "FileNotFoundError", errno.EACCES: "PermissionError", errno.EISDIR: "IsADirectoryError",
                errno.ENOTDIR: "NotADirectoryError"}


def _container_files(mounts: Sequence[str]) -> str:
    """What a Kubernetes job's container holds, after a file's fix (:func:`file_error_hint`)."""
    shown = [printable_line(m, limit=_ERROR_CHARS) for m in mounts[:4]]
    if not shown:
        return (" — the job's container holds only its image's files (no volume is mounted: a file of the server's "
                "is not there; put it in the image, or an admin mounts a volume: c.SchedApp.kubernetes volumes and "
                "volume_mounts)")
    return (f" — the job's container holds its image's files and the volume{'s' if len(shown) > 1 else ''} mounted "
            f"at {', '.join(shown)}{', …' if len(mounts) > 4 else ''}, nothing else of the server's")


RUN_MARKERS = ("[jupyter_sched] started again", "[jupyter_sched] restarting service")
"""How the log's line between two runs of a job begins (a requeue or restart; a restarted service)."""

RUNNER_FAILED = "[jupyter_sched] failed: "
"""The prefix of the runner's last word on a failed run (stderr, after the cell outputs)."""


def describe_termination(exit_code: int, message: str, *, reason: str = "", cwd: str | None = None,
                         mounts: Sequence[str] = ()) -> str:
    """One sentence for a container that ended with ``exit_code`` (not 0), the shapes of
    :func:`describe_exit`: the runner's reason when its log says one, else the exit code (the
    out-of-memory killer when Kubernetes says ``OOMKilled``) and the log's last lines.

    Args:
        exit_code: the container's exit code.
        message: its termination message; with ``terminationMessagePolicy:
            FallbackToLogsOnError`` the last lines of its log (at most 2 KiB, Kubernetes' limit).
        reason: the terminated state's ``reason`` (``Error``, ``OOMKilled``, ...).
        cwd: the container's working directory (its ``workingDir``; None: its image's), named in a file's error.
        mounts: where volumes are mounted in it (the admin's), said in a file's error (:func:`file_error_hint`).
    """
    said = [line[len(RUNNER_FAILED):].strip() for line in message.splitlines() if line.startswith(RUNNER_FAILED)]
    if said and said[-1]:
        reason_said = printable_line(said[-1], limit=MESSAGE_MAX)
        hint = file_error_hint(reason_said, cwd, notebook=True, container=mounts)
        return f"{reason_said} — {hint}" if hint else reason_said
    base = f"killed by the out-of-memory killer — {memory_fix(None)}" if reason == "OOMKilled" else \
        f"exited with code {exit_code}"
    return base + _log_words(_run_lines(message), None, fixes=False, lead=reason != "OOMKilled" and exit_code > 0,
                             cwd=cwd, container=mounts)


def describe_exit(exit_code: int, *, job_dir: Path | None = None, log: Path | None = None,
                  stopped: bool = False, owner_uid: int | None = None, oom_kills: int | None = None,
                  memory_limit_mib: int = 0, python: str | None = None, shared_python: bool = False,
                  folder: str | None = None, cwd: str | None = None) -> str:
    """One sentence for how work ended.

    Args:
        exit_code: as :mod:`subprocess` reports it (negative: killed by that signal).
        job_dir: where the runner may have left ``outcome.json`` (its ``reason`` wins when the
            run failed: it knows the cell).
        log: the job's log; its last lines are quoted for a failure without an outcome file.
        stopped: the scheduler was stopping the work (cancel, preemption, time limit): a SIGKILL
            is then its own, not a sign of memory trouble.
        owner_uid: the uid that must own the files read (a job run as another account).
        oom_kills: processes of the work the out-of-memory killer ended, as its memory cgroup
            counts them (None: no counter). A SIGKILL is said to be out of memory only when
            this counted one (red team 15, R15: a job that killed its own wrapper read "likely out
            of memory"); otherwise it is just ``killed by SIGKILL``.
        memory_limit_mib: the work's memory limit, named with an out-of-memory kill (0 = none).
        python: the interpreter the command ran (``/root/.pyenv/shims/python``), when it ran one: a log
            ending in ``No module named 'jupyter_sched'`` names it and the fix (:func:`no_jupyter_sched_hint`).
        shared_python: ``python`` is the hub's job Python, which users cannot install into (:func:`missing_module_hint`).
        folder: the folder first on the run's ``sys.path`` (:func:`first_on_path`; a notebook's: where its kernel
            started), named in an import's fix (:func:`missing_module_hint`); None: not known.
        cwd: the folder the job started in, named in a relative path's file error (:func:`file_error_hint`).
    """
    if exit_code != 0 and job_dir is not None:
        outcome = read_outcome(job_dir, owner_uid=owner_uid)
        if outcome and outcome.get("status") != "succeeded" and outcome.get("reason"):
            said = printable_line(str(outcome["reason"]), limit=MESSAGE_MAX)  # a file its owner can write
            # `cell 3 raised ModuleNotFoundError: No module …`: asked about against the kernel's Python the runner
            # named (the owner's word, so its folders are listed only as the owner may — never run)
            hint = missing_module_hint(said, _kernel_python(outcome), kernel=True, owner_uid=owner_uid,
                                       folder=folder) or file_error_hint(said, cwd, notebook=True)
            return f"{said} — {hint}" if hint else said
    if exit_code < 0:
        base = f"killed by {signal_name(-exit_code)}"
        if -exit_code == signal.SIGKILL and not stopped and oom_kills:
            # counted by its own memory cgroup: out of memory, said without "likely" (newuser37 n4), and what to do
            limit = f"; memory limit {format_mib(memory_limit_mib)}" if memory_limit_mib else ""
            base += (f" (out of memory: its memory cgroup counted {oom_kills} out-of-memory "
                     f"kill{'s' if oom_kills != 1 else ''}{limit}) — {memory_fix(memory_limit_mib)}")
    else:
        base = f"exited with code {exit_code}"
    if exit_code != 0 and log is not None:
        base += _log_words(_run_lines(_log_text(log, owner_uid)), python, shared=shared_python, owner_uid=owner_uid,
                           lead=exit_code > 0 and not stopped, folder=folder, cwd=cwd)
    return base


MESSAGE_PROCESSES = 3
"""Processes named in a job's message where its end signalled some (its log names up to ten)."""
_NAME_CHARS = 40


def _named(processes: Sequence[object], count: object, *, fates: bool = False) -> tuple[int, str]:
    """``(how many, "sleep 1000 (SIGTERM), python -m tensorboard… (SIGKILL) and 3 more")`` of a record's
    processes (``[[pid, command, fate?], ...]``, from files and pipes the job's owner may write: each part checked)."""
    shown: list[str] = []
    listed = 0
    for entry in processes:
        if not isinstance(entry, (list, tuple)) or len(entry) < 2:
            continue
        listed += 1
        if len(shown) < MESSAGE_PROCESSES:
            name = printable_line(str(entry[1]), limit=_NAME_CHARS)
            fate = printable_line(str(entry[2]), limit=20) if fates and len(entry) > 2 else ""
            shown.append(f"{name} ({'still there after SIGKILL' if fate == 'unkillable' else fate})" if fate else name)
    total = max(listed, count if isinstance(count, int) and not isinstance(count, bool) else 0)
    rest = total - len(shown)
    return total, ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")


def _processes(total: int) -> str:
    return f"{total} process{'' if total == 1 else 'es'}"


def _left_part(left: Mapping[str, Any] | None) -> list[str]:
    """``["its main process left 2 processes running, ended as …: sleep 1000 (SIGTERM), …"]`` from the wrapper's record."""
    if left is None:
        return []
    processes = left.get("processes")
    total, names = _named(processes if isinstance(processes, list) else [], left.get("count"), fates=True)
    who = "its workers" if left.get("gang") is True else "its main process"
    return [f"{who} left {_processes(total)} running, ended as jobs leave none behind: {names}"] if total else []


def _gang_part(gang: object) -> list[str]:
    """``["worker 2 failed (exit code 7), so the other 2 workers were sent SIGTERM: python … (SIGTERM), …"]`` from
    the wrapper's record of a gang's all-or-nothing stop (``exit.json``'s ``gang``)."""
    if not isinstance(gang, Mapping):
        return []
    processes = gang.get("processes")
    total, names = _named(processes if isinstance(processes, list) else [], gang.get("count"), fates=True)
    if not total:
        return []
    worker = printable_line(str(gang.get("worker") or "?"), limit=20)
    ended = printable_line(str(gang.get("ended") or "failed"), limit=40)
    return [f"worker {worker} failed ({ended}), so the other {'worker was' if total == 1 else f'{total} workers were'} "
            f"sent SIGTERM: {names}"]


def stopped_processes(left: Mapping[str, Any] | None, signalled: Sequence[Mapping[str, Any]], *,
                      gang: object = None) -> str:
    """What a job's end signalled, for its message (newuser30 n16: the processes a job left running were
    stopped and nobody was told): ``its main process left 2 processes running, ended as jobs leave none
    behind: sleep 1000 (SIGTERM), sleep 999 (SIGKILL)`` (``left``: the wrapper's record in ``exit.json``);
    ``the stop sent SIGTERM to 3 processes (python train.py, sleep 1000, sleep 999), then SIGKILL 10 s later
    to 1 (sleep 999)`` and ``its wrapper ended and left processes running: the service sent SIGTERM to 1
    (sleep 999)`` (``signalled``: the executor's records, :func:`~.wrapper.signal_lines`); ``worker 2 failed (exit
    code 7), so the other 2 workers were sent SIGTERM: …`` (``gang``: the wrapper's record of a gang's stop); ""
    when nothing was. The job's log names each process with its pid (up to ten)."""
    parts: list[str] = _gang_part(gang)
    for why, opening in (("stop", "the stop sent "), ("left", ""), ("wrapper", "its wrapper ended and left processes "
                                                                             "running: the service sent ")):
        if why == "left":  # in the order they came: a stop's signals end the main process, then its leftovers
            parts += _left_part(left)
            continue
        steps: list[str] = []
        for record in signalled:
            if record.get("why") != why:
                continue
            processes = record.get("processes")
            more = record.get("more")
            total, names = _named(processes if isinstance(processes, list) else [],
                                  (len(processes) if isinstance(processes, list) else 0)
                                  + (more if isinstance(more, int) else 0))
            after = record.get("after_s")
            later = f" {after:g} s later" if isinstance(after, (int, float)) and after > 0 else ""
            steps.append(f"{_signal_word(record.get('signal'))}{later} to {_processes(total) if not steps else total}"
                         f" ({names})")
        if steps:
            parts.append(opening + ", then ".join(steps))
    return "; ".join(parts)


def _signal_word(raw: object) -> str:
    """A record's signal name (``SIGTERM``) as it may be shown."""
    return printable_line(str(raw or "a signal"), limit=20)


NO_JUPYTER_SCHED = "No module named 'jupyter_sched'"


_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([A-Za-z_][\w.]*)'")


_INSTALL_NAMES = {"sklearn": "scikit-learn", "cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml",
                  "skimage": "scikit-image", "bs4": "beautifulsoup4", "dateutil": "python-dateutil"}
"""Import names whose package installs under another name (``pip install sklearn`` fails)."""


def first_on_path(argv: Sequence[str], cwd: str | None) -> str | None:
    """The folder a Python command puts first on its ``sys.path`` (``argv``: what the job ran; ``cwd``: where it
    started): the script's folder for ``python DIR/train.py``; ``cwd`` for ``-c`` (a ``%%schedule`` cell and a
    carried script run by :func:`~jupyter_sched.userfiles.start_folder_argv`), ``-m`` (a notebook's runner: its kernel
    starts there too) and a bare ``python``; None for a program that is no Python, for ``-I``/``-P`` (nothing
    prepended) or without ``cwd``. Pure: nothing is looked at on disk."""
    if not argv or not cwd or not re.fullmatch(r"python(\d+(\.\d+)?)?", os.path.basename(argv[0])):
        return None
    words = iter(argv[1:])
    for word in words:
        if word == "-":
            break
        if word == "--check-hash-based-pycs":
            next(words, None)  # its value
        elif word.startswith("--"):
            continue
        elif word.startswith("-"):
            for at, flag in enumerate(word[1:], 1):  # `-uc CODE`: flags run together, as Python reads them
                if flag in "cm":
                    return os.path.normpath(cwd)
                if flag in "IP":
                    return None
                if flag in "WX":  # its value: the rest of the word, else the next one
                    if at == len(word) - 1:
                        next(words, None)
                    break
        else:
            return os.path.dirname(os.path.normpath(os.path.join(cwd, word)))
    return os.path.normpath(cwd)


def missing_module_hint(said: str, python: str | None, *, kernel: bool = False, shared: bool = False,
                        owner_uid: int | None = None, folder: str | None = None) -> str | None:
    """The fix of a run that failed on an import — ``said`` (its last log line, or the notebook runner's reason)
    holds ``ModuleNotFoundError: No module named 'torch'`` — naming the Python that lacks it (``python``: the
    interpreter the command ran, when known; ``kernel``: a notebook's kernel ran it) and how to install into that
    one: ``its Python, /p/.venv/bin/python3, has no torch: check the spelling first; if it is right,
    install it into that Python — /p/.venv/bin/python3 -m pip install torch (in a notebook on that Python's kernel:
    %pip install torch) …`` (newuser29 n15: a ``%%schedule`` cell's ``import torch`` said only the error).

    A misspelled name is not offered to pip (newuser33 N1: ``import nump`` was told ``pip install nump`` — a
    typo-squat's bait — with numpy installed): when ``python`` has a module of a near name
    (:func:`.module_names.near_module` over its folders, listed as ``owner_uid`` may), ``did you mean numpy? its
    Python, /p/python, has numpy (and no nump) — check the spelling``, after the error and where it was
    (:func:`python_error`); when it has the package of a missing submodule (``sklearn.linear_modl``), that it has the
    package and not the submodule. Known install names (``sklearn`` → ``scikit-learn``) are spelled right.

    ``jupyter_sched`` itself has its own fix (:func:`no_jupyter_sched_hint`). None when ``said`` holds no such
    error. The one place of this hint. ``shared``: ``python`` is the hub's job Python (``c.HubSchedApp.job_python``),
    which its users cannot install into: they are told to ask their hub admin, or to run a Python of their own
    (newuser31 N11: "python -m pip install torch" in the user's shell installs into their own Python, and the job
    still has none).

    ``folder``: the folder first on the run's ``sys.path`` (:func:`first_on_path`), where a module of the user's
    own is found — ``import train`` of a ``%%schedule`` cell finds ``train.py`` beside the notebook. A missing
    top-level name is then said missing from that folder first, and pip comes after it as the package's case
    (newuser36 n3: a cell's ``import train`` in a folder without train.py was told ``pip install train``, which
    installs whatever PyPI has under that name): ``its Python, /p/python3, has no train, and /w, first on its
    sys.path, has no train.py or train/: a module of yours goes there; if train is a package, check the spelling
    first; if it is right, install it …``. The folder is named, never looked in (the import's failure says it
    has none)."""
    found = _NO_MODULE.findall(said)
    if not found:
        return None
    dotted = found[-1]
    module = dotted.split(".")[0]
    if module == "jupyter_sched" and not kernel:
        return no_jupyter_sched_hint(python)
    package = _INSTALL_NAMES.get(module, module)
    if shared:
        ran = f"the hub's job Python{f', {python},' if python else ''}"
    elif kernel:
        ran = f"its kernel's Python, {python}," if python else "its kernel's Python"
    else:
        ran = f"its Python, {python}," if python else "the Python it ran"
    spelled = module in _INSTALL_NAMES
    if not spelled:
        names = importable_names(python, owner_uid=owner_uid)
        if names is not None and module in names and dotted != module:
            return f"{ran} has {module} but no {dotted} — check the spelling"
        near = near_module(module, names) if names is not None and module not in names else None
        if near is not None:
            return f"did you mean {near}? {ran} has {near} (and no {module}) — check the spelling"
    check = "" if spelled else "check the spelling first; if it is right, "
    missing = f"{ran} has no {module}: "
    if folder and not spelled and dotted == module:  # a module of the user's own may be what is missing (n3)
        missing = (f"{ran} has no {module}, and {printable_line(folder, limit=_ERROR_CHARS)}, first on its sys.path, has "
                   f"no {module}.py or {module}/: a module of yours goes there; if {module} is a package, ")
    if shared:
        return (f"{missing}{check}ask your hub admin to install {package} there "
                "(c.HubSchedApp.job_python), or run a Python of your own by its full path (e.g. -- ~/venv/bin/python "
                "SCRIPT)")
    pip = f"{python} -m pip install {package}" if python else f"python -m pip install {package} with that Python"
    return (f"{missing}{check}install it into that Python — {pip} (in a notebook on that Python's "
            f"kernel: %pip install {package})" + ("" if spelled else
                                                  "; a package's install name may differ from its import name"))


def _kernel_python(outcome: Mapping[str, object]) -> str | None:
    """The kernel's Python a notebook runner's ``outcome.json`` names (``{"kernel": {"python": "/p/bin/python3"}}``),
    when it is an absolute path of printable characters; None otherwise (the file is its owner's to write)."""
    kernel = outcome.get("kernel")
    python = kernel.get("python") if isinstance(kernel, Mapping) else None
    if not isinstance(python, str) or not os.path.isabs(python) or len(python) > 4096:
        return None
    return python if printable_line(python, limit=4096) == python else None


def no_jupyter_sched_hint(python: str | None) -> str:
    """What a job that failed on ``import jupyter_sched`` (``report_progress``) is told (newuser28 N3: run by
    ``.venv/bin/jupyter-sched`` without the venv active, the job's ``python`` was the shell's, without it)."""
    ran = f"its Python, {python}," if python else "the Python it ran"
    return (f"{ran} has no jupyter_sched: activate the environment jupyter-sched is installed in before "
            "submitting, or give that environment's Python by its full path (-- /path/to/venv/bin/python …)")
