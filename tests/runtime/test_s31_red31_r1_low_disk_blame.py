"""red31 R1: under ``c.SchedApp.min_log_free_mib`` the low-disk rule ended "the job that wrote most there since the
previous look", counting only each job's log, folder and deleted files there. A job filling the same disk from
anywhere else (its home, /tmp, a scratch folder) was never counted: the rule ended a bystander whose log was merely
chatty, told its owner they filled the disk, and the filler ran on. Now a job is ended only when its own writes on
that disk — its log, folder and the files it holds open there — explain the disk's fall; when none do, none is
ended and admins read one WARNING naming the biggest writers by their processes' I/O counters.

Real executor, real wrapper, real jobs on a real small tmpfs (a "scratch" folder on it stands for a home or /tmp on
the log disk); the tests poll the executor themselves, as the engine's tick does; counts, never times.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import ExecutorError
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.disk_space import LOG_DISK_FULL
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outside_caps import EXPLAINS_SHARE, WRITING_MOST_BYTES, low_disk_reason
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.model import Allocation
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job
from tests.runtime.test_hubadmin25_b15_log_disk_full import tmpfs_on
from tests.runtime.test_local_executor import job_for, wait_event, wait_until
from tests.runtime.test_s30_red30_r3_outside_caps import MIB, start_writer

FLOOR = 16 << 20

CHATTY = (MIB + "os.write(1, buf)\n"  # a training job's lines: 1 MiB, then 2 MiB more once let go
          "open({ready!r}, 'w').close()\nwait_gate({go!r})\n"
          "for _ in range(2): os.write(1, buf)\n"
          "open({more!r}, 'w').close()\nwait_gate({never!r})\n")


def fill(scratch: Path, *, keep_open: bool) -> str:
    """A job body that writes ``scratch/cache.bin`` until 6 MiB of the disk are free (red31's fill2.py), then holds
    it open (``keep_open``) or closes it; nothing on its stdout."""
    body = (f"fh = open({str(scratch / 'cache.bin')!r}, 'wb')\n"
            "while True:\n"
            "    st = os.statvfs(fh.name)\n"
            "    free = st.f_bavail * st.f_frsize\n"
            "    if free <= 6 << 20: break\n"
            "    fh.write(b'\\1' * min(1 << 20, free - (6 << 20))); fh.flush()\n")
    return body + ("" if keep_open else "fh.close()\n")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 32 MiB tmpfs on ``tmp_path/jobs``, with a world-writable ``scratch`` folder on it."""
    for root in tmpfs_on(tmp_path / "jobs", "size=32m,mode=0755"):
        (root / "scratch").mkdir(mode=0o1777)
        yield root


def start_victim(ex: LocalExecutor, tmp_path: Path) -> dict[str, Path]:
    """Start the chatty job ``j-victim`` and look at it once (what it writes counts from here); its gates."""
    gates = {name: tmp_path / f"victim.{name}" for name in ("ready", "go", "more", "never")}
    ex.start(job_for(tmp_path, CHATTY.format(**{k: str(v) for k, v in gates.items()}), job_id="j-victim"),
             Allocation("n1", ("GPU-0",)))
    wait_until(gates["ready"].exists, "the victim's first lines")
    assert ex.poll() == []
    return gates


def test_red31_r1_a_job_filling_the_log_disk_outside_its_folder_is_ended_not_the_chatty_bystander(
        tmp_path: Path, small_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The finding as found: the filler holds its file open outside its folder; the bystander's log is what pushes
    the disk under its floor. The filler's open file is measured and explains the fall: it is ended, named by what
    it wrote; the bystander runs on."""
    caplog.set_level(logging.WARNING, logger="jupyter_sched.executors.outside_caps")
    ex = LocalExecutor(small_disk, max_log_bytes=64 << 20, min_log_free_bytes=FLOOR)
    gates = start_victim(ex, tmp_path)
    start_writer(ex, tmp_path, fill(small_disk / "scratch", keep_open=True), job_id="j-filler", gpu="GPU-1")
    gates["go"].touch()  # the bystander's next lines: now under the floor
    wait_until(gates["more"].exists, "the victim's next lines")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.job_id == "j-filler", ended
    assert ended.message.startswith(f"the disk of the log folder {small_disk} had ") and \
        ", under c.SchedApp.min_log_free_mib = 16: its free space fell by " in ended.message, ended.message
    wrote = ended.message.split("and this job wrote ", 1)[1]
    assert re.match(r"2[2-6](\.\d+)? MiB of it", wrote), ended.message  # the 32 MiB disk, filled to 6 MiB free
    assert " of it on that disk (its log, its job folder and the files it held open there; " in ended.message
    assert "write large outputs on another disk" in ended.message
    for _ in range(3):  # the bystander's lines push nothing over: it is never blamed
        assert ex.poll() == []
    assert ex.tracked() == {"j-victim"}
    assert not [r for r in caplog.records if r.name.endswith("outside_caps")]  # explained: no "nobody explains" line
    ex.stop("j-victim", grace_s=0)
    wait_event(ex, Exited)


def test_red31_r1_when_no_running_job_explains_the_fall_none_is_ended_and_admins_are_told_who_wrote_most(
        tmp_path: Path, small_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The filler closed its file (nothing of it is left to measure on the disk): the bystander's few MiB do not
    explain the fall, so nobody is ended; new jobs wait, saying the disk is full; the admins' one WARNING names the
    filler by its I/O counters."""
    caplog.set_level(logging.WARNING, logger="jupyter_sched.executors.outside_caps")
    ex = LocalExecutor(small_disk, max_log_bytes=64 << 20, min_log_free_bytes=FLOOR)
    gates = start_victim(ex, tmp_path)
    start_writer(ex, tmp_path, fill(small_disk / "scratch", keep_open=False), job_id="j-filler", gpu="GPU-1")
    gates["go"].touch()
    wait_until(gates["more"].exists, "the victim's next lines")
    for _ in range(4):
        assert ex.poll() == []
    assert ex.tracked() == {"j-victim", "j-filler"}
    said = [r.getMessage() for r in caplog.records if r.name.endswith("outside_caps")]
    assert len(said) == 1, said
    assert said[0].startswith(f"the disk of the job log folder {small_disk} has "), said
    assert ("no running job's writes there explain it (the most: job j-victim of the service's account, 3 MiB in its "
            "log, folder and open files there), so no job was ended for it; new jobs there wait") in said[0], said
    named = said[0].split("by their processes' I/O counters (an upper bound: any disk, pipes too) — ", 1)[1]
    assert named.startswith("j-filler of the service's account: 2"), said  # 2x MiB, first
    with pytest.raises(ExecutorError) as refused:  # a new job waits, its reason says the disk is full
        ex.start(job_for(tmp_path, "print('hello')\n", job_id="j-new"), Allocation("n1", ("GPU-2",)))
    assert refused.value.details["code"] == LOG_DISK_FULL
    assert refused.value.message.startswith(f"the disk of the log folder {small_disk} is full ("), refused.value.message
    for job_id in ("j-victim", "j-filler"):
        ex.stop(job_id, grace_s=0)
    while ex.tracked():
        wait_event(ex, Exited)


def test_red31_r1_a_job_whose_log_filled_the_disk_is_still_ended_with_what_was_measured(
        tmp_path: Path, small_disk: Path) -> None:
    """The rule still does its work: a job whose own log took the disk under its floor while a quiet one ran."""
    ex = LocalExecutor(small_disk, max_log_bytes=64 << 20, min_log_free_bytes=FLOOR)
    start_writer(ex, tmp_path, "", job_id="j-quiet")
    assert ex.poll() == []
    start_writer(ex, tmp_path, MIB + "for _ in range(20): os.write(1, buf)\n", job_id="j-writer", gpu="GPU-1")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.job_id == "j-writer", ended
    assert ": its free space fell by 20 MiB while the jobs there ran, and this job wrote 20 MiB of it on that disk " \
        "(its log, its job folder and the files it held open there; 20 MiB since the previous look): stopped" \
        in ended.message, ended.message
    assert ex.tracked() == {"j-quiet"}
    ex.stop("j-quiet", grace_s=0)
    wait_event(ex, Exited)


def test_red31_r1_the_end_says_what_was_measured() -> None:
    assert EXPLAINS_SHARE == 0.5 and WRITING_MOST_BYTES == 1 << 20
    said = low_disk_reason(Path("/srv/jobs"), 1 << 20, FLOOR, 300 << 20, 290 << 20, 4 << 20)
    assert said == ("the disk of the log folder /srv/jobs had 1 MiB free, under c.SchedApp.min_log_free_mib = 16: its "
                    "free space fell by 300 MiB while the jobs there ran, and this job wrote 290 MiB of it on that disk "
                    "(its log, its job folder and the files it held open there; 4 MiB since the previous look): "
                    "stopped — every user's logs (often the store too) are on that disk; write large outputs on "
                    "another disk (df shows which disk a folder is on), or ask an admin to free space there")


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_red31_r1_hub_jobs_of_two_accounts_the_filler_is_ended_and_the_bystander_runs_on(
        caplog: pytest.LogCaptureFixture) -> None:
    """As red31 found it: the service is root, each job runs as its owner's account; the filler's file is in a
    shared scratch folder on the log disk (as /tmp or /home would be), its owner's. The service reads the filler's
    open files from outside its account, ends it and names what it wrote; the bystander runs on."""
    caplog.set_level(logging.WARNING, logger="jupyter_sched.executors.outside_caps")
    with os_accounts(2) as (victim, filler), shared_dir() as root:
        for disk in tmpfs_on(root / "jobs", "size=32m,mode=0755"):
            scratch = disk / "scratch"
            scratch.mkdir(mode=0o1777)
            scratch.chmod(0o1777)
            gates = root / "gates"
            gates.mkdir(mode=0o777)
            gates.chmod(0o777)
            ex = LocalExecutor(disk, job_python=account_python() or "", clean_env=True, require_run_as=True,
                               max_log_bytes=64 << 20, min_log_free_bytes=FLOOR)
            names = {name: str(gates / f"victim.{name}") for name in ("ready", "go", "more", "never")}
            head = "import os, time\ndef wait_gate(name):\n    while not os.path.exists(name):\n        time.sleep(0.02)\n"
            ex.start(make_job("j-victim", user=victim.name, command=(), script="j-victim.py",
                              source=head + CHATTY.format(**names)),
                     Allocation("n1", ("GPU-0",)), AccountMapping().resolve(victim.name))
            wait_until(Path(names["ready"]).exists, "the victim's first lines")
            assert ex.poll() == []
            filled = gates / "filled"
            ex.start(make_job("j-filler", user=filler.name, command=(), script="j-filler.py",
                              source=head + fill(scratch, keep_open=True) + f"open({str(filled)!r}, 'w').close()\n"
                              f"wait_gate({names['never']!r})\n"),
                     Allocation("n1", ("GPU-1",)), AccountMapping().resolve(filler.name))
            wait_until(filled.exists, "the filler's writes")
            assert (scratch / "cache.bin").stat().st_uid == filler.uid
            Path(names["go"]).touch()
            wait_until(Path(names["more"]).exists, "the victim's next lines")
            ended = wait_event(ex, Exited)
            assert isinstance(ended, Exited) and ended.job_id == "j-filler", ended
            assert "and this job wrote 2" in ended.message and "of it on that disk" in ended.message, ended.message
            for _ in range(3):
                assert ex.poll() == []
            assert ex.tracked() == {"j-victim"}
            assert not [r for r in caplog.records if r.name.endswith("outside_caps")]
            ex.stop("j-victim", grace_s=0)
            wait_event(ex, Exited)
