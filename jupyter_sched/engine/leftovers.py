"""Signal a lease owner's processes left on a GPU taken back from the lease (red team 25, R2).

A kernel that started a child in its own session (a DataLoader worker, a ``nohup``'d helper that
touched CUDA) leaves that child on the GPU when the kernel is shut down: the GPU's process list
(NVML) still shows it, so the lease stays held and the GPU goes to nobody for as long as it lives.
As a batch system's epilog does (Slurm's cgroup teardown, a Kubernetes pod's), the scheduler ends
such processes — only the lease OWNER's, never another account's nor root's — SIGTERM first, SIGKILL
after :data:`TERM_WAIT_S` (:mod:`.stops` decides when). An owner's process that appears on the GPU after
that (verify 26, V6: a SIGTERM handler that leaves a ``setsid`` helper opening the GPU the moment its
parent dies) gets SIGKILL at once, in up to :data:`KILL_ROUNDS` rounds; what outlives them is audited
``lease_drain_survived`` for an admin.

Each process is signalled through a pidfd opened BEFORE its owner is read: a pid that ended and was
reused by someone else's process between the GPU sample and the signal is never hit (the pidfd
names the old process; signalling it fails).
"""

from __future__ import annotations

import os
import pwd
import signal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..model import Job
from ..model.units import clock_text
from .transitions import JobWriter

__all__ = ["KILL_ROUNDS", "TERM_WAIT_S", "Leftovers", "owned", "signal_owned"]

TERM_WAIT_S = 10.0
"""Seconds between the SIGTERM to a lease owner's leftover processes and the SIGKILL to those of
them still on the GPU (Slurm's ``KillWait`` is 30 s; a process with nothing to save ends at once)."""

KILL_ROUNDS = 10
"""SIGKILL rounds at most per taken-back lease (the first after :data:`TERM_WAIT_S`, then one per drain
pass that finds an owner's process on the GPU not yet killed): a process that re-spawns onto the GPU
each time it is killed is left to an admin after that (audited ``lease_drain_survived``)."""


def _service_account() -> str | None:
    """This server's own account when it is not root (embedded mode: its kernels run as it), else None."""
    if os.getuid() == 0:
        return None
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return None


_SERVICE_ACCOUNT = _service_account()


def owned(pids: Iterable[int], accounts: Mapping[int, str], user: str) -> dict[str, list[int]]:
    """Those of ``pids`` the lease owner ``user`` may lose, by account (``accounts``: pid → account name,
    as the GPU's process list was read): ``user``'s own — and in embedded mode, where this server is
    not root and runs its user's kernels as itself, this server's account's. Never root's."""
    mine = {user} | ({_SERVICE_ACCOUNT} if _SERVICE_ACCOUNT else set())
    out: dict[str, list[int]] = {}
    for pid in pids:
        account = accounts.get(pid)
        if account in mine and account != "root":
            out.setdefault(account, []).append(pid)
    return out


def _uids(pid: int) -> tuple[int, ...] | None:
    """The real, effective, saved and filesystem uids of ``pid`` (``/proc/<pid>/status``), or None
    (unreadable, or a zombie: it has ended, only its exit status is left to its parent)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("State:") and line.split()[1:2] in (["Z"], ["X"]):
                    return None
                if line.startswith("Uid:"):
                    return tuple(int(v) for v in line.split()[1:5])
    except (OSError, ValueError):
        return None
    return None


def signal_owned(pids: Iterable[int], account: str, signum: int) -> list[int]:
    """Send ``signum`` to those of ``pids`` run wholly as ``account`` (every uid of the process is
    that account's; never uid 0, never this server's own process or its parent).

    Args:
        pids: process ids (as the GPU's process list names them).
        account: the OS account whose processes may be signalled (the lease's owner).
        signum: ``signal.SIGTERM`` or ``signal.SIGKILL``.

    Returns:
        The pids signalled, in the order given; a pid gone, another account's, or not signallable
        (permission) is left out — nothing raises.
    """
    try:
        uid = pwd.getpwnam(account).pw_uid
    except (KeyError, TypeError, ValueError):
        return []
    if uid == 0:
        return []
    spared = {os.getpid(), os.getppid()}
    sent = []
    for pid in pids:
        if pid <= 1 or pid in spared:
            continue
        try:
            handle = os.pidfd_open(pid)
        except OSError:
            continue  # gone already
        try:
            uids = _uids(pid)
            if uids is None or any(u != uid for u in uids):
                continue
            signal.pidfd_send_signal(handle, signum)
        except OSError:
            continue
        finally:
            os.close(handle)
        sent.append(pid)
    return sent


Say = Callable[[Job, str, list[int]], bool]
"""The drain's :meth:`~.stops.StopReconciler._say`: write the lease's message once per key."""


@dataclass
class Ending:
    """A taken-back lease's leftover processes being ended: since ``at`` (the SIGTERM), ``why``, and the
    pids signalled (``killed`` ``[0]``: the SIGKILL pass found none left), the SIGKILL ``rounds`` that
    signalled any, and whether what outlived :data:`KILL_ROUNDS` was audited (``survived``)."""

    at: datetime
    why: str
    termed: list[int] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    rounds: int = 0
    survived: bool = False


class Leftovers:
    """The leases whose owner's leftover processes the drain is ending, by lease id (module docstring).

    Args:
        writer: the lease's audit records (``lease_drain_killed``).
        say: writes the lease's message once per key.
    """

    def __init__(self, writer: JobWriter, say: Say) -> None:
        self.writer = writer
        self.say = say
        self._ends: dict[str, Ending] = {}

    def get(self, lease_id: str) -> Ending | None:
        """The ending under way for ``lease_id``, if any."""
        return self._ends.get(lease_id)

    def pop(self, lease_id: str, default: None = None) -> Ending | None:
        """Forget ``lease_id`` (it ended)."""
        return self._ends.pop(lease_id, default)

    def clear(self) -> None:
        """A new term: nothing is under way."""
        self._ends.clear()

    def end(self, job: Job, gpus: str, left: Mapping[str, list[int]], accounts: Mapping[int, str], now: datetime,
            why: str) -> str | None:
        """End the lease owner's processes ``left`` (by account) still on GPU(s) ``gpus`` of the taken-back
        lease ``job``: SIGTERM at the first call, SIGKILL :data:`TERM_WAIT_S` later to those still listed;
        each signal said (the lease's message) and audited ``lease_drain_killed`` with the pids.

        Returns:
            The words the lease's end adds (``"; process(es) 12 of ana's account … were stopped by the
            scheduler (SIGTERM): why"``), or None when nothing was signalled by this call.
        """
        end = self._ends.get(job.id)
        later = False
        if end is None:
            end = self._ends[job.id] = Ending(at=now, why=why)
            signum, name = signal.SIGTERM, "SIGTERM"
        elif not end.killed:
            if now < end.at + timedelta(seconds=TERM_WAIT_S):
                return None
            signum, name = signal.SIGKILL, "SIGKILL"
        else:  # verify 26, V6: an owner's process on the GPU since the SIGKILL round (re-spawned) — no new wait
            done = {*end.termed, *end.killed}
            left = {account: new for account, pids in left.items() if (new := [p for p in pids if p not in done])}
            if not left:
                return None
            if end.rounds >= KILL_ROUNDS:
                self._survived(job, gpus, end, left, accounts)
                return None
            signum, name, later = signal.SIGKILL, "SIGKILL", True
        sent = [pid for account, pids in left.items() for pid in signal_owned(pids, account, signum)]
        if signum == signal.SIGKILL:
            end.killed = [*(p for p in end.killed if p), *sent] or [0]
            end.rounds += bool(sent)
        else:
            end.termed = sent
        if not sent:
            return None
        named = ", ".join(f"{pid} ({accounts.get(pid, 'unknown account')})" for pid in sent)
        kill_at = end.at + timedelta(seconds=TERM_WAIT_S)
        then = (f"those still on it get SIGKILL at {clock_text(kill_at, now, seconds=True)}"
                if signum == signal.SIGTERM else
                f"they appeared after the SIGKILL round; round {end.rounds} of at most {KILL_ROUNDS}" if later
                else "they are gone at once")
        words = (f"releasing: {why}; process(es) {named} of {job.spec.user}'s account still had a context on GPU "
                 f"{gpus}: sent {name} at {clock_text(now, now, seconds=True)} by the scheduler ({then}); the "
                 f"GPU goes to other work once they are gone")
        self.say(job, words, [-6 if signum == signal.SIGTERM else -7, *sent])
        self.writer.audit(job, "lease_drain_killed", words, {"pids": sent, "signal": name, "gpu_uuids": gpus.split(", "),
                                                              "accounts": {str(p): accounts.get(p, "unknown account")
                                                                           for p in sent}, "why": why,
                                                              "round": end.rounds})
        stopped = ", ".join(map(str, sorted({*end.termed, *(p for p in end.killed if p)})))
        signals = "SIGTERM" + (", then SIGKILL" if end.killed and end.killed != [0] else "")
        return (f"; process(es) {stopped} of {job.spec.user}'s account left on GPU {gpus} were stopped by the "
                f"scheduler ({signals}): {why}")

    def _survived(self, job: Job, gpus: str, end: Ending, left: Mapping[str, list[int]],
                  accounts: Mapping[int, str]) -> None:
        """The owner's processes ``left`` on GPU(s) ``gpus`` after :data:`KILL_ROUNDS` SIGKILL rounds:
        said (the lease's message) and audited ``lease_drain_survived`` once; nothing more is sent."""
        if end.survived:
            return
        end.survived = True
        pids = sorted(p for found in left.values() for p in found)
        named = ", ".join(f"{pid} ({accounts.get(pid, 'unknown account')})" for pid in pids)
        words = (f"releasing: {end.why}; process(es) {named} of {job.spec.user}'s account still have a context on GPU "
                 f"{gpus} after {KILL_ROUNDS} rounds of SIGKILL by the scheduler (each round left a new process on "
                 f"it): the GPU stays held, given to nobody and counted as this lease's, until an admin ends them")
        self.say(job, words, [-8, *pids])
        self.writer.audit(job, "lease_drain_survived", words, {
            "pids": pids, "accounts": {str(p): accounts.get(p, "unknown account") for p in pids},
            "killed": [p for p in end.killed if p], "rounds": end.rounds, "gpu_uuids": gpus.split(", "), "why": end.why})
