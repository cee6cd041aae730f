"""red29 R5: a job that left a 3,000-deep chain of folders in its job folder made the ENGINE TICK fail with
RecursionError (the end's accounting walked it with os.fwalk, recursive), its end was audited "while the server
was down", the wrapper's own end sweep died with a traceback, and after a restart every launch of that account
failed the same way. Every walk and removal of a folder a job could write is now iterative and bounded
(:func:`jupyter_sched.executors.wrapper.tree_size` / :func:`~jupyter_sched.executors.wrapper.remove_tree`): the
per-account log total (log_budget), the wrapper's sweep, the retention sweep (jobdirs) and the doctor's log-disk
count."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.jobdirs import _count_files
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.log_budget import LogBudget, folder_extra, remove_extra
from jupyter_sched.executors.wrapper import LEFT_FILES, TREE_MOST, _sweep_left, remove_tree, tally
from jupyter_sched.model import Allocation
from tests.runtime.test_local_executor import gone, job_for, wait_event, wait_until

DEPTH = 3_000  # Python's recursion limit is 1,000: os.fwalk / os.walk / shutil.rmtree of 3.11 fail at ~990


def _chain(folder: Path, name: str = "d", depth: int = DEPTH) -> None:
    """``folder/name/name/…`` ``depth`` deep, a small file at the bottom (made by descriptor: no path limit)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as fh:
        fh.write("x" * 100)
    os.close(fd)


def test_red29_r5_a_3000_deep_chain_is_counted_and_removed_without_recursion(tmp_path: Path) -> None:
    job = tmp_path / "j-1"
    job.mkdir()
    (job / "output.log").write_text("ok\n")
    _chain(job)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the job's")
    os.symlink(outside, job / "link")  # a link in the tree: removed itself, never what it points at
    fd = os.open(job, os.O_RDONLY | os.O_DIRECTORY)
    try:
        entry = next(e for e in os.scandir(fd) if e.name == "d")
        count, _ = tally(entry, fd)
        assert count > LEFT_FILES  # too deep to keep: the wrapper's sweep removes it
        assert _count_files(fd)[0] >= 1  # the retention sweep's count returns
    finally:
        os.close(fd)
    assert folder_extra(job, None) > 0  # was RecursionError in the engine's tick (LogBudget.ended)
    assert remove_extra(job, None) > 0
    assert sorted(p.name for p in job.iterdir()) == ["output.log"]
    assert (outside / "keep.txt").read_text() == "not the job's"
    # remove_tree on a wide and deep tree alike, by descriptor
    wide = tmp_path / "wide"
    wide.mkdir()
    for n in range(50):
        _chain(wide, f"w{n}", depth=80)
    top = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        remove_tree("wide", top)
    finally:
        os.close(top)
    assert not wide.exists() and outside.exists()
    assert TREE_MOST > LEFT_FILES


def test_red29_r5_the_wrappers_sweep_and_the_log_total_survive_a_deep_chain(tmp_path: Path) -> None:
    job = tmp_path / "j-2"
    job.mkdir()
    (job / "output.log").write_text("ok\n")
    _chain(job)
    said = _sweep_left(job, set())
    assert said is not None and "they were removed" in said, said
    assert "the job left more than 100,000 files or folders nested over 64 deep (" in said, said
    assert sorted(p.name for p in job.iterdir()) == ["output.log"]
    # an account whose old job folders hold such chains is counted at its next launch (was: every launch of the
    # account failed "RecursionError" after a restart)
    folder = tmp_path / "jobs"
    (folder / "j-old").mkdir(parents=True)
    (folder / "j-old" / "output.log").write_text("old\n")
    _chain(folder / "j-old")
    assert LogBudget(4 << 30, 1 << 30).launch("", folder, None, set(), 0, job_id="j-new") == 1 << 30
    old = os.open(folder / "j-old", os.O_RDONLY | os.O_DIRECTORY)
    try:  # never left in tmp_path: pytest's own clean-up of old runs removes by recursion (Python 3.11)
        remove_tree("d", old)
    finally:
        os.close(old)
    assert sorted(p.name for p in (folder / "j-old").iterdir()) == ["output.log"]


def test_red29_r5_a_job_leaving_a_deep_chain_ends_normally_and_its_folder_is_swept(tmp_path: Path) -> None:
    """The real executor: the job's end is an ordinary Exited (no failed poll), its folder holds its log only. The
    executor is polled once the wrapper ended: a running job's folder nested deeper than a walk holds open is past
    its bound and the job is stopped for it (red30 R3, tests/runtime/test_s30_red30_r3_outside_caps.py)."""
    body = ("d = os.path.dirname(os.readlink('/proc/self/fd/1'))\n"
            "fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)\n"
            f"for _ in range({DEPTH}):\n"
            "    os.mkdir('d', dir_fd=fd)\n"
            "    inner = os.open('d', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)\n"
            "    os.close(fd)\n"
            "    fd = inner\n"
            "print('planted', flush=True)\n")
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=1 << 20, max_user_log_bytes=8 << 20)
    handle = ex.start(job_for(tmp_path, body, job_id="j-deep"), Allocation("n1", ("GPU-0",)))
    wait_until(lambda: gone(int(handle.data["pid"])), "the wrapper's end (its sweep done)")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    left = sorted(p.name for p in (tmp_path / "jobs" / "j-deep").iterdir())
    assert "d" not in left, left
    log = (tmp_path / "jobs" / "j-deep" / "output.log").read_text()
    assert "planted" in log and "Traceback" not in log and "RecursionError" not in log, log[-2000:]


def test_red34_r2_removing_a_folder_of_many_empty_folders_lists_it_a_bounded_number_of_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """red34 R2's escalation: ``remove_tree`` listed a folder again for each subfolder it went into, so a job
    folder of 40,000 empty folders (made through its stop's grace) cost ~10⁹ entry reads — hours of the thread
    that removed it. Each folder is now listed a bounded number of times whatever it holds (counted: every
    ``os.scandir``), and the tree — empty folders, full ones, files, a link — is gone."""
    top = tmp_path / "left"
    for k in range(3):
        for i in range(700):
            (top / f"d{k}" / f"e{i}").mkdir(parents=True)
    (top / "full" / "a" / "b").mkdir(parents=True)
    (top / "full" / "a" / "b" / "f.txt").write_text("x")
    (top / "link").symlink_to("/etc")
    listings: list[object] = []
    scandir = os.scandir

    def counted(path: object) -> object:
        listings.append(path)
        return scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", counted)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        remove_tree("left", fd)
    finally:
        os.close(fd)
    monkeypatch.undo()
    assert not top.exists() and (Path("/etc") / "passwd").exists()
    # left, d0-d2, full, a, b: each listed at most twice (its entries, then once its subfolders are done)
    assert len(listings) <= 2 * 7, len(listings)
