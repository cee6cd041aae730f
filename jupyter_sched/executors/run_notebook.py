"""Execute a notebook headless with nbclient, keep the executed copy, and say how it ended.

``python -m jupyter_sched.executors.run_notebook IN.ipynb OUT.ipynb [--timeout SECONDS]
[--parameters JSON]``

* ``--parameters`` (a JSON object) is injected after the cell tagged ``parameters``, papermill's
  convention (:mod:`jupyter_sched.definitions.parameters`).
* Each stream output (stdout, stderr) and error of a cell is printed as the kernel sends it (papermill's
  ``--log-output`` way: nbclient's ``process_message``), flushed, so the job's log — ``logs -f``, the
  panel — shows a long training cell's lines while it runs and a run stopped mid-cell keeps what it
  printed (new user 27, N1: a one-cell notebook's log was empty until the cell ended, and a stopped
  run's had none of that cell's output); ``[jupyter_sched] cell k/n done`` (or ``failed``) follows
  each cell's output.
* The executed notebook (outputs and the error included) is written to ``OUT`` however the run
  ends, and ``outcome.json`` beside it says how (:mod:`.outcome`): the status, one-sentence
  ``reason``, the failing cell (1-based position in the *user's* notebook, not counting the
  injected cell, and its first line; with the ``In [N]`` of the executed notebook when that differs),
  the exception, a dead kernel's signal and peak memory.
* The kernel talks to this runner over Unix sockets in a private folder (IPC), not TCP.

Status comes from the execution result, never from "the runner exited" (case 028, r1): a cell
that raised is a failure even if the process would exit cleanly. A kernel that dies (SIGKILL from
the out-of-memory killer, r2) is noticed by nbclient's liveness poll within about a second, so the
run ends promptly and gives its GPUs back.

A kernel that cannot start — its name is not installed here (a notebook saved on another machine), its
``kernel.json`` names a program that is gone, it died before it answered — is one sentence naming the
kernel, the kernels there are and the fix (:mod:`jupyter_sched.wording.kernels`), never jupyter_client's
traceback (newuser33 N4: ``NoSuchKernel`` came out as the job's "last lines").

The notebook is read only when it is a regular file of at most
:data:`~jupyter_sched.userfiles.NOTEBOOK_RUN_BYTES` (8 MiB, the carried notebook's bound): a FIFO, a device (a
link to ``/dev/zero``) or a bigger file ends the run at once with one sentence naming the path, its size and
the bound (red39 R4: a FIFO ran "running" for ever, a 20 GB sparse file took 10.8 GB of the host's memory).

Exit status: 0 success, 1 a cell raised, 2 bad arguments, an unreadable notebook or a kernel that
cannot start, 3 the kernel died, 4 a cell ran past ``--timeout``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .outcome import kernel_death_sentence, write_outcome

__all__ = ["EXIT_BAD_INPUT", "EXIT_CELL_ERROR", "EXIT_KERNEL_DIED", "EXIT_TIMEOUT", "main"]

EXIT_CELL_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_KERNEL_DIED = 3
EXIT_TIMEOUT = 4
_FIRST_LINE_MAX = 80
_SAMPLE_INTERVAL_S = 0.1


def _first_line(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= _FIRST_LINE_MAX else line[:_FIRST_LINE_MAX] + "…"
    return ""


class _KernelWatch:
    """Samples the kernel's peak memory and remembers its process, to explain its death.

    Peak memory is the kernel's ``VmHWM`` (the kernel's own high-water mark of resident memory,
    read from ``/proc/<pid>/status`` on Linux), sampled every 0.1 s while it lives (a lower bound: a
    cell that allocates fast can die between samples); elsewhere the largest RSS psutil saw. An OOM
    kill is certain when the runner's memory cgroup counted one during the run (``oom_kill`` in
    cgroup v2 ``memory.events`` or v1 ``memory.oom_control``); that cgroup's limit is then named.
    """

    def __init__(self) -> None:
        self.process: Any = None
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._oom_before = _oom_kills()

    def attach(self, km: Any) -> None:
        self.process = getattr(getattr(km, "provisioner", None), "process", None)
        if self.process is not None and self._thread is None:
            # one sample now: on a loaded machine the kernel can die before the sampler's first
            # turn, and a dead kernel's high-water mark can no longer be read
            self.peak_kib = max(self.peak_kib, _peak_kib(int(self.process.pid)) or 0)
            self._thread = threading.Thread(target=self._sample, name="kernel-memory", daemon=True)
            self._thread.start()

    def _sample(self) -> None:
        pid = int(self.process.pid)
        while not self._stop.wait(_SAMPLE_INTERVAL_S):
            kib = _peak_kib(pid)
            if kib is None:
                return
            self.peak_kib = max(self.peak_kib, kib)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def signal(self) -> int | None:
        """The signal that ended the kernel, if a signal did (None: exited, or unknown)."""
        if self.process is None:
            return None
        try:
            code = self.process.poll()
        except Exception:  # not a Popen (a remote provisioner): unknown
            return None
        return -int(code) if code is not None and code < 0 else None

    def oom_killed(self) -> bool:
        after = _oom_kills()
        return after is not None and self._oom_before is not None and after > self._oom_before

    def oom_counted(self) -> bool:
        """Whether the memory cgroup's OOM-kill counter was read before and after the run (so no
        move of it says no OOM kill happened)."""
        return self._oom_before is not None and _oom_kills() is not None


def _peak_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:
        import psutil

        return int(psutil.Process(pid).memory_info().rss // 1024)
    except Exception:  # gone, or no psutil: no more samples
        return None


def _memory_cgroup() -> tuple[Path, str] | None:
    """This process's memory cgroup directory and its version (``"v1"``/``"v2"``), when readable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            found = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            if (found / "memory.oom_control").exists():
                return found, "v1"
        elif controllers == "":
            found = Path("/sys/fs/cgroup") / path.lstrip("/")
            if (found / "memory.events").exists():
                return found, "v2"
    return None


def _oom_kills() -> int | None:
    """OOM kills counted by this process's memory cgroup (v2 or v1), or None when unreadable."""
    group = _memory_cgroup()
    if group is None:
        return None
    file = group[0] / ("memory.oom_control" if group[1] == "v1" else "memory.events")
    try:
        for entry in file.read_text().splitlines():
            name, _, value = entry.partition(" ")
            if name == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        return None
    return None


def _memory_limit_mib() -> float | None:
    """The memory limit of this process's cgroup in MiB (None when none is set or unreadable)."""
    group = _memory_cgroup()
    if group is None:
        return None
    file = group[0] / ("memory.limit_in_bytes" if group[1] == "v1" else "memory.max")
    try:
        text = file.read_text().strip()
    except OSError:
        return None
    if not text.isdigit() or int(text) >= 1 << 60:  # "max", or v1's "unlimited" sentinel
        return None
    return int(text) / (1024 * 1024)


def _print_output(output: Any) -> None:
    """One output of a cell as the kernel sent it: a stream's text to stdout or stderr, an error's
    traceback to stderr (flushed: the log shows it at once); other outputs (displays) are not printed."""
    if output.get("output_type") == "stream":
        stream = sys.stderr if output.get("name") == "stderr" else sys.stdout
        stream.write(output.get("text", ""))
        stream.flush()
    elif output.get("output_type") == "error":
        print("\n".join(output.get("traceback", ())), file=sys.stderr, flush=True)


def _print_done(position: int, total: int, *, raised: bool = False) -> None:
    """The cell's status line after its output: ``cell 3/3 done``, or ``failed`` for the cell that
    raised (new user 17, N16: "cell 3/3 done" and then "cell 3 raised")."""
    print(f"[jupyter_sched] cell {position}/{total} {'failed' if raised else 'done'}", flush=True)


def _raised(cell: Any, execute_reply: Any) -> bool:
    """Whether the cell's execution ended in an error that fails the run: its reply's status (else an
    error output), unless the cell's ``raises-exception`` tag allows it (nbclient's convention)."""
    if "raises-exception" in cell.get("metadata", {}).get("tags", ()):
        return False
    content = execute_reply.get("content", {}) if isinstance(execute_reply, Mapping) else {}
    if "status" in content:
        return bool(content["status"] == "error")
    return any(output.get("output_type") == "error" for output in cell.get("outputs", ()))


def _cell_named(cell: Mapping[str, Any]) -> str:
    """``cell 3`` — its position in the user's notebook, as the log's ``cell 3/3`` lines count — and,
    once, the number the traceback and the executed notebook show when it differs: ``cell 3 (In [4]
    in the executed notebook)`` (new user 17, N16: "cell 3" beside "Cell In[4]", the parameters
    cell being counted there; markdown cells are counted here and not there)."""
    index, count = cell.get("index", "?"), cell.get("execution_count")
    shown = isinstance(count, int) and not isinstance(count, bool) and count != index
    return f"cell {index} (In [{count}] in the executed notebook)" if shown else f"cell {index}"


def _ipc_kernel(folder: str) -> Any:
    """The kernel's channels over Unix sockets in ``folder``, not TCP on localhost: ipykernel warns
    "Kernel is running over TCP without encryption … susceptible to eavesdropping" at the top of every
    notebook job's log otherwise (new user 17, N16), and a TCP port on localhost is one any local
    account can connect to (the messages are signed, not encrypted)."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "k")}})


def _bad_input(output: Path, message: str, parameters: Mapping[str, Any]) -> int:
    print(f"[jupyter_sched] {message}", file=sys.stderr, flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    write_outcome(output.parent, {"status": "failed", "reason": message, "parameters": dict(parameters)})
    return EXIT_BAD_INPUT


def main(argv: list[str] | None = None) -> int:
    """Run the notebook; see the module docstring."""
    parser = argparse.ArgumentParser(prog="run_notebook", description="execute a notebook headless")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per cell (default: none)")
    parser.add_argument("--parameters", default=None, help="JSON object injected after the 'parameters' cell")
    args = parser.parse_args(argv)

    from ..definitions.parameters import inject_parameters, parameters_note, validate_parameters
    from ..errors import ValidationError
    from ..userfiles import NotRunnable, read_run_file

    try:
        parameters = validate_parameters(json.loads(args.parameters) if args.parameters else None)
    except (ValueError, ValidationError) as exc:
        return _bad_input(args.output, f"bad --parameters: {getattr(exc, 'message', exc)}", {})
    try:
        # a regular file of at most NOTEBOOK_RUN_BYTES, read at once: a FIFO hung the run, holding its GPUs, and a
        # 20 GB sparse file (or a link to /dev/zero) took the host's memory (red39 R4)
        text = read_run_file(args.notebook).decode("utf-8")  # before nbformat's and nbclient's imports: at once
        import nbformat

        nb = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call]
        unknown = parameters_note(nb, parameters, os.path.basename(str(args.notebook))) if parameters else ""
        injected = inject_parameters(nb, parameters)
    except ValidationError as exc:
        return _bad_input(args.output, exc.message, parameters)
    except NotRunnable as exc:
        return _bad_input(args.output, f"{exc.message} — {exc.hint}", parameters)
    except FileNotFoundError:
        return _bad_input(args.output, f"no notebook {args.notebook} in {os.getcwd()}", parameters)
    except PermissionError:
        return _bad_input(args.output, f"cannot read notebook {args.notebook}: permission denied", parameters)
    except IsADirectoryError:
        return _bad_input(args.output, f"{args.notebook} is a folder, not a notebook", parameters)
    except OSError as exc:
        return _bad_input(args.output, f"cannot read notebook {args.notebook}: {exc.strerror or exc}", parameters)
    except Exception as exc:  # never nbformat's words: they quote the file's first bytes (new user 10, N1)
        what = "it is not JSON" if isinstance(exc, ValueError) else "its JSON is not a Jupyter notebook"
        return _bad_input(args.output, f"cannot read notebook {args.notebook}: {what} (a notebook is an .ipynb file "
                          "saved by Jupyter)", parameters)

    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    def position(cell_index: int) -> int:
        """1-based position of ``nb.cells[cell_index]`` in the user's notebook (injected cell not counted)."""
        return cell_index + (0 if injected is not None and cell_index > injected else 1)

    user_cells = len(nb.cells) - (1 if injected is not None else 0)
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    sockets = tempfile.TemporaryDirectory(prefix="jupyter-sched-kernel-")  # 0700: this account's alone
    client = NotebookClient(nb, timeout=args.timeout, kernel_name=kernel, config=_ipc_kernel(sockets.name),
                            resources={"metadata": {"path": str(Path.cwd())}})
    watch = _KernelWatch()
    kernel_up: list[bool] = []  # [True] once the kernel answered: a failure before it is its start's
    current: dict[str, int] = {}
    stop = _StopSignal()

    kernel_python: list[str] = []  # the Python the kernel runs, once started: an import's fix names it

    def started(**_: Any) -> None:
        kernel_up.append(True)
        python = _kernel_python(client.km)
        if python:
            kernel_python.append(python)
        watch.attach(client.km)
        stop.take_over(client.km)

    client.on_notebook_start = started
    client.on_cell_start = lambda cell, cell_index, **_: current.update(index=cell_index)
    processed = client.process_message

    def streamed(msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        """nbclient's handling of each kernel message, and each output printed as it comes (N1)."""
        output = processed(msg, cell, cell_index)
        if output is not None and cell_index != injected:
            _print_output(output)
        return output

    client.process_message = streamed  # type: ignore[method-assign]

    def executed(cell: Any, cell_index: int, execute_reply: Any = None, **_: Any) -> None:
        if cell_index == injected:
            print(f"[jupyter_sched] parameters injected: {json.dumps(parameters)}", flush=True)
            if unknown:  # a typo'd name runs with the default, every time: say it in the log (new user 6, F10)
                print(f"[jupyter_sched] warning: {unknown}", flush=True)
        else:
            _print_done(position(cell_index), user_cells, raised=_raised(cell, execute_reply))

    client.on_cell_executed = executed

    def cell_facts() -> dict[str, Any]:
        index = current.get("index")
        if index is None:
            return {}
        cell = nb.cells[index]
        return {"index": position(index), "first_line": _first_line(cell), "execution_count": cell.get("execution_count"),
                "injected": index == injected}

    code_cells = sum(1 for cell in nb.cells if cell.get("cell_type") == "code")
    # a notebook saved before its cells were typed (Run on GPUs on an unsaved notebook) ran nothing: "all cells
    # ran" said it had done the work (newuser33 N4's neighbour)
    done = "all cells ran" if code_cells else "nothing ran: the notebook has no code cells (was it saved?)"
    outcome: dict[str, Any] = {"status": "succeeded", "reason": done, "parameters": parameters}
    status = 0
    try:
        try:
            with stop.armed():
                client.execute()
        except Exception:
            # a stop (cancel, time limit, preemption) also ends the kernel, and nbclient's cleanup then
            # fails its own way (new user 5: "assert self.km is not None" as a cancelled run's outcome)
            if stop.signum is not None:
                raise _Stopped() from None
            if not kernel_up:
                raise _KernelNotStarted(_kernel_start_reason(args.notebook, nb, kernel, sys.exc_info()[1])) \
                    from None
            raise
    except _KernelNotStarted as exc:
        outcome = {"status": "failed", "reason": str(exc), "kernel": {"name": kernel}, "parameters": parameters}
        status = EXIT_BAD_INPUT
    except _Stopped:
        cell = cell_facts()
        where = f"cell {cell['index']} of {user_cells}" if cell.get("index") else "before its first cell"
        reason = f"stopped in {where} by {_signal_name(stop.signum)}"
        if cell.get("first_line"):
            reason += f" (cell starts: {cell['first_line']})"
        outcome = {"status": "stopped", "reason": reason, "cell": cell, "parameters": parameters}
    except CellExecutionError as exc:
        cell = cell_facts()
        where = _cell_named(cell)
        reason = f"{where} raised {exc.ename}: {exc.evalue}".rstrip(": ")
        if cell.get("first_line"):
            reason += f" (cell starts: {cell['first_line']})"
        outcome = {"status": "failed", "reason": reason, "cell": cell,
                   "exception": {"ename": exc.ename, "evalue": exc.evalue}, "parameters": parameters,
                   "kernel": {"name": kernel, "python": kernel_python[0] if kernel_python else None}}
        status = EXIT_CELL_ERROR
    except CellTimeoutError:
        cell = cell_facts()
        reason = f"{_cell_named(cell)} did not finish within the {args.timeout:g} s cell time limit"
        if cell.get("first_line"):
            reason += f" (cell starts: {cell['first_line']})"
        outcome = {"status": "failed", "reason": reason, "cell": cell, "timeout_s": args.timeout,
                   "parameters": parameters}
        status = EXIT_TIMEOUT
    except DeadKernelError:
        watch.stop()
        cell = cell_facts()
        signum = watch.signal()
        peak = watch.peak_kib / 1024 if watch.peak_kib else None
        oom = watch.oom_killed()
        limit = _memory_limit_mib()
        reason = kernel_death_sentence(signum, peak_mib=peak, oom_killed=oom, cell_index=cell.get("index"),
                                       first_line=cell.get("first_line"), limit_mib=limit,
                                       oom_counted=watch.oom_counted())
        outcome = {"status": "failed", "reason": reason, "cell": cell, "parameters": parameters,
                   "kernel": {"signal": signum, "peak_memory_mib": round(peak, 1) if peak else None,
                              "oom_killed": oom, "memory_limit_mib": limit}}
        status = EXIT_KERNEL_DIED
    finally:
        watch.stop()
        sockets.cleanup()
        args.output.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(args.output))  # type: ignore[no-untyped-call]
        outcome["executed_notebook"] = str(args.output.resolve())
        write_outcome(args.output.parent, outcome)
        if status:
            print(f"[jupyter_sched] failed: {outcome['reason']}", file=sys.stderr, flush=True)
        elif stop.signum is not None:
            print(f"[jupyter_sched] {outcome['reason']}", file=sys.stderr, flush=True)
        print(f"[jupyter_sched] {executed_notebook_line(os.environ.get('JUPYTER_SCHED_JOB_ID'))}", flush=True)
    if stop.signum is not None:
        stop.end_as_signalled()  # the exit status says the signal, as any stopped job's does
    return status


def executed_notebook_line(job_id: str | None) -> str:
    """The log's last line: how its owner opens the executed notebook — the panel's button or the CLI,
    both through the server, which hands it to the job's owner only — not its path, which on a hub is in
    the service's job folder that the owner cannot read (newuser39 N1: ``Permission denied``)."""
    job = job_id or "JOB"
    return (f"executed notebook kept (outputs and errors): open it from the panel (My work → {job} → Open "
            f"notebook) or save it here with: jupyter-sched logs {job} --notebook")


def _kernel_python(km: Any) -> str | None:
    """The absolute path of the Python a started kernel runs — its kernelspec's ``argv[0]`` as jupyter_client
    starts it (a bare ``python``/``python3``/``python3.11`` is this runner's own interpreter; another bare name is
    looked up on ``PATH``) — or None when it is not a Python or not known. A cell's ``import nump`` is then asked
    about against that Python's modules (the service lists them as the job's account may; leftover of newuser33 N1:
    a notebook job's misspelled import was told only "check the spelling first")."""
    try:
        argv = list(km.kernel_spec.argv)
    except Exception:  # a provisioner without a kernelspec: nothing to name
        return None
    if not argv or not isinstance(argv[0], str):
        return None
    first = argv[0]
    major, minor = sys.version_info[:2]
    if first in {"python", f"python{major}", f"python{major}.{minor}"}:
        first = sys.executable
    elif not os.path.isabs(first):
        first = shutil.which(first) or ""
    name = os.path.basename(first)
    return first if os.path.isabs(first) and name.startswith("python") else None


class _Stopped(Exception):
    """The run was told to stop (SIGTERM) while a cell ran."""


class _KernelNotStarted(Exception):
    """The notebook's kernel could not start; its one sentence is the message."""


def _kernel_start_reason(path: Path, nb: Any, kernel: str, exc: BaseException | None) -> str:
    """One sentence for a kernel that did not start (:mod:`jupyter_sched.wording.kernels`): not installed
    here — the kernels there are, the menu and the install line —, or why it could not start."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    from ..textsafe import printable_line
    from ..wording.kernels import kernel_missing, kernel_not_started

    spec = nb.metadata.get("kernelspec", {})
    display = spec.get("display_name") if isinstance(spec.get("display_name"), str) else None
    if isinstance(exc, NoSuchKernel):
        try:
            here = list(KernelSpecManager().find_kernel_specs())
        except Exception:  # the listing is a courtesy: the sentence stands without it
            here = []
        problem, fix = kernel_missing(kernel, display, here, sys.executable)
    else:
        if isinstance(exc, FileNotFoundError) and exc.filename:  # kernel.json's program is gone (a deleted env)
            why = f"its program {exc.filename} does not exist"
        else:
            why = printable_line(f"{type(exc).__name__}: {exc}".rstrip(": "), limit=200)
        problem, fix = kernel_not_started(kernel, display, why)
    return f"notebook {str(path)[:300]} cannot run: {problem}; {fix}"


class _StopSignal:
    """SIGTERM while :meth:`armed`: remember it and stop the execution (:class:`_Stopped`), so the
    executed copy and ``outcome.json`` say where it stopped; :meth:`end_as_signalled` then ends
    the process by that signal."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._armed = False
        self._shutdown: Any = None

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
            if self._armed:
                raise _Stopped()

    def armed(self) -> Any:
        import contextlib
        import signal

        @contextlib.contextmanager
        def scope() -> Any:
            previous = signal.signal(signal.SIGTERM, self._on_signal)
            self._armed = True
            try:
                yield
            finally:
                self._armed = False
                if self.signum is None:
                    signal.signal(signal.SIGTERM, previous)

        return scope()

    def take_over(self, km: Any) -> None:
        """Once nbclient runs its kernel, SIGTERM reaches its event-loop handler instead (which
        shuts the kernel down and then fails in its own cleanup): handle it there — remember the
        stop, shut the kernel down through the manager's public API."""
        import asyncio
        import inspect
        import signal

        def on_loop_signal() -> None:
            if self.signum is None:
                self.signum = signal.SIGTERM
            done = km.shutdown_kernel(now=True)
            if inspect.isawaitable(done):
                self._shutdown = asyncio.ensure_future(done)  # kept: a task nobody holds may be collected

        try:
            asyncio.get_event_loop().add_signal_handler(signal.SIGTERM, on_loop_signal)
        except (RuntimeError, NotImplementedError):  # not the main thread, or no loop signals here
            pass

    def end_as_signalled(self) -> None:
        import signal

        assert self.signum is not None
        signal.signal(self.signum, signal.SIG_DFL)
        os.kill(os.getpid(), self.signum)


def _signal_name(signum: int | None) -> str:
    import signal

    try:
        return signal.Signals(signum or 0).name
    except ValueError:
        return f"signal {signum}"


if __name__ == "__main__":
    sys.exit(main())
