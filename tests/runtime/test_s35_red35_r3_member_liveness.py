"""red35 R3 (its other half): the engine's per-tick look at running jobs' processes was sized by one user's process
count — two 0-GPU jobs of 4,000 sleeping processes each made the engine's thread busy 77 % of the time and others'
starts 0.47 → 2.9 s (median). The maps half is tests/runtime/test_s35_red35_r3_process_looks.py; here a job group's
members' liveness (:func:`~jupyter_sched.executors.tracking._live`, asked for every member at each look begun) is one
read of ``/proc/<pid>/stat`` each, where psutil read it twice with the start time. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from jupyter_sched.executors.tracking import _live


def test_red35_r3_a_members_liveness_is_read_from_its_stat_and_a_zombie_is_not_alive() -> None:
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 30
        while True:  # exited, not yet reaped: a zombie
            with open(f"/proc/{zombie.pid}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    break
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert _live([alive.pid, zombie.pid, os.getpid(), 0x3FFFFF]) == {alive.pid, os.getpid()}
    finally:
        alive.kill()
        alive.wait()
        zombie.wait()
