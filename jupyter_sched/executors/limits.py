"""Per-job limits of the local executor: which GPUs a job may open, how many processes it may have
and how much memory it may use (red team 15, R1 and R9; Slurm's ``task/cgroup`` with
``ConstrainDevices=yes``).

``CUDA_VISIBLE_DEVICES`` only tells a well-behaved program which GPUs to use: a job that sets it
again (or a 0-GPU job) opens every ``/dev/nvidiaN`` of the host, which a stock driver makes mode
0666. On cgroup v1 each job therefore gets, beside its tracking group (:mod:`.tracking`), a group
``<hierarchy>/jupyter_sched/<group name>`` in each of these hierarchies, and its wrapper joins them
before it starts anything, so every process of the job, daemonised or not, is in them:

=========  ===============================================================================
devices    Only GPUs are fenced (Slurm's semantics; every other device stays allowed): every
           NVIDIA GPU minor (major 195, minors 0..253) that is not the job's is denied ``rwm``
           — neither opened nor ``mknod``-ed, even by a job that runs as root.
           ``nvidiactl`` (195:255), ``nvidia-modeset`` (195:254), ``nvidia-uvm`` and
           ``nvidia-caps`` (majors of their own) stay allowed: CUDA needs them. A job on a MIG
           slice is allowed its parent GPU, so slices of one GPU are told apart by
           ``CUDA_VISIBLE_DEVICES`` only.
pids       ``pids.max`` = ``c.SchedApp.job_pids_max`` (default 4096): a fork bomb gets
           ``EAGAIN`` at that many processes and threads instead of taking the host down.
memory     ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes`` where swap is
           accounted) = the job's ``memory_mib`` times its workers here, else
           ``c.SchedApp.job_memory_mib`` (default 0 = none). The group exists without a limit
           too: its OOM counter (``oom_kill`` in ``memory.oom_control``) is what says a
           SIGKILL came from the out-of-memory killer (R15).
=========  ===============================================================================

A GPU's minor is what the driver says (``Device Minor`` in
``/proc/driver/nvidia/gpus/*/information``), else its index in the inventory (simulated GPUs).

On cgroup v2, ``pids.max`` and ``memory.max`` are written into the job's tracking group when
those controllers can be enabled for it; a devices fence there needs a BPF device program, which
this executor does not load. Without a devices controller, GPUs are fenced by the environment
only (:func:`LocalLimits.summary` says so; ``jupyter-sched doctor`` and the service's start-up log
print it). Nothing here fails a job: a limit that cannot be set is logged and left out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..safefd import open_fd
from .tracking import CGROUP_ROOT, JobGroup, writable_group

__all__ = ["CAP_SYS_RESOURCE", "JOB_OOM_SCORE_ADJ", "NVIDIA_MAJOR", "OOM_FLOOR_FIX", "LimitGroups", "LocalLimits",
           "driver_minors", "holds_cap_sys_resource", "minor_resolver", "oom_floor_problem", "oom_floor_warning",
           "open_gpu_minors",
           "processes_of"]

log = logging.getLogger(__name__)

NVIDIA_MAJOR = 195
"""Character-device major of ``/dev/nvidiaN`` (minor N), ``nvidia-modeset`` (254), ``nvidiactl`` (255)."""
JOB_OOM_SCORE_ADJ = 500
"""Every local job process's ``oom_score_adj`` (-1000 to 1000; the service's own stays 0): out of memory,
the kernel picks a job first (red team 26, R7; as systemd's ``OOMScoreAdjust`` for a daemon's workers).
Set by :class:`~.local.LocalExecutor` on each wrapper before its launch. It is a floor the job cannot go below
(``oom_score_adj_min``) only when the writer holds ``CAP_SYS_RESOURCE`` (:func:`oom_floor_problem`)."""
CAP_SYS_RESOURCE = 24
"""The capability's bit in ``/proc/<pid>/status``'s ``CapEff`` (linux/capability.h)."""
OOM_FLOOR_FIX = ("grant this service CAP_SYS_RESOURCE (systemd: AmbientCapabilities=CAP_SYS_RESOURCE; docker: "
                 "--cap-add SYS_RESOURCE), or cap every job's memory (c.SchedApp.job_memory_mib) so none can take "
                 "this host's memory")
"""What makes a job's ``oom_score_adj`` hold, or matter less (said with :func:`oom_floor_problem`)."""
_GPU_MINORS = range(0, 254)
_SUBTREE = "jupyter_sched"
_V1_CONTROLLERS = ("devices", "pids", "memory")
_DRIVER_GPUS = Path("/proc/driver/nvidia/gpus")


def holds_cap_sys_resource(status: Path = Path("/proc/self/status")) -> bool | None:
    """Whether this process's effective capabilities (``status``'s ``CapEff``) hold ``CAP_SYS_RESOURCE``; None
    where they cannot be read (no ``/proc``)."""
    try:
        text = status.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("CapEff:"):
            try:
                return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
            except (IndexError, ValueError):
                return None
    return None


def oom_floor_problem(held: bool | None = None) -> str | None:
    """Why jobs' ``oom_score_adj`` :data:`JOB_OOM_SCORE_ADJ` is no floor here, or None when it is (or this
    cannot be told). The kernel keeps the value a process writes to another's ``oom_score_adj`` as that
    process's floor (``oom_score_adj_min``) only when the writer holds ``CAP_SYS_RESOURCE``: without it (a
    container's default set drops it) a job writes 0 back to its own and, out of memory, is again no likelier a
    victim than this service or PostgreSQL (verify 26, V15). ``held``: :func:`holds_cap_sys_resource`'s answer
    (read when None)."""
    if held is None:
        held = holds_cap_sys_resource()
    if held is None or held:
        return None
    return (f"jobs start with oom_score_adj {JOB_OOM_SCORE_ADJ} but this service lacks CAP_SYS_RESOURCE, so it is "
            "no floor: a job may set its own back to 0 and, out of memory, be no likelier a victim than this "
            "service or PostgreSQL")


def oom_floor_warning(euid: int | None = None) -> str | None:
    """The start-up WARNING of a service that runs other accounts' jobs as root (the hub's ``jupyter-sched serve``)
    where their ``oom_score_adj`` is no floor (:func:`oom_floor_problem`, with :data:`OOM_FLOOR_FIX`), or None.
    A personal lab runs its user's own jobs: there it is no WARNING, said at INFO in the isolation line (newuser28
    n11: the first WARNING a new user saw was this multi-user concern). ``euid``: the service's (read when None)."""
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
    problem = oom_floor_problem() if euid == 0 else None
    return None if problem is None else f"{problem}; fix: {OOM_FLOOR_FIX}"


@dataclass(frozen=True, slots=True)
class LimitGroups:
    """The cgroups one job's processes sit in for its limits (kept in the executor handle).

    Attributes:
        paths: the v1 groups made for the job (removed when it ends).
        memory: the group whose OOM counter is read (a v1 memory group or the v2 tracking group).
        memory_limit_mib: its memory limit (0 = none).
        fenced: whether a devices cgroup fences the job's GPUs.
    """

    paths: tuple[str, ...] = ()
    memory: str | None = None
    memory_limit_mib: int = 0
    fenced: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"paths": list(self.paths), "memory": self.memory, "memory_limit_mib": self.memory_limit_mib,
                "fenced": self.fenced}

    @classmethod
    def from_dict(cls, raw: object) -> LimitGroups | None:
        """Inverse of :meth:`to_dict`; None for anything malformed. Only paths under the cgroup
        tree are taken (the handle is the service's, but a removal must never reach elsewhere)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("paths"), list):
            return None
        paths = tuple(p for p in raw["paths"] if isinstance(p, str) and _ours(p))
        memory = raw.get("memory") if isinstance(raw.get("memory"), str) and _ours(raw["memory"]) else None
        mib = raw.get("memory_limit_mib")
        return cls(paths=paths, memory=memory, memory_limit_mib=mib if isinstance(mib, int) else 0,
                   fenced=raw.get("fenced") is True)

    def oom_kills(self) -> int | None:
        """Processes of the job the out-of-memory killer ended (v1 ``memory.oom_control``, v2
        ``memory.events``); None when no counter can be read."""
        if self.memory is None:
            return None
        for name in ("memory.oom_control", "memory.events"):
            with contextlib.suppress(OSError, ValueError):
                for line in (Path(self.memory) / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return None

    def set_gpus(self, minors: Sequence[int]) -> bool:
        """Make exactly ``minors`` the GPUs the job's devices group allows (its own plus those of
        leases granted for it, red team 16 R2: a lease's GPU is usable by the job it was granted
        for; denied again at its release). False when the job is not fenced or the write failed."""
        devices = next((p for p in self.paths if f"/devices/{_SUBTREE}/" in p), None)
        if not self.fenced or devices is None:
            return False
        try:
            _allow_only(Path(devices), set(minors))
        except OSError as exc:
            log.warning("group %s: the GPUs it may open were not changed (%s)", devices, exc)
            return False
        return True

    def pids(self) -> list[int]:
        """The processes in the job's devices group (those its fence governs); [] when unreadable."""
        devices = next((p for p in self.paths if f"/devices/{_SUBTREE}/" in p), None)
        if devices is None:
            return []
        try:
            return [int(x) for x in (Path(devices) / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def remove(self) -> None:
        """Remove the job's v1 groups (an empty group only; a non-empty one is left alone)."""
        for path in self.paths:
            with contextlib.suppress(OSError):
                Path(path).rmdir()


def open_gpu_minors(pids: Sequence[int], minors: set[int], proc: Path = Path("/proc"),
                    nodes: Mapping[int, Path] | None = None) -> dict[int, list[int]]:
    """``{minor: pids}`` of ``pids`` holding an NVIDIA device node ``195:minor`` with a minor in
    ``minors`` — open through an fd, or mapped (red team 17, R2: a devices cgroup is checked at
    ``open()`` only, so a process keeps a GPU it opened while the GPU was lent to its job; red team
    18, R6: an fd passed on by ``SCM_RIGHTS`` shows in the receiver's ``fd/``, a mapping kept after
    ``close()`` only in ``maps``). Read as ``fuser -m``/``lsof`` do: ``/proc/<pid>/fd`` (a char
    device 195:minor, or the node file itself) and ``/proc/<pid>/maps`` (a mapping whose device and
    inode are those of the node, or whose path is a ``/dev`` node 195:minor). ``nodes``: each
    minor's device node (default ``/dev/nvidia<minor>``; a test passes a stand-in file). A process
    that is gone or unreadable holds nothing."""
    where = {m: (nodes or {}).get(m, Path(f"/dev/nvidia{m}")) for m in minors}
    identity: dict[tuple[int, int], int] = {}
    for minor, node in where.items():
        with contextlib.suppress(OSError):
            st = os.stat(node)
            identity[(st.st_dev, st.st_ino)] = minor

    def minor_of(st: os.stat_result) -> int | None:
        if (st.st_mode & 0o170000) == 0o020000 and os.major(st.st_rdev) == NVIDIA_MAJOR \
                and os.minor(st.st_rdev) in minors:
            return os.minor(st.st_rdev)
        return identity.get((st.st_dev, st.st_ino))

    found: dict[int, list[int]] = {}
    for pid in pids:
        held: set[int] = set()
        with contextlib.suppress(OSError):
            for fd in os.listdir(proc / str(pid) / "fd"):
                with contextlib.suppress(OSError):
                    if (opened := minor_of(os.stat(proc / str(pid) / "fd" / fd))) is not None:
                        held.add(opened)
        if held != minors:  # the fds first (cheap); the maps only for what they did not show
            held |= _mapped_minors(proc / str(pid) / "maps", identity, minors - held)
        for minor in held:
            found.setdefault(minor, []).append(pid)
    return found


def _mapped_minors(maps: Path, identity: Mapping[tuple[int, int], int], minors: set[int]) -> set[int]:
    """The minors of ``minors`` a process maps (its ``maps`` file; nothing when unreadable)."""
    held: set[int] = set()
    try:
        data = maps.read_bytes()
    except OSError:
        return held
    for line in _candidate_lines(data, {ino for _, ino in identity}):
        parts = line.split(maxsplit=5)
        if len(parts) < 5 or parts[4] == "0":
            continue
        with contextlib.suppress(ValueError):
            major, minor = (int(x, 16) for x in parts[3].split(":"))
            if (found := identity.get((os.makedev(major, minor), int(parts[4])))) is not None:
                held.add(found)
                continue
        path = parts[5] if len(parts) > 5 else ""
        if path.startswith("/dev/"):
            with contextlib.suppress(OSError):
                st = os.stat(path.removesuffix(" (deleted)"))
                if (st.st_mode & 0o170000) == 0o020000 and os.major(st.st_rdev) == NVIDIA_MAJOR \
                        and os.minor(st.st_rdev) in minors:
                    held.add(os.minor(st.st_rdev))
    return held


def _candidate_lines(data: bytes, inodes: set[int]) -> list[str]:
    """The lines of a ``maps`` file that may name a GPU node: those holding ``/dev/`` or one of
    ``inodes`` as a field — found by byte search, so the other lines (a process may have 65,530
    mappings of its own files) are never split or decoded (red team 19, R7)."""
    starts: set[int] = set()
    for token in (b"/dev/", *(f" {ino} ".encode() for ino in inodes)):
        at = data.find(token)
        while at >= 0:
            begin = data.rfind(b"\n", 0, at) + 1
            starts.add(begin)
            end = data.find(b"\n", at)
            at = data.find(token, end) if end >= 0 else -1
    out = []
    for begin in sorted(starts):
        end = data.find(b"\n", begin)
        out.append(data[begin:end if end >= 0 else len(data)].decode(errors="replace"))
    return out


def processes_of(uid: int, proc: Path = Path("/proc")) -> list[int]:
    """Every process on the host one of whose user ids (real, effective, saved, filesystem) is
    ``uid`` — where an fd a job passed on by ``SCM_RIGHTS`` may be (red team 18, R6). One walk of
    ``/proc``, reading each ``status``; a process gone meanwhile is left out."""
    out = []
    with contextlib.suppress(OSError):
        for name in os.listdir(proc):
            if not name.isdigit():
                continue
            try:
                status = (proc / name / "status").read_text(errors="replace")
            except OSError:
                continue
            line = next((x for x in status.splitlines() if x.startswith("Uid:")), "")
            if str(uid) in line.split()[1:]:
                out.append(int(name))
    return out


def _ours(path: str) -> bool:
    return path.startswith(str(CGROUP_ROOT) + "/") and f"/{_SUBTREE}/" in path and ".." not in path


def driver_minors(root: Path = _DRIVER_GPUS) -> dict[str, int]:
    """``{GPU uuid: device minor}`` as the NVIDIA driver says (empty without the driver)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for info in root.glob("*/information"):
            with contextlib.suppress(OSError, ValueError):
                text = info.read_text()
                uuid = re.search(r"^GPU UUID:\s*(\S+)", text, re.M)
                minor = re.search(r"^Device Minor:\s*(\d+)", text, re.M)
                if uuid and minor:
                    out[uuid.group(1)] = int(minor.group(1))
    return out


def minor_resolver(current: Callable[[], Any], *, driver: Callable[[], dict[str, int]] = driver_minors
                   ) -> Callable[[str], int | None]:
    """``uuid -> device minor`` for the GPUs of an inventory (``current()`` returns a
    :class:`~jupyter_sched.model.Inventory`): a MIG uuid is its parent GPU's; the driver's minor,
    else the inventory index (simulated GPUs); None for a uuid the inventory does not know."""

    def resolve(uuid: str) -> int | None:
        gpu = current().gpu_by_uuid().get(uuid)
        if gpu is None:
            return None
        minor = driver().get(gpu.uuid)
        return minor if minor is not None else int(gpu.index)

    return resolve


class LocalLimits:
    """Makes and fills the per-job limit groups (see module docstring).

    Args:
        pids_max: ``pids.max`` of each job (0 = none).
        user_pids_max: ``pids.max`` of the per-account group ``u<uid>`` above each job's pids group
            (v1; 0 = none): all running jobs of one account together (red team 16, R3).
        memory_mib: memory limit of a job that asks for none (0 = none).
        root: the cgroup mount point.
        make: create (and prune) the ``jupyter_sched`` groups now; False only looks whether this
            account could (``jupyter-sched doctor``: it changes nothing).
    """

    def __init__(self, *, pids_max: int = 4096, memory_mib: int = 0, root: Path = CGROUP_ROOT,
                 make: bool = True, user_pids_max: int = 8192) -> None:
        self.pids_max = pids_max
        self.user_pids_max = user_pids_max
        self.memory_mib = memory_mib
        self.root = root
        self.v2 = (root / "cgroup.controllers").exists()
        self.v1: dict[str, Path] = {}
        for name in () if self.v2 else _V1_CONTROLLERS:
            base = root / name / _SUBTREE
            if not make:
                if (root / name / "cgroup.procs").exists() and os.access(base if base.exists() else root / name, os.W_OK):
                    self.v1[name] = base
                continue
            if not writable_group(base):
                continue
            self.v1[name] = base
            _prune(base)
        if self.v2 and make:
            with contextlib.suppress(OSError):
                (root / _SUBTREE).mkdir(mode=0o755, exist_ok=True)
                (root / _SUBTREE / "cgroup.subtree_control").write_text("+pids +memory")

    @property
    def fences_gpus(self) -> bool:
        """Whether jobs' GPUs are fenced by a devices cgroup (else by the environment only)."""
        return "devices" in self.v1

    @property
    def caps_memory(self) -> bool:
        """Whether a job's ``memory_mib`` becomes its memory limit here (a memory cgroup can be made),
        so a job above it is killed by the out-of-memory killer (new user 25, N12)."""
        return "memory" in self.v1 or bool(self.v2)

    def summary(self, *, floor_warned_apart: bool = False) -> str:
        """One line on how jobs are isolated here (doctor, the service's start-up log, README).

        ``floor_warned_apart``: the caller logs :func:`oom_floor_warning` as its own WARNING (a hub's service, as
        root): then "no floor" here points at it instead of saying the same sentence again (newuser38 n6: the
        CAP_SYS_RESOURCE sentence was logged twice per start)."""
        if self.fences_gpus:
            gpus = "GPUs fenced by a devices cgroup (a job opens only its own /dev/nvidiaN)"
        else:
            why = ("cgroup v2 would need a BPF device program, which is not loaded" if self.v2 else
                   "no writable cgroup v1 devices controller (run as root on a host that mounts it)")
            gpus = (f"GPUs fenced by environment only (CUDA_VISIBLE_DEVICES…): {why}; a job that sets "
                    "CUDA_VISIBLE_DEVICES itself can open every GPU of this host")
        have = set(self.v1) | ({"pids", "memory"} if self.v2 else set())
        pids = f"pids.max {self.pids_max}" if "pids" in have and self.pids_max else "no process limit"
        if self.caps_memory:
            memory = "memory limit = the job's memory_mib" + (
                f", else {self.memory_mib} MiB" if self.memory_mib else ", else none (c.SchedApp.job_memory_mib 0)")
        else:
            memory = "no memory limit or out-of-memory counter"
        if oom_floor_problem() is None:
            oom = f"oom_score_adj {JOB_OOM_SCORE_ADJ} (out of memory, the kernel kills a job before this service)"
        elif floor_warned_apart:
            oom = f"oom_score_adj {JOB_OOM_SCORE_ADJ}, no floor (the WARNING below says why and the fix)"
        else:  # verify 26, V15: said as it is, with the fix
            oom = (f"oom_score_adj {JOB_OOM_SCORE_ADJ}, no floor (this service lacks CAP_SYS_RESOURCE: a job may set "
                   f"its own back to 0; fix: {OOM_FLOOR_FIX})")
        return f"local jobs: {gpus}; {pids}; {memory}; {oom}"

    def apply(self, group: JobGroup, pid: int, *, gpu_minors: Sequence[int] | None, memory_mib: int) -> LimitGroups:
        """Put ``pid`` (the wrapper, before it starts anything) into the job's limit groups.

        Args:
            group: the job's tracking group (its name names the limit groups; on v2 its directory
                takes the limits).
            pid: the wrapper's pid.
            gpu_minors: device minors of the job's GPUs (empty: no GPU); None = unknown, then the
                devices are not fenced for this job (logged).
            memory_mib: the job's memory limit (0 = :attr:`memory_mib`, the default).
        """
        limit = memory_mib or self.memory_mib
        if self.v2:
            return self._apply_v2(group, limit)
        made: list[str] = []
        memory_path: str | None = None
        fenced = False
        for name, base in self.v1.items():
            path = base / group.name
            try:
                if name == "pids" and self.user_pids_max and group.uid is not None:
                    account = base / f"u{int(group.uid)}"
                    account.mkdir(mode=0o755, exist_ok=True)
                    (account / "pids.max").write_text(str(self.user_pids_max))
                    path = account / group.name
                path.mkdir(mode=0o755, exist_ok=True)
                made.append(str(path))
                if name == "devices":
                    if gpu_minors is None:
                        log.warning("group %s: a GPU's device minor is unknown; its GPUs are fenced by environment "
                                    "only", group.name)
                    else:
                        _deny_gpus(path, set(gpu_minors))
                        fenced = True
                elif name == "pids" and self.pids_max:
                    (path / "pids.max").write_text(str(self.pids_max))
                elif name == "memory":
                    memory_path = str(path)
                    if limit:
                        _write_memory_limit(path, limit)
                (path / "cgroup.procs").write_text(str(pid))
            except OSError as exc:
                log.warning("group %s: the %s limit was not set (%s)", group.name, name, exc)
                fenced = fenced and name != "devices"
                memory_path = None if name == "memory" else memory_path
        return LimitGroups(paths=tuple(made), memory=memory_path, memory_limit_mib=limit if memory_path else 0,
                           fenced=fenced)

    def _apply_v2(self, group: JobGroup, limit: int) -> LimitGroups:
        if group.kind != "cgroup-v2" or group.path is None:
            return LimitGroups()
        path = Path(group.path)
        with contextlib.suppress(OSError):
            if self.pids_max:
                (path / "pids.max").write_text(str(self.pids_max))
        with contextlib.suppress(OSError):
            if limit:
                (path / "memory.max").write_text(str(limit << 20))
        has_memory = (path / "memory.events").exists()
        return LimitGroups(memory=str(path) if has_memory else None, memory_limit_mib=limit if has_memory else 0)


def _prune(base: Path, older_than_s: float = 600.0) -> None:
    """Remove empty limit groups older than ``older_than_s`` (left by a service that was killed)."""
    cutoff = time.time() - older_than_s
    with contextlib.suppress(OSError):
        for account in base.glob("u[0-9]*"):  # per-account pids groups hold the jobs' groups
            _prune(account, older_than_s)
        for child in base.iterdir():
            with contextlib.suppress(OSError):
                if child.is_dir() and child.stat().st_mtime < cutoff and not (child / "cgroup.procs").read_text().strip():
                    child.rmdir()


def _deny_gpus(path: Path, allowed: set[int]) -> None:
    """Deny every GPU minor not in ``allowed`` (a v1 group inherits its parent's allow-all; each
    deny is one exception; ``devices.deny`` takes one rule per write)."""
    fd = open_fd(path / "devices.deny", os.O_WRONLY)
    try:
        for minor in _GPU_MINORS:
            if minor not in allowed:
                os.write(fd, f"c {NVIDIA_MAJOR}:{minor} rwm".encode())
    finally:
        os.close(fd)


def _allow_gpus(path: Path, minors: set[int]) -> None:
    fd = open_fd(path / "devices.allow", os.O_WRONLY)
    try:
        for minor in sorted(minors):
            os.write(fd, f"c {NVIDIA_MAJOR}:{minor} rwm".encode())
    finally:
        os.close(fd)


def _allow_only(path: Path, minors: set[int]) -> None:
    """Make exactly ``minors`` the GPU minors the devices group ``path`` allows."""
    _deny_gpus(path, minors)
    _allow_gpus(path, minors)


def _write_memory_limit(path: Path, mib: int) -> None:
    (path / "memory.limit_in_bytes").write_text(str(mib << 20))
    with contextlib.suppress(OSError):  # swap accounted: the same bound, so the job cannot swap past it
        (path / "memory.memsw.limit_in_bytes").write_text(str(mib << 20))
