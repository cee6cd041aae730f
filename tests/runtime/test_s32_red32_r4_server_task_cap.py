"""red32 R4 (medium): jobs' tasks were capped per job (``pids.max`` 4096) and per account (8192), but a hub user's
notebook server, kernels and terminals — started by the project's own FencedLocalProcessSpawner, already put in a
devices group — sat in no pids group: a fork loop in one notebook cell could take every pid of the host, and then the
service forked no job's wrapper and PostgreSQL no backend, for everyone.

The spawner now also puts each server in its account's pids group (``jupyter_sched/servers/u<uid>``,
``c.FencedLocalProcessSpawner.pids_max``). Real cgroup v1 pids groups of this host (skipped with the reason elsewhere),
a real process that enters the group as root and drops to an unused uid before it runs anything, as the spawner starts
a server, and a real fork loop held to the cap. The whole hub route: tests/hub/test_red16_r1_fence.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator

import pytest

from jupyter_sched.executors.server_fence import server_tasks_enter_fn
from jupyter_sched.hub.fence import FencedLocalProcessSpawner
from tests.accounts import remove_group_when_empty
from tests.runtime.test_local_isolation import CGROUP
from tests.runtime.test_server_fence import PYTHON

PIDS = CGROUP / "pids"
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not (PIDS / "cgroup.procs").exists(),
                                reason="needs root and a cgroup v1 pids controller")

CAP = 24
FORK_LOOP = r"""
import errno, json, os, time
made, refused = [], None
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as exc:
        refused = errno.errorcode[exc.errno]
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    made.append(pid)
group = [g.split(":", 2)[2] for g in open("/proc/self/cgroup").read().split() if ":pids:" in g][0]
print(json.dumps({"made": len(made), "refused": refused, "group": group}), flush=True)
for pid in made:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""


@pytest.fixture
def uid() -> Iterator[int]:
    picked = 3_950_000 + os.getpid() % 40_000  # no account has it: a group of its own
    yield picked
    remove_group_when_empty(PIDS / "jupyter_sched" / "servers" / f"u{picked}")  # its process leaves it a moment later


def test_red32_r4_a_servers_fork_loop_is_held_to_its_accounts_task_cap(uid: int) -> None:
    enter = server_tasks_enter_fn(uid, CAP)
    assert enter is not None

    def preexec() -> None:
        enter()  # as root, before anything of the account
        os.setgid(uid)
        os.setuid(uid)

    done = subprocess.run([PYTHON, "-"], input=FORK_LOOP, preexec_fn=preexec, capture_output=True, text=True,
                          timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["group"] == f"/jupyter_sched/servers/u{uid}", seen
    assert seen["refused"] == "EAGAIN" and seen["made"] < CAP, seen  # the loop met the cap, not the host's pid_max
    assert (PIDS / "jupyter_sched" / "servers" / f"u{uid}" / "pids.max").read_text().strip() == str(CAP)


def test_red32_r4_the_spawners_cap_is_a_setting_and_zero_turns_it_off(uid: int) -> None:
    assert FencedLocalProcessSpawner.pids_max.default_value == 4096
    assert server_tasks_enter_fn(uid, 0) is None
    assert not (PIDS / "jupyter_sched" / "servers" / f"u{uid}").exists()
