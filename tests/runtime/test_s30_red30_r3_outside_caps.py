"""red30 R3: the caps on what a running job writes were kept by its wrapper, which runs as the job's own
account — a job that SIGSTOPped its parent wrote 1.5 GiB into output.log past a 1 GiB cap, and 1.5 GiB
beside it in its job folder while it ran. The service now keeps them from outside the job
(:mod:`jupyter_sched.executors.outside_caps`): real executor, real wrapper, real jobs; small caps, and
counts, never times (the tests poll the executor themselves, as the engine's tick does).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors import outside_caps
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outside_caps import LINES_SLACK, STOPPED_LOOKS, WRITING_MOST_BYTES
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.executors.wrapper import LEFT_BYTES
from jupyter_sched.model import Allocation
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job
from tests.runtime.test_hubadmin25_b15_log_disk_full import tmpfs_on
from tests.runtime.test_local_executor import job_for, wait_event, wait_until

CAP = 2 << 20
MIB = "buf = b'x' * (1 << 20)\n"
FIND_FOLDER = "folder = os.path.dirname(os.readlink('/proc/self/fd/1'))\n"  # its stdout is its folder's output.log


def start_writer(ex: LocalExecutor, tmp_path: Path, body: str, *, job_id: str = "j-1", gpu: str = "GPU-0") -> None:
    """Start a job that runs ``body``, then says so in a file and waits until it is stopped; return once it said so
    (what it wrote is all it writes)."""
    wrote = tmp_path / f"{job_id}.wrote"
    ex.start(job_for(tmp_path, body + f"open({str(wrote)!r}, 'w').close()\nwait_gate({str(tmp_path / 'never')!r})\n",
                     job_id=job_id), Allocation("n1", (gpu,)))
    wait_until(wrote.exists, f"{job_id}'s writes")


def test_red30_r3_a_job_that_stops_its_wrapper_cannot_write_past_the_log_cap(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    start_writer(ex, tmp_path, MIB + "os.kill(os.getppid(), signal.SIGSTOP)\n"  # its wrapper keeps the cap no more
                 f"for _ in range({2 * (CAP >> 20)}): os.write(1, buf)\n")  # twice the cap
    log = ex.job_dir("j-1") / "output.log"
    assert log.stat().st_size >= 2 * CAP  # written past the cap: its wrapper is stopped
    assert ex.poll() == []  # one look: its log is cut back to the cap (the wrapper is seen stopped once)
    assert CAP < log.stat().st_size <= CAP + 1024, log.stat().st_size
    ended = wait_event(ex, Exited)  # the next look ends it
    assert isinstance(ended, Exited) and ended.exit_code != 0
    assert ended.message.startswith("its wrapper was stopped (by SIGSTOP) while it ran: the wrapper keeps its log "
                                    "within c.SchedApp.max_log_mib (2 MiB)"), ended.message
    assert "do not signal or trace the job's parent process" in ended.message
    data = log.read_bytes()
    assert len(data) <= CAP + LINES_SLACK, len(data)
    assert data[CAP:].startswith(b"\n[jupyter_sched] log truncated at 2 MiB (c.SchedApp.max_log_mib)"), data[CAP:]
    assert data.rstrip().splitlines()[-1].startswith(b"[jupyter_sched] its wrapper was stopped"), data[CAP:]
    assert STOPPED_LOOKS == 2


def test_red30_r3_a_running_job_folder_past_its_bound_is_stopped(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)  # a running folder's bound: LEFT_BYTES (64 MiB)
    start_writer(ex, tmp_path, FIND_FOLDER + (
        "with open(os.path.join(folder, 'big.bin'), 'wb') as fh:\n"
        f"    fh.truncate({LEFT_BYTES + (1 << 20)})\n"  # its size counts, as the end's sweep counts it (no disk spent)
        "open(os.path.join(folder, 'small.txt'), 'w').write('kept?')\n"))
    ended = wait_event(ex, Exited)
    folder = ex.job_dir("j-1")
    assert isinstance(ended, Exited) and ended.exit_code != 0
    assert ended.message.startswith(f"its job folder {folder} held 65 MiB in 2 files and folders beside its log "
                                    "while it ran, over the 10,000 files / 64 MiB a running job's folder may hold (as much as "
                                    "its log: c.SchedApp.max_log_mib; once a job ended it keeps 256 files / 64 MiB): "
                                    "stopped"), ended.message
    assert "write a job's outputs into your home" in ended.message
    left = sorted(p.name for p in folder.iterdir())
    assert "big.bin" not in left and "small.txt" not in left, left
    assert "[jupyter_sched] its job folder" in (folder / "output.log").read_text()


def test_red30_r3_a_job_writing_well_under_its_bounds_runs_on(tmp_path: Path) -> None:
    """The looks stop nothing that keeps within its bounds: a log at its cap held by its running wrapper and a
    folder with a few files."""
    ex = runs_on(tmp_path, MIB + FIND_FOLDER + f"for _ in range({CAP >> 20}): os.write(1, buf)\n")
    assert (ex.job_dir("j-1") / "result.txt").read_text() == "42"


def runs_on(tmp_path: Path, body: str) -> LocalExecutor:
    """Run a job of ``body`` that then writes ``result.txt`` in its folder and waits: it is looked at
    3 times :data:`STOPPED_LOOKS`, stopped by none, and exits 0 once let go; its executor."""
    gate = tmp_path / "gate"
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    ex.start(job_for(tmp_path, body + "open(os.path.join(folder, 'result.txt'), 'w').write('42')\n"
                     f"wait_gate({str(gate)!r})\n"), Allocation("n1", ("GPU-0",)))
    wait_until(lambda: (ex.job_dir("j-1") / "result.txt").exists(), "the job's writes")
    for _ in range(3 * STOPPED_LOOKS):
        assert ex.poll() == []
    assert ex.tracked() == {"j-1"}
    gate.touch()
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    return ex


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB tmpfs on ``tmp_path/jobs``."""
    yield from tmpfs_on(tmp_path / "jobs", "size=24m,mode=0755")


def test_red30_r3_under_min_log_free_the_job_writing_most_is_stopped(tmp_path: Path, small_disk: Path) -> None:
    ex = LocalExecutor(small_disk, max_log_bytes=64 << 20, min_log_free_bytes=16 << 20)
    start_writer(ex, tmp_path, "", job_id="j-quiet")
    assert ex.poll() == []  # looked at once: what it writes counts from here
    start_writer(ex, tmp_path, MIB + "for _ in range(12): os.write(1, buf)\n",  # leaves less than 16 MiB free of 24
                 job_id="j-writer", gpu="GPU-1")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.job_id == "j-writer", ended
    assert ended.message.startswith(f"the disk of the log folder {small_disk} had ") and \
        ", under c.SchedApp.min_log_free_mib = 16: its free space fell by " in ended.message, ended.message  # red31 R1
    assert ex.tracked() == {"j-quiet"}  # the other job runs on
    assert WRITING_MOST_BYTES <= 12 << 20
    ex.stop("j-quiet", grace_s=0)
    wait_event(ex, Exited)


@pytest.mark.parametrize("body, bound", [
    pytest.param("os.makedirs(os.path.join(folder, 'a', 'b'))\n"
                 "for i in range(45): open(os.path.join(folder, 'a', 'b', f'f{i}'), 'w').close()\n", 40,
                 id="47 files and folders past 40"),
    pytest.param("os.makedirs(os.path.join(folder, *['a'] * 70))\n", 100,
                 id="70 folders nested 70 deep: deeper than a walk holds open, counted as too many"),
])
def test_red30_r3_a_running_job_folder_past_its_count_of_files_is_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, bound: int) -> None:
    """The count bound (10,000 files and folders; here smaller, to keep the test small)."""
    monkeypatch.setattr(outside_caps, "FOLDER_FILES", bound)
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    start_writer(ex, tmp_path, FIND_FOLDER + body)
    ended = wait_event(ex, Exited)
    folder = ex.job_dir("j-1")
    assert isinstance(ended, Exited)
    assert ended.message.startswith(f"its job folder {folder} held more than {bound} files and folders (or folders "
                                    f"nested over 64 deep) beside its log while it ran, over the {bound} files / "
                                    "64 MiB"), ended.message
    wait_cleaned(ex, folder / "a")


def wait_cleaned(ex: LocalExecutor, leftover: Path) -> None:
    """Poll until the folder cleaner (beside the engine, red34 R2) removed ``leftover``; fails after 60 s."""
    deadline = time.monotonic() + 60
    while leftover.exists() or ex._cleaner.busy():
        assert time.monotonic() < deadline, f"{leftover} was not removed"
        ex.poll()
        time.sleep(0.05)
    ex.poll()  # the cleaned folders' ends counted


def test_red34_r2_a_folder_stopped_jobs_leftovers_are_removed_beside_the_engine_not_on_its_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """red34 R2: a job stopped for the files in its folder (one that ignores SIGTERM writes on through its grace)
    had its leftovers removed in the executor's poll — the engine's thread: four such 0-GPU jobs of one user held
    every start and end on a hub for 13 s. The poll reports the end at once; the folder is sealed and emptied by the
    folder cleaner's own thread, and the job's log is counted in its owner's total only after that (what it left is
    never counted against the owner's older jobs)."""
    from jupyter_sched.executors import folder_cleaner

    monkeypatch.setattr(outside_caps, "FOLDER_FILES", 40)
    removed_on: list[str] = []
    remove = folder_cleaner.remove_extra

    def recorded(folder: Path, owner_uid: int | None) -> int:
        removed_on.append(threading.current_thread().name)
        return remove(folder, owner_uid)

    monkeypatch.setattr(folder_cleaner, "remove_extra", recorded)
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP, max_user_log_bytes=CAP * 4)
    start_writer(ex, tmp_path, FIND_FOLDER + "os.makedirs(os.path.join(folder, 'a'))\n"
                 "for i in range(300): open(os.path.join(folder, 'a', f'f{i}'), 'w').close()\n")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and "held more than 40 files" in ended.message, ended.message
    wait_cleaned(ex, ex.job_dir("j-1") / "a")
    assert removed_on and threading.current_thread().name not in removed_on, removed_on
    assert ex._cleaning == {}  # counted once clean


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_red30_r3_a_hub_job_as_its_owner_that_stops_its_wrapper_is_held_to_its_cap_and_ended() -> None:
    """The finding as found: a job run as its owner's account (as a hub runs it; the service is root) stops its
    wrapper, which runs as that account too, and writes twice its cap."""
    with os_accounts(1) as (owner,), shared_dir() as root:
        ex = LocalExecutor(root / "jobs", job_python=account_python() or "", clean_env=True, require_run_as=True,
                           max_log_bytes=CAP)
        wrote = root / "wrote"
        wrote.mkdir(mode=0o777)
        wrote.chmod(0o777)
        # the writes begin once the wrapper IS stopped (a SIGSTOP takes effect when the kernel next runs it: a
        # wrapper caught mid-look cut the log to its cap first — session 34's run 3, a race of the test)
        body = ("import os, signal, time\n" + MIB + "os.kill(os.getppid(), signal.SIGSTOP)\n"
                "while open(f'/proc/{os.getppid()}/stat').read().rsplit(')', 1)[1].split()[0] != 'T': time.sleep(0.001)\n"
                f"for _ in range({2 * (CAP >> 20)}): os.write(1, buf)\n"
                f"open({str(wrote / 'done')!r}, 'w').close()\ntime.sleep(3600)\n")
        ex.start(make_job("j-1", user=owner.name, command=(), script="j-1.py", source=body),
                 Allocation("n1", ("GPU-0",)), AccountMapping().resolve(owner.name))
        wait_until((wrote / "done").exists, "the job's writes")
        log = ex.job_dir("j-1") / "output.log"
        assert log.stat().st_uid == owner.uid and log.stat().st_size >= 2 * CAP
        assert ex.poll() == []
        assert CAP < log.stat().st_size <= CAP + 1024, log.stat().st_size
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited)
        assert ended.message.startswith("its wrapper was stopped (by SIGSTOP) while it ran"), ended.message
        assert log.stat().st_size <= CAP + LINES_SLACK
