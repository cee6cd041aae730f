"""red30 R9: after R3's fix a running job's folder is walked each tick — but a file the job opened in its folder,
unlinked and kept writing into is in no folder: 1.5 GiB held on the log disk for the whole run, the job
"succeeded". The service now also looks at the DELETED files the job's processes hold open on its log's disk
(:mod:`jupyter_sched.executors.outside_caps`, ``/proc/<pid>/fd``), by the blocks they spend, against the running
folder's bound. And a size is never said in exponent notation (a 2 TiB sparse file read "2.05e+03 GiB").
Real executor, real wrapper, real jobs; counts, never times.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.disk_space import size_words
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outside_caps import (
    FD_LOOKS_PER_TICK,
    FDS_PER_TICK,
    Running,
    WriteWatch,
    unlinked_reason,
)
from jupyter_sched.executors.wrapper import LEFT_BYTES
from jupyter_sched.wording.reasons import figure, memory_text
from tests.runtime.test_local_executor import wait_event
from tests.runtime.test_s30_red30_r3_outside_caps import CAP, FIND_FOLDER, MIB, runs_on, start_writer

HIDE = ("fd = os.open(os.path.join(folder, 'hidden.bin'), os.O_CREAT | os.O_RDWR, 0o600)\n"
        "os.unlink(os.path.join(folder, 'hidden.bin'))\n")


def test_red30_r9_a_job_writing_into_a_deleted_file_in_its_folder_is_stopped_at_the_folder_bound(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)  # a running folder's bound: LEFT_BYTES (64 MiB)
    over = (LEFT_BYTES >> 20) + 2
    start_writer(ex, tmp_path, MIB + FIND_FOLDER + HIDE + f"for _ in range({over}): os.write(fd, buf)\n")
    folder = ex.job_dir("j-1")
    assert sorted(p.name for p in folder.iterdir() if p.name == "hidden.bin") == []  # no walk can see it
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code != 0, ended
    assert ended.message.startswith(
        f"it held 1 deleted file open on the disk of its job folder {folder} ({over} MiB on disk, and 0 bytes in its "
        "folder beside its log) while it ran, over the 64 MiB a running job's folder may hold (as much as its log: "
        "c.SchedApp.max_log_mib): stopped — a deleted file keeps its disk space until it is closed"), ended.message
    assert "write a job's outputs and scratch files into your home" in ended.message
    assert "[jupyter_sched] it held 1 deleted file open" in (folder / "output.log").read_text()


def test_red30_r9_a_deleted_file_written_through_a_mapping_with_no_descriptor_is_stopped(tmp_path: Path) -> None:
    """Opened, sized, mapped, its descriptor closed, unlinked, then written through the mapping: no fd holds it,
    its mapping does (``/proc/<pid>/map_files``: the service reads it as root; embedded, where it cannot, this
    way is the job's own account's)."""
    if not os.access("/proc/self/map_files", os.R_OK) or not os.listdir("/proc/self/map_files"):
        pytest.skip("/proc/<pid>/map_files is not readable here (it takes CAP_SYS_ADMIN)")
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    over = (LEFT_BYTES >> 20) + 2
    start_writer(ex, tmp_path, FIND_FOLDER + HIDE + "import mmap, fcntl\n"
                 "def held(n):\n    try:\n        return fcntl.fcntl(n, fcntl.F_GETFD) >= 0\n"
                 "    except OSError:\n        return False\n"
                 f"os.ftruncate(fd, {over} << 20)\nm = mmap.mmap(fd, {over} << 20)\nino = os.fstat(fd).st_ino\n"
                 "for n in os.listdir('/proc/self/fd'):\n"  # mmap's own dup too: no descriptor left at all
                 "    try:\n        if os.stat(f'/proc/self/fd/{n}').st_ino == ino: os.close(int(n))\n"
                 "    except OSError: pass\n"
                 "print('no descriptor left:', ino not in [os.fstat(n).st_ino for n in range(3, 1024) if held(n)], "
                 "flush=True)\n"
                 f"for i in range({over}): m[i << 20:(i + 1) << 20] = b'y' * (1 << 20)\nm.flush()\n")
    assert "no descriptor left: True" in (ex.job_dir("j-1") / "output.log").read_text()
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code != 0, ended
    assert ended.message.startswith(
        f"it held 1 deleted file open on the disk of its job folder {ex.job_dir('j-1')} ({over} MiB on disk"), \
        ended.message


def test_red30_r9_deleted_files_and_the_folder_count_together(tmp_path: Path) -> None:
    """Split between a file in the folder (40 MiB, counted by size as the walk counts) and a deleted one (30 MiB of
    blocks): each under the 64 MiB bound, together over it."""
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    start_writer(ex, tmp_path, MIB + FIND_FOLDER + HIDE + "for _ in range(30): os.write(fd, buf)\n"
                 "with open(os.path.join(folder, 'seen.bin'), 'wb') as fh:\n    fh.truncate(40 << 20)\n")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code != 0, ended
    assert ended.message.startswith(
        f"it held 1 deleted file open on the disk of its job folder {ex.job_dir('j-1')} (30 MiB on disk, and 40 MiB "
        "in its folder beside its log) while it ran, over the 64 MiB"), ended.message


def test_red30_r9_a_sparse_deleted_file_counts_its_blocks_and_the_job_runs_on(tmp_path: Path) -> None:
    """A deleted 2 TiB sparse file spends no disk: not a reason to stop (the bound is about disk use); the job
    runs on and exits 0."""
    runs_on(tmp_path, FIND_FOLDER + HIDE + "os.ftruncate(fd, 2 << 40)\nos.pwrite(fd, b'x', 4096)\n")
    assert FDS_PER_TICK >= 1024


def test_red30_r9_sizes_are_never_said_in_exponent_notation() -> None:
    assert size_words(2050 << 30) == "2 TiB"
    assert size_words(1000 << 20) == "1,000 MiB"  # was "1e+03 MiB"
    assert size_words(1000 << 30) == "1,000 GiB"
    assert size_words(20_000 << 40) == "20,000 TiB"
    assert size_words(int(3.5 * 2**20)) == "3.5 MiB" and size_words(12 << 10) == "12 KiB" and size_words(0) == "0 bytes"
    assert memory_text(12_000 * 1024**2) == "12,000 TiB"  # was "1.2e+04 TiB"
    assert memory_text(1536) == "1.5 GiB" and figure(2050.0, 3) == "2,050"
    words = unlinked_reason(Path("/logs/u/j-1"), 2, 2050 << 30, 0, LEFT_BYTES, "c.SchedApp.max_log_mib")
    assert "e+" not in words and "(2 TiB on disk, and 0 bytes in its folder" in words, words
    assert words.startswith("it held 2 deleted files open")


def test_red30_r9_the_open_files_are_looked_at_round_robin_a_few_jobs_a_tick(tmp_path: Path) -> None:
    """Bounded work a tick: at most FD_LOOKS_PER_TICK jobs' processes are asked for, the next tick goes on with the
    next jobs, and every job is looked at in turn."""
    asked: list[str] = []
    watch = WriteWatch(min_free_bytes=0)

    def members(job_id: str) -> Callable[[], list[int]]:
        return lambda: asked.append(job_id) or [os.getpid()]

    jobs = []
    for n in range(5):
        (tmp_path / f"j-{n}").mkdir()
        jobs.append(Running(job_id=f"j-{n}", wrapper_pid=None, job_dir=tmp_path / f"j-{n}", owner_uid=None,
                            log_cap=CAP, setting="c.SchedApp.max_log_mib", members=members(f"j-{n}")))
    assert watch.look(jobs) == {}
    assert asked == ["j-0", "j-1"][:FD_LOOKS_PER_TICK]
    for _ in range(2):
        assert watch.look(jobs) == {}
    assert asked == ["j-0", "j-1", "j-2", "j-3", "j-4", "j-0"][:3 * FD_LOOKS_PER_TICK], asked
