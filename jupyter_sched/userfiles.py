"""Why a file the user named cannot be run, said before the job waits for a GPU (new user 8, N7).

The CLI (``submit --script/--notebook``, ``definitions create``) and the magics (``%schedule
run|notebook|serve|define``) check the path they are given with :func:`file_problem`: a missing file,
a folder, or a file this account may not read (a folder on the way it may not search, or the file
itself) is one sentence naming the cause — not a ``PermissionError`` traceback, and not "no such
file" for a file that exists. Light: the CLI imports it on every submit.

What the file holds is checked too, by :func:`content_problem` — THE rule for REST (the service,
as the job's owner), the CLI and the magics: a notebook Jupyter cannot read, or a script Python
cannot compile (scripts run with the job's Python), is refused at submit and at definition create,
not found out when it runs — at night, for a definition, after holding a GPU (new user 14, N23).
"""

from __future__ import annotations

import os
import pwd
import stat
import warnings
from collections.abc import Sequence

from . import untrusted_json
from .safefd import open_fd

__all__ = ["CHECKED_BYTES", "IN_PROCESS_BYTES", "NOTEBOOK_RUN_BYTES", "START_FOLDER_RUNNER", "TOO_BIG", "TOO_DEEP",
           "NotRunnable", "content_problem", "content_refusal", "file_problem", "not_regular_refusal", "notebook_kernel",
           "notebook_start", "read_head", "read_run_file", "size_words", "start_folder_argv", "too_big_refusal", "unrunnable"]

START_FOLDER_RUNNER = (
    "import runpy,sys,traceback as t;f=sys.argv.pop(1);"
    "k=lambda b:b and(b if b.tb_frame.f_code.co_filename==f else k(b.tb_next));"
    "sys.excepthook=lambda c,e,b:t.print_exception(c,e,k(b));runpy.run_path(f,run_name='__main__')")
"""``python -c`` code running the file ``sys.argv[1]`` as ``python FILE`` would (``__name__`` is
``"__main__"``, ``__file__`` and ``sys.argv[0]`` name the file, the rest of argv is its arguments) —
but with ``-c``'s ``sys.path[0]``, the working directory, where ``python FILE`` puts the file's folder.
An uncaught error's traceback starts at the file's own frame, as ``python FILE``'s does (none of the
file's frames: a syntax error, said as Python says it): the runner's ``<string>`` and ``<frozen runpy>``
frames took three of the five "last lines" a failed cell job's summary shows (new user 27, N3). Standard library only (the job's Python may have nothing else); one
line, readable in ``ps`` as the wrapper's own command line is (issue 20, F8)."""


def start_folder_argv(python: str, script: str, args: Sequence[str] = ()) -> list[str]:
    """argv running ``script`` with ``python``, the job's working directory first on ``sys.path``.

    For a file the job did not choose the folder of: a ``%%schedule`` cell saved as
    ``.jupyter_sched/cells/<hash>.py`` or a script carried by content into the job's own directory.
    ``python FILE`` would put that folder first on ``sys.path``, so ``import train`` of a module beside
    the notebook failed in the job though it works in the kernel, whose folder is on its path (new
    user 26, N9). The job sees what the kernel sees: its start folder (the notebook's) first.
    """
    return [python, "-c", START_FOLDER_RUNNER, script, *args]


def notebook_start(path: str) -> tuple[str, str]:
    """``(notebook, working_dir)`` of a notebook job that names no working directory: the notebook's
    absolute path (relative: to this process's folder) and its folder, where the job starts — as
    Jupyter starts the notebook's kernel, and as a job definition's run and the panel's Submit start
    it (newuser26 N10: a one-off ``--notebook sub/nb.ipynb`` ran in the submitter's folder, where its
    ``open('local.txt')`` failed). A ``~/…`` path is the owner's home, for the server: kept as given.
    """
    if path.startswith("~"):
        return path, os.path.dirname(path) or "~"
    full = os.path.abspath(path)
    return full, os.path.dirname(full)


CHECKED_BYTES = 8 << 20
"""Most bytes of a file :func:`content_problem` reads (a larger file is not checked: its run tells)."""

NOTEBOOK_RUN_BYTES = 8 << 20
"""Most bytes of a notebook a job runs, read from a path (the notebook runner, a definition's create and each
of its firings) — the bound of a carried one (``notebook_json``): a notebook's outputs are not needed to run it
(the run makes them anew). The runner parses the file whole: a 20 GB sparse ``.ipynb`` took 10.8 GB of the
host's memory before this bound (red39 R4)."""

IN_PROCESS_BYTES = 8 << 10
"""Most bytes of a script a shared process (the service) compiles itself: CPython's compile holds the
GIL from start to end — an 8 MiB script froze every user's requests and the engine for 15 to 35 s and
took 3 GiB (red team 26, R2). A larger script is compiled in a child process with CPU and memory
limits (:func:`jupyter_sched.services.script_check.script_problem_apart`). 8 KiB, not 64 (red team
26, R6): an f-string field costs ~10x a plain byte — measured (loaded 2-core host): 64 KiB of
``f'{a}…'`` 1,030 ms of GIL, 16 KiB 100 ms, 8 KiB 35 ms (plain ``x = 1`` lines: 78 / 27 / 3 ms), while
the child's ~60 ms start holds no GIL of the service's."""


def file_problem(path: str, folder: str) -> str | None:
    """What keeps this account from reading ``path`` as a file (relative to ``folder``), or None.

    The answer is a phrase to put after the path: ``does not exist in FOLDER`` (``does not exist`` for
    an absolute path), ``FULL is a folder, not a file``, ``cannot be read by USER (permission denied on
    PLACE)`` where PLACE is the first folder on the way it may not search, or the file itself.
    """
    given = os.path.expanduser(path)
    full = os.path.abspath(os.path.join(folder, given))
    try:
        info = os.stat(full)
    except PermissionError:  # the folder on the way through any link, not the link's own folder (new user 11,
        return _denied(_blocking_folder(os.path.realpath(full)))  # N19: it blamed the user's home for her link)
    except (FileNotFoundError, NotADirectoryError):
        # the service's words for it (newuser31 n15: "no such file in …" here, "does not exist in …" there)
        return "does not exist" if os.path.isabs(given) else f"does not exist in {folder}"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(info.st_mode):
        return f"{full} is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return f"{full} is not a regular file"
    try:
        with open(full, "rb"):
            pass
    except PermissionError:
        return _denied(full)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None


def _blocking_folder(full: str) -> str:
    """The first folder on the way to ``full`` that this account may not search."""
    parts = full.split(os.sep)
    for depth in range(2, len(parts) + 1):
        try:
            os.stat(os.sep.join(parts[:depth]) or os.sep)
        except PermissionError:
            return os.sep.join(parts[:depth - 1]) or os.sep
        except OSError:
            break
    return os.path.dirname(full)


def _denied(place: str) -> str:
    return f"cannot be read by {_account()} (permission denied on {place})"


def _account() -> str:
    """The effective account's name (its uid when it has no name)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


SCRIPT_PYTHON: list[str] = []
"""The job's interpreter, when the service set one whose Python version differs from this process's
(:func:`jupyter_sched.services.script_check.use_job_python`, verify27 V4): a script's syntax is then
that Python's, so :func:`content_problem` leaves it to the service's child compiling with it (empty:
this process's Python is the job's)."""


def content_problem(kind: str, data: bytes, name: str = "<script>") -> str | None:
    """Why ``data`` cannot run as a ``kind`` (``notebook`` or ``script``), or None: the words the
    notebook runner says when the job starts (``it is not JSON``, ``its JSON is not a Jupyter
    notebook``), or the script's first syntax error (``line 1: invalid syntax``). A notebook is
    read by nbformat where it is installed (what the job runs), else checked for its JSON shape;
    a script is compiled (never run), as the job's Python would, its coding cookie honoured."""
    if kind == "notebook":
        try:
            parsed = untrusted_json.loads(data)
        except ValueError:  # UnicodeDecodeError too
            return "it is not JSON"
        if not isinstance(parsed, dict) or not (isinstance(parsed.get("cells"), list)
                                                or isinstance(parsed.get("worksheets"), list)):
            return "its JSON is not a Jupyter notebook"
        try:
            import nbformat
        except ImportError:  # the slim install: the JSON shape is what can be checked
            return None
        try:
            with warnings.catch_warnings():  # its notes (a cell without an id) are no refusal: the run reads it
                warnings.simplefilter("ignore")
                nbformat.reads(data.decode("utf-8"), as_version=4)  # type: ignore[no-untyped-call]
        except Exception:  # any reason nbformat gives, never its words (they quote the file: new user 10, N1)
            return "its JSON is not a Jupyter notebook"
        return None
    if b"\x00" in data:
        return "it is not text (a binary file)"
    if SCRIPT_PYTHON:  # another Python's syntax: compiled by it, apart (services.script_check), never here
        return None
    try:
        compile(data, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return f"{where}{exc.msg}"
    except ValueError:  # e.g. a coding cookie naming no codec
        return "it is not text Python reads"
    except RecursionError:  # a long chain (x=1+1+…+1): red team 26, R3 (was a 500 with a traceback)
        return TOO_DEEP
    except (MemoryError, OverflowError):
        return TOO_BIG
    return None


def notebook_kernel(data: bytes | str) -> tuple[str, str | None] | None:
    """``(name, display name)`` of the kernel a notebook's JSON names (``metadata.kernelspec``), which the
    notebook runner starts (newuser33 N4), or None: not a notebook, or it names none (the runner then
    starts ``python3``). Pure; the caller has checked the notebook's size."""
    try:
        parsed = untrusted_json.loads(data)
    except ValueError:
        return None
    meta = parsed.get("metadata") if isinstance(parsed, dict) else None
    spec = meta.get("kernelspec") if isinstance(meta, dict) else None
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not name:
        return None
    display = spec.get("display_name") if isinstance(spec, dict) else None
    return name, display if isinstance(display, str) else None


TOO_DEEP = "it nests an expression too deeply for Python to compile (a very long chain such as 1+1+…+1)"
TOO_BIG = "it is too large for Python to compile"



def content_refusal(kind: str, path: str, problem: str) -> tuple[str, str]:
    """``(message, hint)`` of a ``kind`` file at ``path`` that cannot run (:func:`content_problem`), in
    REST's words with the field said once (``notebook '/x/bad.ipynb' cannot be read: it is not JSON``,
    as the notebook runner says it at the start); the CLI and the magics turn the leading field into
    their option."""
    shown = repr(path[:300])
    if kind == "notebook":
        return (f"notebook {shown} cannot be read: {problem}",
                "give an .ipynb file saved by Jupyter (a Python file runs as a script)")
    return (f"script {shown} is not a Python script: {problem}",
            "it would run with the job's Python: fix the file, or run another program as a command")


class NotRunnable(Exception):
    """A file a job names cannot be read to run (:func:`read_run_file`): ``message`` names the path and why,
    ``hint`` the fix."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def size_words(size: int) -> str:
    """``20 GiB (21,474,836,480 bytes)``, ``9.5 MiB (9,961,472 bytes)``: a file's size for a sentence."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.3g} {unit} ({size:,} bytes)"
    return f"{size:,} bytes"


def not_regular_refusal(kind: str, path: str, mode: int) -> tuple[str, str]:
    """``(message, hint)`` of a ``kind`` file at ``path`` that is no regular file (``mode``: its ``st_mode``,
    a link followed): a FIFO, a device, a socket."""
    what = next((word for test, word in _KINDS if test(mode)), "not a regular file")
    return (f"{kind} {path[:300]!r} is {what}, not a regular file: a job reads only a file's text",
            f"give the path of the {kind} file itself (a FIFO, device or socket is never read: it could hang the "
            "run or fill the host's memory)")


def unrunnable(kind: str, path: str) -> tuple[str, str] | None:
    """``(message, hint)`` when the ``kind`` file at ``path`` exists but is no regular file, or is a notebook
    past :data:`NOTEBOOK_RUN_BYTES` — what :func:`read_run_file` would refuse, told by a ``stat`` alone (never an
    open: a FIFO or device is not opened) — else None (a regular file in bounds, or nothing there: a missing
    path is said by its own check)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        return not_regular_refusal(kind, path, info.st_mode)
    if kind == "notebook" and info.st_size > NOTEBOOK_RUN_BYTES:
        return too_big_refusal(kind, path, info.st_size, NOTEBOOK_RUN_BYTES)
    return None


def too_big_refusal(kind: str, path: str, size: int | None, limit: int) -> tuple[str, str]:
    """``(message, hint)`` of a ``kind`` file at ``path`` past ``limit`` bytes (``size``: None when only
    "more than the bound" is known)."""
    said = size_words(size) if size is not None else f"more than {size_words(limit)}"
    return (f"{kind} {path[:300]!r} is {said}; at most {size_words(limit)} is run",
            "clear its outputs (Jupyter: Edit > Clear Outputs of All Cells; a run makes them anew) and save it, "
            "and keep big data in files the notebook reads" if kind == "notebook" else
            "keep big data in files the script reads")


def read_head(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit`` first bytes of the regular file at ``path`` — a FIFO, device or socket (a link to one too)
    is refused before it is opened (red39 R4's kind: a ``--token-file`` or script head that is a FIFO hung the CLI).

    Raises:
        OSError: it cannot be opened, or is no regular file (EINVAL, "not a regular file").
    """
    with os.fdopen(open_fd(path, os.O_RDONLY, kind="file"), "rb") as fh:
        return fh.read(limit)


def read_run_file(path: str | os.PathLike[str], *, kind: str = "notebook", limit: int = NOTEBOOK_RUN_BYTES) -> bytes:
    """The whole of the regular file at ``path`` a job runs (relative: to this process's folder), at most
    ``limit`` bytes (red39 R4). Opened by :func:`~jupyter_sched.safefd.open_fd`: non-blocking, and only when
    it is a regular file — a FIFO, a device (a link to ``/dev/zero`` too) or a socket is refused before it is
    opened (a FIFO hung the run for ever; ``/dev/zero`` filled the host's memory); its size is looked at
    before a byte is read, and what is read stops one byte past ``limit`` (a file growing meanwhile).

    Raises:
        NotRunnable: not a regular file, or past ``limit`` (the sentence names the path, its size and the bound).
        OSError: it cannot be opened (missing, permission denied, a folder on the way missing).
    """
    shown = os.fspath(path)
    try:
        fd = open_fd(path, os.O_RDONLY, kind="file")
    except OSError as exc:
        if exc.errno != 22:
            raise
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = 0
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "is a folder", shown) from None
        raise NotRunnable(*not_regular_refusal(kind, shown, mode)) from None
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise NotRunnable(*too_big_refusal(kind, shown, size, limit))
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew after the look
        raise NotRunnable(*too_big_refusal(kind, shown, None, limit))
    return data
