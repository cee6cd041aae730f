"""A user's script compiled apart from the service (red team 26, R2): I/O at the edge of the core.

:func:`jupyter_sched.userfiles.content_problem` is THE rule for what can run; the service, a process every
user shares, must not run its compile step on a large script itself — CPython's compile holds the GIL from
start to end (an 8 MiB script froze every user's requests and the engine for 15 to 35 s, and left 3 GiB). So a
script past :data:`~jupyter_sched.userfiles.IN_PROCESS_BYTES` is compiled in a child process limited to
:data:`APART_CPU_S` CPU seconds and :data:`APART_MEMORY_BYTES` of address space, two children at a time
service-wide and one per user (red27 R4); a check that finds the child busy (a script up to 64 KiB waits a second for it), or that the child could not finish within its limits, is
skipped (the job's run tells, as for a file past ``CHECKED_BYTES``).

The syntax is the JOB's Python's (verify27 V4: the service compiled with its own, so with
``c.HubSchedApp.job_python`` a newer Python valid new syntax was refused, and the reverse passed to fail at run
time): :func:`use_job_python`, at the hub service's start, reads that interpreter's version once; where it
differs from the service's, every script (any size) is compiled by it, in the child.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from .. import untrusted_json
from ..userfiles import IN_PROCESS_BYTES, SCRIPT_PYTHON, TOO_BIG, TOO_DEEP, content_problem

__all__ = ["APART_CPU_S", "APART_MEMORY_BYTES", "WAIT_BYTES", "WAIT_S", "job_python_differs", "script_problem_apart",
           "use_job_python"]

APART_CPU_S = 2
"""CPU seconds the child that compiles a large script may use (then it is not checked: its run tells)."""

APART_MEMORY_BYTES = 1 << 30
"""Address space of that child (1 GiB)."""

_APART = 2
"""Children compiling at once, service-wide: many large submits cost at most this many cores for
:data:`APART_CPU_S` each. One of them at most is any one user's (:class:`_Gate`, red27 R4)."""

# The child: limits first, then the compile; one JSON line back. -I -S: no user site, no PYTHONPATH.
_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
data = sys.stdin.buffer.read()
try:
    compile(data, sys.argv[1], "exec", dont_inherit=True)
except SyntaxError as exc:
    said = ["syntax", exc.lineno, str(exc.msg)]
except ValueError:
    said = ["value"]
except RecursionError:
    said = ["deep"]
except MemoryError:  # the parser's own stack (a long unary chain) or this child's memory limit: told by its peak,
    # VmHWM (reset at exec; getrusage's ru_maxrss is the parent's when the parent was larger)
    peak = next((int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:")), 0)
    said = ["limit"] if peak > {mem} // 4 else ["deep"]
except OverflowError:
    said = ["big"]
else:
    said = ["ok"]
sys.stdout.write(json.dumps(said))
"""


WAIT_BYTES = 64 << 10
WAIT_S = 1.0
"""A script of at most :data:`WAIT_BYTES` (the child compiles it in well under a second) waits up to this
long for a busy child rather than going unchecked: since red team 26, R6 lowered ``IN_PROCESS_BYTES`` to
8 KiB, ordinary scripts go to the child too, and two users' submits at one moment are usual."""

class _Gate:
    """At most ``slots`` children at once service-wide, and at most ONE of them any one user's (red27 R4: with a
    single service-wide child, one user's stream of 60 KB submits kept it busy, so every other user's check
    waited a second and was then skipped — their syntax errors not said). A user's checks queue behind their
    own; another user's never wait for them, only for a slot a DIFFERENT user holds."""

    def __init__(self, slots: int) -> None:
        self._cond = threading.Condition()
        self._users: dict[str, int] = {}
        self._free = slots

    def acquire(self, user: str = "", *, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take a slot for ``user`` (free slot and none of ``user``'s in use), waiting up to ``timeout``
        seconds (None: as long as it takes; ``blocking=False``: not at all); False when not taken."""
        def ready() -> bool:
            return self._free > 0 and not self._users.get(user)

        with self._cond:
            if not (ready() if not blocking else self._cond.wait_for(ready, timeout=timeout)):
                return False
            self._free -= 1
            self._users[user] = 1
            return True

    def release(self, user: str = "") -> None:
        """Give ``user``'s slot back."""
        with self._cond:
            self._free += 1
            self._users.pop(user, None)
            self._cond.notify_all()


_GATE = _Gate(_APART)


_VERSION = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"


def python_version(python: str) -> str | None:
    """``3.12`` for the interpreter ``python``, or None when it does not run (within 20 s)."""
    try:
        done = subprocess.run([python, "-I", "-S", "-c", _VERSION], capture_output=True, timeout=20, check=False,
                              env={"LC_ALL": "C"}, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return None
    said = done.stdout.decode(errors="replace").strip()
    return said if done.returncode == 0 and said.replace(".", "").isdigit() else None


def use_job_python(python: str | None) -> str | None:
    """Compile users' scripts with ``python`` (``c.HubSchedApp.job_python``; None: this service's) where its
    version differs from this service's (verify27 V4), read once here; returns the start-up log's sentence
    then (``script checks compile with the job's Python 3.12 (…), not this service's 3.11``), else None.
    A job Python that does not run leaves the checks to this service's (its jobs fail; its own warning says why)."""
    SCRIPT_PYTHON.clear()
    if not python or python == sys.executable:
        return None
    version, mine = python_version(python), f"{sys.version_info[0]}.{sys.version_info[1]}"
    if version is None or version == mine:
        return None
    SCRIPT_PYTHON.append(python)
    return (f"script checks compile with the job's Python {version} ({python}), not this service's {mine}: "
            "every submitted script is compiled apart by it")


def job_python_differs() -> bool:
    """Is a script's syntax another Python's (:func:`use_job_python`): every script is then checked apart?"""
    return bool(SCRIPT_PYTHON)


def script_problem_apart(data: bytes, name: str = "<script>", *, user: str = "") -> str | None:
    """:func:`content_problem` of a script for a process many users share (the service): one of at most
    :data:`IN_PROCESS_BYTES` is compiled here; a larger one in a child process limited to
    :data:`APART_CPU_S` CPU seconds and :data:`APART_MEMORY_BYTES` (red team 26, R2), one child at a
    time service-wide and one per ``user`` (the job's owner: red27 R4, :class:`_Gate`). None when it compiles —
    or when it could not be checked (the child busy — for a user, their own check in flight —, out of
    its limits, or failing to start): the job's run then tells, as for a file past
    :data:`~jupyter_sched.userfiles.CHECKED_BYTES`.
    Blocks the calling thread (a request thread, never the event loop) for up to the child's run."""
    python = SCRIPT_PYTHON[0] if SCRIPT_PYTHON else sys.executable  # the job's, where its version differs (V4)
    if (len(data) <= IN_PROCESS_BYTES and not SCRIPT_PYTHON) or b"\x00" in data:
        return content_problem("script", data, name)
    gate = _GATE
    if not (gate.acquire(user, timeout=WAIT_S) if len(data) <= WAIT_BYTES else gate.acquire(user, blocking=False)):
        return None
    try:
        code = _CHILD.format(cpu=APART_CPU_S, mem=APART_MEMORY_BYTES)
        try:
            done = subprocess.run([python, "-I", "-S", "-c", code, name], input=data, capture_output=True,
                                  timeout=APART_CPU_S * 5, check=False, env={"LC_ALL": "C"}, cwd="/")
        except (OSError, subprocess.SubprocessError):
            return None
    finally:
        gate.release(user)
    try:
        said = untrusted_json.loads(done.stdout or b"null")
    except ValueError:
        return None
    if not isinstance(said, list) or not said or said[0] == "limit":
        return None  # out of its limits (SIGXCPU, or its memory: verify26 V12 — a valid 8 MiB script was refused
        # as "too large for Python to compile"): not checked, the run tells
    kind = said[0]
    if kind == "syntax":
        return (f"line {said[1]}: " if said[1] else "") + str(said[2])
    return {"value": "it is not text Python reads", "deep": TOO_DEEP, "big": TOO_BIG}.get(str(kind))
