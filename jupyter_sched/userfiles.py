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

__all__ = ["CHECKED_BYTES", "IN_PROCESS_BYTES", "START_FOLDER_RUNNER", "TOO_BIG", "TOO_DEEP", "content_problem",
           "content_refusal", "file_problem", "notebook_kernel", "notebook_start", "start_folder_argv"]

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
