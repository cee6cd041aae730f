"""Devices groups for hub users' notebook servers and kernels on the GPU host (red team 16, R1;
Slurm's ``pam_slurm_adopt``: outside an allocation a user gets no GPU device).

Jobs sit in a devices group that denies every GPU but their own (:mod:`.limits`); a hub user's
single-user server, its kernels and terminals used to run in the host's root group and opened
every ``/dev/nvidiaN``, another user's job's or lease's alike. Each OS account whose server a
hub spawns on this host gets one group ``<devices>/jupyter_sched/servers/u<uid>``, owned by root:

- it denies every GPU minor (the job fence's rule set, :func:`.limits._deny_gpus`: ``nvidiactl``,
  ``nvidia-uvm``, ``nvidia-caps`` stay allowed) when it is made, under a temporary name that is
  renamed only once fenced, so a concurrent spawn never finds it open;
- the hub's spawner puts the server in it before the server drops root
  (:class:`jupyter_sched.hub.fence.FencedLocalProcessSpawner`), so every process of the user's
  server inherits it; the account cannot leave: moving a task needs write access to the target
  group's ``cgroup.procs``, which root alone has;
- the central service's reconcile pass (:meth:`ServerFence.sync`) allows in it the minors of the
  account's granted kernel leases, and denies them again at release, expiry or preemption unless
  another live lease of that account holds the GPU.

A service writes only the groups of the accounts it manages: those its leases name now, and those it
opened before — kept in its record (``<log_dir>/.state/.server-fence.json``, written before a group is
opened, so a restarted service, even after ``kill -9``, closes the groups of leases that ended while
it was down). Another service on the same host (a second hub, a staging one) never closes a group
it did not open: until session 36 each service's pass wrote every ``u<uid>`` group it found, and a
service that started while amy held a lease of another wrote "every GPU denied" into her group
until her own service's next pass said her lease again.

Each account's server also sits in a pids group ``<pids>/jupyter_sched/servers/u<uid>`` with a ``pids.max``
(:func:`server_tasks_enter_fn`; red32 R4: jobs' tasks were capped per job and per account, but a fork loop in a
notebook cell or a terminal could take every pid of the host — then the service forks no job's wrapper and
PostgreSQL no backend, for everyone). It is made and entered like the devices group, and needs only a writable
cgroup v1 pids controller.

Hosts without a writable cgroup v1 devices controller (cgroup v2, which would need a BPF device
program, containers, a service that is not root) cannot fence servers: :func:`server_fence_problem`
says why, and the service's log, the spawner's log and ``jupyter-sched doctor`` say "user servers
are not fenced".
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .. import untrusted_json
from ..safefd import open_fd
from .limits import _SUBTREE, _allow_gpus, _allow_only, _deny_gpus
from .tracking import CGROUP_ROOT
from .wrapper import write_json_atomic

__all__ = ["NOT_FENCED", "SERVERS_FENCED", "ServerFence", "server_fence_problem", "server_tasks_enter_fn"]

log = logging.getLogger(__name__)

NOT_FENCED = "user servers are not fenced"
"""How every log and ``doctor`` line starts where they cannot be (any hub user opens any GPU)."""
SERVERS_FENCED = ("user servers are fenced where the hub's spawner is "
                  "jupyter_sched.hub.fence.FencedLocalProcessSpawner: each account's notebook server and kernels "
                  "open no GPU but those of its granted kernel leases (devices group jupyter_sched/servers/u<uid>)")


def server_fence_problem(root: Path = CGROUP_ROOT) -> str | None:
    """Why hub users' servers cannot be fenced on this host by this account (None: they can)."""
    if (root / "cgroup.controllers").exists():
        return "this host has cgroup v2, whose devices fence needs a BPF device program, which is not loaded"
    devices = root / "devices"
    if not (devices / "devices.deny").exists():
        return "this host mounts no cgroup v1 devices controller (a container?)"
    if os.geteuid() != 0 or not os.access(devices, os.W_OK):
        return "its cgroup v1 devices controller is not writable by this account (root is needed)"
    return None


class ServerFence:
    """The per-account devices groups of hub users' servers (module docstring).

    Args:
        root: the cgroup mount point.
        record: the file that keeps which accounts' groups this service opened (the central service's
            ``<log_dir>/.state/.server-fence.json``; module docstring). None: kept in memory only, so a
            restart forgets them (tests of one process).
        adopt_without_record: where ``record`` does not exist yet, manage every group of the host on the first
            pass (a service that ran before records were kept may have opened any); False: none but those
            its leases name (a service that never ran here opened none).
    """

    def __init__(self, root: Path = CGROUP_ROOT, record: Path | None = None, *,
                 adopt_without_record: bool = False) -> None:
        self.base = root / "devices" / _SUBTREE / "servers"
        self.record = record
        self._allowed: dict[int, frozenset[int]] = {}
        opened, missing = self._read_record(adopt_without_record)
        self._opened: frozenset[int] = opened
        if missing and self.record is not None:  # kept from the first start on: a later start reads it (newuser38 n6)
            try:
                write_json_atomic(self.record, {"opened": sorted(opened)})
            except OSError as exc:  # a group's opening writes it again, and opens none unless it is written
                log.warning("user servers' GPU record %s not written (%s); it is written again before a GPU is let "
                            "open", self.record, exc)

    def group(self, uid: int) -> Path:
        """The group of account ``uid`` (made or not)."""
        return self.base / f"u{int(uid)}"

    def accounts(self) -> frozenset[int]:
        """The uids whose group exists: each folder named exactly as :meth:`group` names one (``u`` and the uid in
        ASCII digits, no leading zero), so a uid read here is written back to the same folder — never ``u0012`` or
        ``u1\u0662`` read as uid 12 and its write sent to ``u12``. Empty where the folder cannot be listed."""
        uids: set[int] = set()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.base):
                digits = entry.name[1:]
                if entry.name[:1] == "u" and digits.isascii() and digits.isdigit() and entry.name == f"u{int(digits)}":
                    uids.add(int(digits))
        return frozenset(uids)

    def ensure(self, uid: int) -> Path:
        """The group of ``uid``, made with every GPU minor denied where it does not exist yet.

        Raises:
            OSError: it could not be made (not root, no devices controller).
        """
        path = self.group(uid)
        if path.is_dir():
            return path
        self.base.mkdir(mode=0o755, parents=True, exist_ok=True)
        temp = self.base / f".new-u{int(uid)}-{os.getpid()}-{secrets.token_hex(4)}"
        temp.mkdir(mode=0o755)
        try:
            _deny_gpus(temp, set())
            os.rename(temp, path)  # EEXIST when another spawn made it first: that one is fenced too
        except OSError:
            with contextlib.suppress(OSError):
                temp.rmdir()
            if not path.is_dir():
                raise
        return path

    def enter_fn(self, uid: int) -> Callable[[], None]:
        """Make the group of ``uid`` now and return what a spawned child runs, still as root and
        before anything of the user, to move itself into it (a spawner's ``preexec_fn``; raising
        there fails the spawn, so no server starts unfenced on a host that fences).

        Raises:
            OSError: the group could not be made.
        """
        return _entering(self.ensure(uid))

    def sync(self, leased: Mapping[int, Iterable[int]]) -> None:
        """Make the group of each account this service manages allow exactly the GPU minors of its
        granted kernel leases (``leased[uid]``; an account that is not there: none). Managed: the
        accounts ``leased`` names and those this service opened before (its record); another
        service's groups are never written. Only a change is written in full; a held minor is said
        again each pass, as a group made again at a spawn starts closed.

        An account is written into the record before its group is opened; where the record cannot
        be written, no group is opened this pass (logged) — never an open group the record misses."""
        want_of = {int(uid): frozenset(minors) for uid, minors in leased.items()}
        existing = self.accounts()
        opening = {uid for uid, minors in want_of.items() if minors and uid in existing}
        if not opening <= self._opened and not self._write_record(self._opened | opening):
            for uid in opening - self._opened:  # fail closed: no group opened that the record misses
                want_of[uid] = frozenset()
        for uid in sorted(existing & (set(want_of) | set(self._allowed) | self._opened)):
            want = want_of.get(uid, frozenset())
            try:
                if self._allowed.get(uid) != want:
                    _allow_only(self.group(uid), set(want))
                    log.info("user servers of uid %d may open GPU minor(s) %s", uid,
                             ", ".join(map(str, sorted(want))) or "(none: every GPU denied)")
                elif want:
                    _allow_gpus(self.group(uid), set(want))
                self._allowed[uid] = want
            except OSError as exc:
                self._allowed.pop(uid, None)
                log.warning("user servers of uid %d: the GPUs they may open were not changed (%s)", uid, exc)
        for uid in set(self._allowed) - existing:
            del self._allowed[uid]
        # closed for sure (written closed, or its group gone: made again closed at a spawn): out of the record
        still_open = {uid for uid in self._opened if uid in existing and self._allowed.get(uid) != frozenset()}
        if still_open != self._opened:
            self._write_record(still_open)

    def _read_record(self, adopt_without_record: bool) -> tuple[frozenset[int], bool]:
        """The accounts whose groups this service may have opened, and whether the record is missing (then
        written at once). Where that is unknown (no record but ``adopt_without_record``, or a record that does
        not read) every group of the host is managed once: each is let open only its account's leased GPUs."""
        if self.record is None:
            return frozenset(), False
        try:
            data = untrusted_json.loads(self.record.read_bytes())
            opened = data.get("opened") if isinstance(data, dict) else None
            if isinstance(opened, list) and all(isinstance(uid, int) and not isinstance(uid, bool) for uid in opened):
                return frozenset(opened), False
            why = "it holds no list of uids under 'opened'"
        except FileNotFoundError:
            if not adopt_without_record:
                return frozenset(), True  # a first start: it opened none, nothing to say
            why = ("it is not there, yet jobs ran from this log_dir before (a version that kept no record, or the "
                   "record was removed)")
        except (OSError, ValueError) as exc:
            why = f"it does not read ({exc})"
        # newuser38 n6: said in the reader's words ("ran here before", "every account's group is closed" were not)
        log.warning("which hub users' notebook servers this service let open a GPU is not known: %s is its record "
                    "and %s; so at this start every user's notebook server, kernels and terminals on this host may "
                    "open only the GPUs of that user's own granted kernel leases (%%gpu request), the others none",
                    self.record, why)
        return self.accounts(), True

    def _write_record(self, opened: set[int] | frozenset[int]) -> bool:
        """Keep ``opened`` as the accounts whose groups may be open (True: kept)."""
        if self.record is not None:
            try:
                write_json_atomic(self.record, {"opened": sorted(opened)})
            except OSError as exc:
                log.warning("user servers' fence record %s not written (%s): no group is opened this pass",
                            self.record, exc)
                return False
        self._opened = frozenset(opened)
        return True


def server_tasks_enter_fn(uid: int, pids_max: int, root: Path = CGROUP_ROOT) -> Callable[[], None] | None:
    """Make account ``uid``'s servers' pids group (``<pids>/jupyter_sched/servers/u<uid>``, ``pids.max`` set to
    ``pids_max``, written each spawn so a changed setting applies) and return what a spawned child runs, as root
    before anything of the user, to enter it; None where there is no writable cgroup v1 pids controller or
    ``pids_max`` is 0 (no cap). Every task of the server, its kernels and terminals counts against the cap (red32 R4).

    Raises:
        OSError: the group could not be made or written.
    """
    base = root / "pids"
    if pids_max <= 0 or not (base / "cgroup.procs").exists() or os.geteuid() != 0:
        return None
    group = base / _SUBTREE / "servers" / f"u{int(uid)}"
    group.mkdir(mode=0o755, parents=True, exist_ok=True)
    (group / "pids.max").write_text(str(int(pids_max)))
    return _entering(group)


def _entering(group: Path) -> Callable[[], None]:
    """What a spawned child runs (as root, before anything of the user) to move itself into ``group``: its pid written
    to the group's ``cgroup.procs`` (the path worked out now, so the child only opens and writes)."""
    procs = os.fsencode(group / "cgroup.procs")

    def enter() -> None:
        fd = open_fd(procs, os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    return enter
