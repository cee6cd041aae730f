"""red26 R4: one job filled the service's log disk through its own job folder, and a disk out of inodes
made other users' jobs FAIL (Errno 28) instead of waiting.

* An instant job keeps 5 inodes, not 7: the wrapper removes its ``stop.fifo`` at its end, the service
  an empty ``.err``.
* What a job leaves in its folder beside its log and the wrapper's records is removed when it is more
  than ``LEFT_FILES`` files or ``LEFT_BYTES`` bytes, and the log's last line says so (a real wrapper
  running a real job that finds its folder from its own stdout, as any job can).
* The free-space check counts inodes too: on a real tmpfs with no inode left, a job waits in the
  queue with "… is full: N inodes free …" and starts once files are removed — never ``failed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import ExecutorError
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.disk_space import LOG_DISK_FULL, MIN_FREE_INODES, free_inodes
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.wrapper import LEFT_BYTES, LEFT_FILES
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0
from tests.runtime.test_hubadmin25_b15_log_disk_full import tmpfs_on
from tests.runtime.test_local_executor import job_for, wait_event, wait_until

FIND_FOLDER = "folder = os.path.dirname(os.readlink('/proc/self/fd/1'))\n"  # its stdout is its folder's output.log


def test_red26_r4_files_a_job_leaves_in_its_folder_past_the_cap_are_removed_and_said(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, FIND_FOLDER + (
        f"for i in range({LEFT_FILES + 50}):\n"
        "    open(os.path.join(folder, f'f{i}'), 'w').close()\n"
        "os.mkdir(os.path.join(folder, 'deep'))\n"
        "open(os.path.join(folder, 'deep', 'x'), 'w').close()\n"
        "print('done', flush=True)\n")), Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    folder = ex.job_dir("j-1")
    left = sorted(p.name for p in folder.iterdir())
    assert left == ["exit.json", "output.log", "wrapper.json"], left[:10]
    log = (folder / "output.log").read_text()
    assert f"[jupyter_sched] the job left {LEFT_FILES + 52:,} files (0 MiB) in its job folder {folder} beside its log, " \
           f"over the {LEFT_FILES} files / {LEFT_BYTES >> 20} MiB a job folder keeps: they were removed" in log, log
    assert log.startswith("done\n")


def test_red26_r4_bytes_past_the_cap_are_removed_a_few_small_files_are_kept(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, FIND_FOLDER + (
        f"with open(os.path.join(folder, 'big.bin'), 'wb') as fh:\n"
        f"    fh.truncate({LEFT_BYTES + 1})\n")), Allocation("n1", ("GPU-0",)))
    assert wait_event(ex, Exited).exit_code == 0  # type: ignore[attr-defined]
    folder = ex.job_dir("j-1")
    assert not (folder / "big.bin").exists()
    assert "MiB) in its job folder" in (folder / "output.log").read_text()

    ex.start(job_for(tmp_path, FIND_FOLDER + "open(os.path.join(folder, 'result.txt'), 'w').write('42')\n",
                     job_id="j-2"), Allocation("n1", ("GPU-0",)))
    assert wait_event(ex, Exited).exit_code == 0  # type: ignore[attr-defined]
    assert (ex.job_dir("j-2") / "result.txt").read_text() == "42", "a small result is kept"
    assert "[jupyter_sched] the job left" not in (ex.job_dir("j-2") / "output.log").read_text()


def test_red26_r4_an_instant_job_keeps_five_inodes_not_seven(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, "pass\n"), Allocation("n1", ("GPU-0",)))
    assert wait_event(ex, Exited).exit_code == 0  # type: ignore[attr-defined]
    folder = ex.job_dir("j-1")
    kept = [*folder.iterdir(), *(p for p in ex.dirs.state.iterdir() if p.name.startswith("j-1."))]
    # the folder, exit.json, output.log, wrapper.json and the service's record; no stop.fifo, no empty .err
    assert sorted(p.name for p in kept) == ["exit.json", "j-1.json", "output.log", "wrapper.json"], kept


@pytest.fixture
def few_inodes(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs with few inodes on ``tmp_path/jobs`` (root only; unmounted after)."""
    yield from tmpfs_on(tmp_path / "jobs", "size=16m,nr_inodes=400,mode=0755")


def _fill_inodes(root: Path) -> Path:
    """Create empty files under ``root/ballast`` until the file system has no inode left."""
    ballast = root / "ballast"
    ballast.mkdir()
    for i in range(100_000):
        try:
            (ballast / str(i)).touch()
        except OSError:
            break
    return ballast


def test_red26_r4_with_no_inode_left_a_job_waits_in_the_queue_and_starts_once_files_are_removed(
        tmp_path: Path, few_inodes: Path) -> None:
    ex = LocalExecutor(few_inodes, min_log_free_bytes=1 << 20)  # bytes are plenty (16 MiB tmpfs)
    ballast = _fill_inodes(few_inodes)
    got = free_inodes(few_inodes)
    assert got is not None and got[0] == 0 and got[1] == MIN_FREE_INODES
    with pytest.raises(ExecutorError) as refused:
        ex.start(job_for(tmp_path, "print('hello')\n"), Allocation("n1", ("GPU-0",)))
    assert refused.value.details["code"] == LOG_DISK_FULL
    assert refused.value.message.startswith(f"the disk of the log folder {few_inodes} is full: 0 inodes free (new jobs "
                                            f"start with at least {MIN_FREE_INODES} free"), refused.value.message

    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=ex, clock=clock, cycle_interval_s=0.0)
    job = svc.submit({"command": ["echo", "hello"], "gpus": 1}, user="ana")
    for _ in range(3):
        svc.tick()
    row = svc.get_job(job["id"], user="ana")
    assert row["state"] == "pending", row  # held, not failed (before: failed, Errno 28)
    assert row["reason"]["text"]["line"].startswith(
        f"queued #1 · the disk of the log folder {few_inodes} is full: 0 inodes free"), row["reason"]
    for path in list(ballast.iterdir())[:200]:
        path.unlink()
    clock.advance(3600)

    def ended() -> bool:
        svc.tick()
        return bool(svc.get_job(job["id"], user="ana")["state"] == "succeeded")

    wait_until(ended, "the held job to start and end")
