"""Every process a local job started, even ones that left its session: cgroups, else a marker.

A job's process group is not enough to stop it: a process that calls ``setsid()`` (a daemon, a
``nohup``'d server, a data loader started with ``start_new_session=True``) leaves the group and
would keep its GPU after a cancel. The local executor therefore puts each job's wrapper into a
*job group* before the wrapper starts anything, and signals, counts and kills through it:

=================  ==========================================================================
``cgroup-v2``      ``/sys/fs/cgroup/jupyter_sched/<group>`` on the unified hierarchy. Children
                   stay in a cgroup whatever they do with sessions; kill writes ``cgroup.kill``
                   (Linux 5.14+), else freezes (``cgroup.freeze``), SIGKILLs every member and
                   thaws, so nothing can fork while it is being killed.
``cgroup-v1``      ``/sys/fs/cgroup/freezer/jupyter_sched/<group>`` (the freezer hierarchy, or
                   ``pids`` when there is no freezer): same semantics with ``freezer.state``.
``marker``         no writable cgroup (not root, read-only ``/sys/fs/cgroup``): every job
                   process carries ``JUPYTER_SCHED_JOB_MARKER=<group>`` in its environment (set
                   by the executor, inherited by children), the wrapper is a child subreaper
                   (daemonised grandchildren are re-parented to it, not to init) and members are
                   found by scanning processes of the job's uid for the marker. A process that
                   both replaces its environment and outlives its wrapper escapes this mode;
                   cgroups have no such gap.
=================  ==========================================================================

Group names are ``<job id>-<nonce>`` so two executors on one machine (tests, a restarted
service with a stale group) never share one; the name is kept in the executor handle so a
restarted service finds the group again (cgroups outlive the process that made them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psutil

__all__ = ["MARKER_ENV", "CgroupTracker", "JobGroup", "MarkerTracker", "ProcessTracker", "detect_tracker",
           "members_file", "tracker_for", "writable_group"]

log = logging.getLogger(__name__)

MARKER_ENV = "JUPYTER_SCHED_JOB_MARKER"
"""Environment variable that marks every process of a local job (value: the job group's name)."""

ENVIRON_BYTES = 256 * 1024
"""Most bytes of a process's ``/proc/<pid>/environ`` a marker scan reads (on the engine's thread, for every process of the
job's uid: up to ARG_MAX each, the owner's to size; red36 R2's kind). The marker comes within the service's own
environment, before the variables of the job's spec (the wrapper appends them); a process that pushes it past this escapes
as one that drops it does (module docstring)."""
CGROUP_ROOT = Path("/sys/fs/cgroup")
_SUBTREE = "jupyter_sched"
_FREEZE_WAIT_S = 1.0


@dataclass(frozen=True, slots=True)
class JobGroup:
    """One job's group of processes.

    Attributes:
        name: ``<job id>-<nonce>``; also the marker value.
        kind: ``cgroup-v2``, ``cgroup-v1`` or ``marker``.
        path: the cgroup directory (cgroup kinds); None for ``marker``.
        uid: uid the job's processes run as (marker scans look only at that uid); None = any.
    """

    name: str
    kind: str
    path: str | None = None
    uid: int | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON shape kept in the executor handle."""
        return {"name": self.name, "kind": self.kind, "path": self.path, "uid": self.uid}

    @classmethod
    def from_dict(cls, raw: object) -> JobGroup | None:
        """Inverse of :meth:`to_dict`; None for anything malformed."""
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not isinstance(raw.get("kind"), str):
            return None
        path, uid = raw.get("path"), raw.get("uid")
        return cls(name=raw["name"], kind=raw["kind"], path=path if isinstance(path, str) else None,
                   uid=uid if isinstance(uid, int) and not isinstance(uid, bool) else None)


class ProcessTracker(Protocol):
    """Creates job groups and finds, signals and kills their members."""

    kind: str

    def create(self, job_id: str, *, uid: int | None) -> JobGroup:
        """A new, empty group for ``job_id`` (raises OSError when the group cannot be made)."""
        ...

    def enroll(self, group: JobGroup, pid: int) -> None:
        """Put ``pid`` (the wrapper, before it starts anything) into ``group`` (raises OSError)."""
        ...

    def members(self, group: JobGroup, *, root_pid: int | None = None) -> set[int]:
        """Pids of the group's live processes (``root_pid``: the wrapper, whose descendants count)."""
        ...

    def signal(self, group: JobGroup, signum: int, *, root_pid: int | None = None) -> int:
        """Send ``signum`` to every member; how many were signalled."""
        ...

    def kill(self, group: JobGroup, *, root_pid: int | None = None) -> int:
        """SIGKILL every member (freezing first where possible); how many were killed."""
        ...

    def remove(self, group: JobGroup) -> None:
        """Forget an empty group (remove its cgroup directory); a non-empty one is left alone."""
        ...


def _new_name(job_id: str) -> str:
    return f"{job_id}-{secrets.token_hex(4)}"


def _send(pids: Iterable[int], signum: int) -> int:
    sent = 0
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signum)
            sent += 1
        except (ProcessLookupError, PermissionError):
            pass
    return sent


def _descendants(root_pid: int | None) -> set[int]:
    if not root_pid:
        return set()
    try:
        root = psutil.Process(root_pid)
        return {root.pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.Error:
        return set()


def _live(pids: Iterable[int]) -> set[int]:
    """The pids of ``pids`` that are alive and no zombie: one read of ``/proc/<pid>/stat`` each (its state
    follows the command's closing parenthesis). Its cost is a job's process count on the engine's thread
    (red35 R3: 8,000 processes of one user): psutil's ``Process(pid).status()`` read it twice, with its
    start time, for each."""
    out = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                raw = fh.read(512)
        except OSError:
            continue
        state = raw[raw.rfind(b")") + 2:][:1]
        if state and state not in (b"Z", b"X"):
            out.add(pid)
    return out


class CgroupTracker:
    """Job groups as cgroups (v2 unified, or a v1 hierarchy; see module docstring).

    Args:
        base: the directory that holds our groups (``<hierarchy>/jupyter_sched``).
        version: 2 or 1.
    """

    def __init__(self, base: Path, version: int) -> None:
        self.base = base
        self.version = version
        self.kind = f"cgroup-v{version}"

    def create(self, job_id: str, *, uid: int | None) -> JobGroup:
        path = self.base / _new_name(job_id)
        path.mkdir(mode=0o755)
        return JobGroup(name=path.name, kind=self.kind, path=str(path), uid=uid)

    def enroll(self, group: JobGroup, pid: int) -> None:
        assert group.path is not None
        (Path(group.path) / "cgroup.procs").write_text(str(pid))

    def members(self, group: JobGroup, *, root_pid: int | None = None) -> set[int]:
        if group.path is None:
            return set()
        try:
            text = (Path(group.path) / "cgroup.procs").read_text()
        except OSError:
            return set()
        return _live(int(line) for line in text.split() if line.strip().isdigit())

    def signal(self, group: JobGroup, signum: int, *, root_pid: int | None = None) -> int:
        return _send(self.members(group), signum)

    def kill(self, group: JobGroup, *, root_pid: int | None = None) -> int:
        if group.path is None:
            return 0
        path = Path(group.path)
        if self.version == 2 and (path / "cgroup.kill").exists():
            before = len(self.members(group))
            with contextlib.suppress(OSError):
                (path / "cgroup.kill").write_text("1")
                return before
        frozen = self._freeze(path, True)
        try:
            return _send(self.members(group), signal.SIGKILL)
        finally:
            if frozen:
                self._freeze(path, False)

    def _freeze(self, path: Path, freeze: bool) -> bool:
        """Freeze (or thaw) the cgroup so no member forks while being killed; False if unsupported."""
        if self.version == 2:
            control, value, done = path / "cgroup.freeze", "1" if freeze else "0", None
        else:
            control, value = path / "freezer.state", "FROZEN" if freeze else "THAWED"
            done = "FROZEN" if freeze else None
        if not control.exists():
            return False
        try:
            control.write_text(value)
        except OSError:
            return False
        if done is not None:  # v1 freezes asynchronously: wait (bounded) until FROZEN
            deadline = time.monotonic() + _FREEZE_WAIT_S
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError):
                    if control.read_text().strip() == done:
                        break
                time.sleep(0.01)
        return True

    def remove(self, group: JobGroup) -> None:
        if group.path is not None:
            with contextlib.suppress(OSError):
                Path(group.path).rmdir()

    def prune(self, older_than_s: float = 600.0) -> int:
        """Remove empty groups older than ``older_than_s`` seconds (left by services that were killed
        and jobs that ended meanwhile); how many. A live job's group is never empty, and a new one is
        empty only for the instant between its creation and its wrapper's enrollment."""
        removed = 0
        cutoff = time.time() - older_than_s
        with contextlib.suppress(OSError):
            for child in self.base.iterdir():
                try:
                    if child.is_dir() and child.stat().st_mtime < cutoff and not (child / "cgroup.procs").read_text().strip():
                        child.rmdir()
                        removed += 1
                except OSError:
                    continue
        return removed


class MarkerTracker:
    """Job groups as an environment marker plus the wrapper's descendants (see module docstring)."""

    kind = "marker"

    def create(self, job_id: str, *, uid: int | None) -> JobGroup:
        return JobGroup(name=_new_name(job_id), kind=self.kind, uid=uid)

    def enroll(self, group: JobGroup, pid: int) -> None:
        return None  # the marker travels in the environment the executor gives the wrapper

    def members(self, group: JobGroup, *, root_pid: int | None = None) -> set[int]:
        found = _descendants(root_pid)
        needle = f"{MARKER_ENV}={group.name}".encode()
        for proc in psutil.process_iter(["uids"]):
            try:
                uids = proc.info.get("uids")
                if group.uid is not None and uids is not None and uids.real != group.uid:
                    continue
                if proc.pid in found or proc.pid == os.getpid():
                    continue
                with open(f"/proc/{proc.pid}/environ", "rb", buffering=0) as fh:
                    raw = fh.read(ENVIRON_BYTES) or b""
                entries = raw.split(b"\0")
                if len(raw) >= ENVIRON_BYTES:
                    entries.pop()  # cut by the read: not a whole entry
                if needle in entries:
                    found.add(proc.pid)
            except (psutil.Error, OSError):
                continue
        return _live(found)

    def signal(self, group: JobGroup, signum: int, *, root_pid: int | None = None) -> int:
        return _send(self.members(group, root_pid=root_pid), signum)

    def kill(self, group: JobGroup, *, root_pid: int | None = None) -> int:
        # Kill descendants before the wrapper: while the wrapper (a subreaper) lives, nothing of
        # the job can be re-parented away from it.
        members = self.members(group, root_pid=root_pid)
        killed = _send(sorted(members - {root_pid or 0}), signal.SIGKILL)
        if root_pid in members:
            killed += _send([root_pid or 0], signal.SIGKILL)
        return killed

    def remove(self, group: JobGroup) -> None:
        return None


def writable_group(base: Path) -> bool:
    """Make ``base`` (a cgroup folder, mode 0755) if needed and prove this account can create groups
    in it by making and removing one probe group; False when the kernel or the account says no."""
    try:
        base.mkdir(mode=0o755, exist_ok=True)
        probe = base / f".probe-{os.getpid()}-{secrets.token_hex(3)}"
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def detect_tracker(*, root: Path = CGROUP_ROOT) -> ProcessTracker:
    """The best tracker this machine offers (see module docstring): a writable cgroup v2 tree,
    else a writable v1 freezer (or pids) hierarchy, else the marker."""
    candidates: list[tuple[Path, int]] = []
    if (root / "cgroup.controllers").exists():
        candidates.append((root / _SUBTREE, 2))
    for hierarchy in ("freezer", "pids"):
        if (root / hierarchy / "cgroup.procs").exists():
            candidates.append((root / hierarchy / _SUBTREE, 1))
    for base, version in candidates:
        if not writable_group(base):
            continue
        tracker = CgroupTracker(base, version)
        tracker.prune()
        return tracker
    return MarkerTracker()


def members_file(group: JobGroup) -> str | None:
    """The file that lists ``group``'s processes (``cgroup.procs`` of its cgroup: readable by any account, exactly the
    job's processes, whatever they do with sessions); None for a marker group (found by a scan)."""
    return str(Path(group.path) / "cgroup.procs") if group.kind.startswith("cgroup-v") and group.path else None


def tracker_for(group: JobGroup, default: ProcessTracker) -> ProcessTracker:
    """The tracker that understands ``group`` (a re-adopted job's group may predate ``default``)."""
    if group.kind == default.kind:
        return default
    if group.kind.startswith("cgroup-v") and group.path is not None:
        return CgroupTracker(Path(group.path).parent, int(group.kind[-1]))
    return MarkerTracker()
