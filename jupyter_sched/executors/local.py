"""Local executor: each job is a process group on this machine, pinned to its GPUs by UUID.

Start: ``python wrapper.py --job-dir DIR -- ARGV`` (see :mod:`.wrapper`) in a new session
(``start_new_session=True``: its own process group, so signals reach the job's children and
grandchildren and never the server), stdout and stderr appended to ``DIR/output.log``, with

* ``CUDA_VISIBLE_DEVICES`` = the allocated GPU / MIG UUIDs, comma-joined — never indices;
* ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` — overwriting a user's ``FASTEST_FIRST`` with a warning
  (case 016: nvidia-smi indices follow PCI order, CUDA's default order is fastest first);
* ``JUPYTER_SCHED_JOB_ID`` and ``JUPYTER_SCHED_GPU_MILLI`` (share of each GPU, 1000 = whole).

On simulated GPUs the same (simulated) UUIDs are passed; the job simply sees no CUDA device.

ARGV is the spec's ``command``; a ``script`` runs as ``sys.executable SCRIPT ARGS``; a
``notebook`` runs as ``sys.executable -m jupyter_sched.executors.run_notebook IN DIR/executed.ipynb``.

Stop plan (cancel, preemption, time limit): optional ``SIGUSR1`` (checkpoint) to the group, then
``SIGTERM``, then ``SIGKILL`` ``grace_s`` seconds after the stop began; advanced by :meth:`poll`.

Re-adoption: the handle holds the host, the wrapper's pid and process create time (psutil); a
live process with the same pid *and* create time is the job (pid reuse is detected). A job
started on another host cannot be watched from here and is reported lost with that reason. Its end is read
from ``DIR/exit.json``, which the wrapper writes; no file means the outcome is unknown (lost).

Inference services (kind ``inference``) are restarted after a failed exit with exponential
backoff (1 s, 2 s, 4 s ... 60 s, at most ``max_service_restarts`` times) and reported
:class:`~.base.Ready` when ``127.0.0.1:port`` accepts a connection.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil

from ..definitions.parameters import script_arguments
from ..errors import ExecutorError, NotFoundError
from ..model import Allocation, Job, JobKind
from ..model.units import parse_utc
from . import wrapper as _wrapper
from .base import ExecutorEvent, ExecutorHandle, Exited, Lost, Ready, Started
from .outcome import describe_exit

__all__ = ["LocalExecutor", "job_argv", "job_environment", "read_log"]

log = logging.getLogger(__name__)

_CREATE_TIME_TOLERANCE_S = 0.05
_CHECKPOINT_WAIT_MAX_S = 30.0


def job_environment(
    job: Job,
    allocation: Allocation,
    base_env: Mapping[str, str],
    *,
    logger: logging.Logger = log,
) -> dict[str, str]:
    """The environment a job runs with: ``base_env`` + the spec's env + the scheduler's pins.

    ``CUDA_VISIBLE_DEVICES`` and ``CUDA_DEVICE_ORDER`` always come from the scheduler; a user
    value that differs is overwritten with a warning (case 016).
    """
    env = dict(base_env)
    env.update(job.spec.env)
    uuids = ",".join(allocation.gpu_uuids)
    user_order = job.spec.env.get("CUDA_DEVICE_ORDER") or base_env.get("CUDA_DEVICE_ORDER")
    if user_order and user_order != "PCI_BUS_ID":
        logger.warning("job %s: CUDA_DEVICE_ORDER=%s overridden to PCI_BUS_ID; GPUs are pinned by UUID (%s)",
                       job.id, user_order, uuids or "none")
    user_visible = job.spec.env.get("CUDA_VISIBLE_DEVICES")
    if user_visible is not None and user_visible != uuids:
        logger.warning("job %s: CUDA_VISIBLE_DEVICES=%s from the job's env replaced by its allocation %s",
                       job.id, user_visible, uuids or "(none)")
    env["CUDA_VISIBLE_DEVICES"] = uuids
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    env["JUPYTER_SCHED_JOB_ID"] = job.id
    env["JUPYTER_SCHED_GPU_MILLI"] = str(allocation.gpu_milli)
    return env


def job_argv(job: Job, job_dir: Path, *, python: str = sys.executable) -> list[str]:
    """What to run for ``job`` (see module docstring).

    Raises:
        ExecutorError: the spec names nothing to run (a lease).
    """
    spec = job.spec
    if spec.notebook:
        parameters = ["--parameters", json.dumps(dict(spec.parameters))] if spec.parameters else []
        return [python, "-m", "jupyter_sched.executors.run_notebook", spec.notebook, str(job_dir / "executed.ipynb"),
                *parameters]
    if spec.script:
        return [python, spec.script, *spec.command, *script_arguments(spec.parameters)]
    if spec.command:
        return list(spec.command)
    raise ExecutorError(f"job {job.id} has nothing to run", field="command",
                        hint="give command, script or notebook; leases are bound to kernels, not run")


def read_log(path: Path, offset: int, limit: int) -> tuple[str, int]:
    """Read up to ``limit`` bytes of ``path`` from ``offset``; never split a UTF-8 character.

    Returns ``(text, next_offset)``; ``next_offset`` is a byte offset.
    """
    with open(path, "rb") as fh:
        fh.seek(max(0, offset))
        chunk = fh.read(max(0, limit))
    end = len(chunk)
    i, continuation = end - 1, 0
    while i >= 0 and continuation < 3 and chunk[i] & 0xC0 == 0x80:
        i, continuation = i - 1, continuation + 1
    if i >= 0 and chunk[i] >= 0xC0:
        need = 2 if chunk[i] < 0xE0 else 3 if chunk[i] < 0xF0 else 4
        if end - i < need and i > 0:
            end = i
    return chunk[:end].decode("utf-8", errors="replace"), max(0, offset) + end


@dataclass
class _Tracked:
    job: Job
    allocation: Allocation | None
    handle: ExecutorHandle
    process: psutil.Process | None
    popen: subprocess.Popen[bytes] | None = None
    plan: list[tuple[float, signal.Signals]] = field(default_factory=list)
    stopping: bool = False
    ready: bool = False
    restarts: int = 0
    restart_at: float | None = None


class LocalExecutor:
    """Runs jobs as local process groups (see module docstring).

    Args:
        root_dir: where per-job directories (``<root>/<job_id>/output.log`` ...) live.
        default_cwd: working directory for jobs that name none (default: the job's directory).
        python: interpreter for scripts, notebooks and the wrapper (default ``sys.executable``).
        base_env: environment jobs inherit (default: this process's ``os.environ``).
        max_service_restarts: automatic restarts of a failing inference service before it fails.
        monotonic: the clock stop plans and backoffs use (seconds; injected for tests).
    """

    name = "local"

    def __init__(
        self,
        root_dir: str | Path,
        *,
        default_cwd: str | Path | None = None,
        python: str = sys.executable,
        base_env: Mapping[str, str] | None = None,
        max_service_restarts: int = 10,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = Path(root_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self.default_cwd = Path(default_cwd) if default_cwd else None
        self.python = python
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.max_service_restarts = max_service_restarts
        self._monotonic = monotonic
        self._jobs: dict[str, _Tracked] = {}

    # -- paths ---------------------------------------------------------------------------------

    def job_dir(self, job_id: str) -> Path:
        """``<root>/<job_id>`` (ids are generated by the store: safe as a file name)."""
        if not job_id or "/" in job_id or job_id.startswith("."):
            raise NotFoundError(f"invalid job id {job_id!r}", field="job_id")
        return self.root / job_id

    def log_path(self, job_id: str) -> Path:
        """The job's combined stdout/stderr file."""
        return self.job_dir(job_id) / "output.log"

    # -- protocol --------------------------------------------------------------------------------

    def tracked(self) -> frozenset[str]:
        return frozenset(self._jobs)

    def start(self, job: Job, allocation: Allocation) -> ExecutorHandle:
        """Start ``job`` (see module docstring); return its handle.

        Raises:
            ExecutorError: nothing to run, missing working directory, or the wrapper failed to spawn.
        """
        tracked = self._spawn(job, allocation)
        self._jobs[job.id] = tracked
        return tracked.handle

    def _spawn(self, job: Job, allocation: Allocation, restarts: int = 0) -> _Tracked:
        job_dir = self.job_dir(job.id)
        job_dir.mkdir(parents=True, exist_ok=True)
        for stale in ("exit.json", "wrapper.json", "outcome.json"):
            (job_dir / stale).unlink(missing_ok=True)
        argv = job_argv(job, job_dir, python=self.python)
        cwd = Path(job.spec.working_dir) if job.spec.working_dir else (self.default_cwd or job_dir)
        if not cwd.is_dir():
            raise ExecutorError(f"working directory {str(cwd)!r} does not exist", field="working_dir",
                                hint="give an existing directory, or leave working_dir out")
        env = job_environment(job, allocation, self.base_env)
        command = [self.python, str(Path(_wrapper.__file__)), "--job-dir", str(job_dir), "--", *argv]
        with open(job_dir / "output.log", "ab") as out:
            if restarts:
                out.write(f"[jupyter_sched] restarting service (restart {restarts})\n".encode())
                out.flush()
            try:
                popen = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         cwd=str(cwd), env=env, start_new_session=True)
            except OSError as exc:
                raise ExecutorError(f"cannot start job {job.id}: {exc}", hint="check the interpreter and paths") from exc
        try:
            process = psutil.Process(popen.pid)
            create_time = process.create_time()
        except psutil.Error:  # exited already; poll() reports its end
            process, create_time = None, None
        handle = ExecutorHandle("local", {
            "host": socket.gethostname(), "pid": popen.pid, "pgid": popen.pid, "create_time": create_time, "job_dir": str(job_dir),
            "log": str(job_dir / "output.log"), "argv": argv, "cwd": str(cwd), "restarts": restarts})
        _wrapper.write_json_atomic(job_dir / "handle.json", handle.to_dict())
        log.info("job %s started: pid %s, CUDA_VISIBLE_DEVICES=%s", job.id, popen.pid, env["CUDA_VISIBLE_DEVICES"])
        return _Tracked(job=job, allocation=allocation, handle=handle, process=process, popen=popen,
                        restarts=restarts)

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        """Re-attach to a job after a restart (see module docstring)."""
        job_dir = self.job_dir(job.id)
        data: Mapping[str, Any] | None = handle.data if handle is not None else None
        if data is None:
            # The server died between spawning and persisting the handle: the wrapper's own file says.
            try:
                data = json.loads((job_dir / "wrapper.json").read_text())
            except (OSError, ValueError):
                return Lost(job.id, "the job was admitted but never started (no process was found)", started=False)
            data = {**data, "pgid": data.get("pid"), "job_dir": str(job_dir)}
            handle = ExecutorHandle("local", data)
        assert handle is not None
        host = data.get("host")
        if host and host != socket.gethostname():
            return Lost(job.id, f"the job ran on host {host}; this server on {socket.gethostname()} cannot watch "
                                "its processes (run one scheduler per host with the local executor)")
        pid, created = int(data.get("pid", 0)), data.get("create_time")
        process = _live_process(pid, created)
        if process is not None:
            self._jobs[job.id] = _Tracked(job=job, allocation=job.allocation, handle=handle, process=process)
            log.info("job %s re-adopted: pid %s still running", job.id, pid)
            return None
        ended = _read_exit(job_dir)
        if ended is not None:
            return Exited(job.id, ended[0], ended[1],
                          message=_exit_message(ended[0], job_dir) + " (while the server was down)")
        return Lost(job.id, f"process {pid} ended while the server was down and left no exit code "
                            "(it was killed together with its wrapper)")

    def poll(self) -> list[ExecutorEvent]:
        """Advance stop plans and restarts; report exits, losses, readiness and restarts."""
        events: list[ExecutorEvent] = []
        now = self._monotonic()
        for job_id, t in list(self._jobs.items()):
            if t.restart_at is not None:
                if now >= t.restart_at and not t.stopping:
                    events.extend(self._restart(t))
                elif t.stopping:
                    del self._jobs[job_id]
                    events.append(Exited(job_id, -int(signal.SIGTERM), datetime.now(timezone.utc),
                                         "stopped while waiting to restart"))
                continue
            self._advance_plan(t, now)
            ended = self._ended(t)
            if ended is None:
                if t.job.spec.kind is JobKind.INFERENCE and not t.ready and t.job.spec.port:
                    if _port_open(t.job.spec.port):
                        t.ready = True
                        events.append(Ready(job_id, t.job.spec.port))
                continue
            if t.stopping:
                _killpg(t, signal.SIGKILL)  # leftovers of a stopped job never outlive it
            if isinstance(ended, Exited) and self._should_restart(t, ended):
                delay = min(60.0, 2.0 ** t.restarts)
                t.restart_at, t.ready = now + delay, False
                log.warning("service %s exited with %s; restarting in %.0f s", job_id, ended.exit_code, delay)
                continue
            del self._jobs[job_id]
            events.append(ended)
        return events

    def _should_restart(self, t: _Tracked, ended: Exited) -> bool:
        return (t.job.spec.kind is JobKind.INFERENCE and not t.stopping and ended.exit_code != 0
                and t.allocation is not None and t.restarts < self.max_service_restarts)

    def _restart(self, t: _Tracked) -> list[ExecutorEvent]:
        assert t.allocation is not None
        try:
            fresh = self._spawn(t.job, t.allocation, restarts=t.restarts + 1)
        except ExecutorError as exc:
            del self._jobs[t.job.id]
            return [Exited(t.job.id, 127, datetime.now(timezone.utc), f"restart failed: {exc.message}")]
        self._jobs[t.job.id] = fresh
        return [Started(t.job.id, fresh.handle, restarts=fresh.restarts)]

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False) -> None:
        """Begin the stop plan (see module docstring); unknown jobs are ignored."""
        t = self._jobs.get(job_id)
        if t is None or t.stopping:
            return
        now = self._monotonic()
        t.stopping = True
        grace = max(0.0, grace_s)
        if checkpoint_signal:
            t.plan = [(now, signal.SIGUSR1), (now + min(grace / 2, _CHECKPOINT_WAIT_MAX_S), signal.SIGTERM),
                      (now + grace, signal.SIGKILL)]
        else:
            t.plan = [(now, signal.SIGTERM), (now + grace, signal.SIGKILL)]
        self._advance_plan(t, now)

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        """See :meth:`Executor.logs`.

        Raises:
            NotFoundError: no output file for this job (it never started here).
        """
        path = self.log_path(job_id)
        if not path.exists():
            raise NotFoundError(f"no output for job {job_id} yet", field="job_id",
                                hint="the job has not started; try again once it runs")
        return read_log(path, offset, limit)

    def pids(self) -> frozenset[int]:
        """Pids of every process of the jobs this executor watches (wrappers and all descendants).

        The NVML inventory uses it to tell our GPU memory from foreign holders (case 014).
        Safe to call from another thread.
        """
        out: set[int] = set()
        for t in list(self._jobs.values()):
            root = t.process
            if root is None and t.popen is not None:
                try:
                    root = psutil.Process(t.popen.pid)
                except psutil.Error:
                    continue
            if root is None:
                continue
            out.add(root.pid)
            try:
                out.update(child.pid for child in root.children(recursive=True))
            except psutil.Error:
                pass
        return frozenset(out)

    def detach(self) -> None:
        """Forget every job without signalling it (they keep running; the next server adopts them)."""
        self._jobs.clear()

    # -- internals ---------------------------------------------------------------------------------

    def _advance_plan(self, t: _Tracked, now: float) -> None:
        while t.plan and t.plan[0][0] <= now:
            _, signum = t.plan.pop(0)
            log.info("job %s: sending %s to its process group", t.job.id, signum.name)
            _killpg(t, signum)

    def _ended(self, t: _Tracked) -> Exited | Lost | None:
        job_dir = Path(str(t.handle.data.get("job_dir", self.job_dir(t.job.id))))
        if t.popen is not None:
            code = t.popen.poll()
            if code is None:
                return None
        elif t.process is not None and _alive(t.process):
            return None
        else:
            code = None
        ended = _read_exit(job_dir)
        if ended is not None:
            return Exited(t.job.id, ended[0], ended[1], _exit_message(ended[0], job_dir, stopped=t.stopping))
        if code is not None:  # our child, but the wrapper was killed before recording the job's end
            return Exited(t.job.id, code, datetime.now(timezone.utc), _exit_message(code, job_dir, stopped=t.stopping))
        return Lost(t.job.id, f"process {t.handle.data.get('pid')} ended and left no exit code")


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _live_process(pid: int, create_time: Any) -> psutil.Process | None:
    """The process ``pid`` if it still runs *and* is the same process (create time matches)."""
    if pid <= 0:
        return None
    try:
        process = psutil.Process(pid)
        if create_time is not None and abs(process.create_time() - float(create_time)) > _CREATE_TIME_TOLERANCE_S:
            return None  # the pid was reused by another process
    except psutil.Error:
        return None
    return process if _alive(process) else None


def _killpg(t: _Tracked, signum: signal.Signals) -> None:
    pgid = int(t.handle.data.get("pgid") or t.handle.data.get("pid") or 0)
    if pgid <= 0:
        return
    if t.popen is None and t.process is not None and not _alive(t.process):
        # adopted group whose leader is gone: the pgid may belong to someone else by now
        return
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _read_exit(job_dir: Path) -> tuple[int, datetime] | None:
    try:
        data = json.loads((job_dir / "exit.json").read_text())
        return int(data["exit_code"]), parse_utc(data["finished_at"], field="finished_at")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _exit_message(code: int, job_dir: Path, *, stopped: bool = False) -> str:
    """How the job ended, in one sentence: the notebook runner's reason, else the exit code or
    signal and the last lines of the log (:func:`.outcome.describe_exit`, case 028)."""
    return describe_exit(code, job_dir=job_dir, log=job_dir / "output.log", stopped=stopped)


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.05):
            return True
    except OSError:
        return False
