"""red32 R7, its residual window (session 33): ``subprocess.Popen`` waits on the calling thread — the engine's —
until its child's ``execve`` (it reads the error pipe until close-on-exec closes it). With ``Popen(user=)`` that child
is the job owner's process from its ``setuid`` to its ``execve``: the owner's SIGSTOP landing there (``kill -STOP -1``
in a loop hits it) held the engine, and no job started, stopped or ended for anyone, for as long as the owner liked.

Now the child Popen waits for is root's up to its ``execve`` of the service's interpreter, which becomes the owner and
execs the wrapper only after Popen returned; a wrapper kept from beginning is ended with the reason naming its account.

The window is microseconds wide, so the tests make the owner's SIGSTOP land in it at once: for today's ``Popen(user=)``
a ``preexec_fn`` (which Popen runs after its ``setuid``, before its ``execve``), for the drop step its test-only hook
(``_AFTER_DROP_FOR_TESTS``). Real executor, real OS accounts (``s33p…``), real wrapper processes; counts and states,
and one generous liveness bound on ``start()`` (it must return at all).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from jupyter_sched.executors import local, owner_paths, runas
from jupyter_sched.executors.base import ExecutorEvent, Exited
from jupyter_sched.executors.local import LAUNCH_READ_S, LocalExecutor
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.model import Allocation
from tests.accounts import Account, account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import FakeMonotonic, wait_until

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture(scope="module")
def accounts() -> Iterator[tuple[Account, Account, Path]]:
    """Two throw-away accounts (the stuck job's owner, another user) and a folder both may enter."""
    with os_accounts(2, prefix="s33p") as (stuck, other), shared_dir() as root:
        yield stuck, other, root


def _owner_held(monkeypatch: pytest.MonkeyPatch, uid: int, hold: str) -> None:
    """Make ``uid``'s job's process run ``hold`` (Python) the instant it is the owner's and before its ``execve``:
    in today's ``Popen(user=)`` child (its ``preexec_fn``) and in the drop step (its test hook)."""
    real = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        if kwargs.get("user") == uid:
            kwargs["preexec_fn"] = lambda: exec(hold)
        return real(*args, **kwargs)

    monkeypatch.setattr(local.subprocess, "Popen", popen)
    monkeypatch.setattr(runas, "_AFTER_DROP_FOR_TESTS", f"if u=={uid}: {hold}", raising=False)


def _start_returns(ex: LocalExecutor, owner: Account, job_id: str) -> None:
    """Start ``job_id`` as ``owner`` on a thread; fail when ``start()`` does not return (the engine's thread held)."""
    job = make_job(job_id, user=owner.name, command=("python3", "-c", "print('stuck ran', flush=True)"))
    returned = threading.Event()
    starter = threading.Thread(target=lambda: (ex.start(job, Allocation("n1", ("GPU-0",)),
                                                        AccountMapping().resolve(owner.name)), returned.set()),
                               daemon=True)
    starter.start()
    _returns(returned, owner, "start() waited on a process its owner stopped (the engine's thread is held)")


def _returns(returned: threading.Event, owner: Account, why: str) -> None:
    """Fail with ``why`` when ``returned`` is not set at all; today's code: let the held thread go first."""
    try:
        assert returned.wait(60), why
    finally:
        if not returned.is_set():  # before the accounts are removed
            for child in psutil.Process().children(recursive=True):
                if child.uids().real == owner.uid:
                    os.kill(child.pid, signal.SIGCONT)
                    os.kill(child.pid, signal.SIGKILL)


def _both_end(ex: LocalExecutor, other: Account, clock: FakeMonotonic | None = None) -> dict[str, Exited]:
    """Start a job of ``other`` while the stuck one is held; poll until both ended (``clock``: advanced past the
    launch deadline once the other job has run)."""
    ex.start(make_job("j-other", user=other.name, command=("python3", "-c", "print('other ran', flush=True)")),
             Allocation("n1", ("GPU-1",)), AccountMapping().resolve(other.name))
    seen: list[ExecutorEvent] = []

    def ended() -> bool:
        seen.extend(ex.poll())
        done = {e.job_id for e in seen if isinstance(e, Exited)}
        if clock is not None and "j-other" in done and clock.value < 1000 + LAUNCH_READ_S:
            clock.advance(LAUNCH_READ_S + 1)
        return done >= {"j-stuck", "j-other"}

    wait_until(ended, "both jobs' ends")
    return {e.job_id: e for e in seen if isinstance(e, Exited)}


def test_red32_r7_popen_owner_stopping_a_starting_job_holds_nobody(
        accounts: tuple[Account, Account, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGSTOP as the process becomes the owner's: ``start()`` returns, another user's job starts and runs, and the
    stuck one is ended at once (stopped-wrapper rule) with words naming its account; its command never ran."""
    stuck, other, root = accounts
    _owner_held(monkeypatch, stuck.uid, "os.kill(os.getpid(), 19)")
    ex = LocalExecutor(root / "stopped", job_python=account_python() or "", clean_env=True, require_run_as=True)
    _start_returns(ex, stuck, "j-stuck")
    pid = int(ex._jobs["j-stuck"].handle.data["pid"])
    wait_until(lambda: psutil.Process(pid).status() == psutil.STATUS_STOPPED, "the owner's process stopped")
    ends = _both_end(ex, other)
    assert ends["j-other"].exit_code == 0, ends["j-other"]
    assert "other ran" in (ex.job_dir("j-other") / "output.log").read_text()
    said = ends["j-stuck"].message
    assert ends["j-stuck"].exit_code != 0, ends["j-stuck"]
    assert "its wrapper was stopped (by SIGSTOP) before it began" in said, said
    assert f"account {stuck.name} (uid {stuck.uid})" in said and "never ran" in said, said
    log = ex.job_dir("j-stuck") / "output.log"
    assert not log.exists() or "stuck ran" not in log.read_text(errors="replace")


def test_red32_r7_popen_a_start_that_never_begins_is_ended_at_its_deadline(
        accounts: tuple[Account, Account, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Held without being stopped (a frozen cgroup, a process that never reaches its execve: here a sleep): the
    other user's job runs, and the stuck one is ended once LAUNCH_READ_S passed, the reason naming its account."""
    stuck, other, root = accounts
    _owner_held(monkeypatch, stuck.uid, "__import__('time').sleep(3600)")
    clock = FakeMonotonic()
    ex = LocalExecutor(root / "held", job_python=account_python() or "", clean_env=True, require_run_as=True,
                       monotonic=clock)
    _start_returns(ex, stuck, "j-stuck")
    ends = _both_end(ex, other, clock)
    assert ends["j-other"].exit_code == 0, ends["j-other"]
    said = ends["j-stuck"].message
    assert ends["j-stuck"].exit_code != 0, ends["j-stuck"]
    assert f"its wrapper did not read its launch within {LAUNCH_READ_S:.0f} s of its start as account " \
           f"{stuck.name} (uid {stuck.uid})" in said, said
    assert "never ran" in said, said


def test_red32_r7_popen_a_path_check_its_owner_stops_ends_at_its_timeout(
        accounts: tuple[Account, Account, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same window in the submit's path checks run as the owner (red32 R8's, on a shared request thread): Popen's
    wait is not under the check's timeout, so it held the thread for good. Now the check ends at its timeout, says
    nothing (the job's start tells), leaves no process, and another account's check still tells the truth."""
    stuck, other, _ = accounts
    _owner_held(monkeypatch, stuck.uid, "os.kill(os.getpid(), 19)")
    monkeypatch.setattr(owner_paths, "CHECK_TIMEOUT_S", 1.0)
    missing = f"/nonexistent-{stuck.name}"
    found: list[object] = []
    returned = threading.Event()
    spec = make_job("j-check", user=stuck.name, command=("/bin/true",), working_dir=missing).spec
    threading.Thread(target=lambda: (found.append(owner_paths.missing_as_owner(
        spec, AccountMapping().resolve(stuck.name))), returned.set()), daemon=True).start()
    _returns(returned, stuck, "a path check waited on a process its owner stopped (a request thread is held)")
    assert found == [None]
    wait_until(lambda: not [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == stuck.uid],
               "the stopped check's end")
    spec = make_job("j-check", user=other.name, command=("/bin/true",), working_dir=missing).spec
    assert owner_paths.missing_as_owner(spec, AccountMapping().resolve(other.name)) == \
        ("working_dir", missing, "does not exist")
