"""verify27 V3: one user filled the service's log disk in about a minute with job logs — each job kept up
to max_log_mib of output.log for the retention days and nothing bounded a user's sum. Now one account's
kept logs are bounded by c.SchedApp.max_user_log_mib: its oldest finished logs are cut to their tail
(a first line says what and why), a job launched while its running jobs hold the total is capped lower,
and another account's logs are never touched (:mod:`jupyter_sched.executors.log_budget`)."""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.log_budget import FLOOR_BYTES, TAIL_BYTES, LogBudget
from jupyter_sched.model import Allocation
from tests.accounts import os_accounts, shared_dir
from tests.runtime.test_local_executor import job_for, wait_event, wait_until
from tests.runtime.test_runas import hub_executor, needs_accounts, py_job, run_as

MIB = 1 << 20
CUT = "[jupyter_sched] this log was cut"
GPU = Allocation("n1", ("GPU-0",))


def _writes(mib: float, last: str) -> str:
    """A job body printing about ``mib`` MiB of numbered lines, then ``last``."""
    lines = int(mib * MIB) // 64
    return (f"for i in range({lines}): sys.stdout.write(f'{{i:08d}}' + 'x' * 55 + chr(10))\n"
            f"print({last!r}, flush=True)\n")


def _logs(root: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in root.rglob("output.log")}


def test_verify27_v3_a_users_many_big_jobs_keep_at_most_their_total_oldest_logs_cut_to_their_tail(
        tmp_path: Path) -> None:
    """Six jobs of 1.5 MiB each (cap 1 MiB) under a 3 MiB total: before, 6 MiB kept; now at most 3 MiB,
    the oldest cut to their last 64 KiB with a first line naming the setting, the newest whole."""
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=MIB, max_user_log_bytes=3 * MIB)
    for n in range(6):
        ex.start(job_for(tmp_path, _writes(1.5, f"END {n}"), job_id=f"j-{n}"), GPU)
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.exit_code == 0
    logs = _logs(tmp_path / "jobs")
    assert sum(len(data) for data in logs.values()) <= 3 * MIB  # was 6 MiB and more
    assert logs["j-5"].startswith(b"000") and b"log truncated at 1 MiB (c.SchedApp.max_log_mib)" in logs["j-5"]
    cut = [job for job, data in logs.items() if data.startswith(CUT.encode())]
    assert cut and "j-0" in cut and "j-5" not in cut  # oldest first, never the one just run
    first, _, rest = logs["j-0"].partition(b"\n")
    assert b"c.SchedApp.max_user_log_mib = 3 MiB" in first and b"bytes removed" in first
    assert len(rest) <= TAIL_BYTES and rest.endswith(b"its further output is not kept\n")  # the tail: its end
    assert rest[:8].isdigit()  # from a whole line
    assert ex.log_budget.kept("") == sum(len(data) for job, data in logs.items())


def test_verify27_v3_a_job_launched_while_its_owners_jobs_hold_the_total_is_capped_lower_naming_the_setting(
        tmp_path: Path) -> None:
    """Running jobs are counted at their caps: the second of two running jobs gets what is left (1 MiB of
    a 3 MiB total), its last line names c.SchedApp.max_user_log_mib."""
    gate = tmp_path / "gate"
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=2 * MIB, max_user_log_bytes=3 * MIB)
    ex.start(job_for(tmp_path, f"wait_gate({str(gate)!r})\n" + _writes(2.5, "A"), job_id="j-a"), GPU)
    ex.start(job_for(tmp_path, _writes(1.5, "B"), job_id="j-b"), GPU)
    seen: list[object] = []
    wait_until(lambda: any(isinstance(e, Exited) and e.job_id == "j-b" for e in (seen.extend(ex.poll()) or seen)),
               "job B's end")
    gate.touch()
    wait_until(lambda: any(isinstance(e, Exited) and e.job_id == "j-a" for e in (seen.extend(ex.poll()) or seen)),
               "job A's end")
    logs = _logs(tmp_path / "jobs")
    assert logs["j-b"].endswith(b"[jupyter_sched] log truncated at 1 MiB (c.SchedApp.max_user_log_mib = 3 MiB for "
                                b"all of one user's job logs); the job keeps running, its further output is not kept\n")
    assert b"log truncated at 2 MiB (c.SchedApp.max_log_mib)" in logs["j-a"]
    assert LogBudget(3 * MIB, 2 * MIB).launch("x", tmp_path / "none", None, {"j-a", "j-b"}, 3 * MIB) == FLOOR_BYTES


def test_verify27_v3_many_small_jobs_are_bounded_too_and_a_planted_symlink_is_never_cut(tmp_path: Path) -> None:
    """Logs already no bigger than a tail: the oldest keep one line. A log its owner replaced by a symlink
    (to a file not theirs) is left alone — the file behind it unchanged."""
    folder = tmp_path / "users" / "mal"
    folder.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_bytes(b"v" * (200 << 10))
    for n in range(40):
        job = folder / f"j-{n:03d}"
        job.mkdir()
        (job / "output.log").write_bytes(b"line\n" * 10240)  # 50 KiB, under a tail
        os.utime(job / "output.log", (1000 + n, 1000 + n))
    planted = folder / "j-000" / "output.log"
    planted.unlink()
    planted.symlink_to(victim)
    os.utime(folder / "j-001" / "output.log", (900, 900))  # the oldest of all
    budget = LogBudget(1 * MIB, 256 << 10)
    assert budget.launch("mal", folder, None, set(), 0) == 256 << 10
    logs = [p for p in folder.glob("j-*/output.log") if not p.is_symlink()]
    assert sum(len(p.read_bytes()) for p in logs) + (256 << 10) <= 1 * MIB  # was 1.95 MiB
    emptied = [p for p in logs if p.read_bytes().startswith(CUT.encode())]
    assert emptied and all(b"none of it is kept" in p.read_bytes() for p in emptied)
    assert (folder / "j-001" / "output.log") in emptied
    assert victim.read_bytes() == b"v" * (200 << 10)
    assert (folder / "j-039" / "output.log").read_bytes() == b"line\n" * 10240  # the newest kept whole


@needs_accounts
def test_verify27_v3_one_accounts_logs_are_cut_never_another_accounts() -> None:
    """Hub mode, as root: mal's five 1.5 MiB jobs under a 2 MiB total cut mal's oldest logs; amy's log,
    written before them in the same log_dir, is whole."""
    with os_accounts(2) as (amy, mal), shared_dir() as root:
        ex = hub_executor(root, max_log_bytes=MIB, max_user_log_bytes=2 * MIB)
        ex.start(py_job("j-amy", _writes(1.5, "AMY"), user=amy.name), GPU, run_as(amy))  # type: ignore[arg-type]
        assert isinstance(wait_event(ex, Exited), Exited)
        for n in range(5):
            ex.start(py_job(f"j-mal{n}", _writes(1.5, f"MAL {n}"), user=mal.name), GPU, run_as(mal))  # type: ignore[arg-type]
            assert isinstance(wait_event(ex, Exited), Exited)
        logs = {p.parent.name: p for p in (root / "jobs").rglob("output.log")}
        amy_log = logs["j-amy"].read_bytes()
        assert amy_log.startswith(b"000") and len(amy_log) > MIB  # untouched
        mal_logs = {job: p.read_bytes() for job, p in logs.items() if job.startswith("j-mal")}
        assert sum(len(d) for d in mal_logs.values()) <= 2 * MIB
        assert mal_logs["j-mal0"].startswith(CUT.encode()) and f"{mal.name}'s job logs".encode() in mal_logs["j-mal0"]
        assert os.stat(logs["j-mal0"]).st_uid == mal.uid  # still the owner's file


def test_verify27_v3_a_job_run_again_is_not_cut_while_it_appends_to_its_own_log(tmp_path: Path) -> None:
    """A preempted (or restarted) job appends to its earlier log: launched again, that log is neither
    counted as finished nor cut under it; its end counts it whole."""
    folder = tmp_path / "jobs"
    folder.mkdir()
    for n, job_id in enumerate(("j-again", "j-other")):
        (folder / job_id).mkdir()
        (folder / job_id / "output.log").write_bytes(b"r\n" * (300 << 10))  # 600 KiB each
        os.utime(folder / job_id / "output.log", (1000 + n, 1000 + n))  # j-again the oldest
    budget = LogBudget(1 * MIB, 512 << 10)
    assert budget.launch("", folder, None, set(), 0, job_id="j-again") == 512 << 10
    assert (folder / "j-again" / "output.log").read_bytes() == b"r\n" * (300 << 10)  # not cut under the new run
    assert (folder / "j-other" / "output.log").read_bytes().startswith(CUT.encode())  # the other, older-kept one
    budget.ended("", "j-again", folder / "j-again" / "output.log", None)
    assert budget.kept("") == (300 << 10) * 2 + len((folder / "j-other" / "output.log").read_bytes())


def test_newuser28_n6_running_jobs_caps_never_cut_finished_logs_to_make_room_they_could_not_give(
        tmp_path: Path) -> None:
    """newuser28 N6: four running jobs at their 1-GiB caps filled the 4-GiB total on paper, so every launch cut
    each finished log to nothing while all the account's logs were 34 MB. Finished logs are now cut for bytes
    really written; the new job gets the floor cap."""
    folder = tmp_path / "jobs"
    for n in range(6):
        (folder / f"j-{n}").mkdir(parents=True)
        (folder / f"j-{n}" / "output.log").write_bytes(b"epoch 1 val_acc 0.5\n" * (8 << 10))  # ~160 KiB each
        os.utime(folder / f"j-{n}" / "output.log", (1000 + n, 1000 + n))
    running = {f"j-{n}" for n in range(2, 6)}  # 4 of them run, each with a 1-GiB cap
    budget = LogBudget(4 << 30, 1 << 30)
    assert budget.launch("", folder, None, running, 4 << 30, job_id="j-new") == FLOOR_BYTES
    kept = {job: (folder / job / "output.log").read_bytes() for job in ("j-0", "j-1")}
    assert all(not data.startswith(CUT.encode()) and len(data) == 20 * (8 << 10) for data in kept.values()), \
        {job: data[:120] for job, data in kept.items()}
    # bytes really written past the total still cut the oldest finished log first
    tight = LogBudget(700 << 10, 512 << 10)
    assert tight.launch("", folder, None, running, 2 << 20, job_id="j-new2") == min(FLOOR_BYTES, 512 << 10)
    assert (folder / "j-0" / "output.log").read_bytes().startswith(CUT.encode())


def test_newuser29_n1_no_number_of_running_jobs_cuts_finished_logs_their_bytes_do_not_fill(tmp_path: Path) -> None:
    """newuser29 N1: newuser28 N6's fix moved the fault one job earlier — with 3 jobs running (3 of a 4-GiB total
    in caps, 1 GiB left = a whole cap) a launch still counted the caps as bytes and cut every finished log to
    nothing, while all the account's logs were a few KB. With 0 to 5 running, no finished log is cut; the new
    job's cap is what the caps leave (at least the floor); real bytes past the total still cut the oldest."""
    folder = tmp_path / "jobs"
    for n in range(8):
        (folder / f"j-{n}").mkdir(parents=True)
        (folder / f"j-{n}" / "output.log").write_bytes(b"epoch 1 val_acc 0.5 checkpoint saved\n" * 60)  # ~2 KiB
        os.utime(folder / f"j-{n}" / "output.log", (1000 + n, 1000 + n))
    for k in range(6):  # j-2 … j-(1+k) run; the other logs are finished ones
        finished = (8 - k) * 37 * 60
        running = {f"j-{n}" for n in range(2, 2 + k)}
        budget = LogBudget(4 << 30, 1 << 30)
        cap = budget.launch("", folder, None, running, k << 30, job_id=f"j-new{k}")
        assert cap == max(FLOOR_BYTES, min(1 << 30, (4 << 30) - (k << 30) - finished)), (k, cap)
        for job in ("j-0", "j-1"):
            data = (folder / job / "output.log").read_bytes()
            assert not data.startswith(CUT.encode()) and len(data) == 37 * 60, (k, job, data[:120])
    # bytes really written do count: a running job that wrote 1 MiB of a 3-MiB total, two finished ~1 MiB logs
    # and a whole 1-MiB cap for the new job do not fit: the oldest finished log is cut to its tail, not the newer
    (folder / "j-2" / "output.log").write_bytes(b"x" * 63 + b"\n" * 1 + b"y" * (MIB - 64))
    for job in ("j-0", "j-1"):
        (folder / job / "output.log").write_bytes(b"z" * 63 + b"\n" + b"w" * (600 << 10))
    tight = LogBudget(3 * MIB, MIB)
    assert tight.launch("", folder, None, {"j-2"}, MIB, job_id="j-new") == MIB
    assert (folder / "j-0" / "output.log").read_bytes().startswith(CUT.encode())
    assert not (folder / "j-1" / "output.log").read_bytes().startswith(CUT.encode())
