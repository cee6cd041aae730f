"""Session 41 speed, the hub tests' harness: what a test hub waited on that it need not.

- A test hub polls a starting user server (a stopping one's process too) at most every 0.5 s (tests/hub/hub_harness.py, its config): JupyterHub's
  full-jitter backoff grows to 5 s, so a server up after ~6-10 s was seen a random 0-5 s later (0.6-2.3 s measured).
- A test hub's stop ends the service, the hub and all they started at once (SIGSTOP, then SIGKILL): the graceful
  stop waited the service, then the hub stopping each user server (3.3 s → 0.2 s measured, two servers up).
- An account's removal (tests/accounts.py) does not wait for a zombie: a server whose parent, the hub, was killed
  is an orphan that this machine's init reaps every ~2 s, and the removal waited that out.
- The run-as venv (tests/runas_env.py) links the bytecode of the packages it links: the accounts cannot write any,
  so each of their kernels compiled IPython and ipykernel anew (~100 modules, ~0.6 s CPU).

No hub is started: the config is read as JupyterHub's loader does, the stop runs over stand-in processes, the
bytecode is a throw-away package's.
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

pytest.importorskip("jupyterhub", reason="hub mode needs jupyterhub (pip install jupyterhub)")

import jupyterhub.proxy
import jupyterhub.spawner
import jupyterhub.utils
from traitlets.config import Config

from tests import accounts
from tests.runas_env import _link_tree

from .hub_harness import Hub


def _hub(base: Path) -> Hub:
    return Hub(base=base, db_url="postgresql://unused/none", venv=Path(sys.prefix), admins=("carol",),
               groups={"vision": ["amy"]}, proxy_port=1, hub_port=2, service_port=3)


def test_s41_speed_a_test_hub_polls_a_starting_server_at_most_every_half_second(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = jupyterhub.utils.exponential_backoff
    monkeypatch.setattr(jupyterhub.utils, "exponential_backoff", original)  # put back after the config patches it
    for module in (jupyterhub.proxy, jupyterhub.spawner):
        monkeypatch.setattr(module, "exponential_backoff", module.exponential_backoff)
    config = Config()
    exec(compile(_hub(tmp_path).config_text("configurable-http-proxy", 4), "jupyterhub_config.py", "exec"),
         {"get_config": lambda: config})
    patched = jupyterhub.utils.exponential_backoff
    assert patched is not original
    assert jupyterhub.proxy.exponential_backoff is patched and jupyterhub.spawner.exponential_backoff is patched

    waits: list[float] = []

    async def no_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(jupyterhub.utils.random, "uniform", lambda low, high: high)  # the longest jitter
    monkeypatch.setattr(jupyterhub.utils.asyncio, "sleep", no_sleep)
    tries = iter([False] * 12 + [True])

    async def poll(what: Any) -> bool:
        return bool(await what(lambda: next(tries), "never", timeout=3600))

    assert asyncio.run(poll(patched)) is True  # the 13th try answers, as a server that came up
    assert len(waits) == 12 and max(waits) == 0.5 and waits[:2] == [0.2, 0.4], waits
    waits.clear()
    tries = iter([False] * 12 + [True])
    assert asyncio.run(poll(original)) is True
    assert max(waits) == 5, waits  # JupyterHub's own: what a test hub waited before


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_s41_speed_a_test_hubs_stop_ends_all_it_started_at_once_even_what_ignores_sigterm(tmp_path: Path) -> None:
    hub = _hub(tmp_path)
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"
    out = tmp_path / "pids"
    # the "hub": a child in a session of its own (as a user server), which started one more (as its kernel)
    hub.process = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time\n"
         f"child = subprocess.Popen([sys.executable, '-c', {deaf!r}], start_new_session=True)\n"
         f"open({str(out)!r}, 'w').write(str(child.pid))\ntime.sleep(300)"], start_new_session=True)
    hub.service = subprocess.Popen([sys.executable, "-c", deaf], start_new_session=True)
    job = subprocess.Popen(["bash", "-c", "sleep 300; exit 0", str(tmp_path / "jobs")],  # names the folder, as a job
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        server = int(out.read_text())
        started = [hub.process.pid, hub.service.pid, server, job.pid]
        assert all(_alive(pid) for pid in started)
        hub.stop()
        assert hub.process is None and hub.service is None
        job.wait(30)
        assert job.returncode == -signal.SIGKILL
        assert not [pid for pid in started if _alive(pid)]
    finally:
        for pid in ([hub.process.pid] if hub.process else []) + ([hub.service.pid] if hub.service else []) + [job.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_s41_speed_an_accounts_removal_does_not_wait_for_a_zombie(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = accounts.skip_reason()
    if reason:
        pytest.skip(reason)
    with accounts.os_accounts(1) as (amy,):
        dead = subprocess.Popen(["true"], user=amy.uid, group=amy.gid)
        deadline = time.monotonic() + 30
        while psutil.Process(dead.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.02)  # exited, not reaped: what an orphan is until init reaps it
        assert psutil.Process(dead.pid).status() == psutil.STATUS_ZOMBIE
        live = subprocess.Popen(["sleep", "300"], user=amy.uid, group=amy.gid)
        naps: list[float] = []

        def nap(seconds: float) -> None:
            naps.append(seconds)
            time.sleep(seconds)

        monkeypatch.setattr(accounts, "time", SimpleNamespace(sleep=nap))
        accounts._kill_processes_of(amy.uid)
        monkeypatch.undo()
        assert live.wait(30) == -signal.SIGKILL  # the live one is ended
        assert len(naps) <= 2, naps  # one pass to kill, one to see it gone: the zombie is not waited on
        dead.wait(30)


def test_s41_speed_the_runas_venv_links_the_bytecode_of_what_it_links(tmp_path: Path) -> None:
    source, target = tmp_path / "source", tmp_path / "site"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "__init__.py").write_text("")
    (source / "pkg" / "mod.py").write_text("VALUE = 41\n")
    assert compileall.compile_dir(str(source), quiet=1)
    # a venv linked before (sources only), then linked again: the bytecode is added, the sources kept
    (target / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "mod.py"):
        os.link(source / "pkg" / name, target / "pkg" / name)
    _link_tree(source, target)
    assert sorted(p.name for p in (target / "pkg" / "__pycache__").iterdir()) == sorted(
        p.name for p in (source / "pkg" / "__pycache__").iterdir())
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(target)}
    run = subprocess.run([sys.executable, "-v", "-c", "import pkg.mod; print(pkg.mod.VALUE, pkg.mod.__file__)"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["41", str(target / "pkg" / "mod.py")]
    loaded = [line for line in run.stderr.splitlines() if line.startswith("# code object from") and str(target) in line]
    assert len(loaded) == 2 and all(line.endswith(".pyc'") for line in loaded), loaded  # none compiled from source


def test_s41_speed_a_test_hub_starts_its_service_once_its_own_api_answers_not_its_proxy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JupyterHub waits its 1 s for the service, then routes ``/hub/`` through the proxy; the service needs only the
    hub's own API. What is under test is the harness's order: the hub and the service are stand-ins (no process)."""
    from . import hub_harness

    hub = _hub(tmp_path)
    calls: list[str] = []

    def api(method: str, path: str, body: Any = None, *, token: str | None = None,
            direct: bool = False) -> SimpleNamespace:
        calls.append("hub api" if direct else "proxy")
        return SimpleNamespace(status_code=200)

    monkeypatch.setattr(hub_harness, "chp_command", lambda: "configurable-http-proxy")
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: SimpleNamespace(poll=lambda: None))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: None)
    monkeypatch.setattr(hub, "api", api)
    monkeypatch.setattr(hub, "start_service", lambda: calls.append("service"))
    (tmp_path / "hub.sqlite").write_text("")
    hub.start()
    assert calls == ["hub api", "service", "proxy"], calls
