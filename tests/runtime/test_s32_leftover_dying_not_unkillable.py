"""A job's leftover sent SIGKILL was called "unkillable" ("still there after SIGKILL: uninterruptible sleep") when a
loaded host had not torn it down within the grace (seen at load ~17 by s32-readme in
tests/runtime/test_newuser30_n16_job_end.py: "sent SIGKILL" expected). A process that is not in uninterruptible sleep
is dying: the wrapper now waits for it (up to KILLED_WAIT_S) and says "unkillable" only of a process in state D or one
still there after that wait.

The process table is a stand-in here (the one double of this file): a host too loaded to reap a killed process in time,
and a process in uninterruptible sleep, cannot be made on purpose; the wrapper's own code runs as it does in a job.
"""

from __future__ import annotations

import signal

import pytest

from jupyter_sched.executors import wrapper

GHOST = 2**22 + 12345  # above pid_max's default: no real process is signalled


def _table(monkeypatch: pytest.MonkeyPatch, state: str, looks_alive: int) -> list[int]:
    """A leftover that is seen ``looks_alive`` times after it was listed, in ``state``; the signals sent."""
    sent: list[int] = []
    looks = {"n": 0}

    def descendants() -> dict[int, str]:
        looks["n"] += 1
        return {GHOST: state} if looks["n"] <= looks_alive else {}

    def kill(pid: int, signum: int) -> None:
        assert pid == GHOST
        sent.append(signum)

    monkeypatch.setattr(wrapper, "_descendants", descendants)
    monkeypatch.setattr(wrapper, "_command_of", lambda pid: "python train.py")
    monkeypatch.setattr(wrapper, "_reap", lambda: None)
    monkeypatch.setattr(wrapper.os, "killpg", lambda pgid, signum: None)  # never this test's own group
    monkeypatch.setattr(wrapper.os, "kill", kill)
    return sent


def test_s32_a_killed_leftover_that_is_still_dying_is_waited_for_not_called_unkillable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # grace 0.05 s, looks every 0.05 s: alive for ~1 s, far past grace + grace, while in state R (dying)
    sent = _table(monkeypatch, "R", looks_alive=20)
    ended = wrapper._end_leftovers(0.05)
    assert ended == [[GHOST, "python train.py", "SIGKILL"]], ended
    assert signal.SIGKILL in sent


def test_s32_a_leftover_in_uninterruptible_sleep_is_still_called_unkillable(monkeypatch: pytest.MonkeyPatch) -> None:
    _table(monkeypatch, "D", looks_alive=10_000)
    ended = wrapper._end_leftovers(0.05)
    assert ended == [[GHOST, "python train.py", "unkillable"]], ended
    assert wrapper.KILLED_WAIT_S >= 5
