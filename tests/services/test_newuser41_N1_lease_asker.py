"""newuser41 N1: a lease asked by a kernel the server did not start (nbconvert, papermill, ``jupyter console``, VS
Code — ``released_at_exit``) was given back only by that kernel's exit hook. A kernel SIGKILLed or OOM-killed runs
none: its pending lease stayed queued, was later GRANTED to nobody and held a GPU for the idle window, and the next
waiter was told to run ``%gpu release`` in a notebook that had no kernel any more.

Now ``%gpu request`` sends ``asking_process`` (pid, start ticks, host: :mod:`jupyter_sched.asking_process`) and the
leading engine's :class:`~jupyter_sched.services.leases_alive.AskerWatch` ends, each cycle, a lease whose asker on
its own host is gone. Real parts: the application services on a real SQLite store with the real engine, real
processes as askers (``sleep``, SIGKILLed), and a real kernel through the magics' own request body
(:func:`~jupyter_sched.magics.parsing.lease_body`) in the end-to-end check of tests/notebook.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sched import asking_process
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import JobOptions, lease_body
from jupyter_sched.services import Services
from jupyter_sched.services.leases_alive import ASKER_GONE, AskerWatch
from jupyter_sched.services.models import SubmitJobRequest


@pytest.fixture
def asker() -> Iterator[subprocess.Popen[bytes]]:
    """A live process standing for a kernel (killed by the test; reaped here whatever happens)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _of(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    started = asking_process.start_ticks(proc.pid)
    assert started is not None
    return {"pid": proc.pid, "started": started, "host": asking_process.host()}


def _lease(services: Services, user: str, asker: dict[str, Any] | None) -> str:
    body: dict[str, Any] = {"gpus": 1, "released_at_exit": True}
    if asker is not None:
        body["asking_process"] = asker
    return services.leases.request(services.caller(user, admin=False), SubmitJobRequest(**body)).id


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)  # no exit hook runs
    proc.wait()


def _state(services: Services, job_id: str) -> tuple[str, str | None]:
    job = services.store.get_job(job_id).job
    return job.state.value, job.message


def test_newuser41_N1_a_killed_kernels_pending_lease_is_withdrawn_never_granted(
        services: Services, asker: subprocess.Popen[bytes]) -> None:
    ann = services.caller("ann", admin=False)
    busy = [services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=["sleep", "60"])).id for _ in range(4)]
    services.engine.tick()
    lease = _lease(services, "ann", _of(asker))
    services.engine.tick()
    assert _state(services, lease)[0] == "pending"
    services.engine.tick()
    assert _state(services, lease)[0] == "pending", "a live asker keeps its lease"
    _kill(asker)
    services.engine.tick()  # the watch runs among the leader's hooks of this cycle
    state, message = _state(services, lease)
    # failed before: still pending, later granted to nobody
    assert state == "cancelled", (state, message)
    assert message == f"request withdrawn by the server before any GPU was granted: {ASKER_GONE}", message
    for job_id in busy:
        services.jobs.cancel(ann, job_id)
    services.engine.tick()
    assert _state(services, lease)[0] == "cancelled", "never granted once its GPUs free"
    audited = [e for e in services.store.list_events(job_id=lease) if e.action == "lease_released"]
    assert audited and audited[0].message == ASKER_GONE, audited


def test_newuser41_N1_a_killed_kernels_granted_lease_is_released_and_the_next_waiter_gets_the_gpu(
        services: Services, asker: subprocess.Popen[bytes]) -> None:
    ann = services.caller("ann", admin=False)
    busy = [services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=["sleep", "60"])).id for _ in range(3)]
    lease = _lease(services, "ann", _of(asker))
    services.engine.tick()
    assert _state(services, lease)[0] == "running"
    waiter = services.leases.request(ann, SubmitJobRequest(gpus=1)).id
    services.engine.tick()
    assert _state(services, waiter)[0] == "pending"
    _kill(asker)
    for _ in range(3):  # released this cycle; its GPU granted to the waiter within the next
        services.engine.tick()
    state, message = _state(services, lease)
    assert state == "cancelled" and message == f"released by the server: {ASKER_GONE}", (state, message)
    assert _state(services, waiter)[0] == "running", _state(services, waiter)
    for job_id in [*busy, waiter]:
        services.jobs.cancel(ann, job_id)
    services.engine.tick()


def test_newuser41_N1_the_watch_acts_only_on_its_own_host_and_a_reused_pid_is_gone(
        services: Services, asker: subprocess.Popen[bytes]) -> None:
    """A lease asked on another host (or in another pid namespace) is never ended here; a pid now held by another
    process (another start) counts as gone; a lease without asking_process (an older client) is left as before."""
    mine = _of(asker)
    elsewhere = _lease(services, "ann", {**mine, "pid": 999_999_99, "host": "other-boot/pid:[1]"})
    reused = _lease(services, "ann", {**mine, "started": mine["started"] + 1})
    older = _lease(services, "ann", None)
    alive = _lease(services, "ann", mine)
    ended = AskerWatch(services.ctx, services.jobs)()
    assert ended == [reused], ended
    assert [_state(services, j)[0] for j in (elsewhere, older, alive)] == ["pending"] * 3
    assert _state(services, reused) == ("cancelled", f"request withdrawn by the server before any GPU was granted: "
                                                     f"{ASKER_GONE}")
    for job_id in (elsewhere, older, alive):
        services.jobs.cancel(services.caller("ann", admin=False), job_id)
    services.engine.tick()


def test_newuser41_N1_where_not_every_process_is_seen_only_an_asker_once_seen_running_counts(
        services: Services) -> None:
    """hidepid: another account's kernel is invisible, not gone — never ended unless this watch saw it run."""
    lease = _lease(services, "ann", {"pid": 4242, "started": 7, "host": "h"})
    seen = {"now": False}
    watch = AskerWatch(services.ctx, services.jobs, here="h", running=lambda pid, started: seen["now"])
    watch.sees_all = False
    assert watch() == [], "never seen running: left alone"
    seen["now"] = True
    assert watch() == []
    seen["now"] = False
    assert watch() == [lease]


@pytest.mark.parametrize(("value", "said"), [
    ({"pid": "1", "started": 1, "host": "h"}, "asking_process.pid must be a process id"),
    ({"pid": 0, "started": 1, "host": "h"}, "asking_process.pid must be a process id"),
    ({"pid": 1, "started": -1, "host": "h"}, "asking_process.started must be a whole number"),
    ({"pid": 1, "started": 1, "host": "x" * 201}, "asking_process.host must be 1 to 200"),
    ({"pid": 1, "started": 1}, "must be an object of exactly pid, started and host"),
])
def test_newuser41_N1_a_bad_asking_process_is_refused_naming_the_field(
        services: Services, value: Any, said: str) -> None:
    with pytest.raises(ValidationError) as err:
        services.leases.request(services.caller("ann", admin=False),
                                SubmitJobRequest(gpus=1, released_at_exit=True, asking_process=value))
    assert err.value.field == "asking_process" and said in str(err.value), err.value


def test_newuser41_N1_asking_process_goes_with_released_at_exit_only(services: Services) -> None:
    with pytest.raises(ValidationError) as err:
        services.leases.request(services.caller("ann", admin=False), SubmitJobRequest(
            gpus=1, kernel_id="k-1", asking_process={"pid": 1, "started": 1, "host": "h"}))
    assert err.value.field == "asking_process", err.value


def test_newuser41_N1_the_magic_sends_this_kernels_process_with_a_kernelless_lease() -> None:
    body = lease_body(JobOptions(gpus=1), kernel_id=None)
    assert body["released_at_exit"] is True
    assert body["asking_process"] == {"pid": os.getpid(), "started": asking_process.start_ticks(os.getpid()),
                                      "host": asking_process.host()}, body
    assert "asking_process" not in lease_body(JobOptions(gpus=1), kernel_id="k-1"), "a server-started kernel's: as before"
    assert asking_process.running(os.getpid(), body["asking_process"]["started"])
