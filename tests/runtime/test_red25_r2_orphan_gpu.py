"""Red team 25, R2: a GPU taken back from a kernel lease never came back while a process the kernel
started in its own session (a DataLoader worker, a ``nohup``'d helper that touched CUDA) lived.

Idle reclaim shut the kernel down; the child stayed on the GPU's process list, the lease stayed
``running`` and the GPU went to nobody for as long as the child lived — the same for a lease preempted
or released by an admin — and nothing escalated. Now, as a batch system's epilog does, the scheduler
ends the lease OWNER's processes still on the GPU — SIGTERM, then SIGKILL ``TERM_WAIT_S`` later — after
the kernel-shutdown wait (idle reclaim), at once when the owner's server stopped, or after the stop
grace (taken back otherwise); never another account's nor root's. Audited ``lease_drain_killed`` with
the pids; the lease's end says which were stopped and why.

Real processes (the lease's owner is the OS account ``nobody``; another account's process runs as
``daemon``), the fake NVML at the wire listing them, a driven clock (tests/runtime/test_s20_idle_kernel.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine.idle_kernels import SHUTDOWN_WAIT_S
from jupyter_sched.engine.leftovers import TERM_WAIT_S, owned, signal_owned
from tests.runtime.test_s20_idle_kernel import UUID, Host

OWNER = "nobody"
OWNER_UID = 65534
OTHER_UID = 1  # daemon


class OrphanHost(Host):
    """:class:`Host` whose lease belongs to ``nobody``; its kernel left processes of its own on the GPU."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.children: list[subprocess.Popen[bytes]] = []
        self.asked: list[str] = []

    def spawn(self, uid: int = OWNER_UID, *, ignore_term: bool = False) -> subprocess.Popen[bytes]:
        """A process of ``uid`` in its own session (``setsid``), as a kernel's detached child."""
        script = ("trap '' TERM; " if ignore_term else "") + "echo ready; exec sleep 300"
        child = subprocess.Popen(["/bin/sh", "-c", script], user=uid, start_new_session=True,
                                 stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        self.children.append(child)
        return child

    def shut_kernel(self, kernel_id: str, words: str, user: str = "") -> str | None:
        """The kernel manager's part: the kernel goes; its session's children do not."""
        self.asked.append(kernel_id)
        self.kernel.kill()
        self.kernel.wait()
        return None

    def mine(self, lease_id: str) -> Any:
        return self.view(OWNER, lease_id)

    def close(self) -> None:
        for child in self.children:
            child.kill()
            child.wait()
        super().close()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[OrphanHost]:
    made = OrphanHost(tmp_path)
    made.lease_id = made.lease(OWNER)
    made.step()
    assert made.view(OWNER, made.lease_id).state == "running"
    yield made
    made.close()


def _exited(child: subprocess.Popen[bytes]) -> int | None:
    try:
        return child.wait(timeout=20)  # a signal's delivery, not a timing: bounded only against a hang
    except subprocess.TimeoutExpired:
        return None


def _reclaimed_with_child(host: OrphanHost, **spawn: bool) -> subprocess.Popen[bytes]:
    host.services.set_idle_kernels("shutdown", host.shut_kernel)
    child = host.spawn(**spawn)
    host.on_gpu(host.kernel.pid, child.pid)  # both opened CUDA: NVML lists both
    host.until_reclaimed()
    host.step()  # the first sample after the reclaim: the kernel is asked to shut down
    assert host.asked == ["k-1"] and host.kernel.poll() is not None
    host.on_gpu(child.pid)  # the driver lists what is still alive: the child
    return child


def test_red25_r2_idle_reclaimed_kernels_setsid_child_is_ended_and_the_gpu_goes_to_the_next_user(
        host: OrphanHost) -> None:
    """Failed before: the lease stayed running and bob's pending for as long as the child lived."""
    child = _reclaimed_with_child(host)
    asked_at = host.clock.now()
    bob = host.lease("bob", "k-9")
    while host.clock.now() + timedelta(seconds=10) < asked_at + timedelta(seconds=SHUTDOWN_WAIT_S):
        host.step()
        assert child.poll() is None, "within the kernel-shutdown wait nothing is signalled"
        assert host.mine(host.lease_id).state == "running" and host.view("bob", bob).state == "pending"
    host.step(10)
    assert _exited(child) == -signal.SIGTERM, "SIGTERM first"
    said = host.mine(host.lease_id).message
    assert said.startswith(f"releasing: reclaimed while idle: kernel k-1 was asked to shut down at "
                           f"{asked_at:%H:%M:%S} UTC; process(es) {child.pid} (nobody) of nobody's account still had "
                           f"a context on GPU {UUID}: sent SIGTERM at "), said
    (record,) = host.audit("lease_drain_killed")
    assert record.details["pids"] == [child.pid] and record.details["signal"] == "SIGTERM", record.details
    assert record.details["accounts"] == {str(child.pid): OWNER} and record.user == OWNER
    host.on_gpu()  # the driver let go of its context
    host.step()
    seen = host.mine(host.lease_id)
    assert seen.state == "cancelled", seen
    assert seen.message.endswith(f"; process(es) {child.pid} of nobody's account left on GPU {UUID} were stopped by "
                                 f"the scheduler (SIGTERM): reclaimed while idle: kernel k-1 was asked to shut down at "
                                 f"{asked_at:%H:%M:%S} UTC"), seen.message
    host.step()
    assert host.view("bob", bob).state == "running", "the GPU comes back"
    assert len(host.audit("lease_drain_killed")) == 1, "one audit row"


def test_red25_r2_a_child_that_ignores_sigterm_gets_sigkill_term_wait_later(host: OrphanHost) -> None:
    child = _reclaimed_with_child(host, ignore_term=True)
    host.step(SHUTDOWN_WAIT_S)
    assert child.poll() is None, "SIGTERM ignored"
    assert [r.details["signal"] for r in host.audit("lease_drain_killed")] == ["SIGTERM"]
    assert "those still on it get SIGKILL at " in host.mine(host.lease_id).message
    host.step(TERM_WAIT_S / 2)
    assert child.poll() is None, "not before TERM_WAIT_S"
    host.step(TERM_WAIT_S / 2)
    assert _exited(child) == -signal.SIGKILL
    assert [r.details["signal"] for r in host.audit("lease_drain_killed")][::-1] == ["SIGTERM", "SIGKILL"]
    host.on_gpu()
    host.step()
    seen = host.mine(host.lease_id)
    assert seen.state == "cancelled" and "were stopped by the scheduler (SIGTERM, then SIGKILL): " in seen.message


def test_red25_r2_another_accounts_process_on_the_gpu_is_never_signalled(host: OrphanHost) -> None:
    child = _reclaimed_with_child(host)
    other = host.spawn(OTHER_UID)
    host.on_gpu(child.pid, other.pid)
    host.step(SHUTDOWN_WAIT_S)
    assert _exited(child) == -signal.SIGTERM
    (record,) = host.audit("lease_drain_killed")
    assert record.details["pids"] == [child.pid], "only the owner's"
    host.on_gpu(other.pid)
    for _ in range(int((host.services.engine.stops.grace_s + TERM_WAIT_S) // 10) + 2):
        host.step()
    assert other.poll() is None, "daemon's process lives on"
    assert [r.details["pids"] for r in host.audit("lease_drain_killed")] == [[child.pid]]
    seen = host.mine(host.lease_id)
    # only another account's process is left: the lease ends past the grace (red team 19, R9), not charged to nobody
    assert seen.state == "cancelled" and "of another account still have a context on GPU" in seen.message, seen


def test_red25_r2_the_owners_server_stopping_ends_their_leftovers_at_once(host: OrphanHost) -> None:
    """The hub's release of a stopped server's leases skips a draining lease; it now tells the drain."""
    child = _reclaimed_with_child(host)
    host.step()
    assert child.poll() is None
    host.services.engine.stops.idle_kernels.server_gone(host.lease_id, host.clock.now())
    host.step()
    assert _exited(child) == -signal.SIGTERM, "well before SHUTDOWN_WAIT_S"
    (record,) = host.audit("lease_drain_killed")
    assert record.details["why"].startswith("reclaimed while idle: nobody's server stopped at "), record.details


@pytest.mark.parametrize("by", ["boss", "scheduler"])
def test_red25_r2_a_lease_taken_back_ends_its_owners_leftovers_after_the_stop_grace(host: OrphanHost, by: str) -> None:
    """An admin's release — or a preemption (stop intent ``preempt``) — of a lease whose kernel left a child."""
    child = host.spawn()
    host.on_gpu(child.pid)
    host.step()
    if by == "boss":
        host.services.jobs.cancel(host.services.caller("boss", admin=True), host.lease_id)
    else:
        engine = host.services.engine
        engine.writer.mutate(host.lease_id, lambda r: replace(
            r, stop_intent="preempt", stop_requested_at=host.clock.now(), stop_actor="scheduler",
            job=replace(r.job, message="preempted to return borrowed quota to ops", preempted_by="l-ops")))
    released = host.clock.now()
    grace = host.services.engine.stops.grace_s
    host.step(1)
    said = host.mine(host.lease_id).message
    ends = released + timedelta(seconds=grace)
    assert said.endswith(f"those of nobody's account still on it at {ends:%H:%M:%S} UTC are ended by the scheduler "
                         "(SIGTERM, then SIGKILL)"), said
    assert child.poll() is None
    host.step(grace)
    assert _exited(child) == -signal.SIGTERM
    (record,) = host.audit("lease_drain_killed")
    assert record.details["why"] == ("released by boss" if by == "boss" else "preempted by l-ops"), record.details


def test_red25_r2_signal_owned_never_hits_root_another_account_a_zombie_or_itself() -> None:
    mine = subprocess.Popen(["/bin/sleep", "300"], user=OWNER_UID)
    theirs = subprocess.Popen(["/bin/sleep", "300"], user=OTHER_UID)
    roots = subprocess.Popen(["/bin/sleep", "300"])
    zombie = subprocess.Popen(["/bin/true"], user=OWNER_UID)
    try:
        for _ in range(2000):  # it exits at once, not reaped: a zombie (bounded against a hang)
            if Path(f"/proc/{zombie.pid}/status").read_text().split("State:")[1].split()[0] == "Z":
                break
            time.sleep(0.01)
        pids = [mine.pid, theirs.pid, roots.pid, zombie.pid, os.getpid(), 1, 999_999_999]
        accounts = {mine.pid: OWNER, theirs.pid: "daemon", roots.pid: "root", zombie.pid: OWNER, os.getpid(): "root"}
        assert owned(pids, accounts, OWNER) == {OWNER: [mine.pid, zombie.pid]}
        assert owned(pids, accounts, "root") == {}, "never root's"
        assert signal_owned(pids, OWNER, 0) == [mine.pid], "the zombie has ended; the others are not nobody's"
        assert signal_owned([theirs.pid, roots.pid], "root", signal.SIGTERM) == []
        assert signal_owned([mine.pid], "no-such-account-r25", signal.SIGTERM) == []
        assert signal_owned([mine.pid], OWNER, signal.SIGTERM) == [mine.pid]
        assert _exited(mine) == -signal.SIGTERM
        assert theirs.poll() is None and roots.poll() is None
    finally:
        for p in (mine, theirs, roots, zombie):
            p.kill()
            p.wait()


def test_red25_r2_the_hubs_server_stopped_release_tells_the_drain_of_a_draining_lease() -> None:
    """central.py ``_release`` skipped a draining (idle-reclaimed) lease: its owner's server stopping ended nothing."""
    from types import SimpleNamespace

    from jupyter_sched.engine.clock import ManualClock
    from jupyter_sched.hub.central import HubSchedApp
    from jupyter_sched.hub.liveness import GONE_KERNEL, SERVER_STOPPED
    from tests.runtime.builders import T0

    told: list[tuple[str, object]] = []
    app = HubSchedApp.__new__(HubSchedApp)
    app.services = SimpleNamespace(  # type: ignore[assignment]
        clock=ManualClock(T0),
        engine=SimpleNamespace(stops=SimpleNamespace(idle_kernels=SimpleNamespace(
            server_gone=lambda lease_id, at: told.append((lease_id, at))))))
    draining = {"id": "l-amy", "user": "amy", "kernel_id": "k-1", "stop_requested": {"intent": "idle"}}
    assert app._release([draining], GONE_KERNEL) == [] and told == [], "a kernel gone: the drain's own wait"
    assert app._release([draining], SERVER_STOPPED) == [], "still ended by the drain, not here"
    assert told == [("l-amy", T0)]
