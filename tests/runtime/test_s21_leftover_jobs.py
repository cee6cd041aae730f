"""Session 20's closing note: a job wrapper of ``tests/services/test_newuser18_panel.py::test_newuser18_n8_rest_says_…``
was alive five minutes after the full run — the ``services`` fixture closed its store and left the job it
started (``sleep 400``) running. The fixture now ends its jobs (:func:`tests.leftovers.end_jobs`), and
``tests/conftest.py`` ends and names any wrapper a test still leaves in its ``tmp_path``.

Real parts: the local executor, real wrapper processes.
"""

from __future__ import annotations

from pathlib import Path

import psutil

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation
from tests.leftovers import end_jobs, job_dir_of, kill_sigterm_ignorers, kill_wrappers, wrappers_under
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import gone, wait_until


def _start(tmp_path: Path, job_id: str, *, ignore_sigterm: bool = False) -> tuple[LocalExecutor, int]:
    """A LocalExecutor under ``tmp_path`` running ``sleep 400`` as ``job_id`` (ignoring SIGTERM, set by the shell that
    execs it, when ``ignore_sigterm``); the pid of the sleep."""
    ex = LocalExecutor(tmp_path / "jobs")
    command = ("sh", "-c", "trap '' TERM; exec sleep 400") if ignore_sigterm else ("sleep", "400")
    ex.start(make_job(job_id, command=command, working_dir=str(tmp_path)), Allocation("vm", ()))
    found: dict[str, int] = {}

    def command(p: psutil.Process) -> list[str]:  # another test's child may be a zombie or gone by now
        try:
            return p.cmdline()
        except psutil.Error:
            return []

    def sleeping() -> bool:
        sleeps = [p for p in psutil.Process().children(recursive=True) if command(p)[:1] == ["sleep"]
                  and p.parent() is not None and job_dir_of(p.parent()) is not None
                  and job_dir_of(p.parent()).is_relative_to(tmp_path)]  # type: ignore[union-attr]
        if sleeps:
            found["pid"] = sleeps[0].pid
        return bool(sleeps)

    wait_until(sleeping, "the job's sleep to start")
    return ex, found["pid"]


def test_s21_newuser18_n8_leak_end_jobs_ends_every_job_a_fixture_started(tmp_path: Path) -> None:
    ex, sleep_pid = _start(tmp_path, "j-left")
    [wrapper] = wrappers_under(tmp_path)
    assert end_jobs(ex) == []
    assert gone(wrapper.pid) and gone(sleep_pid), "the wrapper and its job are gone"
    assert wrappers_under(tmp_path) == []


def test_s21_the_net_finds_only_the_wrappers_in_a_tests_folder_and_ends_them(tmp_path: Path) -> None:
    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    ex_mine, mine_pid = _start(mine, "j-mine")
    ex_other, other_pid = _start(other, "j-other")
    try:
        left = wrappers_under(mine)
        assert [job_dir_of(p) for p in left] == [mine / "jobs" / "j-mine"], "another folder's job is not the test's"
        assert kill_wrappers(left) == [mine / "jobs" / "j-mine"]
        # the job's own process dies of the group's SIGKILL a moment after its wrapper is reaped
        wait_until(lambda: gone(mine_pid) and all(gone(p.pid) for p in left), "the test's job to be gone")
        assert not gone(other_pid), "the other folder's job runs on"
    finally:
        end_jobs(ex_other)
        end_jobs(ex_mine)
    assert gone(other_pid)


def test_s32_speed_clear_kills_at_once_only_the_sigterm_ignoring_processes_of_the_jobs_it_names(tmp_path: Path) -> None:
    """A module's ``clear()`` (tests/onboarding/test_cli_firsthour.py) waited out the whole stop grace (30-60 s) of a
    job that ignores SIGTERM, after every assertion on it was made: now it SIGKILLs at once the processes of the jobs
    it cancelled that ignore SIGTERM (the kill the grace ends with). A process that heeds SIGTERM is left to the
    scheduler's stop, and a job not named is not touched."""
    from tests.leftovers import _ignores_sigterm

    folders = {name: tmp_path / name for name in ("stubborn", "unnamed", "plain")}
    for folder in folders.values():
        folder.mkdir()
    executors = []
    try:
        pids = {}
        for name, folder in folders.items():
            ex, pids[name] = _start(folder, f"j-{name}", ignore_sigterm=name != "plain")
            executors.append(ex)
        assert _ignores_sigterm(pids["stubborn"]) and _ignores_sigterm(pids["unnamed"])
        assert not _ignores_sigterm(pids["plain"])
        killed = kill_sigterm_ignorers(["j-stubborn", "j-plain", "j-not-running"])
        assert pids["stubborn"] in killed and pids["unnamed"] not in killed and pids["plain"] not in killed, killed
        wait_until(lambda: gone(pids["stubborn"]), "the stubborn job's sleep to die of the SIGKILL")
        assert not gone(pids["unnamed"]) and not gone(pids["plain"]), "a job not named, and one that heeds SIGTERM, run on"
        assert kill_sigterm_ignorers([]) == []
    finally:
        for ex in executors:
            end_jobs(ex)
