"""hubadmin25 B15: a full disk under the job logs. A run that fails on it says so (the folder and its free
space) instead of a bare "exit code 120"; the admin reads one WARNING; and below the free-space floor
(``c.SchedApp.min_log_free_mib``) a job is not launched to fail: it waits in the queue with that reason.

A real full file system: a 2 MiB tmpfs mounted on the job log folder (root only; unmounted after).
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import ExecutorError
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.disk_space import LOG_DISK_FULL, low_disk_line
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0
from tests.runtime.test_local_executor import job_for, wait_event, wait_until


def tmpfs_on(root: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted with ``options`` on ``root`` (made here) for a fixture to yield; skips the test
    unless root may mount it; unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(root)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield root
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs on ``tmp_path/jobs``."""
    yield from tmpfs_on(tmp_path / "jobs", "size=2m,mode=0755")


def test_hubadmin25_b15_a_run_that_fills_the_log_disk_says_so_and_the_admin_is_told_once(
        tmp_path: Path, small_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="jupyter_sched.executors.disk_space")
    ex = LocalExecutor(small_disk)  # no floor: the job starts, and fills the disk
    ex.start(job_for(tmp_path, "for _ in range(4096): sys.stdout.write('x' * 1023 + '\\n')\nsys.stdout.flush()\n"),
             Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code != 0
    assert ended.message.startswith(f"could not write its output: the disk of the log folder {small_disk} is full ("), \
        ended.message
    assert "exited with code" in ended.message  # the exit code and the log's last lines still follow
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith(f"the disk of the job log folder {small_disk} is full"), said


def test_hubadmin25_b15_below_the_floor_a_job_waits_in_the_queue_saying_why(
        tmp_path: Path, small_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    (small_disk / "ballast").write_bytes(b"\0" * (1536 << 10))  # 1.5 of 2 MiB used
    ex = LocalExecutor(small_disk, min_log_free_bytes=1 << 20)
    with pytest.raises(ExecutorError) as refused:
        ex.start(job_for(tmp_path, "print('hello')\n"), Allocation("n1", ("GPU-0",)))
    assert refused.value.details["code"] == LOG_DISK_FULL and "c.SchedApp.min_log_free_mib" in refused.value.message
    assert not list(small_disk.glob("j-*")), "nothing was launched"

    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=ex, clock=clock, cycle_interval_s=0.0)
    job = svc.submit({"command": ["echo", "hello"], "gpus": 1}, user="ana")
    for _ in range(3):
        svc.tick()
    row = svc.get_job(job["id"], user="ana")
    assert row["state"] == "pending", row  # held, not failed
    reason = row["reason"]
    # its queue line says why (retried with the requeue backoff: "…; retries from 12:00 UTC")
    assert reason["text"]["line"].startswith(f"queued #1 · the disk of the log folder {small_disk} is full ("), reason
    (small_disk / "ballast").unlink()  # space freed: it starts at its next try
    clock.advance(3600)

    def ended() -> bool:
        svc.tick()
        return bool(svc.get_job(job["id"], user="ana")["state"] == "succeeded")

    wait_until(ended, "the held job to start and end")


def test_hubadmin25_b15_a_nearly_full_log_disk_is_said_at_start(tmp_path: Path, small_disk: Path) -> None:
    assert low_disk_line(small_disk, 1 << 20) is None  # 2 MiB free of 2 MiB: room
    (small_disk / "ballast").write_bytes(b"\0" * (1984 << 10))  # 64 KiB of 2 MiB left: 3 %
    said = low_disk_line(small_disk, 1 << 20)
    assert said == (f"the disk of the job log folder {small_disk} is nearly full: 64 KiB free of 2 MiB (3 %) — new "
                    "jobs wait until it has room; a job that cannot write its log fails, so free space there "
                    "(c.SchedApp.min_log_free_mib = 1)")
