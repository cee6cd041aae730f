"""s33-popen's finding (high): ``FencedLocalProcessSpawner`` kept ``LocalProcessSpawner.start``, which calls
``Popen(cmd, preexec_fn=<fences; setuid>)`` on the hub's event loop. Popen waits for its child's ``execve``, and that
child was the user's from its ``setuid`` on: the user's ``kill(-1, SIGSTOP)`` loop (a batch job of theirs runs as
them) held Popen and with it the whole hub — no login, spawn, proxy route or API call for anyone.

Now Popen's child is root's until its ``execve`` of the root step (``fence.DROP_TO_SERVER``), which becomes the account
and execs the server after ``start`` returned; the spawner's environment reaches the server out of band (a memory
file), never the root step's own environment (an admin's ``LD_PRELOAD``/``LD_LIBRARY_PATH`` into a user-writable place
would load as root).

In process, no hub: the spawner is built with a minimal user object (as JupyterHub's own spawner tests do) and started
on an asyncio loop, as the hub does. The window is microseconds wide, so the user's SIGSTOP is made to land in it: in
today's code after upstream's ``setuid`` (its ``set_user_setuid``), in the root step by its test hook
(``_AFTER_DROP_FOR_TESTS``). Real OS account (``s33s…``), real processes, real cgroup groups where the host has them;
one generous watchdog (30 s) lets a held loop go, so today's code fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jupyterhub.spawner
import psutil
import pytest
from jupyterhub.objects import Hub

from jupyter_sched.executors.server_fence import ServerFence, server_fence_problem
from jupyter_sched.executors.tracking import CGROUP_ROOT
from jupyter_sched.hub import fence
from jupyter_sched.hub.fence import FencedLocalProcessSpawner
from tests.accounts import Account, account_python, os_accounts, remove_group_when_empty, skip_reason

pytestmark = pytest.mark.skipif(skip_reason() is not None or account_python() is None,
                                reason=skip_reason() or "no interpreter every account can run")

WATCHDOG_S = 30.0

SERVER = """
import json, os, sys
seen = {"uid": os.getuid(), "euid": os.geteuid(), "cwd": os.getcwd(), "env": dict(os.environ), "argv": sys.argv[1:],
        "groups": {g.split(":", 2)[1]: g.split(":", 2)[2] for g in open("/proc/self/cgroup").read().split()}}
with open(os.path.join(os.environ["HOME"], "server-seen.json"), "w") as fh:
    json.dump(seen, fh)
"""


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    with os_accounts(1, prefix="s33s") as (made,):
        yield made
    for group in (ServerFence().group(made.uid), CGROUP_ROOT / "pids" / "jupyter_sched" / "servers" / f"u{made.uid}"):
        remove_group_when_empty(group)  # the account's processes were killed with it: the group empties a moment later


@pytest.fixture
def held(account: Account, monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The user's SIGSTOP lands the instant the spawned process is theirs, before its ``execve``: today's code after
    upstream's ``setuid`` (its preexec), the root step by its test hook. Yields an event set when the watchdog had to
    let a held loop go (SIGKILL to the account's processes)."""
    upstream = jupyterhub.spawner.set_user_setuid

    def setuid_then_stop(name: str, chdir: bool = True) -> Callable[[], None]:
        setuid = upstream(name, chdir)

        def preexec() -> None:
            setuid()
            os.kill(os.getpid(), signal.SIGSTOP)

        return preexec

    monkeypatch.setattr(jupyterhub.spawner, "set_user_setuid", setuid_then_stop)
    monkeypatch.setattr(fence, "_AFTER_DROP_FOR_TESTS", "os.kill(os.getpid(),19)", raising=False)
    rescued = threading.Event()

    def rescue() -> None:
        rescued.set()
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if child.uids().real == account.uid:
                    child.kill()

    watchdog = threading.Timer(WATCHDOG_S, rescue)
    watchdog.start()
    try:
        yield rescued
    finally:
        watchdog.cancel()


def _spawner(account: Account, **traits: Any) -> FencedLocalProcessSpawner:
    user = SimpleNamespace(name=account.name, url=f"/user/{account.name}/", escaped_name=account.name)
    return FencedLocalProcessSpawner(user=user, hub=Hub(), cmd=[account_python(), "-c", SERVER],
                                     oauth_client_id=f"jupyterhub-user-{account.name}", api_token="s33s-token",
                                     interrupt_timeout=0, term_timeout=0, kill_timeout=30, **traits)


async def _until(what: str, check: Callable[[], bool]) -> None:
    """Wait for ``check`` on the loop (sleeps let other coroutines run); fail with ``what`` after 30 s."""
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def _stopped_as(pid: int, uid: int) -> bool:
    with contextlib.suppress(psutil.Error):
        proc = psutil.Process(pid)
        return bool(proc.status() == psutil.STATUS_STOPPED and proc.uids().real == uid)
    return False


async def _start_held(spawner: FencedLocalProcessSpawner, account: Account, rescued: threading.Event) -> list[int]:
    """``spawner.start()`` on this loop while another coroutine ticks; returns the ticks seen while the user's process
    stayed stopped (the loop ran on though the spawn is held)."""
    ticks = [0]

    async def ticker() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0.01)

    other = asyncio.create_task(ticker())
    try:
        await spawner.start()
        assert not rescued.is_set(), "start() held the hub's event loop on the user's stopped process until the " \
                                     "test's watchdog killed it"
        await _until("the user's process stopped in the window", lambda: _stopped_as(spawner.pid, account.uid))
        before = ticks[0]
        await _until("the loop's other coroutine ran", lambda: ticks[0] >= before + 3)
        assert _stopped_as(spawner.pid, account.uid)  # ... while the spawn was still held
        return ticks
    finally:
        other.cancel()


def test_s33popen_spawner_a_users_sigstop_in_the_spawn_holds_not_the_hubs_loop(
        account: Account, held: threading.Event) -> None:
    """start() returns at once; the loop runs on while the user's process is stopped; the hub's end of a server that
    does not come up (``stop()``, which it calls at its ``http_timeout``) ends the held one."""
    spawner = _spawner(account)

    async def scenario() -> None:
        await _start_held(spawner, account, held)
        await spawner.stop(now=True)
        assert await spawner.poll() is not None, "the held spawn outlived the spawner's stop"

    asyncio.run(scenario())
    assert not held.is_set()


def test_s33popen_spawner_the_spawners_environment_reaches_the_server_never_the_root_step(
        account: Account, held: threading.Event) -> None:
    """An admin's ``LD_PRELOAD``/``LD_LIBRARY_PATH`` (into the user's home) and ``env_keep`` reach the server as
    before, not the root step: its environment (``/proc/PID/environ``, the one it was exec'd with) is empty. The
    server runs as the account, in its home, inside its fences' groups."""
    home = Path(account.home)
    spawner = _spawner(account, environment={"LD_PRELOAD": str(home / "preload.so"), "LD_LIBRARY_PATH": str(home),
                                             "S33S_MARK": "from-the-admin"})
    seen_file = home / "server-seen.json"

    async def scenario() -> bytes:
        await _start_held(spawner, account, held)
        root_env = Path(f"/proc/{spawner.pid}/environ").read_bytes()
        os.kill(spawner.pid, signal.SIGCONT)
        await _until("the server ended", lambda: spawner.proc.poll() is not None)
        await spawner.poll()
        return root_env

    root_env = asyncio.run(scenario())
    assert not held.is_set()
    assert root_env == b"", root_env  # no variable at all, LD_* included, reached the root step's exec
    assert spawner.proc.returncode == 0, spawner.proc.returncode
    seen = json.loads(seen_file.read_text())
    assert (seen["uid"], seen["euid"], seen["cwd"]) == (account.uid, account.uid, account.home), seen
    env = seen["env"]
    assert env["LD_PRELOAD"] == str(home / "preload.so") and env["LD_LIBRARY_PATH"] == str(home), env
    assert env["S33S_MARK"] == "from-the-admin" and env["JUPYTERHUB_API_TOKEN"] == "s33s-token", env
    assert env["USER"] == account.name and env["HOME"] == account.home, env
    assert env["PATH"] == os.environ["PATH"], env  # env_keep, as upstream
    if server_fence_problem() is None:
        assert seen["groups"]["devices"] == f"/jupyter_sched/servers/u{account.uid}", seen
    if (CGROUP_ROOT / "pids" / "cgroup.procs").exists():
        assert seen["groups"]["pids"] == f"/jupyter_sched/servers/u{account.uid}", seen
