"""Local executor: each job is a process tree on this machine, run as its owner, pinned to its GPUs.

Start (:meth:`LocalExecutor.start` with the job's :class:`~.runas.RunAs`): the wrapper
(:mod:`.wrapper`) is spawned in a new session (``start_new_session=True``: its own process
group, so signals reach the job's children and never the server), *as the run-as account*
when it is not the service's own (hub mode): Popen starts a root step that becomes the account
and execs the wrapper (:func:`~.runas.as_account`), so the engine's thread never waits on a process
the job's owner can stop (red32 R7; a wrapper kept from reading its launch within
:data:`LAUNCH_READ_S`, or seen stopped before it, is ended naming its account), with stdin a pipe. The executor puts the wrapper into the job's group (a cgroup, else a marker;
:mod:`.tracking`) and only then sends it the launch line: the working directory, carried files
(``source``, ``notebook_json``) and a banner. The wrapper, as the owner, creates the job's
directory (mode 0700; layout in :mod:`.jobdirs`), writes the carried files, opens
``output.log`` as its stdout and stderr and runs the job with:

* ``CUDA_VISIBLE_DEVICES`` (and ROCm's ``ROCR_VISIBLE_DEVICES`` / ``HIP_VISIBLE_DEVICES``) = the
  allocated GPU / MIG UUIDs, comma-joined — never indices; empty for a 0-GPU job. A job's own
  ``env`` cannot set them (refused at submit, :mod:`..model.jobenv`), and where the host allows
  it the job sits in a devices cgroup that denies every other GPU's ``/dev/nvidiaN``, plus pids and
  memory groups for ``pids.max`` and its memory limit (:mod:`.limits`, red team 15, R1/R9);
* ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` — overwriting a user's ``FASTEST_FIRST`` with a warning
  (case 016: nvidia-smi indices follow PCI order, CUDA's default order is fastest first);
* ``JUPYTER_SCHED_JOB_ID``, ``JUPYTER_SCHED_GPU_MILLI`` (share of each GPU, 1000 = whole, 0 = no GPU) and
  ``JUPYTER_SCHED_JOB_MARKER`` (the job group, :mod:`.tracking`);
* what :attr:`LocalExecutor.job_env` gives: ``JUPYTER_SCHED_URL`` and the job's progress token
  ``JUPYTER_SCHED_JOB_TOKEN`` (issue 16 item 4), in no log and no answer.

A gang (several workers, or named worker groups of different sizes — issue 16) runs one process
per worker under the one wrapper, each with its own GPUs (:func:`gang_environments`):
``CUDA_VISIBLE_DEVICES`` = that worker's UUIDs, ``RANK`` over the whole gang in group order,
``WORLD_SIZE``, ``MASTER_ADDR=127.0.0.1`` and a free ``MASTER_PORT`` (torch.distributed's
``env://``), ``LOCAL_RANK=0``/``LOCAL_WORLD_SIZE=1`` (each worker sees only its own GPUs, from
``cuda:0``), ``JUPYTER_SCHED_WORKER``, and for groups ``JUPYTER_SCHED_GROUP`` /
``JUPYTER_SCHED_GROUP_RANK`` / ``JUPYTER_SCHED_GROUP_SIZE``. It is one job: one log, one exit
(the first failing worker's; the others are stopped), one stop plan.

Environment: embedded, the service's own environment (``base_env``) as before; hub mode
(``clean_env``), :func:`~.runas.clean_environment` — an allow-list and the account's ``HOME``,
``USER``, ``PATH`` — never the service's variables, tokens, database URL or credentials. The
job's own ``env`` is added on top in both.

ARGV is the spec's ``command``; a ``script`` runs as ``PYTHON SCRIPT ARGS``; a ``notebook`` as
``PYTHON -m jupyter_sched.executors.run_notebook IN DIR/executed.ipynb``. A script or notebook
whose content was carried (``source`` / ``notebook_json``) runs from the copy the wrapper wrote
into the job's directory. PYTHON is ``python`` (the service's interpreter) embedded and
``job_python`` for other accounts (it and the wrapper must be runnable by them: the wrapper
runs from a sealed in-memory copy passed as ``/dev/fd/N``, so jupyter_sched's own install may
stay private and ``ps`` shows ``python3 -I /dev/fd/N --job-dir … -- ARGV``, not its source). The working
directory is the spec's ``working_dir`` (``~`` = the owner's home), else ``default_cwd`` embedded or the account's home in
hub mode, else the job's directory; in hub mode the wrapper enters it as the account, so a job
can only run where its owner may go.

Stop plan (cancel, preemption, time limit): optional ``SIGUSR1`` (checkpoint), then ``SIGTERM``,
then ``SIGKILL`` ``grace_s`` seconds after the stop began; advanced by :meth:`poll`. Each signal
goes to the job's process group *and* to every member of its job group outside it (processes
that called ``setsid()``); ``SIGKILL`` kills the whole job group (frozen first on cgroups).
The stop's words and, before each signal, the processes it goes to (pid and command line) are sent to
the wrapper, which writes them after the job's output; what a wrapper killed by the stop's SIGKILL could
not write, the executor writes at the end from outside (:func:`_unsaid`), and the job's message says it in
short (:func:`.outcome.stopped_processes`; newuser30 n16).

What a running job writes (red30 R3): each :meth:`LocalExecutor.poll` looks from outside the job's account
(:mod:`.outside_caps`) at its log (cut past its cap), its wrapper (a job that stops it is ended), its folder
(ended past :func:`~.outside_caps.folder_bound` or 10,000 files beside its log; the deleted files its
processes hold open on its log's disk count too, red30 R9) and the free space of its
log disk (under ``min_log_free_bytes`` a job is ended only when its own writes there explain the fall, red31 R1);
such an end's message, and its log's last line, say why.

End: the job is reported :class:`~.base.Exited` / :class:`~.base.Lost` only when every process
of its job group is gone — leftovers of a job that ended by itself get ``SIGTERM``, then
``SIGKILL`` ``leftover_grace_s`` later; those of a stopped job ``SIGKILL`` at once — so the
engine hands the GPUs out again only after nothing of the job can still hold them. Whoever ended them
(the wrapper, else the executor) names them in the log and the job's message (newuser30 n16).

Re-adoption: the handle holds the host, the wrapper's pid and create time (psutil), the run-as
identity and the job group; a live process with the same pid *and* create time is the job (pid
reuse is detected). A job started on another host cannot be watched from here and is reported
lost with that reason. Its end is read from ``DIR/exit.json``, which the wrapper writes; no file
means the outcome is unknown (lost).

Inference services (kind ``inference``) are restarted after a failed exit with exponential
backoff (1 s, 2 s, 4 s ... 60 s, at most ``max_service_restarts`` times) and reported
:class:`~.base.Ready` when one of the job's own processes listens on ``port`` (or, where their
sockets cannot be read, when ``127.0.0.1:port`` accepts a connection); :class:`~.base.NotReady`
as soon as a ready one exits (it waits for its restart) or, checked every
:data:`_READY_RECHECK_S`, stops listening.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

import psutil

from .. import untrusted_json
from ..definitions.parameters import script_arguments
from ..errors import ExecutorError, NotFoundError, SchedError, ValidationError
from ..model import Allocation, Job, JobKind, JobSpec
from ..model.codec import allocation_from_dict, allocation_to_dict, spec_from_dict, spec_to_dict
from ..model.jobenv import device_variable, refused_variable
from ..model.units import parse_utc
from ..safefd import open_fd
from ..scheduling.snapshot import Reinstall
from ..textsafe import printable_line
from ..userfiles import start_folder_argv
from ..wording.jobs import split_log_quote
from ..wording.reasons import work_named
from . import wrapper as _wrapper
from .base import ExecutorEvent, ExecutorHandle, Exited, Lost, NotReady, Ready, Started
from .bound_ports import port_bound as _port_bound
from .disk_space import LogDisk
from .folder_cleaner import FolderCleaner
from .install_check import InstallWatch
from .jobdirs import JobDirs, read_untrusted_json
from .limits import JOB_OOM_SCORE_ADJ, LimitGroups, LocalLimits, open_gpu_minors, processes_of
from .log_budget import LogBudget
from .log_tail import open_log
from .outcome import RUN_MARKERS, describe_exit, first_on_path, log_tail, stopped_processes
from .outside_caps import LINES_SLACK, Running, WriteWatch, cut_log
from .owner_paths import interpreted_script
from .port_owner import TABLE as _LISTEN_TABLE
from .port_owner import Answer, PortOwner, nowhere_reachable
from .runas import (
    RunAs,
    as_account,
    can_switch_users,
    clean_environment,
    embedded_run_as,
    job_namespaces_refused,
    job_path,
    job_shm_options,
)
from .safeopen import open_untrusted
from .sealing import unsealed_finished
from .server_fence import ServerFence
from .tracking import (
    MARKER_ENV,
    CgroupTracker,
    JobGroup,
    MarkerTracker,
    ProcessTracker,
    detect_tracker,
    members_file,
    tracker_for,
)

__all__ = ["FILE_HERE", "JOB_OOM_SCORE_ADJ", "OUTSIDE_RESCAN_S", "LocalExecutor", "carried_files", "gang_environments", "job_argv", "job_environment", "read_log", "read_log_sized"]

NOT_EXECUTABLE = "is not executable"
FILE_HERE = "is a file in the job's working directory, not a program on its PATH"
"""A command's bare name that is no program on the job's PATH but a file where it starts (newuser26 n6:
`submit slow.py` read "not a program on the job's PATH — give its full path", the file right there)."""
"""A command job's program file that cannot be run: the problem alone; the refusal's hint says the fix
(new user 17, N10: "(chmod +x, or run it with its interpreter)" was said in the rule and its hint)."""

OUTSIDE_RESCAN_S = 5.0
"""How often a draining lent lease's check reads the owner's processes outside the job again while
something holds the GPU (a full scan of fd/ and maps: ~250 ms for 150 processes on a loaded 2-core
host); a fresh scan is always made before the lease may end (red team 18, R6)."""

log = logging.getLogger(__name__)

_TOLD_ENDS_KEPT = 4096
"""Ends :meth:`LocalExecutor.poll` reported that :meth:`LocalExecutor.adopt` can give again (the oldest dropped)."""
_SAID_ONCE = logging.getLogger(__name__ + ".wrapper_env")
_SAID_ONCE.setLevel(logging.ERROR)  # the wrapper's environment is computed after the job's, whose warnings were said

_CREATE_TIME_TOLERANCE_S = 0.05
_CHECKPOINT_WAIT_MAX_S = 30.0
LAUNCH_READ_S = 30.0
"""Seconds a wrapper has to read all its launch line (its carried script or notebook: up to a few MiB) before the job
is ended (red32 R7: the service no longer waits for it)."""
_OWN_STOP_GRACE_S = 3.0
"""Seconds a job this executor stops for what it writes (:mod:`.outside_caps`) has after SIGTERM."""
LISTEN_S = 600.0
"""How long a service may take to listen on its declared port (:attr:`LocalExecutor.listen_s`)."""
RELISTEN_S = 300.0
"""How long a service that did listen may go without listening before it is stopped
(:attr:`LocalExecutor.relisten_s`; red team 17, R12). A reload or a re-bind takes seconds; an hour
let a service that listened for 4 s each hour hold its port for ever (red team 18, R7)."""
_READY_RECHECK_S = 2.0
"""How often a ready service's listening socket is looked for again (its processes' sockets: a
read of /proc per process of the job)."""
_EXIT_CODE_MIN, _EXIT_CODE_MAX = -255, 255
"""An exit code a process can have: 0..255, or minus the signal that ended it (Python's returncode)."""
_NOTEBOOK_IN = _wrapper.CARRIED_NOTEBOOK



def job_environment(
    job: Job,
    allocation: Allocation,
    base_env: Mapping[str, str],
    *,
    scheduler_env: Mapping[str, str] | None = None,
    logger: logging.Logger = log,
) -> dict[str, str]:
    """The environment a job runs with: ``base_env`` + the spec's env + the scheduler's pins.

    ``CUDA_VISIBLE_DEVICES``, ``ROCR_VISIBLE_DEVICES`` and ``HIP_VISIBLE_DEVICES`` always come from
    the scheduler (the allocation; empty for a 0-GPU job), and no other variable that chooses
    devices (:func:`~..model.jobenv.device_variable`) is passed on from ``base_env`` (the
    service's own) or the spec (refused at submit: red team 15, R1). ``CUDA_DEVICE_ORDER`` is
    ``PCI_BUS_ID``; a user value that differs is overwritten with a warning (case 016).

    ``scheduler_env`` (the executor's ``job_env(job)``: ``JUPYTER_SCHED_URL`` and the job's progress
    token ``JUPYTER_SCHED_JOB_TOKEN``, :mod:`jupyter_sched.extension.job_tokens`) is set over both; a
    ``JUPYTER_SCHED_URL`` the spec sets stays (the user's own connection, which a job may set), and a
    ``JUPYTER_SCHED_TOKEN`` inherited from ``base_env`` for another URL is dropped (it would be sent to
    the scheduler's URL).
    """
    env = {k: v for k, v in base_env.items() if not device_variable(k)}
    refused = sorted(k for k in job.spec.env if refused_variable(k) is not None)
    if refused:  # a job stored before the request check refused them (new user 10, N4/N5): never passed on
        logger.warning("job %s: env %s not passed (the scheduler sets or refuses them)", job.id, ", ".join(refused))
    env.update({k: v for k, v in job.spec.env.items() if k not in refused})
    own = scheduler_env or {}
    url = own.get("JUPYTER_SCHED_URL")
    if url is not None and "JUPYTER_SCHED_URL" not in job.spec.env and "JUPYTER_SCHED_TOKEN" not in job.spec.env \
            and base_env.get("JUPYTER_SCHED_URL") != url:
        env.pop("JUPYTER_SCHED_TOKEN", None)
    env.update({k: v for k, v in own.items() if not (k == "JUPYTER_SCHED_URL" and k in job.spec.env)})
    uuids = ",".join(allocation.gpu_uuids)
    user_order = job.spec.env.get("CUDA_DEVICE_ORDER") or base_env.get("CUDA_DEVICE_ORDER")
    if user_order and user_order != "PCI_BUS_ID":
        logger.warning("job %s: CUDA_DEVICE_ORDER=%s overridden to PCI_BUS_ID; GPUs are pinned by UUID (%s)",
                       job.id, user_order, uuids or "none")
    env.update(visible_devices(uuids))
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    env["JUPYTER_SCHED_JOB_ID"] = job.id
    env["JUPYTER_SCHED_GPU_MILLI"] = str(allocation.gpu_milli) if uuids else "0"  # no GPU, no share (new user 11, N8)
    return env


_VISIBLE = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


def visible_devices(uuids: str) -> dict[str, str]:
    """The visible-devices variables of a process given the GPUs ``uuids`` (comma-joined; "" = none)."""
    return dict.fromkeys(_VISIBLE, uuids)


def gang_environments(job: Job, allocation: Allocation, *, master_port: int) -> list[dict[str, str]]:
    """Per-worker environment overlays of a gang run on this host; ``[]`` for one worker (and
    for an inference service, whose replicas would share one port on one host).

    Workers are in the allocation's order, which is the request's group order
    (:meth:`~jupyter_sched.model.ResourceRequest.worker_groups`). See the module docstring.
    """
    per_worker = allocation.per_worker()
    if len(per_worker) <= 1 or job.spec.kind is JobKind.INFERENCE:
        return []  # replicas of a service would all bind its one port here: it runs once, as before
    names = job.spec.resources.worker_groups()
    sizes = {g.name: g.workers for g in job.spec.resources.groups}
    seen: dict[str, int] = {}
    port = job.spec.env.get("MASTER_PORT") or str(master_port)
    out: list[dict[str, str]] = []
    for rank, (_, uuids) in enumerate(per_worker):
        overlay = {**visible_devices(",".join(uuids)), "RANK": str(rank), "WORLD_SIZE": str(len(per_worker)),
                   "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
                   "JUPYTER_SCHED_WORKER": str(rank)}
        if rank < len(names):
            group = names[rank]
            overlay.update({"JUPYTER_SCHED_GROUP": group, "JUPYTER_SCHED_GROUP_RANK": str(seen.get(group, 0)),
                            "JUPYTER_SCHED_GROUP_SIZE": str(sizes[group])})
            seen[group] = seen.get(group, 0) + 1
        out.append(overlay)
    return out


def _restart_banner(job: Job, log_path: Path | None = None) -> str | None:
    """The log's line between two runs of a requeued job (new user 4: a preempted job's log showed
    both runs glued together with no marker); None on its first start — unless ``log_path`` (the
    job's ``output.log``) already holds an earlier run's output (a run started again without a new
    attempt, e.g. across a service restart: new user 21, N9, whose "last lines" then mixed both runs). The
    start's number counts attempts only (``Job.counted_attempts``: a run stopped just after it started is
    none, new user 24, N1)."""
    if job.counted_attempts <= 1:
        try:
            earlier = log_path is not None and stat.S_ISREG((info := os.lstat(log_path)).st_mode) and info.st_size > 0
        except OSError:
            earlier = False
        return f"{RUN_MARKERS[0]}; the earlier run's output is above" if earlier else None
    why = f" after preemption by {job.preempted_by}" if job.preempted_by else " after it was requeued"
    return f"{RUN_MARKERS[0]} (start {job.counted_attempts}){why}; the earlier run's output is above"


def _free_port() -> int:
    """A TCP port free on this host now (the gang's rendezvous port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def carried_files(job: Job) -> dict[str, str]:
    """``{file name: text}`` the wrapper writes into the job's directory (carried content)."""
    spec = job.spec
    files: dict[str, str] = {}
    if spec.source is not None and spec.script:
        files[Path(spec.script).name] = spec.source
    if spec.notebook_json is not None and spec.notebook:
        files[_NOTEBOOK_IN] = spec.notebook_json
    return files


CLEAN_WAIT_S = 30.0
"""Most seconds a stopping executor waits for job folders still being cleaned (:meth:`LocalExecutor.detach`)."""
START_CLEAN_WAIT_S = 0.25
"""Most seconds a start waits for the job's own folder to be cleaned from its last run (a preempted job started
again at once: its end's clean-up takes milliseconds unless the job left a big tree there); longer, the start
is refused for now (``details["code"] = "FolderCleaning"``: it goes back to the queue), never waited out on the
engine's thread (red35 R1)."""

_KERNEL_PATH_KEYS = frozenset({
    "HOME", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_PREFER_ENV_PATH", "JUPYTER_PLATFORM_DIRS", "XDG_DATA_HOME",
    "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE"})
"""The variables that move where jupyter_client looks for kernels (and whether ipykernel is importable for the
native ``python3``): a job whose values differ is not told by this process's listing (:meth:`LocalExecutor.kernel_names`)."""


def _named_files(spec: JobSpec, start: Path | None) -> list[tuple[str, Path]]:
    """``(field, full path)`` of the ``script`` / ``notebook`` ``spec`` names by path (not carried):
    relative ones in ``start``, where the job starts (left out when it starts in a directory made for
    it: nothing to look in yet)."""
    files = []
    for name, path, carried in (("script", spec.script, spec.source), ("notebook", spec.notebook, spec.notebook_json)):
        if not path or carried is not None:
            continue
        full = Path(os.path.expanduser(path))
        if not full.is_absolute():
            if start is None:
                continue
            full = start / full
        files.append((name, full))
    return files


def _path_problem(path: Path, *, want_dir: bool) -> str:
    """What is wrong with ``path``, which is not the kind of thing wanted, read after it: ``does not
    exist``, or — it exists — ``is a file, not a directory`` / ``is a directory, not a file`` (new
    user 14, N1: ``working_dir`` /etc/passwd was said not to exist; a user who checks with ``ls``
    was told something false). The words :mod:`.owner_paths` says for a hub's owner too."""
    if want_dir:
        return "is a file, not a directory" if path.exists() else "does not exist"
    if path.exists() and not path.is_dir():  # a FIFO, a device, a link to one (red39 R4: "does not exist")
        return "is not a regular file (a FIFO, device or socket)"
    return "is a directory, not a file" if path.is_dir() else "does not exist"


def missing_program(spec: JobSpec, start: Path | None, search_path: str) -> tuple[str, str, str] | None:
    """``("command", program, problem)`` when a command job's program could not be started where
    the job would start, else None — found at submit instead of as exit 127 after the job waited
    for its GPUs (new user 13, N10). Read as the start does (``Popen`` in the wrapper): a name
    with a ``/`` in ``start`` (not checked when the job starts in a directory made for it, where
    nothing is yet), any other name on ``search_path`` — the job's own ``PATH`` when its env
    gives one, else the environment it inherits — never the submitter's shell."""
    if spec.script or spec.notebook or not spec.command:
        return None  # a script or notebook runs with the job's Python, checked above
    program = spec.command[0]
    if "/" in program:
        full = Path(os.path.expanduser(program))
        if not full.is_absolute():
            if start is None:
                return None
            full = start / full
        if not full.is_file():
            return "command", str(full), _path_problem(full, want_dir=False)
        if not os.access(full, os.X_OK):
            return "command", str(full), NOT_EXECUTABLE  # its fix is the refusal's hint, said once (new user 17, N10)
        return None
    if shutil.which(program, path=search_path) is None:
        if start is not None and (start / program).is_file():
            return "command", program, FILE_HERE
        return "command", program, "is not a program on the job's PATH"
    return None


def program_file(spec: JobSpec, start: Path | None, search_path: str) -> Path | None:
    """The file a command job's program names where the job would start (as :func:`missing_program`
    looks it up: a name with a ``/`` in ``start``, any other on ``search_path``), or None when there
    is none (or nothing to look at yet: a relative path in a directory made for the job)."""
    if spec.script or spec.notebook or not spec.command:
        return None
    program = spec.command[0]
    if "/" not in program:
        found = shutil.which(program, path=search_path)
        return Path(found) if found else None
    full = Path(os.path.expanduser(program))
    if not full.is_absolute():
        if start is None:
            return None
        full = start / full
    return full if full.is_file() else None


def job_argv(job: Job, job_dir: Path, *, python: str = sys.executable) -> list[str]:
    """What to run for ``job`` (see module docstring).

    Raises:
        ExecutorError: the spec names nothing to run (a lease).
    """
    spec = job.spec
    if spec.notebook:
        source = str(job_dir / _NOTEBOOK_IN) if spec.notebook_json is not None else spec.notebook
        parameters = ["--parameters", json.dumps(dict(spec.parameters))] if spec.parameters else []
        return [python, "-m", "jupyter_sched.executors.run_notebook", source, str(job_dir / "executed.ipynb"),
                *parameters]
    if spec.script:
        arguments = [*spec.command, *script_arguments(spec.parameters)]
        if spec.source is not None:  # carried: its folder is the job's own, the working dir goes first (N9)
            return start_folder_argv(python, str(job_dir / Path(spec.script).name), arguments)
        return [python, spec.script, *arguments]
    if spec.command:
        return list(spec.command)
    raise ExecutorError(f"job {job.id} has nothing to run", field="command",
                        hint="give command, script or notebook; leases are bound to kernels, not run")


def read_log(path: Path, offset: int, limit: int, *, owner_uid: int | None = None) -> tuple[str, int]:
    """Read up to ``limit`` bytes of ``path`` from ``offset``; never split a UTF-8 character.

    The file is opened with :func:`~.safeopen.open_untrusted` (no symlink anywhere in the path, a
    regular file, owned by ``owner_uid`` when given): a job's owner cannot make the service read
    a file that is not theirs.

    Returns ``(text, next_offset)``; ``next_offset`` is a byte offset. At or past the end:
    ``("", size)`` — nothing more, read on from the end (red team 30, R6).

    Raises:
        FileNotFoundError: the file is missing.
        NotFoundError: the file is refused (a symlink on the way, not a regular file, another
            owner's); logged, never shown.
        ValidationError: the file system refused to seek or read at ``offset`` (field ``offset``).
    """
    text, next_offset, _ = read_log_sized(path, offset, limit, owner_uid=owner_uid)
    return text, next_offset


def read_log_sized(path: Path, offset: int, limit: int, *, owner_uid: int | None = None) -> tuple[str, int, int]:
    """:func:`read_log`, and the file's size in bytes at the read: ``(text, next_offset, size)`` (a
    reader of a long log starts near its end — newuser26 N7). Raises as :func:`read_log`."""
    fd = open_log(path, owner_uid=owner_uid)
    offset = max(0, offset)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if offset >= size:  # past the end: nothing more, never a seek past the file system's largest offset
            return "", size, size  # (ext4's 2^44 was a 500, red team 30, R6)
        try:
            fh.seek(offset)
            chunk = fh.read(max(0, limit))
        except OSError as exc:
            log.warning("reading %s at %d: %s", path, offset, exc)
            raise ValidationError(f"offset {offset} cannot be read in this log of {size} bytes", field="offset",
                                  hint="pass back next_offset, or 0 to read from the start") from None
    end = len(chunk)
    i, continuation = end - 1, 0
    while i >= 0 and continuation < 3 and chunk[i] & 0xC0 == 0x80:
        i, continuation = i - 1, continuation + 1
    if i >= 0 and chunk[i] >= 0xC0:
        need = 2 if chunk[i] < 0xE0 else 3 if chunk[i] < 0xF0 else 4
        if end - i < need and i > 0:
            end = i
    return chunk[:end].decode("utf-8", errors="replace"), offset + end, max(size, offset + end)



POLL_FAILURES_LOST = 3
"""Polls of one job in a row that may raise before it is reported lost (:meth:`LocalExecutor._poll_failed`): a
passing fault (a file being replaced) is tried again; one that stays ends that job alone."""

@dataclass
class _Tracked:
    job: Job
    allocation: Allocation | None
    handle: ExecutorHandle
    process: psutil.Process | None
    run_as: RunAs
    group: JobGroup | None
    popen: subprocess.Popen[bytes] | None = None
    limits: LimitGroups | None = None
    """The job's devices / pids / memory groups (:mod:`.limits`); None where none were made."""
    lent: tuple[str, ...] | None = None
    """GPU uuids of leases granted for this job that its devices group allows (None: not yet set
    by this process, e.g. after a restart; :meth:`LocalExecutor.lend_gpus`)."""
    plan: list[tuple[float, signal.Signals]] = field(default_factory=list)
    stopping: bool = False
    ready: bool = False
    ready_checked_at: float = 0.0
    port_owner: PortOwner = field(default_factory=PortOwner)
    """Which of its processes holds its listening socket, looked for a bounded number of descriptors a look (red35 R4)."""
    """When a ready service was last seen listening (monotonic; :data:`_READY_RECHECK_S`)."""
    poll_failures: int = 0
    """Polls of it in a row that raised (:meth:`LocalExecutor._poll_failed`)."""
    restarts: int = 0
    restart_at: float | None = None
    listen_by: float | None = None
    """A service's deadline (monotonic) to listen on its declared port (:attr:`LocalExecutor.listen_s`)."""
    own_stop: str = ""
    """Why this executor stopped it itself (a service that never listened, a log or job folder past its
    bound: :mod:`.outside_caps`): its end's message."""
    folder_stop: bool = False
    """It was stopped for what its folder held: the folder is emptied but for its log and records at its end."""
    lost_listener: tuple[float, datetime] | None = None
    """When a service that had listened was seen to stop (monotonic, wall clock); None while it
    never listened (the start-up window applies) or listens now."""
    relistened: tuple[float, tuple[float, datetime]] | None = None
    """A service listening again: since when (monotonic), and the loss it came back from. A new
    loss within :attr:`LocalExecutor.relisten_s` of coming back counts from that earlier loss, so
    brief listens never renew the port (red team 18, R7); listening that long forgets it."""
    leftovers_since: float | None = None
    ended_before_stop: bool = False
    """Nothing of it ran and its end was recorded when :meth:`LocalExecutor.stop` came (:attr:`.base.Exited.before_stop`)."""
    live_at_stop: bool = False
    """The stop found processes of the job alive besides its wrapper (red40 R5: then an ``exit.json`` saying it ended
    before the stop is believed only as :func:`_own_end` says)."""
    record_at_stop: tuple[int, datetime] | None = None
    """The end record (exit code, end) that was there when the stop came, saying no signal had reached the wrapper and
    an end before the stop: a command that had ended, whose wrapper still ended what it left (red39 R2)."""
    commands: list[tuple[int, float]] | None = None
    """The job's command (a gang: each worker) as its wrapper reported it down the executor's own pipe (pid, start
    time: :func:`~.wrapper.report_commands`), kept in the service's record of the launch for a server that adopts the
    job; None: not (yet) reported."""
    report: int | None = None
    """The read end of that pipe until the report came (or the wrapper ended without one)."""
    command_at_stop: bool | None = None
    """Whether the command itself still ran when the stop went out (:attr:`commands`; None: not known): an end record
    the job may have written is believed to be its end only where it did not (s41: verify40 V2, and a record written
    at the start by a job that then ignored SIGTERM)."""
    wrapper_at_kill: str = ""
    """The wrapper as the stop's SIGKILL found it: ``"running"`` (a SIGKILL end of it is the stop's doing, not its
    job's), ``"stopped"`` (SIGSTOPped: by its job, the service never stops one), ``""`` gone or not sent
    (:func:`_wrapper_killed`)."""
    seen_running_at: datetime | None = None
    """When this service last saw something of the job running (wall clock): the earliest end an
    ``exit.json`` may claim — the file is the owner's to write (red-team 5 finding 3)."""
    log_cap: int = 0
    """The log cap the wrapper was launched with (bytes; :mod:`.log_budget`; 0: none)."""
    control: Any = None
    launch_left: bytes = b""
    """What of its launch line the wrapper has not read yet (red32 R7: written without waiting, the rest at each
    poll; a stop's line waits until it is all written, or is not sent)."""
    launch_by: float | None = None
    """The deadline (monotonic) for the wrapper to read all its launch line (:data:`LAUNCH_READ_S`)."""
    """The wrapper's stdin, kept open after the launch line: a stop sends its reason on it (the
    wrapper writes it as the log's closing line); None for an adopted job (then :func:`_stop_by_fifo`)."""
    stop_words: str = ""
    """The stop's reason (``cancelled by alice``): its log says it from outside where the wrapper could not."""
    stop_began: float | None = None
    """When the stop began (monotonic)."""
    signalled: list[dict[str, Any]] = field(default_factory=list)
    """What the service signalled of the job's processes, in order: one record per signal
    (:func:`~.wrapper.signal_lines`; newuser30 n16: a stop's and a gone wrapper's leftovers' ends were silent)."""
    named: set[tuple[str, str, int]] = field(default_factory=set)
    """``(why, signal, pid)`` already in a record (a SIGKILL repeated each tick is said once)."""

    @cached_property
    def job_dir(self) -> Path:
        """The job's folder, from its handle (which is never replaced; looked at each tick: red30 R3)."""
        return Path(str(self.handle.data["job_dir"]))

    @property
    def owner_uid(self) -> int | None:
        return self.run_as.uid if self.run_as.switches else None


def _started(t: _Tracked) -> float | None:
    """When ``t``'s wrapper started (seconds since the epoch; its handle's ``create_time``), None where unknown."""
    created = t.handle.data.get("create_time")
    return float(created) if isinstance(created, (int, float)) else None


def _check_environment(env: Mapping[str, str]) -> None:
    """Refuse what ``subprocess.Popen`` would refuse in the job's own variables, at start.

    Since those variables go to the wrapper in its launch line (new user 12, N5), Popen no longer
    sees them here; a stored row accepted before validation refused such names (issue 17, item 1)
    must still fail that one job at start with the cause named, not later inside the wrapper.

    Raises:
        ValueError: a name that is empty or contains ``=`` or NUL, or a value that contains NUL.
    """
    for name, value in env.items():
        if not name or "=" in name or "\0" in name:
            raise ValueError(f"illegal environment variable name {name!r}")
        if "\0" in value:
            raise ValueError(f"environment variable {name} has an embedded null byte")


class LocalExecutor:
    """Runs jobs as local process trees, each as its owner (see module docstring).

    Args:
        root_dir: where job directories live (layout in :mod:`.jobdirs`).
        default_cwd: working directory of embedded jobs that name none (default: the job's directory).
        python: interpreter of the wrapper, scripts and notebooks embedded (default ``sys.executable``).
        job_python: interpreter for jobs run as other accounts (default ``python``); every account
            must be able to run it.
        base_env: environment embedded jobs inherit (default: this process's ``os.environ``); in
            ``clean_env`` mode only its allow-listed locale variables are read.
        clean_env: give every job :func:`~.runas.clean_environment` (hub mode), not ``base_env``.
        require_run_as: refuse to run a job as the service's own account (hub mode: the service
            is root, a job must never be).
        tracking: ``"auto"`` (cgroup v2, else v1, else marker), ``"marker"``, or a tracker.
        max_service_restarts: automatic restarts of a failing inference service before it fails.
        listen_s: a service (inference job declaring a port) that has not listened on its port this
            long after its start is stopped and fails, naming it: a declared port is held on its
            node (:mod:`~..scheduling.ports`), and one never served is a squat (red team 16, R8). 0: never.
            The window applies until the service first listens (red team 17, R12).
        relisten_s: a service that did listen and stopped (a hot reload, a re-bind, a restart) is
            stopped only when it has not listened again this long after (default 1 h); its end
            says when it stopped listening. 0: never.
        leftover_grace_s: seconds leftovers of a job that ended by itself get after SIGTERM.
        max_log_bytes: a job's ``output.log`` keeps its first this many bytes and a closing line
            (``c.SchedApp.max_log_mib``; the wrapper's log cap; 0 = no cap).
        max_user_log_bytes: the most bytes of job logs one account keeps in all (``c.SchedApp.max_user_log_mib``;
            :mod:`.log_budget`: its oldest finished logs are cut to their tail, a job launched past it is
            capped lower; 0 = no total).
        min_log_free_bytes: a job is launched only with at least this many bytes free in its log
            folder, else it waits in the queue (``c.SchedApp.min_log_free_mib``; :mod:`.disk_space`; 0 = no check).
        limits: per-job devices / pids / memory cgroups (:class:`.limits.LocalLimits`); None =
            none (jobs are then fenced from other GPUs by their environment only).
        gpu_minor: a GPU (or MIG) uuid's device minor (:func:`.limits.minor_resolver`); None =
            unknown, then only a 0-GPU job's devices are fenced.
        monotonic: the clock stop plans, backoffs and leftover grace use (seconds; injected for tests).

    Raises:
        ExecutorError: ``root_dir`` cannot be created.
    """

    name = "local"

    def __init__(
        self,
        root_dir: str | Path,
        *,
        default_cwd: str | Path | None = None,
        python: str = sys.executable,
        job_python: str | None = None,
        base_env: Mapping[str, str] | None = None,
        clean_env: bool = False,
        require_run_as: bool = False,
        tracking: str | ProcessTracker = "auto",
        max_service_restarts: int = 10,
        listen_s: float = LISTEN_S,
        relisten_s: float = RELISTEN_S,
        leftover_grace_s: float = 3.0,
        max_log_bytes: int = 1024 << 20,
        max_user_log_bytes: int = 0,
        min_log_free_bytes: int = 0,
        limits: LocalLimits | None = None,
        gpu_minor: Callable[[str], int | None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.dirs = JobDirs(Path(root_dir))
        self.root = self.dirs.root
        self.default_cwd = Path(default_cwd) if default_cwd else None
        self.python = python
        self.job_python = job_python or python
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.clean_env = clean_env
        self.require_run_as = require_run_as
        if isinstance(tracking, str):
            self.tracker: ProcessTracker = MarkerTracker() if tracking == "marker" else detect_tracker()
        else:
            self.tracker = tracking
        self.max_service_restarts = max_service_restarts
        self.listen_s = listen_s
        self.relisten_s = relisten_s
        self.leftover_grace_s = leftover_grace_s
        self.max_log_bytes = max_log_bytes
        self._cleaner = FolderCleaner()  # every job's end, beside the engine (red34 R2, red35 R1)
        self._cleaning: dict[str, _Tracked] = {}
        """Jobs that ended, their folders being cleaned: counted in their owners' totals once clean."""
        self._trimming: dict[str, tuple[str, Path, bool]] = {}
        """Finished jobs whose folders the log budget is having emptied or measured (job id -> account, folder,
        emptied): told what is left."""
        self._pending: dict[str, int] = {}
        """Job id -> folders of it handed to the cleaner and not done yet (its start waits for them)."""
        self.log_budget = LogBudget(max_user_log_bytes, max_log_bytes, remove=self._trim)
        self.log_disk = LogDisk(min_log_free_bytes)
        self.writes = WriteWatch(min_free_bytes=min_log_free_bytes)
        """What running jobs write, looked at from outside their account each :meth:`poll` (:mod:`.outside_caps`)."""
        self._oom_said = False
        self.limits = limits
        self._namespaces_said = False
        self.gpu_minor = gpu_minor
        self.gpu_nodes: Mapping[int, Path] | None = None
        """Each GPU minor's device node for the drain scan's ``maps`` check (None: ``/dev/nvidiaN``;
        tests give stand-in files: there is no driver to map a real node)."""
        self._outside_scans: dict[tuple[str, frozenset[int]], tuple[float, dict[int, list[int]]]] = {}
        self._monotonic = monotonic
        self._jobs: dict[str, _Tracked] = {}
        self._told_ends: dict[tuple[str, int], ExecutorEvent] = {}
        """The ends :meth:`poll` reported, by ``(job id, attempt)`` (the newest :data:`_TOLD_ENDS_KEPT`): an end the
        engine could not record (its store's disk full, the database away) is given again when the engine adopts
        the job it still reads running — with the words and time this server saw, not as an end claimed while no
        server watched (red42: "killed by SIGTERM (while the server was down)" while the server was up)."""
        self._sealed_accounts: set[str] = set()
        """Accounts whose finished job folders were sealed since this executor started (:mod:`.sealing`)."""
        self._wrapper_source: str | None = None
        self._wrapper_memfd: int | None = None
        self.install = InstallWatch(python=self.python)
        """The install this server started from (:mod:`.install_check`): :meth:`reinstalled` says when it moved."""
        self.run_as_for: Callable[[Job], RunAs] | None = None
        self.job_env: Callable[[Job], Mapping[str, str]] | None = None
        """``job_env(job)``: variables the scheduler adds to every job it starts (``JUPYTER_SCHED_URL``, the
        job's progress token: :func:`jupyter_sched.extension.job_tokens.install_job_tokens`); None: none."""
        self.servers: ServerFence | None = None
        """Hub mode on a host that fences: the devices groups of users' notebook servers
        (:mod:`.server_fence`; :meth:`fence_servers`)."""

    def serve_hub(self, run_as_for: Callable[[Job], RunAs], *, job_python: str) -> None:
        """Hub mode: every job runs as the account ``run_as_for(job)`` names (used when the caller
        passes no run-as identity), with a clean environment, never as the service's own account.

        Args:
            run_as_for: the owner's run-as identity (raises ExecutorError for an unmapped user).
            job_python: interpreter every account can run (wrapper, scripts, notebooks).
        """
        self.run_as_for = run_as_for
        self.job_python = job_python
        self.clean_env = True
        self.require_run_as = True
        self.install.service = True  # its admin restarts it (the held jobs' words say so)

    # -- paths ---------------------------------------------------------------------------------

    def job_dir(self, job_id: str) -> Path:
        """The job's directory: as recorded at its start, else the embedded ``<root>/<job_id>``."""
        record = self.dirs.read_record(job_id)
        if record and record.get("job_dir"):
            return Path(str(record["job_dir"]))
        return self.dirs.job_dir(job_id, RunAs(user=""))

    def log_path(self, job_id: str) -> Path:
        """The job's combined stdout/stderr file (from the job's record; embedded layout if none)."""
        return self.job_dir(job_id) / "output.log"

    def reinstalled(self) -> Reinstall | None:
        """jupyter_sched reinstalled under this running server (the wrapper it launches moved or is another
        version's: :class:`~.install_check.InstallWatch`), else None; while it is, the engine launches no
        batch job (newuser31 N10). A few ``stat`` calls; more only after one of them changed."""
        return self.install.check()

    # -- protocol --------------------------------------------------------------------------------

    def tracked(self) -> frozenset[str]:
        return frozenset(self._jobs)

    def lend_gpus(self, lent: Mapping[str, Sequence[str]]) -> None:
        """Let each running job open the GPUs of the leases granted for it (``parent_job_id``:
        ``lent[job id]`` = their uuids) besides its own, and no longer those released (red team 16,
        R2: the fence was written once at start, so a job's own lease was charged but unusable).
        Only a change is written; a GPU whose device minor is unknown stays denied (logged)."""
        if self.gpu_minor is None:
            return
        for job_id, t in self._jobs.items():
            if t.limits is None or not t.limits.fenced or t.stopping:
                continue
            want = tuple(sorted(set(lent.get(job_id, ()))))
            if t.lent == want:
                continue
            own = t.allocation.all_gpu_uuids() if t.allocation is not None else ()
            found = {uuid: self.gpu_minor(uuid) for uuid in (*own, *want)}
            if any(found[uuid] is None for uuid in own):
                continue  # apply() did not fence this job's own GPUs by minor: nothing to widen
            unknown = [uuid for uuid in want if found[uuid] is None]
            if unknown:
                log.warning("job %s: leased GPU(s) %s have no known device minor; they stay fenced",
                            job_id, ", ".join(unknown))
            if t.limits.set_gpus([m for m in found.values() if m is not None]):
                t.lent = want
                log.info("job %s may open GPU(s) %s leased for it", job_id, ", ".join(want) or "(none now)")

    def gpus_open(self, job_id: str, gpu_uuids: Sequence[str]) -> dict[str, list[int]]:
        """``{uuid: pids}``: processes that hold one of ``gpu_uuids``' device nodes open or mapped
        (red team 17, R2: a released lent GPU stays usable through an fd opened while lent) —
        those of ``job_id``'s devices group and every other process of its owner's account on the
        host (red team 18, R6: the job may pass the fd by ``SCM_RIGHTS`` to a process of the same
        account outside its group, or keep a mapping after closing it). The group is read at every
        call; the account's other processes (the service's own left out) at most every
        :data:`OUTSIDE_RESCAN_S` while something holds the GPU, and always afresh before answering
        that nothing does — only while a lent lease drains. Empty when the job is not tracked or not fenced (then no lent
        GPU was opened through its fence) or no minor is known."""
        t = self._jobs.get(job_id)
        if t is None or t.limits is None or not t.limits.fenced or self.gpu_minor is None:
            return {}
        by_minor = {m: uuid for uuid in gpu_uuids if (m := self.gpu_minor(uuid)) is not None}
        if not by_minor:
            return {}
        minors = set(by_minor)
        group = set(t.limits.pids())
        found = open_gpu_minors(sorted(group), minors, nodes=self.gpu_nodes)
        key = (job_id, frozenset(minors))
        now = self._monotonic()
        seen = self._outside_scans.get(key)
        if seen is None or now - seen[0] >= OUTSIDE_RESCAN_S or not (found or seen[1]):
            # the account's other processes: a fresh walk before saying nothing holds it (the lease then ends)
            uid = t.owner_uid if t.owner_uid is not None else os.getuid()
            outside = sorted(set(processes_of(uid)) - group - {os.getpid()})
            seen = (now, open_gpu_minors(outside, minors, nodes=self.gpu_nodes))
            self._outside_scans = {k: v for k, v in self._outside_scans.items() if now - v[0] < 60} | {key: seen}
        for minor, pids in seen[1].items():
            found.setdefault(minor, []).extend(pids)
        return {by_minor[m]: sorted(pids) for m, pids in found.items()}

    def job_pids(self, job_id: str) -> set[int]:
        """The processes of ``job_id``'s devices group (those :meth:`kill_pids` may end)."""
        t = self._jobs.get(job_id)
        return set(t.limits.pids()) if t is not None and t.limits is not None else set()

    def kill_pids(self, job_id: str, pids: Sequence[int]) -> list[int]:
        """SIGKILL those of ``pids`` still in ``job_id``'s devices group (checked just before, so
        a reused pid outside it is never hit); the pids signalled. The job's other processes go on."""
        t = self._jobs.get(job_id)
        if t is None or t.limits is None:
            return []
        members = set(t.limits.pids())
        killed = []
        for pid in pids:
            if pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    continue
                killed.append(pid)
        return killed

    def fence_servers(self, leases: Sequence[tuple[Job, Sequence[str]]]) -> None:
        """Hub mode: each account's notebook-server devices group allows exactly the GPUs of its
        owner's granted kernel leases (``(lease, its GPU uuids)``), no other GPU (red team 16, R1).
        A GPU whose device minor is unknown stays denied (logged)."""
        if self.servers is None or self.run_as_for is None:
            return
        want: dict[int, set[int]] = {}
        for job, uuids in leases:
            try:
                uid = self.run_as_for(job).uid
            except ExecutorError:
                continue
            if uid is None:
                continue
            minors = want.setdefault(uid, set())
            for uuid in uuids:
                minor = self.gpu_minor(uuid) if self.gpu_minor is not None else None
                if minor is None:
                    log.warning("lease %s: GPU %s has no known device minor; its owner's server stays fenced "
                                "from it", job.id, uuid)
                else:
                    minors.add(minor)
        self.servers.sync(want)

    def start(self, job: Job, allocation: Allocation, run_as: RunAs | None = None) -> ExecutorHandle:
        """Start ``job`` as ``run_as`` (default: the service's own account); return its handle.

        A wrapper of ``job`` that already runs here (a store older than the host, :meth:`live_copy`) is
        adopted instead of starting a second copy: the handle's ``allocation`` is then the GPUs that copy
        was launched on (the caller records those); a copy whose GPUs were not recorded is refused with
        ``details["code"] = "AlreadyRunning"`` (the job goes back to the queue until it ends).

        Raises:
            ExecutorError: nothing to run, missing working directory, a job that would run as the
                service in ``require_run_as`` mode, an account this process cannot switch to, or
                the wrapper failed to spawn.
        """
        self._told_ends.pop((job.id, job.attempts), None)  # a new run: an end told of an older one is not its end
        who = run_as or (self.run_as_for(job) if self.run_as_for is not None else embedded_run_as(job))
        if self.require_run_as and not who.switches:
            raise ExecutorError(f"job {job.id} of {job.spec.user} would run as this service's own account",
                                field="user", hint="hub mode runs every job as its owner's OS account")
        if who.switches and not can_switch_users():
            raise ExecutorError(f"cannot run job {job.id} as {who.account}: this service is not root",
                                field="user", hint="run jupyter-sched serve as root, or use the Kubernetes executor")
        running = self.live_copy(job)
        if running is not None:  # hubadmin23 A13: a restored (older) store must never start a second copy
            copy, recorded = running
            pid = copy.data.get("pid")
            if recorded is not None:  # a copy found after the start-up check: adopted, on the GPUs it holds
                log.warning("job %s: not started again: its wrapper (pid %s, GPUs %s) still runs in %s — adopted "
                            "(the store is older than this host: restored from a backup?)", job.id, pid,
                            ", ".join(recorded.all_gpu_uuids()) or "none", copy.data.get("job_dir"))
                self.adopt(job, copy)
                return ExecutorHandle(copy.executor, {**copy.data, "allocation": allocation_to_dict(recorded)})
            log.warning("job %s: not started: its wrapper (pid %s) still runs in %s", job.id, pid,
                        copy.data.get("job_dir"))
            raise ExecutorError(
                f"job {job.id} already runs on this host (wrapper pid {pid} in {copy.data.get('job_dir')}); "
                "a second copy is not started", field="job_id", details={"code": "AlreadyRunning"},
                hint="the store is older than this host (restored from a backup?); the job waits until that "
                     f"copy ends: stop it (kill {pid}) if it should not run")
        self.log_disk.check(self.dirs.user_dir(who) if who.switches else self.root)  # full: it waits (hubadmin25 B15)
        if job.id in self._pending and not self._cleaned_of(job.id, START_CLEAN_WAIT_S):
            raise ExecutorError(
                f"job {job.id}: its job folder from its last run is still being cleaned; it starts once that is done",
                field="job_id", details={"code": "FolderCleaning"},
                hint="nothing to do: it goes back to the queue and starts at its next turn")
        if who.switches and who.account not in self._sealed_accounts and who.uid is not None:
            # folders an older version left to the account, or whose end this service did not see (red31 R1
            # variant): sealed beside the engine, each holds what its owner put there (red35 R1)
            for folder in unsealed_finished(self.dirs.user_dir(who), who.uid,
                                            {*self._jobs, job.id, *_wrapped_job_ids(self.tracker)}):
                self._hand(folder.name, folder, who.uid)
            self._sealed_accounts.add(who.account or "")
        tracked = self._spawn(job, allocation, who)
        self._jobs[job.id] = tracked
        return tracked.handle

    def live_copy(self, job: Job) -> tuple[ExecutorHandle, Allocation | None] | None:
        """The handle and allocation of ``job``'s wrapper if one still runs on this host, else None.

        A store restored from a backup is older than the host: a job it has as pending may be running
        here (hubadmin23 A13). The wrapper is found from this service's record of the job's launch
        (else the wrapper's file in the job directory); it counts only when its pid and process create time match
        and the process is a member of the job's tracking group (a cgroup, or the marker in its
        environment) — an owner's edited ``wrapper.json`` naming another process is not enough. The
        allocation is the one recorded at its launch (None for a record written before it was kept).
        Jobs watched by this executor are not copies (None).
        """
        if job.id in self._jobs:
            return None
        record = self.dirs.read_record(job.id)
        if record is not None and isinstance(record.get("pid"), int) and isinstance(record.get("create_time"), float):
            # this service's own record of the launch (written before the wrapper writes its file)
            handle: ExecutorHandle | None = ExecutorHandle("local", {
                **{k: v for k, v in record.items() if k not in _NOT_IN_HANDLE}, "pgid": record["pid"]})
        else:
            handle = self._handle_from_files(job)
        if handle is None:
            return None
        data = handle.data
        run_as = _run_as_from(data.get("run_as"), job)
        process = _live_process(int(data.get("pid", 0)), data.get("create_time"),
                                uid=run_as.uid if run_as.switches else None)
        group = JobGroup.from_dict(data.get("group"))
        if process is None or group is None or process.pid not in tracker_for(group, self.tracker).members(group):
            return None
        raw = data.get("allocation")
        return handle, allocation_from_dict(raw) if isinstance(raw, Mapping) else None

    def live_unknown(self, known: Callable[[str], bool]) -> list[tuple[Job, ExecutorHandle, Allocation | None]]:
        """Jobs whose wrapper still runs on this host but which ``known(job_id)`` says the store lacks.

        A store restored from a backup does not know a job submitted after the backup, and a new empty
        store knows none (hubadmin24 B2, B7): their wrappers run on, and their GPUs would be handed to
        other jobs. Each launch record of this service (``<root>/.state/<job id>.json``) of a job named by a
        live process's ``--job-dir`` argument (a wrapper's command line; a forged one only makes its record
        read: the record's own pid must match) whose wrapper is alive (:meth:`live_copy`'s checks: pid,
        create time, tracking group) and whose id ``known`` does not have is returned as ``(job, handle,
        allocation)``: ``job`` is pending, rebuilt from the spec the
        record keeps (records written before it was kept: a spec with the owner's name, the recorded
        GPUs and the wrapper's argv, team ``default``, ``job.spec.name`` starting ``(not in this store``);
        ``allocation`` is None for a record that predates it (its GPUs are then unknown). Jobs watched
        here are never returned.

        A wrapper with **no** launch record (``<log_dir>/.state`` lost: a fresh volume, an older snapshot;
        hubadmin26 B22) is returned too when :meth:`_unrecorded` vouches for it: the job, a handle on the
        live wrapper (``no_launch_record: True``) and the GPUs its environment names
        (``CUDA_VISIBLE_DEVICES``/``NVIDIA_VISIBLE_DEVICES`` UUIDs) on an allocation whose ``node`` is ``""``
        (the caller finds the node from the inventory); None when it names none.

        Raises:
            StoreError: ``known`` failed (the caller's store).
        """
        found: list[tuple[Job, ExecutorHandle, Allocation | None]] = []
        for job_id in _wrapped_job_ids(self.tracker):  # live processes, not every record ever written (they are never removed)
            if job_id in self._jobs:
                continue
            try:
                record = self.dirs.read_record(job_id)
            except NotFoundError:  # not a job id's name: not this service's record
                continue
            if record is None:
                unrecorded = None if known(job_id) else self._unrecorded(job_id)
                if unrecorded is not None:
                    found.append(unrecorded)
                continue
            job = _recorded_job(job_id, record)
            copy = self.live_copy(job)
            if copy is None or known(job_id):
                continue
            handle, allocation = copy
            if not isinstance(record.get("spec"), Mapping):
                job = replace(job, spec=replace(job.spec, command=_argv_of(int(handle.data["pid"])), resources=replace(
                    job.spec.resources, gpus=len(allocation.gpu_uuids) if allocation is not None else 0)))
            found.append((job, handle, allocation))
        return found

    def _unrecorded(self, job_id: str) -> tuple[Job, ExecutorHandle, Allocation | None] | None:
        """A live wrapper of this service for ``job_id`` that no launch record names (:meth:`live_unknown`).

        It counts only when its command line is a wrapper's (``--job-dir D … --launch``), ``D`` is
        ``<log_dir>/<job id>`` or ``<log_dir>/users/<account>/<job id>``, a real directory (no link)
        inside a ``users/<account>`` folder of this service (mode 0711: an account cannot add a
        directory there — a process naming a folder the service never made is not vouched for), and the
        process runs as the directory's owner. The account is that owner's; its GPUs the UUIDs of its
        ``CUDA_VISIBLE_DEVICES`` (else ``NVIDIA_VISIBLE_DEVICES``), its share ``JUPYTER_SCHED_GPU_MILLI``.
        """
        for pid in _candidate_pids(self.tracker):  # bounded reads, of job groups' members only (red36 R3)
            cmdline = _wrapper_args(pid) or []
            if "--launch" not in cmdline or "--job-dir" not in cmdline or cmdline.index("--job-dir") + 1 >= len(cmdline):
                continue
            job_dir = Path(cmdline[cmdline.index("--job-dir") + 1])
            if job_dir.name != job_id:
                continue
            try:
                process = psutil.Process(pid)
                uid, create_time = process.uids().real, process.create_time()
            except psutil.Error:
                continue
            if not _alive(process):
                continue
            account = self._vouched_dir(job_dir, uid)
            if account is None:
                continue
            try:
                env = process.environ()
            except psutil.Error:
                env = {}
            devices = env.get("CUDA_VISIBLE_DEVICES") or env.get("NVIDIA_VISIBLE_DEVICES") or ""
            uuids = tuple(d.strip() for d in devices.split(",") if d.strip().startswith(("GPU-", "MIG-")))
            try:
                milli = int(env.get("JUPYTER_SCHED_GPU_MILLI") or 1000)
            except ValueError:
                milli = 1000
            argv = _argv_of(pid)
            job = Job(id=job_id, spec=JobSpec(
                name="(not in this store: no launch record in <log_dir>/.state)", user=account, command=argv))
            handle = ExecutorHandle("local", {"pid": process.pid, "pgid": process.pid,
                                              "create_time": create_time,
                                              "job_dir": str(job_dir), "no_launch_record": True})
            allocation = Allocation(node="", gpu_uuids=uuids, gpu_milli=milli if 0 < milli <= 1000 else 1000) \
                if uuids else None
            return job, handle, allocation
        return None

    def _vouched_dir(self, job_dir: Path, uid: int) -> str | None:
        """The account of ``job_dir`` when this service made it and its wrapper runs as its owner (real ``uid``),
        else None."""
        root = self.dirs.root
        parent = job_dir.parent
        try:
            info = os.lstat(job_dir)
            if not stat.S_ISDIR(info.st_mode):
                return None
            if uid != info.st_uid:
                return None
            if parent == root:  # embedded: the service's own account runs its jobs
                return pwd.getpwuid(info.st_uid).pw_name if info.st_uid == os.geteuid() else None
            if parent.parent != root / "users":
                return None
            folder = os.lstat(parent)
            if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.geteuid() or folder.st_mode & 0o022:
                return None
            return parent.name
        except (OSError, KeyError):
            return None

    def _spawn(self, job: Job, allocation: Allocation, run_as: RunAs, restarts: int = 0) -> _Tracked:
        switching = run_as.switches
        job_dir = self.dirs.make_job_dir(job.id, run_as) if switching else self.dirs.job_dir(job.id, run_as)
        python = self.job_python if switching else self.python
        argv = job_argv(job, job_dir, python=python)
        cwd = self._working_dir(job, run_as, job_dir)
        if self.clean_env or switching:
            base = clean_environment(run_as, service_env=self.base_env, python=python, shell=_shell(run_as))
        else:
            base = {**self.base_env, **own_identity(self.base_env)}
        scheduler_env = self.job_env(job) if self.job_env is not None else None  # URL + progress token
        env = job_environment(job, allocation, base, scheduler_env=scheduler_env)
        # the job's own variables (LD_PRELOAD, PATH…) reach only its command: the wrapper starts from the
        # environment without them and adds them to the processes it starts (new user 12, N5)
        own = replace(job, spec=replace(job.spec, env={}))
        wrapper_env = job_environment(own, allocation, base, scheduler_env=scheduler_env, logger=_SAID_ONCE)
        job_only = {k: v for k, v in env.items() if wrapper_env.get(k) != v}
        _check_environment(job_only)  # the wrapper would meet them after the start was reported: refuse now
        env = wrapper_env
        group = self._new_group(job.id, run_as)
        env[MARKER_ENV] = group.name
        log_cap = self._log_cap(job, run_as, job_dir)
        report, report_w = os.pipe()  # the wrapper says its command's pid on it (made here: not the job's to write)
        try:
            os.set_blocking(report, False)
            wrapper_args = ["--leftover-grace", f"{self.leftover_grace_s:g}", "--max-log-bytes", str(log_cap),
                            *(["--log-cap-setting", self._cap_setting(log_cap)] if log_cap != self.max_log_bytes else []),
                            "--job-dir", str(job_dir), "--report-fd", str(report_w), "--launch", "--", *argv]
            passed: tuple[int, ...] = (report_w,)
            if not switching:
                command = [self.python, str(Path(_wrapper.__file__)), *wrapper_args]
            elif (fd := self._wrapper_fd()) is not None:  # `ps` reads "python3 -I /dev/fd/5 --job-dir … -- ARGV"
                command, passed = [python, "-I", f"/dev/fd/{fd}", *wrapper_args], (*passed, fd)
            else:
                command = [python, "-I", "-c", self._wrapper_code(), *wrapper_args]
            if switching:  # started as root, made the owner's only after Popen returned (red32 R7, below), in its own
                # IPC namespace and /dev/shm so its shared memory ends with it (red33 R2)
                command = as_account(run_as, command, shm=job_shm_options(self._memory_cap(job, allocation)))
                self._say_if_no_job_namespaces()
            banner = (f"{RUN_MARKERS[1]} (restart {restarts})" if restarts
                      else _restart_banner(job, job_dir / "output.log"))
            workers = gang_environments(job, allocation, master_port=_free_port()) if len(allocation.per_worker()) > 1 else []
            launch = json.dumps({"cwd": str(cwd), "files": carried_files(job), "banner": banner,
                                 **({"notebook": True} if job.spec.notebook else {}),  # keeps executed.ipynb (red28 R5)
                                 # the job's tracking group's member list: the wrapper finds what the job left there, never
                                 # by walking the host's processes (red37 R2; it checks that the list holds itself)
                                 **({"members": members} if (members := members_file(group)) else {}),
                                 **({"env": job_only} if job_only else {}),
                                 **({"workers": workers} if workers else {})}) + "\n"
            # a launch past what a pipe takes at once goes in an in-memory file the wrapper reads (red32 R7: its carried
            # script or notebook, written down the pipe, held the engine's thread while the owner kept the wrapper stopped)
            launch_fd = _launch_file(launch) if len(launch) > _wrapper.LAUNCH_INLINE_BYTES else None
            if launch_fd is not None:
                launch, passed = json.dumps({"launch_fd": launch_fd}) + "\n", (*passed, launch_fd)
            with open(self.dirs.err_path(job.id), "wb") as err:
                try:
                    # Popen waits, on this (the engine's) thread, until its child's execve. Never Popen(user=): its child
                    # is the owner's from its setuid to that execve, so the owner's SIGSTOP (kill -STOP -1 in a loop)
                    # landing there held the engine for everyone (red32 R7). The child here is root up to its execve of
                    # the service's interpreter (runas.DROP_TO_ACCOUNT), which becomes the owner and execs the wrapper after
                    # Popen has returned; a wrapper kept from beginning is ended (_watch_launch, stopped-wrapper rule).
                    popen = subprocess.Popen(
                        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, env=env,
                        start_new_session=True, cwd="/" if switching else None, pass_fds=passed)
                except OSError as exc:
                    raise ExecutorError(f"cannot start job {job.id}: {exc}", hint="check the interpreter and paths") from exc
                finally:
                    if launch_fd is not None:
                        os.close(launch_fd)
        except BaseException:  # nothing started: neither end of the pipe is kept
            os.close(report)
            os.close(report_w)
            raise
        os.close(report_w)  # the wrapper has it
        group = self._enroll(group, popen.pid)
        limits = self._limit(job, allocation, group, popen.pid)
        self._likelier_oom_victim(job.id, popen.pid)
        assert popen.stdin is not None
        # never wait on the wrapper: it is the job owner's process, which the owner may stop before it reads (red32
        # R7: a 1 MiB carried script and a SIGSTOP held the engine's thread in write(), and no job started or ended
        # for anyone); what the pipe does not take now is written at each poll, up to LAUNCH_READ_S
        os.set_blocking(popen.stdin.fileno(), False)
        left = _write_some(popen.stdin.fileno(), launch.encode())
        if left is None:  # the wrapper died before reading: poll() reports its end
            log.warning("job %s: the wrapper exited before its launch", job.id)
            popen.stdin.close()
        try:
            process = psutil.Process(popen.pid)
            create_time = process.create_time()
        except psutil.Error:  # exited already; poll() reports its end
            process, create_time = None, None
        handle = ExecutorHandle("local", {
            "host": socket.gethostname(), "pid": popen.pid, "pgid": popen.pid, "create_time": create_time,
            "job_dir": str(job_dir), "log": str(job_dir / "output.log"), "argv": argv, "cwd": str(cwd),
            "restarts": restarts, "run_as": run_as.to_dict(), "group": group.to_dict(),
            **({"limits": limits.to_dict()} if limits is not None else {})})
        self.dirs.write_record(job.id, {"job_dir": str(job_dir), "log": str(job_dir / "output.log"),
                                        "allocation": allocation_to_dict(allocation), "pid": popen.pid,
                                        "create_time": create_time,
                                        "uid": run_as.uid if switching else None, "group": group.to_dict(),
                                        **({"limits": limits.to_dict()} if limits is not None else {}),
                                        "run_as": run_as.to_dict(), "host": socket.gethostname(),
                                        "log_cap": log_cap,
                                        # what adopting it as a job needs when a store lacks it (hubadmin24 B2)
                                        "spec": spec_to_dict(job.spec), "attempts": job.attempts,
                                        "submitted_at": job.submitted_at.isoformat() if job.submitted_at else None})
        log.info("job %s started as %s: pid %s, group %s (%s), CUDA_VISIBLE_DEVICES=%s", job.id,
                 run_as.account or "this service's user", popen.pid, group.name, group.kind, env["CUDA_VISIBLE_DEVICES"])
        return _Tracked(job=job, allocation=allocation, handle=handle, process=process, popen=popen,
                        control=None if popen.stdin.closed else popen.stdin,
                        restarts=restarts, run_as=run_as, group=group, limits=limits, log_cap=log_cap,
                        launch_left=left or b"", report=report,
                        launch_by=self._monotonic() + LAUNCH_READ_S if left or switching else None)

    def _watch_launch(self, t: _Tracked, now: float) -> None:
        """Write more of ``t``'s launch line as its pipe takes it; once the wrapper has read all of it (nothing left to
        write, none unread in the pipe: it began) nothing more is watched here. A wrapper that has not read it within
        :data:`LAUNCH_READ_S` of its start is ended with the reason naming its account (red32 R7; a wrapper run as
        another account is watched whatever its launch's size: the owner may stop, freeze or trace it before it began,
        which the stopped-wrapper rule of :mod:`.outside_caps` sees sooner where it can)."""
        if t.launch_left:
            left = _write_some(t.control.fileno(), t.launch_left) if t.control is not None else None
            t.launch_left = left or b""
        if t.control is None or (not t.launch_left and _unread(t.control.fileno()) == 0):
            t.launch_by = None  # read whole (or its wrapper is gone: its end is reported)
            return
        if t.stopping or t.launch_by is None or now < t.launch_by:
            return
        t.own_stop = (f"its wrapper did not read its launch within {LAUNCH_READ_S:.0f} s of its start"
                      f"{_as_account(t.run_as)} (stopped, frozen or traced before it began: the job's own account may "
                      "signal it); the job never ran and was ended — do not signal a job's processes before it runs")
        log.warning("job %s: %s", t.job.id, t.own_stop)
        self.stop(t.job.id, grace_s=0.0, reason=t.own_stop)  # it never began: nothing to save, SIGKILL at once

    def _log_cap(self, job: Job, run_as: RunAs, job_dir: Path) -> int:
        """The log cap of ``job`` about to be launched in ``job_dir``: its owner's total of kept logs
        (:mod:`.log_budget`) after its running jobs' caps; its oldest finished logs cut to make room."""
        account = _log_account(run_as)
        self._take_cleaned()
        mine = {i: t.log_cap for i, t in self._jobs.items() if i != job.id and _log_account(t.run_as) == account}
        # ended jobs whose folders are still being cleaned count as running ones do: by what their logs hold
        cleaning = [i for i, t in self._cleaning.items() if i != job.id and _log_account(t.run_as) == account]
        return self.log_budget.launch(account, job_dir.parent, run_as.uid if run_as.switches else None,
                                      [*mine, *cleaning], sum(mine.values()), job_id=job.id)

    def _cap_setting(self, log_cap: int) -> str:
        """The setting a log cut at ``log_cap`` names in its last line (the wrapper's ``--log-cap-setting``)."""
        if log_cap == self.max_log_bytes:
            return "c.SchedApp.max_log_mib"
        return f"{self.log_budget.setting()} MiB for all of one user's job logs"

    def _hand(self, job_id: str, job_dir: Path, owner_uid: int | None, *, remove: bool = False) -> None:
        """Have ``job_dir`` sealed, measured and trimmed by the folder cleaner (:mod:`.folder_cleaner`), beside the
        engine: nothing an owner put in a folder is walked on the engine's thread (red35 R1)."""
        self._pending[job_id] = self._pending.get(job_id, 0) + 1
        self._cleaner.clean(job_id, job_dir, owner_uid, remove=remove)

    def _trim(self, account: str, job_id: str, folder: Path, owner_uid: int | None, empty: bool) -> None:
        """The log budget's ``remove`` hook (:data:`.log_budget.Remover`): measure ``folder`` (and empty it) beside
        the engine."""
        self._trimming[job_id] = (account, folder, empty)
        self._hand(job_id, folder, owner_uid, remove=empty)

    def _take_cleaned(self) -> None:
        """Count what the folder cleaner finished: an ended job in its owner's total (:mod:`.log_budget`), with the
        bytes left beside its log; a trimmed folder's leftover."""
        for cleaned in self._cleaner.done():
            left = self._pending.get(cleaned.job_id, 0) - 1
            if left > 0:
                self._pending[cleaned.job_id] = left
            else:
                self._pending.pop(cleaned.job_id, None)
            t = self._cleaning.pop(cleaned.job_id, None)
            if t is not None:
                self.log_budget.ended(_log_account(t.run_as), t.job.id, t.job_dir / "output.log", t.owner_uid,
                                      cleaned.extra)
            elif (trimmed := self._trimming.pop(cleaned.job_id, None)) is not None:
                account, folder, emptied = trimmed
                if emptied:
                    self.log_budget.left(account, cleaned.job_id, cleaned.extra)
                else:
                    self.log_budget.measured(account, cleaned.job_id, folder, cleaned.extra)

    def _cleaned_of(self, job_id: str, wait_s: float) -> bool:
        """Whether ``job_id``'s folders are all cleaned, waiting up to ``wait_s`` seconds for them."""
        deadline = time.monotonic() + wait_s
        while True:
            self._take_cleaned()
            if job_id not in self._pending:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def settle(self, wait_s: float) -> bool:
        """Wait up to ``wait_s`` seconds for the folder cleaner to finish the folders handed to it (ended jobs'
        folders sealed and trimmed: :mod:`.folder_cleaner`), counting those done; True when none is left."""
        deadline = time.monotonic() + wait_s
        while True:
            self._take_cleaned()
            if not self._pending:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _likelier_oom_victim(self, job_id: str, pid: int) -> None:
        """Set the waiting wrapper's ``oom_score_adj`` to :data:`JOB_OOM_SCORE_ADJ` before its launch
        line, so the job's every process inherits it: out of memory, the kernel kills a job before the
        service, PostgreSQL or a user's notebook kernel (their 0; red team 26, R7). Written by a service
        holding ``CAP_SYS_RESOURCE`` (root on a host, not in a container's default set), it is also the floor
        the job's processes cannot go below (``oom_score_adj_min``); without it a job may set 0 back, which the
        start-up line and doctor say (:func:`~.limits.oom_floor_problem`; verify 26, V15). A failure (no
        ``/proc``, a locked-down container) is logged once, never stops the launch."""
        try:
            with open(f"/proc/{pid}/oom_score_adj", "w", encoding="ascii") as fh:
                fh.write(str(JOB_OOM_SCORE_ADJ))
        except OSError as exc:
            if not self._oom_said:
                self._oom_said = True
                log.warning("job %s: cannot make its processes the first victims out of memory (oom_score_adj "
                            "%s): %s — the kernel may kill this service or PostgreSQL before a job", job_id,
                            JOB_OOM_SCORE_ADJ, exc.strerror or exc)

    def missing_path(self, spec: JobSpec) -> tuple[str, str, str] | None:
        """``(field, path, problem)`` of the first path ``spec`` names that the job could not use
        where it starts — its ``working_dir``, else a ``script`` or ``notebook`` not carried with
        it (relative ones in the directory it would start in) — so a submit can be refused instead
        of failing at its start (issue 20); ``problem`` reads after the path (``does not exist``).
        Embedded, looked at as this service's account, which runs the job. In hub mode, as the
        owner (:func:`.owner_paths.missing_as_owner`: the service must not tell one user which
        paths exist under another account, DESIGN *Who runs it*, but may tell the owner what the
        owner can see; new user 7, F6). None where no owner is known (``require_run_as`` without
        :meth:`serve_hub`, an unmapped user: refused at admission) or the check cannot run."""
        if self.run_as_for is not None:
            from .owner_paths import missing_as_owner

            try:
                who = self.run_as_for(Job(id="path-check", spec=spec))
            except ExecutorError:
                return None
            search = spec.env["PATH"] if "PATH" in spec.env else job_path(self.job_python)  # as _spawn's env
            return missing_as_owner(spec, who, search) if who.switches and can_switch_users() else None
        if self.require_run_as:
            return None
        start = Path(os.path.expanduser(spec.working_dir)) if spec.working_dir else self.default_cwd
        if spec.working_dir and start is not None and not start.is_dir():
            return "working_dir", str(start), _path_problem(start, want_dir=True)
        for name, full in _named_files(spec, start):
            if not full.is_file():
                return name, str(full), _path_problem(full, want_dir=False)
        if (script := interpreted_script(spec)) is not None:  # `python nosuch.py` (newuser26 N3)
            full = Path(os.path.expanduser(script))
            full = full if full.is_absolute() else start / full if start is not None else full
            if full.is_absolute() and not full.is_file():
                return "command", str(full), _path_problem(full, want_dir=False)
        inherited = job_path(self.python) if self.clean_env else self.base_env.get("PATH", os.defpath)
        return missing_program(spec, start, spec.env.get("PATH", inherited))  # the PATH _spawn gives it

    def kernel_names(self, spec: JobSpec) -> list[str] | None:
        """The names of the kernels a notebook job of ``spec`` could start where it runs, or None where that
        cannot be told cheaply — then nothing is refused and the runner says it (newuser33 N4).

        Embedded, the job runs as this process's account with this Python, so the kernels are the ones
        jupyter_client finds here: a plain :class:`~jupyter_client.kernelspec.KernelSpecManager`, as the
        notebook runner's nbclient uses (no Jupyter config: the server's own manager may be configured with
        kernels — nb_conda_kernels' ``conda-env-…`` — the runner cannot start). None when the job's Python
        or its environment's Jupyter/Python paths differ from this process's, or when the listing fails. In hub
        mode the owner's runner's kernels, read from its folders as the owner may (:meth:`_account_kernel_names`)."""
        if self.run_as_for is not None:
            return self._account_kernel_names(spec)
        if self.require_run_as or self.clean_env:
            return None
        if os.path.realpath(self.python) != os.path.realpath(sys.executable):
            return None
        job_env = {**self.base_env, **own_identity(self.base_env), **spec.env}
        if any(job_env.get(key) != os.environ.get(key) for key in _KERNEL_PATH_KEYS):
            return None
        try:
            from jupyter_client.kernelspec import KernelSpecManager

            return list(KernelSpecManager().find_kernel_specs())
        except Exception as exc:  # any failure of the listing: the run tells
            log.debug("cannot list the kernels here (%s); a notebook job's start will tell", exc)
            return None

    def _account_kernel_names(self, spec: JobSpec) -> list[str] | None:
        """Hub mode's :meth:`kernel_names`: the kernels the job's notebook runner (``job_python``, run as the owner
        with :func:`~.runas.clean_environment`: none of jupyter_core's path variables but ``HOME``) would find,
        read from the owner's and the job Python's kernel folders as the owner may list them, never by running a
        Python as the owner on each submit (:func:`.owner_kernels.account_kernel_names`). None when the job sets
        a variable that moves them, or its account is not known yet (then the runner says it)."""
        if any(key in spec.env for key in _KERNEL_PATH_KEYS):
            return None
        from .owner_kernels import account_kernel_names

        try:
            who = self.run_as_for(Job(id="kernel-check", spec=spec)) if self.run_as_for is not None else None
        except ExecutorError:
            return None
        if who is None or not who.switches or not who.home:
            return None
        return account_kernel_names(self.job_python, home=who.home, uid=who.uid)

    def named_file_heads(self, spec: JobSpec, limit: int) -> list[tuple[str, str, bytes]]:
        """``(field, path, first bytes)`` of the ``script`` / ``notebook`` ``spec`` names by path (not
        carried) and of a command's program file (``("command", program as named, its first
        :data:`~.wrapper.SHEBANG_BYTES` bytes)``: its ``#!`` line, newuser28 N1), read as the job would read it — this service's account embedded, the owner's on a
        hub (:func:`.owner_paths.read_as_owner`) — at most ``limit`` bytes each (one more: the caller
        sees that it was cut). Files that cannot be read are left out (:meth:`missing_path` says why),
        so a content check never says more than the owner could find out (new user 14, N23)."""
        if self.run_as_for is not None:
            from .owner_paths import read_as_owner

            try:
                who = self.run_as_for(Job(id="content-check", spec=spec))
            except ExecutorError:
                return []
            return read_as_owner(spec, who, limit + 1) if who.switches and can_switch_users() else []
        if self.require_run_as:
            return []
        start = Path(os.path.expanduser(spec.working_dir)) if spec.working_dir else self.default_cwd
        files: list[tuple[str, str, Path, int]] = [(name, str(full), full, limit + 1)
                                                  for name, full in _named_files(spec, start)]
        inherited = job_path(self.python) if self.clean_env else self.base_env.get("PATH", os.defpath)
        if (program := program_file(spec, start, spec.env.get("PATH", inherited))) is not None:
            files.append(("command", spec.command[0], program, _wrapper.SHEBANG_BYTES))
        heads = []
        for name, shown, full, size in files:
            try:  # a regular file only, opened non-blocking: a FIFO there hung the check (red39 R4)
                with os.fdopen(open_fd(full, os.O_RDONLY), "rb") as fh:
                    heads.append((name, shown, fh.read(size)))
            except OSError:
                continue
        return heads

    def named_paths(self, spec: JobSpec) -> list[tuple[str, str]]:
        """``(field, full path)`` of the ``script`` / ``notebook`` ``spec`` names by path, where the job would
        read them, as this service's account — embedded only (empty on a hub: the owner's paths are looked at
        as the owner, :meth:`missing_path`). The firing of a definition looks at them again (red39 R4)."""
        if self.run_as_for is not None or self.require_run_as:
            return []
        start = Path(os.path.expanduser(spec.working_dir)) if spec.working_dir else self.default_cwd
        return [(name, str(full)) for name, full in _named_files(spec, start)]

    def _working_dir(self, job: Job, run_as: RunAs, job_dir: Path) -> Path:
        """Where the job starts (module docstring). Embedded, a missing directory is refused here;
        as another account the wrapper finds out as that account (the service must not probe
        paths on the user's behalf)."""
        if job.spec.working_dir:
            cwd = Path(_home_relative(job.spec.working_dir, run_as))
            if not run_as.switches and not cwd.is_dir():
                raise ExecutorError(f"working directory {str(cwd)!r} does not exist", field="working_dir",
                                    hint="give an existing directory, or leave working_dir out")
            return cwd
        if run_as.switches:
            return Path(run_as.home) if run_as.home and os.path.isdir(run_as.home) else job_dir
        return self.default_cwd or job_dir

    def _new_group(self, job_id: str, run_as: RunAs) -> JobGroup:
        uid = run_as.uid if run_as.switches else os.getuid()
        try:
            return self.tracker.create(job_id, uid=uid)
        except OSError as exc:
            log.warning("job %s: cannot create a %s group (%s); tracking by marker", job_id, self.tracker.kind, exc)
            return MarkerTracker().create(job_id, uid=uid)

    def _enroll(self, group: JobGroup, pid: int) -> JobGroup:
        try:
            tracker_for(group, self.tracker).enroll(group, pid)
            return group
        except OSError as exc:
            log.warning("cannot move pid %s into %s (%s); tracking by marker", pid, group.path, exc)
            tracker_for(group, self.tracker).remove(group)
            return JobGroup(name=group.name, kind="marker", uid=group.uid)

    def _memory_cap(self, job: Job, allocation: Allocation) -> int:
        """The job's memory cap in MiB (its request over its workers, else the admin's default; 0: none)."""
        memory = job.spec.resources.memory_mib * len(allocation.per_worker())
        return memory or (self.limits.memory_mib if self.limits is not None else 0)

    def _say_if_no_job_namespaces(self) -> None:
        """Once per executor: a WARNING where the kernel refuses jobs their own IPC namespace and /dev/shm."""
        if self._namespaces_said:
            return
        self._namespaces_said = True
        why = job_namespaces_refused()
        if why:
            log.warning("jobs run without an IPC namespace and /dev/shm of their own: unshare(CLONE_NEWIPC | "
                        "CLONE_NEWNS) or the tmpfs mount is refused here (%s) — shared memory a job leaves behind "
                        "(SysV segments, /dev/shm files) outlives it, past its memory cap; run the service as root "
                        "with CAP_SYS_ADMIN (not in a restricted container)", why)

    def _limit(self, job: Job, allocation: Allocation, group: JobGroup, pid: int) -> LimitGroups | None:
        """Put the wrapper into the job's limit groups (:mod:`.limits`) before it starts anything."""
        if self.limits is None:
            return None
        uuids = allocation.all_gpu_uuids()
        found = [self.gpu_minor(uuid) for uuid in uuids] if self.gpu_minor is not None else [None] * len(uuids)
        minors = None if None in found else [m for m in found if m is not None]
        memory = job.spec.resources.memory_mib * len(allocation.per_worker())
        return self.limits.apply(group, pid, gpu_minors=minors, memory_mib=memory)

    def _wrapper_code(self) -> str:
        if self._wrapper_source is None:
            self._wrapper_source = Path(_wrapper.__file__).read_text(encoding="utf-8")
        return self._wrapper_source

    def _wrapper_fd(self) -> int | None:
        """A sealed in-memory file holding the wrapper's source, which a job run as another
        account runs as ``/dev/fd/N`` (passed to it at that number); None where there is no
        ``memfd_create`` (then the source goes as ``python -c``).

        The account cannot read the wrapper's file where jupyter_sched is installed (under
        /root, mode 0700), and the service writes nothing where the account could change it (a
        wrapper file the account could edit would run as every other account's jobs). The
        source went as ``python -I -c <source>``: its 15 KB were the argv of every job in ``ps``
        (issue 20, F8). A memfd is readable by whoever holds the descriptor and sealed against
        writes, shrinking and growing, so no process — the job's own included — can change it;
        each start opens it anew (its own offset)."""
        if self._wrapper_memfd is None:
            memfd_create = getattr(os, "memfd_create", None)
            seals = getattr(fcntl, "F_ADD_SEALS", None)
            if memfd_create is None or seals is None:
                return None
            fd = memfd_create("jupyter_sched_wrapper.py", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            data = self._wrapper_code().encode("utf-8")
            while data:
                data = data[os.write(fd, data):]
            fcntl.fcntl(fd, seals, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
            self._wrapper_memfd = fd
        return self._wrapper_memfd

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        """Re-attach to a job after a restart (see module docstring); a job whose end this executor reported and
        the engine could not record gets that end again (:attr:`_told_ends`)."""
        told = self._told_ends.pop((job.id, job.attempts), None)
        if told is not None:
            return told
        data: Mapping[str, Any] | None = handle.data if handle is not None else None
        if data is None:
            # The server died between spawning and persisting the handle: our record and the
            # wrapper's own file say where it is.
            found = self._handle_from_files(job)
            if found is None:
                return Lost(job.id, "the job was admitted but never started (no process was found)", started=False)
            handle, data = found, found.data
        assert handle is not None
        if not data.get("job_dir"):
            data = {**data, "job_dir": str(self.job_dir(job.id))}
            handle = ExecutorHandle("local", data)
        host = data.get("host")
        if host and host != socket.gethostname():
            return Lost(job.id, f"the job ran on host {host}; this server on {socket.gethostname()} cannot watch "
                                "its processes (run one scheduler per host with the local executor)")
        run_as = _run_as_from(data.get("run_as"), job)
        group = JobGroup.from_dict(data.get("group"))
        pid, created = int(data.get("pid", 0)), data.get("create_time")
        process = _live_process(pid, created, uid=run_as.uid if run_as.switches else None)
        record = self.dirs.read_record(job.id) or {}
        recorded_cap = record.get("log_cap")
        tracked = _Tracked(job=job, allocation=job.allocation, handle=handle, process=process, run_as=run_as,
                           group=group, limits=LimitGroups.from_dict(data.get("limits")),
                           log_cap=recorded_cap if isinstance(recorded_cap, int) else self.max_log_bytes,
                           commands=_commands_in(record.get("commands")))  # what its wrapper told the last server
        if process is not None:
            tracked.seen_running_at = datetime.now(timezone.utc)  # an end it claims later is no earlier (red33 R3)
            self._jobs[job.id] = tracked
            log.info("job %s re-adopted: pid %s still running", job.id, pid)
            return None
        if group is not None and (members := tracker_for(group, self.tracker).members(group)):
            # what its gone wrapper left is ended, and said (newuser30 n16)
            self._note_signal(tracked, "wrapper", signal.SIGKILL, members, began=None)
        if group is not None and not self._kill_leftovers(group):
            tracked.stopping = True
            self._jobs[job.id] = tracked  # the wrapper is gone but processes remain: poll() ends them first
            log.info("job %s re-adopted: wrapper gone, leftovers of group %s still dying", job.id, group.name)
            return None
        return self._settle_unwatched(tracked, pid)

    def _kill_leftovers(self, group: JobGroup, wait_s: float = 2.0) -> bool:
        """SIGKILL what is left of a job whose wrapper is gone; True once nothing is left."""
        tracker = tracker_for(group, self.tracker)
        deadline = time.monotonic() + wait_s
        while tracker.members(group):
            if time.monotonic() >= deadline:
                return False
            tracker.kill(group)
            time.sleep(0.02)
        return True

    def _handle_from_files(self, job: Job) -> ExecutorHandle | None:
        record = self.dirs.read_record(job.id) or {"job_dir": str(self.dirs.job_dir(job.id, RunAs(user="")))}
        uid = record.get("uid") if isinstance(record.get("uid"), int) else None
        wrapper = read_untrusted_json(Path(str(record["job_dir"])) / "wrapper.json", owner_uid=uid)
        created = wrapper.get("create_time") if wrapper is not None else None
        if wrapper is None or not isinstance(wrapper.get("pid"), int) or isinstance(created, bool) \
                or not isinstance(created, (int, float)) or not math.isfinite(created):
            # the owner's file (red team 6): a NaN create time passed the pid-reuse check (NaN compares
            # false) and would be kept in the handle as JSON NaN, which PostgreSQL refuses
            return None
        return ExecutorHandle("local", {**{k: v for k, v in record.items() if k not in _NOT_IN_HANDLE}, "pid": wrapper["pid"],
                                        "pgid": wrapper["pid"], "create_time": wrapper.get("create_time")})

    def _settle_unwatched(self, t: _Tracked, pid: int) -> ExecutorEvent:
        ended = _read_exit(t.job_dir, t.owner_uid)
        if ended is not None:
            # the owner's word, seen by no service of ours: the engine bounds it by the stored last-seen time
            event: ExecutorEvent = Exited(t.job.id, ended[0], _observed_end(ended[1], None),
                                          message=_exit_message(ended[0], t, self.log_disk, self.job_python, self.python) + " (while the server was down)",
                                          claimed=True)
        else:
            event = Lost(t.job.id, f"process {pid} ended while the server was down and left no exit code "
                                   "(it was killed together with its wrapper)")
        self._forget_groups(t)
        _append_log(t, _unsaid(t))
        self._cleaning[t.job.id] = t  # sealed and measured beside the engine (red35 R1)
        self._hand(t.job.id, t.job_dir, t.owner_uid)
        return _with_signalled(event, t)

    def _forget_groups(self, t: _Tracked) -> None:
        """Remove the job's (empty) tracking and limit groups — after its message was said, which
        reads the memory group's OOM counter."""
        if t.group is not None:
            tracker_for(t.group, self.tracker).remove(t.group)
        if t.limits is not None:
            t.limits.remove()

    def poll(self) -> list[ExecutorEvent]:
        """Advance stop plans and restarts; report exits, losses, readiness and restarts."""
        events: list[ExecutorEvent] = []
        now = self._monotonic()
        running: list[Running] = []
        self._take_cleaned()  # folders cleaned beside the engine: their jobs counted now
        _LISTEN_TABLE.next_cycle()  # where the kernel cannot be asked: one bounded table read for every look (red36 R1)
        for job_id, t in list(self._jobs.items()):
            try:
                self._poll_one(job_id, t, now, events, running)
                t.poll_failures = 0
            except Exception as exc:  # one job's files or processes never stop the engine for all (red35 R2)
                events.extend(self._poll_failed(t, exc))
        self._hold_writes(running)
        return events

    def _poll_one(self, job_id: str, t: _Tracked, now: float, events: list[ExecutorEvent],
                  running: list[Running]) -> None:
        """:meth:`poll` of one job: its events added to ``events``, itself to ``running`` while it runs."""
        if t.launch_by is not None:
            self._watch_launch(t, now)
        self._take_report(t)
        if t.restart_at is not None:
            if now >= t.restart_at and not t.stopping:
                events.extend(self._restart(t))
            elif t.stopping:
                _close_control(self._jobs.pop(job_id))
                self._held_at_end(t)
                events.append(self._told(t, Exited(job_id, -int(signal.SIGTERM), datetime.now(timezone.utc),
                                                   "stopped while waiting to restart")))
            return
        self._advance_plan(t, now)
        ended = self._ended(t, now)
        if ended is None:
            events.extend(self._readiness(t, now))
            running.append(self._running(t))
            return
        if isinstance(ended, Exited) and t.own_stop:
            ended = replace(ended, message=t.own_stop)
        elif isinstance(ended, Lost) and t.own_stop:
            ended = replace(ended, reason=t.own_stop)
        elif isinstance(ended, Exited) and self._should_restart(t, ended) and \
                (taken := self._port_taken(t, ended)) is not None:
            ended = replace(ended, message=taken)  # restarting cannot free it (red team 15, R11)
        elif isinstance(ended, Exited) and self._should_restart(t, ended):
            delay = min(60.0, 2.0 ** t.restarts)
            if t.ready and t.job.spec.port:  # it read "ready" until the restart, up to 60 s (N8)
                events.append(NotReady(job_id, t.job.spec.port,
                                       f"it exited with code {ended.exit_code}; restarting in {delay:.0f} s"))
            if t.ready and t.job.spec.port:
                t.lost_listener = (now, datetime.now(timezone.utc))
            t.restart_at, t.ready = now + delay, False
            log.warning("service %s exited with %s; restarting in %.0f s", job_id, ended.exit_code, delay)
            return
        _close_control(self._jobs.pop(job_id))
        self._held_at_end(t)
        events.append(self._told(t, _with_signalled(ended, t)))

    def _told(self, t: _Tracked, event: ExecutorEvent) -> ExecutorEvent:
        """``event`` (``t``'s end, reported by :meth:`poll`) kept for :meth:`adopt` (:attr:`_told_ends`)."""
        if len(self._told_ends) >= _TOLD_ENDS_KEPT:
            self._told_ends.pop(next(iter(self._told_ends)))
        self._told_ends[(t.job.id, t.job.attempts)] = event
        return event

    def _poll_failed(self, t: _Tracked, exc: Exception) -> list[ExecutorEvent]:
        """A poll of ``t`` raised: said in the log with the job's id, and the job skipped this time, so the
        others go on (red35 R2: a job's own ``exit.json`` nested 60,000 deep raised on every tick, and the
        engine retried that tick forever — no job started for anyone). Its :data:`POLL_FAILURES_LOST`-th failure
        in a row ends it: its processes are killed and it is reported lost, its GPUs given back."""
        t.poll_failures += 1
        job_id = t.job.id
        ending = job_id not in self._jobs  # it raised on its way out (its end not yet said): say it now
        if t.poll_failures < POLL_FAILURES_LOST and not ending:
            log.exception("job %s: could not follow it (%s; try %d of %d), the others go on", job_id,
                          type(exc).__name__, t.poll_failures, POLL_FAILURES_LOST)
            return []
        log.error("job %s: could not follow it %d time(s) in a row (%s: %s); its processes are stopped and it is "
                  "reported lost", job_id, t.poll_failures, type(exc).__name__, str(exc)[:200], exc_info=ending)
        self._jobs.pop(job_id, None)
        with contextlib.suppress(Exception):  # what is left of it must go: each step on its own
            _killpg(t, signal.SIGKILL)
        if t.group is not None:
            with contextlib.suppress(Exception):
                self._kill_leftovers(t.group, wait_s=0.5)
        if t.popen is not None:  # our child: reaped, no zombie left behind
            with contextlib.suppress(Exception):
                t.popen.wait(timeout=0.5)
        with contextlib.suppress(Exception):
            _close_control(t)
        with contextlib.suppress(Exception):
            self._forget_groups(t)
        polls = "its end" if ending else f"{t.poll_failures} polls in a row"
        return [Lost(job_id, f"the service could not follow this job ({type(exc).__name__} reading {polls}, e.g. a "
                             "file of its folder it could not read); its processes were stopped")]

    def _running(self, t: _Tracked) -> Running:
        """``t`` as :class:`~.outside_caps.WriteWatch` looks at it (its wrapper: while it runs)."""
        return Running(job_id=t.job.id, wrapper_pid=self._root_pid(t) if t.leftovers_since is None else None,
                       job_dir=t.job_dir, owner_uid=t.owner_uid, log_cap=t.log_cap,
                       setting=self._cap_setting(t.log_cap), stopping=t.stopping,
                       members=lambda: self._members(t), started=_started(t), began=t.launch_by is None,
                       account=_as_account(t.run_as))

    def _members(self, t: _Tracked) -> set[int]:
        """The pids of ``t``'s processes: its tracking group's (and its wrapper while it runs)."""
        root = self._root_pid(t) if t.leftovers_since is None else None
        found = tracker_for(t.group, self.tracker).members(t.group, root_pid=root) if t.group is not None else set()
        return found | ({root} if root is not None and self._wrapper_alive(t) else set())

    def _hold_writes(self, running: Sequence[Running]) -> None:
        """Look at what the running jobs write, from outside their account (:mod:`.outside_caps`, red30 R3), and
        stop each that must end: its wrapper is continued first (a stopped one hears nothing), the reason is its
        end's message and its log's last line, and what is left runs :data:`_OWN_STOP_GRACE_S` at most."""
        if not running:
            return
        for job_id, (what, why) in self.writes.look(running).items():
            t = self._jobs.get(job_id)
            if t is None or t.stopping:
                continue
            log.warning("job %s: %s", job_id, why)
            t.own_stop, t.folder_stop = why, what == "folder"
            pid = self._root_pid(t)
            if pid is not None and self._wrapper_alive(t) and t.launch_by is None:  # one that never began is not
                try:  # let go on (it would run the job): SIGTERM's default action ends even a stopped process
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass
            # one that never began has nothing to save, and a stopped process keeps SIGTERM pending: SIGKILL at once
            self.stop(job_id, grace_s=_OWN_STOP_GRACE_S if t.launch_by is None else 0.0, reason=why)

    def _held_at_end(self, t: _Tracked) -> None:
        """A job that ended: its log held to its cap once more (its wrapper may have been stopped or killed: then
        its last line is the stop's reason), told what its wrapper could not say of its end (:func:`_unsaid`), its
        folder, beside the engine (:mod:`.folder_cleaner`; red34 R2, red35 R1): run as another account, made the
        service's (:mod:`.sealing`), then emptied but for its log and records when it was stopped for what it held
        there (:mod:`.outside_caps`) or holds more than the wrapper's sweep keeps (a killed wrapper swept nothing);
        the job counted in its owner's total of kept logs once that is done."""
        self.writes.forget(t.job.id)
        cut = False
        if t.log_cap > 0:
            cut = _log_size(t) > t.log_cap + LINES_SLACK  # the wrapper's closing lines go with the cut
            cut_log(Running(job_id=t.job.id, wrapper_pid=None, job_dir=t.job_dir, owner_uid=t.owner_uid,
                            log_cap=t.log_cap, setting=self._cap_setting(t.log_cap)), t.log_cap)
        _append_log(t, _unsaid(t, cut=cut))
        # what its folder holds is its owner's to shape — tens of thousands of files written through a folder stop's
        # grace (red34 R2: removed here, 13 s of no scheduling), a tree of 100,000 folders renamed in at its last
        # instant by a job that killed its wrapper (red35 R1: sealed and tallied here, 14.6 s): never walked here
        self._cleaning[t.job.id] = t
        self._hand(t.job.id, t.job_dir, t.owner_uid, remove=t.folder_stop)

    def _readiness(self, t: _Tracked, now: float) -> list[ExecutorEvent]:
        """:class:`Ready` once a running service's own process listens on its port; :class:`NotReady`
        when a ready one's socket went away (checked every :data:`_READY_RECHECK_S`)."""
        port = t.job.spec.port
        if t.job.spec.kind is not JobKind.INFERENCE or not port:
            return []
        if not t.ready:
            # the job's own socket, not whatever answers (new user 8, N8: a second service on a
            # port the first one served read "ready" while it crash-looped on EADDRINUSE)
            if _port_open(port) and self._serves(t, port) in ("yes", "unknown"):
                if t.lost_listener is not None:
                    t.relistened = (now, t.lost_listener)
                t.ready, t.ready_checked_at, t.lost_listener = True, now, None
                t.listen_by = math.inf  # it listened: the start-up window is over (red team 17, R12)
                return [Ready(t.job.id, port)]
            if t.lost_listener is not None:
                return self._relisten(t, port, now)
            t.listen_by = now + self.listen_s if t.listen_by is None else t.listen_by
            serving = self._serves(t, port) if self.listen_s and now >= t.listen_by and not t.stopping else None
            if serving == "yes":
                t.listen_by = math.inf  # it listens, on an address other than 127.0.0.1: no squat
            elif serving is not None and serving != "searching":  # searching: told at a next look
                where = nowhere_reachable(port, others_there=t.port_owner.others_there)
                t.own_stop = (f"never listened on port {port} within {self.listen_s:.0f} s of its start {where}; "
                              "so it stopped holding the port others wait for, stopped (a declared port is held "
                              "only by a service that serves it)")
                self.stop(t.job.id, grace_s=5.0, reason=t.own_stop)
            return []
        if now - t.ready_checked_at < _READY_RECHECK_S:
            return []
        t.ready_checked_at = now
        serving = self._serves(t, port)
        if serving in ("yes", "searching") or (serving == "unknown" and _port_open(port)):
            if t.relistened is not None and now - t.relistened[0] >= self.relisten_s:
                t.relistened = None  # listening again for a whole window: a past loss no longer counts
            return []
        t.ready = False  # probed again from the next poll: Ready once it listens again
        back = t.relistened
        t.relistened = None
        # back only briefly: the time without listening counts from the earlier loss (R7)
        t.lost_listener = back[1] if back is not None and now - back[0] < self.relisten_s else \
            (now, datetime.now(timezone.utc))
        where = nowhere_reachable(port, others_there=t.port_owner.others_there)
        return [NotReady(t.job.id, port, f"nothing of the job listens on port {port} any more {where}")]

    def _relisten(self, t: _Tracked, port: int, now: float) -> list[ExecutorEvent]:
        """A service that did listen and stopped: stopped once it has not listened again within
        :attr:`relisten_s`, saying when it stopped (red team 17, R12: it was told it "never
        listened" 2 s after a re-bind past its first 10 minutes)."""
        assert t.lost_listener is not None
        since, seen_at = t.lost_listener
        if not self.relisten_s or now < since + self.relisten_s or t.stopping:
            return []
        serving = self._serves(t, port)
        if serving == "yes":
            t.lost_listener = None  # it listens, on an address other than 127.0.0.1
            return []
        if serving == "searching":  # told at a next look
            return []
        where = nowhere_reachable(port, others_there=t.port_owner.others_there)
        t.own_stop = (f"stopped listening on port {port} at {seen_at.strftime('%H:%M:%S')} UTC and did not "
                      f"listen again for {self.relisten_s:.0f} s together (brief listens do not count) {where}; "
                      "so it stopped holding the port others wait for, stopped (a declared port is held only by a "
                      "service that serves it)")
        self.stop(t.job.id, grace_s=5.0, reason=t.own_stop)
        return []

    def _serves(self, t: _Tracked, port: int) -> Answer:
        """Whether a process of the job listens on ``port`` (:mod:`.port_owner`: bounded work a look, red35 R4 —
        psutil's ``net_connections()`` of each process of its tree held the engine's thread a minute at a time; the
        kernel asked for the one port, red36 R1 — the host's listening table, any account's to fill, read each look
        held it 0.3-0.5 s)."""
        root = self._root_pid(t)
        if root is None:
            return "unknown"
        return t.port_owner.look(root, lambda: self._members(t), port)

    def _port_taken(self, t: _Tracked, ended: Exited) -> str | None:
        """Why a service that exited must not be restarted: its port is bound on this host by
        something that is not the job (nothing of the job is left once it ended) — ``port 18765 is
        already in use on vm`` and, where a job this executor runs declares the port, whose job (red
        team 15, R11: "restarted (restart 5)" and no cause, charged for the GPU meanwhile); None:
        restart it. Decided by a real bind of the port (:func:`_port_bound`), never from the log
        alone, whose text any client of the service writes (red team 16, R4: a ``GET /EADDRINUSE``
        switched the restarts off); the log's "address already in use" only says the exit was
        about the port, and a signal exit (an OOM kill, a crash) never is."""
        port = t.job.spec.port
        if not port or ended.exit_code < 0:
            return None
        tail = log_tail(t.job_dir / "output.log", owner_uid=t.owner_uid)
        if not any("address already in use" in line.lower() or "EADDRINUSE" in line for line in tail) \
                or not _port_bound(port):
            return None
        node = t.allocation.node if t.allocation is not None else "this host"
        other = next((o.job for o in self._jobs.values() if o is not t and o.job.spec.port == port
                      and o.job.spec.kind is JobKind.INFERENCE), None)
        # another user's job name quoted as every reason quotes it (red team 18, R5)
        by = "" if other is None else f" by {work_named(other.id, other.spec.name, other.spec.user)}"
        return f"port {port} is already in use on {node}{by}; not restarted: choose another port"

    def _should_restart(self, t: _Tracked, ended: Exited) -> bool:
        return (t.job.spec.kind is JobKind.INFERENCE and not t.stopping and ended.exit_code != 0
                and t.allocation is not None and t.restarts < self.max_service_restarts)

    def _restart(self, t: _Tracked) -> list[ExecutorEvent]:
        assert t.allocation is not None
        _close_control(t)
        try:
            fresh = self._spawn(t.job, t.allocation, t.run_as, restarts=t.restarts + 1)
        except ExecutorError as exc:
            del self._jobs[t.job.id]
            return [Exited(t.job.id, 127, datetime.now(timezone.utc), f"restart failed: {exc.message}")]
        fresh.lost_listener = t.lost_listener  # one that had listened is judged as such after its restart (R12)
        self._jobs[t.job.id] = fresh
        return [Started(t.job.id, fresh.handle, restarts=fresh.restarts)]

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False, reason: str = "") -> None:
        """Begin the stop plan (see module docstring); unknown jobs are ignored. ``reason`` (``cancelled
        by alice``) goes to the wrapper first, which writes it as the log's last line once the job
        has ended (issue 20, F15: a log cut off by a stop said nothing of why)."""
        t = self._jobs.get(job_id)
        if t is None or t.stopping:
            return
        now = self._monotonic()
        t.ended_before_stop = self._ended_on_its_own(t)
        self._look_at_stop(t)
        t.stopping, t.stop_words, t.stop_began = True, reason, now
        if reason:  # before any signal: the wrapper reads it once the job ended
            _tell_wrapper(t, {"stop": reason})
        grace = max(0.0, grace_s)
        if checkpoint_signal:
            t.plan = [(now, signal.SIGUSR1), (now + min(grace / 2, _CHECKPOINT_WAIT_MAX_S), signal.SIGTERM),
                      (now + grace, signal.SIGKILL)]
        else:
            t.plan = [(now, signal.SIGTERM), (now + grace, signal.SIGKILL)]
        self._advance_plan(t, now)

    def _look_at_stop(self, t: _Tracked) -> None:
        """What the service itself sees of ``t`` as its stop goes out (red40 R5): whether anything of the job runs besides
        its wrapper, and the end record there now where it says the command ended, before any signal and before now
        — the record is the owner's, so only what this look saw lets :func:`_own_end` believe its ``before_signal``."""
        root = self._root_pid(t)
        t.live_at_stop = bool(self._members(t) - {root or 0})
        self._take_report(t)
        t.command_at_stop = None if t.commands is None else any(
            _live_process(pid, started, uid=t.owner_uid) is not None for pid, started in t.commands)
        record = _exit_record(t)
        ended = _read_exit(t.job_dir, t.owner_uid) if record is not None and record.get("before_signal") is True \
            else None
        t.record_at_stop = ended if ended is not None and ended[1] <= datetime.now(timezone.utc) else None

    def _take_report(self, t: _Tracked) -> None:
        """Read the wrapper's report of its command (:func:`~.wrapper.report_commands`) once it came: kept in
        :attr:`_Tracked.commands` and in this service's record of the launch (a server that adopts the job reads it
        there; the job's folder is its owner's). Nothing while it has not come; an end without one leaves it unknown."""
        if t.report is None:
            return
        try:
            data = os.read(t.report, _REPORT_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        os.close(t.report)
        t.report = None
        try:
            # the wrapper runs where the job's owner can reach it: its report is read as another party's
            said = untrusted_json.loads(data.split(b"\n", 1)[0]) if data else None
        except ValueError:
            said = None
        t.commands = _commands_in(said.get("commands") if isinstance(said, dict) else None)
        record = self.dirs.read_record(t.job.id)
        if t.commands is not None and record is not None:
            self.dirs.write_record(t.job.id, {**record, "commands": [list(c) for c in t.commands]})

    def _ended_on_its_own(self, t: _Tracked) -> bool:
        """Whether ``t``'s work had already ended when a stop came: no process of its group left and its wrapper's
        end record there (the record is its owner's to write, so it counts only once nothing of the job runs)."""
        if t.group is not None and tracker_for(t.group, self.tracker).members(t.group):
            return False
        if t.group is None and t.popen is not None and t.popen.poll() is None:
            return False
        return _read_exit(t.job_dir, t.owner_uid) is not None

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        """See :meth:`Executor.logs`.

        Raises:
            NotFoundError: no output file for this job (it never started here), or the file is
                not one the service may show (a symlink, not the owner's).
        """
        record = self.dirs.read_record(job_id) or {}
        uid = record.get("uid") if isinstance(record.get("uid"), int) else None
        try:
            return read_log(self.log_path(job_id), offset, limit, owner_uid=uid)
        except FileNotFoundError:
            if record or job_id in self._jobs:
                return "", max(0, offset)  # started; its wrapper has not opened the log yet
            raise NotFoundError(f"no output for job {job_id} yet", field="job_id",
                                hint="the job has not started; try again once it runs") from None

    def pids(self) -> frozenset[int]:
        """Pids of every process of the jobs this executor watches (wrappers, descendants and
        every member of their job groups).

        The NVML inventory uses it to tell our GPU memory from foreign holders (case 014).
        Safe to call from another thread.
        """
        out: set[int] = set()
        for t in list(self._jobs.values()):
            root = self._root_pid(t)
            if t.group is not None and t.group.kind != "marker":
                # the wrapper is enrolled before it starts anything: its group holds it and all its descendants,
                out |= tracker_for(t.group, self.tracker).members(t.group)  # no walk of the host's processes per job
                continue  # (red37 R2's kind)
            if root:
                try:
                    process = psutil.Process(root)
                    out.add(root)
                    out.update(child.pid for child in process.children(recursive=True))
                except psutil.Error:
                    pass
        return frozenset(out)

    def detach(self) -> None:
        """Forget every job without signalling it (they keep running; the next server adopts them). Folders
        still being cleaned (:class:`.folder_cleaner.FolderCleaner`) are waited for, up to
        :data:`CLEAN_WAIT_S`: a stopping service leaves none half sealed."""
        for t in self._jobs.values():
            self._take_report(t)  # kept in the record for the server that adopts it
            _close_control(t)
        self._jobs.clear()
        self.writes.forget()
        if not self.settle(CLEAN_WAIT_S):
            log.warning("stopping with job folders still being cleaned: %s", ", ".join(sorted(self._cleaning)))

    # -- internals ---------------------------------------------------------------------------------

    def _root_pid(self, t: _Tracked) -> int | None:
        if t.popen is not None:
            return t.popen.pid
        return t.process.pid if t.process is not None else None

    def _wrapper_alive(self, t: _Tracked) -> bool:
        if t.popen is not None:
            return t.popen.poll() is None
        return t.process is not None and _alive(t.process)

    def _advance_plan(self, t: _Tracked, now: float) -> None:
        while t.plan and t.plan[0][0] <= now:
            _, signum = t.plan.pop(0)
            log.info("job %s: sending %s to its processes", t.job.id, signum.name)
            self._signal(t, signum)

    def _signal(self, t: _Tracked, signum: signal.Signals) -> None:
        """``signum`` to the job's process group and to every job-group member outside it, which are first
        named to the wrapper (the log's lines after the stop's words; newuser30 n16)."""
        root = self._root_pid(t)
        self._note_signal(t, "stop", signum, self._members(t) - {root or 0}, began=t.stop_began)
        if signum == signal.SIGKILL and root is not None and self._wrapper_alive(t) and not t.wrapper_at_kill:
            t.wrapper_at_kill = "stopped" if _is_stopped(root) else "running"  # whose its SIGKILL end is (red40 R5)
        pgid = _killpg(t, signum)
        if t.group is None:
            return
        tracker = tracker_for(t.group, self.tracker)
        root = self._root_pid(t) if self._wrapper_alive(t) else None
        if signum == signal.SIGKILL:
            tracker.kill(t.group, root_pid=root)
            return
        for pid in tracker.members(t.group, root_pid=root):
            try:
                if pgid is None or os.getpgid(pid) != pgid:
                    os.kill(pid, signum)
            except (ProcessLookupError, PermissionError):
                continue

    def _note_signal(self, t: _Tracked, why: str, signum: signal.Signals, pids: set[int], *,
                     began: float | None) -> None:
        """Name the processes ``pids`` about to get ``signum`` (``why``: ``"stop"``, a stop's plan; ``"wrapper"``,
        what a gone wrapper left) in a record of :attr:`_Tracked.signalled`, told to a live wrapper first, which
        writes it after the stop's words (:func:`~.wrapper.signal_lines`; newuser30 n16). A process already
        named for this signal is not named again; nothing when none is left to name."""
        fresh = sorted(pid for pid in pids if (why, signum.name, pid) not in t.named)
        named: list[tuple[int, str]] = []
        looked = 0
        for pid in fresh:  # at most LISTED named, the rest counted unread: each read is the owner's size (red36 R2)
            if len(named) >= _wrapper.LISTED:
                break
            looked += 1
            if (cmd := _command_line(pid)) is not None:
                named.append((pid, cmd))
        if not named:
            return
        t.named.update((why, signum.name, pid) for pid, _ in named)
        t.named.update((why, signum.name, pid) for pid in fresh[looked:])  # counted: not named again next look
        found = [[pid, cmd] for pid, cmd in named]
        after = round(self._monotonic() - began, 1) if began is not None else 0.0
        record: dict[str, Any] = {"why": why, "signal": signum.name, "after_s": after,
                                  "processes": found, "more": len(fresh) - looked}
        while len(json.dumps(record, ensure_ascii=False).encode()) > _RECORD_BYTES and record["processes"]:
            record["processes"] = record["processes"][:-1]  # one write, whole (PIPE_BUF): the FIFO's too
            record["more"] += 1
        t.signalled.append(record)
        if why == "stop" and self._wrapper_alive(t):
            _tell_wrapper(t, record)

    def _ended(self, t: _Tracked, now: float) -> Exited | Lost | None:
        ended = self._end_of(t, now)
        if ended is not None:
            self._forget_groups(t)
        return ended

    def _end_of(self, t: _Tracked, now: float) -> Exited | Lost | None:
        if self._wrapper_alive(t):
            t.seen_running_at = datetime.now(timezone.utc)
            return None
        if t.group is not None:
            tracker = tracker_for(t.group, self.tracker)
            if members := tracker.members(t.group):
                t.seen_running_at = datetime.now(timezone.utc)  # its leftovers still hold the GPUs
                if t.stopping or (t.leftovers_since is not None and now - t.leftovers_since >= self.leftover_grace_s):
                    stop = t.stop_began is not None  # else an adopted job's wrapper was found gone (adopt)
                    self._note_signal(t, "stop" if stop else "wrapper", signal.SIGKILL, members,
                                      began=t.stop_began if stop else t.leftovers_since)
                    tracker.kill(t.group)
                elif t.leftovers_since is None:
                    log.info("job %s: its command ended; stopping what it left running", t.job.id)
                    self._note_signal(t, "wrapper", signal.SIGTERM, members, began=now)
                    tracker.signal(t.group, signal.SIGTERM)
                t.leftovers_since = now if t.leftovers_since is None else t.leftovers_since
                return None  # GPUs are freed only once nothing of the job is left
        code = t.popen.poll() if t.popen is not None else None
        ended = _read_exit(t.job_dir, t.owner_uid)
        if ended is not None:
            self.dirs.drop_empty_err(t.job.id)  # it said nothing: one inode fewer kept per job (red team 26, R4)
            message = _said_killed(t, _exit_message(ended[0], t, self.log_disk, self.job_python, self.python))
            return Exited(t.job.id, ended[0], _observed_end(ended[1], t.seen_running_at), message,
                          claimed=t.seen_running_at is None, before_stop=_own_end(t))
        early = self.dirs.start_error(t.job.id)
        if code is not None:  # our child, but the wrapper failed or was killed before recording the job's end
            return Exited(t.job.id, code, datetime.now(timezone.utc),
                          _said_killed(t, _exit_message(code, t, self.log_disk, self.job_python, self.python) + (
                              f": {printable_line(early.splitlines()[-1], limit=300)}" if early else "")))
        return Lost(t.job.id, f"process {t.handle.data.get('pid')} ended and left no exit code")


def _log_account(run_as: RunAs) -> str:
    """Whose total of kept logs a job counts in (:mod:`.log_budget`): its OS account ("": the service's own)."""
    return (run_as.account or "") if run_as.switches else ""


def _home_relative(working_dir: str, run_as: RunAs) -> str:
    """``~`` and ``~/path`` (sent by magics through a hub) resolved against the owner's home."""
    if working_dir != "~" and not working_dir.startswith("~/"):
        return working_dir
    home = run_as.home if run_as.switches else os.path.expanduser("~")
    return (home or "/") + working_dir[1:]


def own_identity(env: Mapping[str, str]) -> dict[str, str]:
    """``USER``, ``LOGNAME`` (this process's account, always) and — where ``env`` lacks them — ``HOME``
    and ``SHELL`` (the account's entry, else ``/`` and ``/bin/sh``) of an embedded job, which runs as the
    service's own account: as login(1), sshd and Slurm set them (newuser28 N7: a server started with no
    ``USER`` gave its jobs none, so a launcher's ``/scratch/$USER/run1`` was ``/scratch//run1``). A hub's
    job gets the owner's in :func:`~.runas.clean_environment`. Empty where the uid has no name."""
    try:
        entry = pwd.getpwuid(os.geteuid())
    except KeyError:
        return {}
    said = {"USER": entry.pw_name, "LOGNAME": entry.pw_name}
    if not env.get("HOME"):
        said["HOME"] = entry.pw_dir or "/"
    if not env.get("SHELL"):
        said["SHELL"] = entry.pw_shell or "/bin/sh"
    return said


def _shell(run_as: RunAs) -> str | None:
    if not run_as.account:
        return None
    try:
        return pwd.getpwnam(run_as.account).pw_shell or None
    except KeyError:
        return None


def _run_as_from(raw: object, job: Job) -> RunAs:
    if isinstance(raw, dict) and raw.get("account"):
        groups = raw.get("groups") or ()
        return RunAs(user=str(raw.get("user") or job.spec.user), account=str(raw["account"]),
                     uid=raw.get("uid") if isinstance(raw.get("uid"), int) else None,
                     gid=raw.get("gid") if isinstance(raw.get("gid"), int) else None,
                     groups=tuple(int(g) for g in groups if isinstance(g, int)),
                     home=raw.get("home") if isinstance(raw.get("home"), str) else None)
    return embedded_run_as(job)


_NOT_IN_HANDLE = frozenset({"uid", "spec", "attempts", "submitted_at"})
"""Launch-record keys a handle built from it leaves out: the spec (its env, carried source) is the job row's,
never copied into the stored handle."""


def _recorded_job(job_id: str, record: Mapping[str, Any]) -> Job:
    """The pending job a launch record describes (:meth:`LocalExecutor.live_unknown`)."""
    raw, run_as = record.get("spec"), record.get("run_as")
    submitted = record.get("submitted_at")
    try:
        when = parse_utc(submitted, field="submitted_at") if isinstance(submitted, str) else None
    except (SchedError, ValueError):
        when = None
    if isinstance(raw, Mapping):
        try:
            attempts = record.get("attempts")
            return Job(id=job_id, spec=spec_from_dict(raw), submitted_at=when,
                       attempts=attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else 0)
        except (KeyError, TypeError, ValueError):
            pass
    user = str(run_as.get("user") or run_as.get("account") or "") if isinstance(run_as, Mapping) else ""
    return Job(id=job_id, spec=JobSpec(name="(not in this store: launched before its spec was recorded)", user=user),
               submitted_at=when)


_WRAPPER_HEAD_BYTES = 4096
"""Bytes of a process's command line read to see whether it is a wrapper (``python -I /dev/fd/N --leftover-grace … --job-dir D
--launch --``: its own arguments come first and are the service's, a few hundred bytes; red36 R3)."""
_WRAPPER_ARGV_BYTES = 256 * 1024
"""Bytes read of a wrapper started as ``python -I -c <its source>`` (no ``memfd_create``, or an older version's: ~60 KB of
source before its arguments) — only for processes whose first arguments are ``-I -c`` and a wrapper's source start."""
_WRAPPER_SOURCE_START = '"""Tiny supervisor that runs one job\'s command'
"""How every version's wrapper source begins (its docstring's first words): a ``-I -c`` process whose code does not
is not read further (a job's own ``python -I -c`` with a 2 MB argv costs one 4 KiB read, not 256 KiB)."""


def _wrapper_args(pid: int) -> list[str] | None:
    """``pid``'s wrapper arguments (its command line up to the ``--`` before the job's argv, each whole) when its first
    bytes can be a wrapper's, else None (not one, gone, unreadable). At most :data:`_WRAPPER_HEAD_BYTES` read, or
    :data:`_WRAPPER_ARGV_BYTES` of a ``-I -c`` process: never the job's own argv, whatever its size (red36 R3)."""
    for most in (_WRAPPER_HEAD_BYTES, _WRAPPER_ARGV_BYTES):
        try:
            argv = _wrapper.read_argv(pid, most)
        except OSError:
            return None
        if "--" in argv:
            return argv[:argv.index("--")]
        if argv[1:3] != ["-I", "-c"] or not argv[3:] or not argv[3].startswith(_WRAPPER_SOURCE_START):
            return None
    return None


def _candidate_pids(tracker: ProcessTracker) -> list[int]:
    """Pids that can be a wrapper: the members of the job groups under a cgroup tracker's folder (a wrapper is enrolled
    before it starts anything; processes outside the scheduler are never read — red36 R3), else every process."""
    if isinstance(tracker, CgroupTracker):
        pids: set[int] = set()
        with contextlib.suppress(OSError):
            for child in tracker.base.iterdir():
                with contextlib.suppress(OSError):
                    pids.update(int(p) for p in (child / "cgroup.procs").read_text().split() if p.isdigit())
        return sorted(pids)
    return psutil.pids()


def _wrapped_job_ids(tracker: ProcessTracker) -> list[str]:
    """Job ids named by the ``--job-dir`` argument of live wrappers (:func:`_candidate_pids`, :func:`_wrapper_args`),
    sorted."""
    ids: set[str] = set()
    for pid in _candidate_pids(tracker):
        args = _wrapper_args(pid)
        if args and "--job-dir" in args and args.index("--job-dir") + 1 < len(args):
            name = Path(args[args.index("--job-dir") + 1]).name
            if name and not name.startswith("."):
                ids.add(name)
    return sorted(ids)


def _argv_of(pid: int) -> tuple[str, ...]:
    """The job's argv from its wrapper's command line (``… --launch -- ARGV``); () when unreadable."""
    try:  # bounded: the wrapper's arguments and the job's, cut at 256 KiB in all (red36 R3)
        cmdline = _wrapper.read_argv(pid, _WRAPPER_ARGV_BYTES)
    except OSError:
        return ()
    return tuple(cmdline[cmdline.index("--") + 1:]) if "--" in cmdline else ()


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


_REPORT_BYTES = 4096
"""Most bytes of the wrapper's report read (:func:`~.wrapper.report_commands`: a gang's workers fit many times over)."""


def _commands_in(raw: object) -> list[tuple[int, float]] | None:
    """The ``[[pid, start time], …]`` of a wrapper's report or the service's record, checked; None: none or malformed."""
    if not isinstance(raw, list) or len(raw) > _REPORT_BYTES // 8:
        return None
    found: list[tuple[int, float]] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int and item[0] > 0
                and isinstance(item[1], (int, float)) and not isinstance(item[1], bool) and math.isfinite(item[1])):
            return None
        found.append((item[0], float(item[1])))
    return found


def _live_process(pid: int, create_time: Any, *, uid: int | None = None) -> psutil.Process | None:
    """The process ``pid`` if it still runs *and* is the same process (create time matches,
    and it runs as ``uid`` when given: a forged wrapper file cannot point at someone else's pid)."""
    if pid <= 0:
        return None
    try:
        process = psutil.Process(pid)
        if create_time is not None and abs(process.create_time() - float(create_time)) > _CREATE_TIME_TOLERANCE_S:
            return None  # the pid was reused by another process
        if uid is not None and process.uids().real != uid:
            return None
    except (psutil.Error, TypeError, ValueError):
        return None
    return process if _alive(process) else None


_RECORD_BYTES = 4000
"""Most bytes of one record told to a wrapper (under ``PIPE_BUF``, 4096: a FIFO's write is then whole)."""


def _launch_file(launch: str) -> int | None:
    """An in-memory file (``memfd_create``, close-on-exec: passed to the wrapper alone) holding ``launch``, read from
    its start; None where there is none (then the line goes down the pipe, written as it drains)."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is None:
        return None
    try:
        fd: int = memfd_create("jupyter_sched_launch.json", os.MFD_CLOEXEC)
    except OSError:
        return None
    data = launch.encode()
    try:
        while data:
            data = data[os.write(fd, data):]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        return None
    return fd


def _as_account(run_as: RunAs) -> str:
    """`` as account NAME (uid N)`` of a job run as another account, for the words of its end; "" embedded."""
    return f" as account {run_as.account} (uid {run_as.uid})" if run_as.switches else ""


def _unread(fd: int) -> int:
    """Bytes in the pipe ``fd`` (either end) its reader has not read yet (``FIONREAD``); 0 where it cannot be told."""
    import array
    import termios

    count = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, count, True)
    except OSError:
        return 0
    return int(count[0])


def _write_some(fd: int, data: bytes) -> bytes | None:
    """Write what the non-blocking pipe ``fd`` takes of ``data`` now; the rest (b"": all written), or None when the
    reader is gone."""
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            return data
        except OSError:
            return None
    return b""


def _tell_wrapper(t: _Tracked, message: Mapping[str, Any]) -> None:
    """Send ``message`` (one JSON line: a stop's words, a record of a signal) to the job's wrapper, before the
    signal it is about: down its pipe, or for an adopted job through its FIFO (:func:`_stop_by_fifo`). A wrapper
    that is gone or whose pipe is full is not told (its log is told from outside at the end: :func:`_unsaid`)."""
    if t.launch_left:  # its launch line is not all written: a line now would land inside it (red32 R7)
        log.debug("job %s: its wrapper has not read its launch; not told", t.job.id)
        return
    try:
        line = (json.dumps(message, ensure_ascii=False) + "\n").encode()
        if t.control is not None:
            os.write(t.control.fileno(), line)
        else:  # adopted after a restart (new user 19, N3)
            _stop_by_fifo(t, line)
    except OSError:
        log.debug("job %s: %s did not reach its wrapper", t.job.id, "the stop's reason" if "stop" in message
                  else f"the record of its {message.get('signal')}")


def _command_line(pid: int) -> str | None:
    """``pid``'s command line as a job's log shows it (:func:`~.wrapper.command_text`); None when it is gone."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        argv = _wrapper.read_argv(pid)  # its first COMMAND_BYTES only: psutil reads all of it (red36 R2)
        return _wrapper.command_text(argv) if argv else _wrapper.command_text([f"[{process.name()}]"])
    except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
        return None
    except (psutil.Error, OSError):
        return "?"


def _exit_record(t: _Tracked) -> dict[str, Any] | None:
    """The wrapper's ``exit.json`` (the owner's file: each value is checked where it is read); None: none."""
    return read_untrusted_json(t.job_dir / "exit.json", owner_uid=t.owner_uid)


def _own_end(t: _Tracked, record: dict[str, Any] | None = None) -> bool:
    """Whether ``t`` ended on its own, not by a stop (:attr:`~.base.Exited.before_stop`): no stop came, or it had ended
    when the stop came (:meth:`LocalExecutor.stop`), or its wrapper saw its command end before any signal reached it
    (``exit.json``'s ``before_signal``, decided by the wrapper at the command's end: red39 R2 — a stop that came while
    the wrapper still wrote its record or ended the leftovers was taken for the job's end).

    The flag is in the owner's file, which the job can write too, after killing its wrapper (red40 R5: a job that on
    SIGTERM killed its wrapper and wrote ``before_signal: true`` turned an admin's cancel into "succeeded … it had
    ended before the cancel reached it"). So it is believed only where what the service saw agrees: the wrapper was
    not killed by anything but the stop (:func:`_wrapper_killed`), and either the stop found nothing of the job alive
    besides its wrapper, or the same record — an end before the stop — was already there when the stop came and the
    command itself (its wrapper's report: :attr:`_Tracked.commands`) no longer ran (:meth:`LocalExecutor._look_at_stop`;
    s41: a record the job wrote at its start, with its command running on past the stop's SIGTERM, or in a job a
    restarted server adopted, whose wrapper is not its child — verify40 V2 — was taken for its end). Otherwise the stop
    that signalled its processes ended it."""
    if not t.stopping or t.ended_before_stop:
        return True
    record = _exit_record(t) if record is None else record
    if record is None or record.get("before_signal") is not True or _wrapper_killed(t) is not None:
        return False
    if not t.live_at_stop:
        return True  # its command had ended: only the wrapper ran when the stop went out
    return t.command_at_stop is False and t.record_at_stop is not None and \
        _read_exit(t.job_dir, t.owner_uid) == t.record_at_stop


def _wrapper_killed(t: _Tracked) -> str | None:
    """How ``t``'s wrapper was kept from recording its job's end where the service did not do it — its job can (the
    same account): ``killed (SIGKILL, not by the service)``, or ``stopped (SIGSTOP, not by the service) until the
    stop's SIGKILL``; then its ``exit.json`` is the job's own word (red40 R5). None: it ended by itself or by the
    stop's SIGKILL while it ran, or it is not this service's child (adopted after a restart: how it ended is not seen)."""
    code = t.popen.returncode if t.popen is not None else None
    if code is None or code >= 0:
        return None
    if code == -signal.SIGKILL and t.wrapper_at_kill == "running":
        return None
    if code == -signal.SIGKILL and t.wrapper_at_kill == "stopped":
        return "stopped (SIGSTOP, not by the service) until the stop's SIGKILL"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"killed ({name}, not by the service)"


def _killed_words(killed: str, recorded: bool) -> str:
    """What a wrapper its job killed (:func:`_wrapper_killed`) leaves of the job's end: the end record there is the
    job's own word; with none, it was killed before it recorded the job's end (s41: which of the two a stop finds is a
    race the job runs — its record written before or after the service looks — and each is said as it is)."""
    return f"its wrapper was {killed}, so its end record is the job's own" if recorded else \
        f"its wrapper was {killed} before it recorded the job's end"


FORGED_BEFORE_STOP = "its end record was there before the stop while its command still ran, so it is the job's own"
"""Said of an end record :func:`_forged_before_stop` (s41)."""


def _forged_before_stop(t: _Tracked) -> bool:
    """Whether ``t``'s end record is one the job wrote itself before a stop while its command ran on: the same record
    was there when the stop came (:attr:`_Tracked.record_at_stop`, an end before any signal) and the command itself
    still ran then (:attr:`_Tracked.command_at_stop`) — its wrapper writes its record only once the command ended
    (s41: a record written at the start by a job that then ignored SIGTERM; verify40 V2, a job adopted after a
    restart: its wrapper's death is not seen)."""
    return t.stopping and t.command_at_stop is True and t.record_at_stop is not None and \
        _read_exit(t.job_dir, t.owner_uid) == t.record_at_stop


def _said_killed(t: _Tracked, message: str) -> str:
    """``message`` (how the job ended) with, where its wrapper was killed by its job (:func:`_wrapper_killed`) and it left
    an end record or a stop was under way, the words :func:`_killed_words` says — or, where the record there is one the
    job wrote before the stop (:func:`_forged_before_stop`), :data:`FORGED_BEFORE_STOP` — before its quoted last lines;
    the service's log says it too (red40 R5)."""
    killed = _wrapper_killed(t)
    recorded = _exit_record(t) is not None
    if killed is not None and (recorded or t.stopping):  # with no stop, "its wrapper ended and left …" says it
        log.warning("job %s: its wrapper was %s; %s", t.job.id, killed,
                    "its end record (exit.json) is the job's own" if recorded else "it recorded no end of the job")
        words = _killed_words(killed, recorded)
    elif killed is None and _forged_before_stop(t):
        log.warning("job %s: %s", t.job.id, FORGED_BEFORE_STOP)
        words = FORGED_BEFORE_STOP
    else:
        return message
    head, sep, tail = split_log_quote(message)
    return f"{head}; {words}{sep}{tail}"


def _is_stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (``T``/``t``: SIGSTOP, a tracer); False where it cannot be read."""
    try:
        return psutil.Process(pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
    except psutil.Error:
        return False


def _log_size(t: _Tracked) -> int:
    try:
        return os.lstat(t.job_dir / "output.log").st_size
    except OSError:
        return 0


def _unsaid(t: _Tracked, *, cut: bool = False) -> list[str]:
    """What the job's log lacks of its end (newuser30 n16): the records of the signals sent after those its
    wrapper wrote (its ``exit.json``'s ``said``; all where the log was ``cut`` at the end or the wrapper wrote
    no ``exit.json``: it was killed first, as by a stop's SIGKILL), then the stop's words where it did not write
    them (``worded``), the log's last line (issue 20, F15). A wrapper killed by its job (:func:`_wrapper_killed`) wrote
    neither: its ``exit.json``'s ``said`` and ``worded`` are the job's word, not counted, and the log says so (red40 R5)."""
    killed = _wrapper_killed(t)
    forged = killed is None and _forged_before_stop(t)  # its said/worded are the job's word too (s41)
    record = None if cut or killed is not None or forged else _exit_record(t)
    said = 0 if record is None else min(_wrapper.count_in(record.get("said")), len(t.signalled))
    # a wrapper from before newuser30 n16 wrote the words before its exit.json, and no "worded"
    worded = record is not None and record.get("worded", True) is True
    # a stop that came after the job's own end did not end it: "cancelled by …" / "… waits in the queue again" would
    # lie (red39 R2, R11); what its signals reached (leftovers) is still said
    words = "" if t.stopping and _own_end(t, _exit_record(t) if record is None else record) else \
        t.stop_words or t.own_stop
    own = [] if killed is None else [f"[jupyter_sched] the job's wrapper was {killed}: its end record (exit.json) is "
                                     "the job's own"] if _exit_record(t) is not None else \
        [f"[jupyter_sched] the job's wrapper was {killed} before it recorded the job's end"] if t.stopping else []
    own += [f"[jupyter_sched] the job's {FORGED_BEFORE_STOP.removeprefix('its ')}"] if forged else []
    return [line for sent in t.signalled[said:] for line in _wrapper.signal_lines(sent)] + own + \
        ([f"[jupyter_sched] {printable_line(words, limit=500)}"] if words and not worded else [])


def _append_log(t: _Tracked, lines: Sequence[str]) -> None:
    """Write ``lines`` at the end of the ended job's log, from outside (no link followed, only the owner's file,
    as :func:`~.outside_caps.cut_log` cuts it): what the wrapper, killed by the stop, could not."""
    if not lines:
        return
    try:
        fd = open_untrusted(t.job_dir / "output.log", owner_uid=t.owner_uid, write=True)
    except OSError:
        return
    try:
        size = os.fstat(fd).st_size
        joined = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        os.pwrite(fd, (("\n" if joined else "") + "\n".join(lines) + "\n").encode(), size)
    except OSError:
        pass
    finally:
        os.close(fd)


def _with_signalled(ended: ExecutorEvent, t: _Tracked) -> ExecutorEvent:
    """``ended`` (an :class:`Exited` or :class:`Lost`) with what its end signalled said after its words
    (:func:`.outcome.stopped_processes`: the processes the job left running, those a stop signalled)."""
    record = _exit_record(t)
    left = record.get("left") if record is not None else None
    said = stopped_processes(left if isinstance(left, dict) else None, t.signalled,
                             gang=record.get("gang") if record is not None else None)
    if not said:
        return ended
    if isinstance(ended, Exited):
        # before the log's last lines, so that they stay the message's end (wording.jobs reads them there)
        head, sep, tail = split_log_quote(ended.message)
        return replace(ended, message=f"{head}; {said}{sep}{tail}" if head else said)
    if isinstance(ended, Lost):
        return replace(ended, reason=f"{ended.reason}; {said}" if ended.reason else said)
    return ended


def _stop_by_fifo(t: _Tracked, line: bytes) -> None:
    """Send a stop's ``line`` to the wrapper of a job this server adopted (its pipe died with the
    server that spawned it; new user 19, N3) through the wrapper's :data:`~.wrapper.STOP_FIFO`: opened
    without following a link and without waiting for a reader, and written only when it is a FIFO
    of the job's owner — the owner may put anything in its place, which is then left untouched.

    Raises:
        OSError: no FIFO there, or no wrapper reading it (a wrapper older than the FIFO).
    """
    fd = open_fd(t.job_dir / _wrapper.STOP_FIFO, os.O_WRONLY | os.O_NOFOLLOW, kind="fifo")
    try:
        st = os.fstat(fd)
        owner = t.owner_uid if t.owner_uid is not None else os.getuid()
        if not stat.S_ISFIFO(st.st_mode) or st.st_uid != owner:
            raise OSError(f"{_wrapper.STOP_FIFO} is not the wrapper's FIFO")
        os.write(fd, line)
    finally:
        os.close(fd)


def _close_control(t: _Tracked) -> None:
    """Close the wrapper's stdin (see :attr:`_Tracked.control`) and the report pipe (:attr:`_Tracked.report`)."""
    if t.report is not None:
        with contextlib.suppress(OSError):
            os.close(t.report)
        t.report = None
    if t.control is not None:
        try:
            t.control.close()
        except OSError:
            pass
        t.control = None


def _killpg(t: _Tracked, signum: signal.Signals) -> int | None:
    """Signal the job's process group; the group id, or None when it is not (or no longer) ours."""
    pgid = int(t.handle.data.get("pgid") or t.handle.data.get("pid") or 0)
    if pgid <= 0:
        return None
    if t.popen is None and (t.process is None or not _alive(t.process)):
        # adopted group whose leader is gone: the pgid may belong to someone else by now
        return None
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
    return pgid


def _read_exit(job_dir: Path, owner_uid: int | None) -> tuple[int, datetime] | None:
    data = read_untrusted_json(job_dir / "exit.json", owner_uid=owner_uid)
    if data is None:
        return None
    try:
        code = int(data["exit_code"])
        ended = parse_utc(data["finished_at"], field="finished_at")
    except (ValueError, KeyError, TypeError, OverflowError, SchedError):  # in the owner's directory: untrusted
        return None
    if not _EXIT_CODE_MIN <= code <= _EXIT_CODE_MAX:
        # a forged 10**30 failed every write of the job's end (integer out of range), and the engine
        # retried the store for everyone's work without end (red team 6): taken as no exit code
        return None
    return code, ended


def _observed_end(claimed: datetime, seen_running_at: datetime | None) -> datetime:
    """The end of a job this service watched: the time its ``exit.json`` claims, but never before
    the service last saw the job running nor after now. The file is written in a directory its
    owner controls (in hub mode by the owner's own wrapper process, which the job can kill first):
    a claimed ``finished_at`` of 2000-01-01 made a 20 s run on 2 GPUs cost 0.3 s of usage, so fair
    share, budgets and reports charged nothing (red-team 5 finding 3). A job no service of ours saw
    running (``seen_running_at`` None: it ended while the service was down) keeps the claim, sent as
    :attr:`~.base.Exited.claimed`: the engine bounds it below by the last time any service saw it
    running, which the store keeps (red33 R3: a 2-GPU run of 92 s across a restart was charged 1 s)."""
    end = min(claimed, datetime.now(timezone.utc))
    return max(end, seen_running_at) if seen_running_at is not None else end


def _exit_message(code: int, t: _Tracked, disk: LogDisk, job_python: str | None = None, own_python: str | None = None) -> str:
    """How the job ended, in one sentence: the notebook runner's reason, else the exit code or
    signal and the last lines of the log (:func:`.outcome.describe_exit`, case 028), read only
    from files the job's owner owns; a failed run on a full log disk says so first (hubadmin25 B15). ``job_python``:
    the interpreter a bare ``python`` runs for a job run as its owner's account (the hub's job Python): named
    as that, which its users cannot install into (newuser31 N11). ``own_python``: the service's, which runs a script
    job not run as another account (:func:`job_argv`); a script job is told which Python ran it, so that its import's
    hint can look in it (newuser33 N1: the panel's Script jobs and ``--script`` got no "did you mean numpy?")."""
    oom = t.limits.oom_kills() if t.limits is not None else None
    python = _python_of(t.job.spec)
    shared = python is not None and "/" not in python and t.run_as.switches and job_python is not None
    python = job_python if shared else python
    if t.job.spec.script and not t.job.spec.notebook:  # run by the Python job_argv was given (_spawn)
        shared = t.run_as.switches and job_python is not None
        python = job_python if shared else own_python
    full = disk.failed_run(t.job_dir) if code != 0 and not t.stopping else None
    # where a module of the user's own is looked for first: its import's fix names it (newuser36 n3)
    argv, cwd = t.handle.data.get("argv"), t.handle.data.get("cwd")
    folder = first_on_path([str(w) for w in argv], str(cwd)) if isinstance(argv, list) and isinstance(cwd, str) else None
    return (f"{full}; " if full else "") + describe_exit(code, job_dir=t.job_dir, log=t.job_dir / "output.log", stopped=t.stopping,
                         owner_uid=t.owner_uid, oom_kills=oom,
                         memory_limit_mib=t.limits.memory_limit_mib if t.limits is not None else 0,
                         python=python, shared_python=shared, folder=folder,
                         cwd=str(cwd) if isinstance(cwd, str) else None)


def _python_of(spec: JobSpec) -> str | None:
    """The interpreter a command job runs when its program is a Python (``/…/bin/python3``), else None."""
    program = spec.command[0] if spec.command and not spec.script and not spec.notebook else ""
    return program if re.fullmatch(r"python(\d+(\.\d+)?)?", program.rsplit("/", 1)[-1]) else None


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.05):
            return True
    except OSError:
        return False
