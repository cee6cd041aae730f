"""Fixtures of the end-to-end idle-reclamation tests: real services, real processes, real SQLite.

The service is built by ``SchedulerService.from_config`` — the wiring a server uses — on a
temporary SQLite file, with test-sized idle windows (seconds, not hours). A unique node name
keeps our simulated GPU uuids apart from other test runs on the same machine (the simulated
collector also finds GPU holders by ``CUDA_VISIBLE_DEVICES``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # make ``tests.hardware.fake_nvml`` importable however pytest was started
    sys.path.insert(0, str(ROOT))

from jupyter_sched.services import SchedulerService  # noqa: E402
from jupyter_sched.store import sqlite_url  # noqa: E402

SAMPLE_S = 0.5
"""Seconds between telemetry samples and engine ticks in these tests."""

IDLE_SETTINGS: dict[str, Any] = {
    "idle_threshold_percent": 5.0,
    "idle_window_s": 4.0,        # idle this long → warning
    "idle_grace_s": 2.0,         # warning → reclaim
    "idle_keepalive_max_s": 5.0,
    "idle_max_gap_s": 5.0,
    "telemetry_interval_s": SAMPLE_S,
    "cycle_interval_s": 0.2,
    "inventory_refresh_s": 0.2,
    "stop_grace_s": 1.0,
}


def settings_for(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """Settings of a service on a tmp store with simulated GPUs on a node of its own."""
    return {"db_url": sqlite_url(tmp_path / "sched.sqlite"), "log_dir": str(tmp_path / "logs"),
            "inventory_source": "simulated", "simulated_gpus": 2, "node_name": f"itest-{uuid.uuid4().hex[:8]}",
            **IDLE_SETTINGS, **extra}


def make_service(tmp_path: Path, **extra: Any) -> SchedulerService:
    """A service built the way the server builds it (``from_config``)."""
    return SchedulerService.from_config(settings_for(tmp_path, **extra))


def sleeper(tmp_path: Path, seconds: int = 120) -> subprocess.Popen[bytes]:
    """A real process that only sleeps: stands in for a kernel process whose user walked away.
    Its command line names ``tmp_path`` so the teardown below always ends it."""
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})  # {tmp_path}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)


class Driver:
    """Runs a service the way its server does — sample, tick — every ``SAMPLE_S`` seconds, on an
    asyncio loop so the events the engine publishes can be collected as a client receives them."""

    def __init__(self, svc: SchedulerService) -> None:
        self.svc = svc
        self.events: list[dict[str, Any]] = []

    def run(self, until: Callable[[], bool], *, timeout_s: float, what: str) -> None:
        """Drive until ``until()`` holds.

        Raises:
            AssertionError: it did not hold within ``timeout_s`` (a hang guard, not a speed check).
        """
        asyncio.run(self._run(until, timeout_s, what))

    def run_for(self, seconds: float) -> None:
        """Drive for ``seconds`` (observation periods of 'never happens' checks)."""
        end = time.monotonic() + seconds
        asyncio.run(self._run(lambda: time.monotonic() >= end, seconds + 30, f"{seconds} s"))

    async def _run(self, until: Callable[[], bool], timeout_s: float, what: str) -> None:
        sub = self.svc.bus.subscribe()
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                assert self.svc.monitor is not None
                self.svc.monitor.sample()
                self.svc.tick()
                await asyncio.sleep(SAMPLE_S)
                while sub.pending():
                    self.events.append(await sub.get(1.0))
                if until():
                    return
                assert time.monotonic() < deadline, f"gave up waiting for {what}"
        finally:
            sub.close()

    def of(self, kind: str, job_id: str) -> list[dict[str, Any]]:
        """Collected events of ``kind`` about ``job_id``."""
        return [e["data"] for e in self.events if e["type"] == kind and e["data"].get("job_id", e["data"].get("id")) == job_id]


@pytest.fixture(autouse=True)
def _no_stray_processes(tmp_path: Path) -> Iterator[None]:
    """After each test, kill the process groups of processes it started (their command lines name
    its tmp_path), so a failing test never leaves work running."""
    yield
    marker = str(tmp_path)
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if proc.pid == os.getpid() or not any(marker in part for part in cmdline):
            continue
        try:
            group = os.getpgid(proc.pid)
            if group == os.getpgrp():
                os.kill(proc.pid, signal.SIGKILL)
            else:
                os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
