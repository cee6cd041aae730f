"""Verify 26, V6 and V7: GPU processes escaping a lease's end (red team 25, R2 left two ways open).

V6: the drain sent one SIGTERM round and one SIGKILL round. A process whose SIGTERM handler leaves a
``setsid`` helper that opens the GPU the moment its parent dies kept the GPU for good — the helper,
listed after the SIGKILL round, was never signalled. Now an owner's process on the GPU after the
SIGKILL round gets SIGKILL at once, in up to ``KILL_ROUNDS`` rounds; one outliving them is audited
``lease_drain_survived``.

V7: the owner's OWN release never killed: release the lease, leave a ``setsid`` child on the GPU, and
the GPU was held for ever (immune to idle reclaim, preemption and the admin's release, which did
nothing and was not audited). Now every release sweeps the owner's processes after the stop grace,
the release's answer says so, and an admin's release of a lease its owner released takes it over
(audited ``cancel_requested`` by the admin).

Real processes of ``nobody`` and the fake NVML at the wire (tests/runtime/test_red25_r2_orphan_gpu.py).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path

from jupyter_sched.engine.leftovers import KILL_ROUNDS, TERM_WAIT_S
from jupyter_sched.wording.jobs import cancel_outcome
from tests.runtime import test_red25_r2_orphan_gpu as r25
from tests.runtime.test_red25_r2_orphan_gpu import OWNER, OWNER_UID, OrphanHost, _exited, _reclaimed_with_child

host = r25.host  # the fixture: nobody's running lease on the fake NVML host


def _ended(pid: int) -> bool:
    """Whether ``pid`` (not this process's child) ended; bounded against a hang, not a timing."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return True
    try:
        return bool(select.select([handle], [], [], 20)[0])
    finally:
        os.close(handle)


def _phoenix(host: OrphanHost) -> tuple[subprocess.Popen[bytes], bytes]:
    """A (``setsid``) whose SIGTERM handler starts helper B in a session of its own (``sleep <marker>``,
    found by its command line); A itself goes on (B is the one that opens the GPU once A dies)."""
    marker = f"300.{os.getpid()}{len(host.children)}"
    script = (f"trap 'setsid sleep {marker} </dev/null >/dev/null 2>&1 &' TERM; echo ready; "
              "while :; do sleep 300 & wait $!; done")
    child = subprocess.Popen(["/bin/sh", "-c", script], user=OWNER_UID, start_new_session=True,
                             stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    host.children.append(child)
    return child, f"sleep\0{marker}\0".encode()


def _helper_pid(marker: bytes) -> int:
    for _ in range(2000):  # bounded against a hang
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "cmdline").read_bytes() == marker:
                    return int(entry.name)
            except OSError:
                continue
        select.select([], [], [], 0.01)
    raise AssertionError("the SIGTERM handler started no helper")


def test_verify26_v6_a_helper_that_opens_the_gpu_after_the_sigkill_round_is_killed_and_the_gpu_granted(
        host: OrphanHost) -> None:
    """Failed before: B was never signalled; the lease stayed running and bob pending for good."""
    host.services.set_idle_kernels("shutdown", host.shut_kernel)
    a, marker = _phoenix(host)
    host.on_gpu(host.kernel.pid, a.pid)
    host.until_reclaimed()
    host.step()
    host.on_gpu(a.pid)
    bob = host.lease("bob", "k-9")
    b = 0
    try:
        host.step(60)  # the kernel-shutdown wait: SIGTERM
        b = _helper_pid(marker)
        assert a.poll() is None, "A goes on after its SIGTERM"
        host.step(TERM_WAIT_S)
        assert _exited(a) == -signal.SIGKILL
        host.on_gpu(b)  # B opens the GPU the moment A dies
        host.step()
        assert _ended(b), "B, on the GPU after the SIGKILL round, is killed at once"
        rows = host.audit("lease_drain_killed")[::-1]
        assert [(r.details["pids"], r.details["signal"]) for r in rows] == [
            ([a.pid], "SIGTERM"), ([a.pid], "SIGKILL"), ([b], "SIGKILL")], [r.details for r in rows]
        assert rows[-1].details["round"] == 2
        said = host.mine(host.lease_id).message
        assert f"process(es) {b} (nobody) of nobody's account still had a context on GPU" in said, said
        assert f"they appeared after the SIGKILL round; round 2 of at most {KILL_ROUNDS}" in said, said
        host.on_gpu()
        host.step()
        seen = host.mine(host.lease_id)
        assert seen.state == "cancelled", seen
        assert f"process(es) {a.pid}, {b} of nobody's account" in seen.message, seen.message
        host.step()
        assert host.view("bob", bob).state == "running", "the GPU comes back"
    finally:
        if b and not _ended(b):
            os.kill(b, signal.SIGKILL)


def test_verify26_v6_a_process_outliving_kill_rounds_is_audited_for_an_admin(host: OrphanHost) -> None:
    child = _reclaimed_with_child(host, ignore_term=True)
    host.step(60)
    host.step(TERM_WAIT_S)
    assert _exited(child) == -signal.SIGKILL  # round 1
    for round_ in range(2, KILL_ROUNDS + 1):
        again = host.spawn()
        host.on_gpu(again.pid)
        host.step()
        assert _exited(again) == -signal.SIGKILL, round_
    last = host.spawn()
    host.on_gpu(last.pid)
    host.step()
    host.step()
    assert last.poll() is None, "bounded: nothing more is sent"
    assert len(host.audit("lease_drain_killed")) == 1 + KILL_ROUNDS
    (row,) = host.audit("lease_drain_survived")
    assert row.details["pids"] == [last.pid] and row.details["rounds"] == KILL_ROUNDS, row.details
    seen = host.mine(host.lease_id)
    assert seen.state == "running"
    assert seen.message.endswith(f"after {KILL_ROUNDS} rounds of SIGKILL by the scheduler (each round left a new "
                                 "process on it): the GPU stays held, given to nobody and counted as this lease's, "
                                 "until an admin ends them"), seen.message


def test_verify26_v7_the_owners_own_release_ends_their_leftovers_after_the_stop_grace(host: OrphanHost) -> None:
    """Failed before: the child lived on, the lease stayed running for good, nothing audited."""
    child = host.spawn()
    host.on_gpu(child.pid)
    host.step()
    answer = host.services.jobs.cancel(host.services.caller(OWNER, admin=False), host.lease_id)
    assert answer.message == ("release requested by nobody; any process of nobody's account still on its GPU after "
                              "the stop grace is ended by the scheduler (SIGTERM, then SIGKILL)"), answer.message
    said = cancel_outcome(None, answer.to_wire())  # what %gpu release prints
    assert said.endswith("(if CUDA was initialised, restart the kernel; the scheduler ends any process of nobody's "
                         "account still on it after the stop grace)"), said
    grace = host.services.engine.stops.grace_s
    host.step(1)
    assert child.poll() is None, "not within the stop grace"
    host.step(grace)
    assert _exited(child) == -signal.SIGTERM
    (record,) = host.audit("lease_drain_killed")
    assert record.details["why"] == "released by nobody", record.details
    host.on_gpu()
    host.step()
    assert host.mine(host.lease_id).state == "cancelled"


def test_verify26_v7_an_admins_release_of_a_lease_its_owner_released_takes_it_over_audited(
        host: OrphanHost) -> None:
    """Failed before: the admin's DELETE answered 200, changed nothing and left no audit row."""
    child = host.spawn()
    host.on_gpu(child.pid)
    host.step()
    host.services.jobs.cancel(host.services.caller(OWNER, admin=False), host.lease_id)
    again = host.services.jobs.cancel(host.services.caller(OWNER, admin=False), host.lease_id)
    assert again.already_stopping, "the owner's second release is a no-op"
    boss = host.services.jobs.cancel(host.services.caller("boss", admin=True), host.lease_id)
    assert boss.message.startswith("release requested by boss (after nobody's); any process of nobody's"), boss.message
    rows = [r for r in host.audit("cancel_requested") if r.job_id == host.lease_id]
    assert [r.actor for r in rows][::-1] == [OWNER, "boss"], [(r.actor, r.message) for r in rows]
    host.step(host.services.engine.stops.grace_s + 1)
    assert _exited(child) == -signal.SIGTERM
    (record,) = host.audit("lease_drain_killed")
    assert record.details["why"] == "released by boss", record.details
