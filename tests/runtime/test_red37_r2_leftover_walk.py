"""red37 R2: a job's end walked the host's whole process table once per process of the job, every 0.05 s.

The wrapper's ``_end_leftovers`` looked for what the job left with ``_descendants()``, which read EVERY host process's
``/proc/N/stat`` once per process of the job found so far (O((k+1)·M) per look; M anybody's to size): another account's
15,000 idle processes held a job's end 36 s (8 leftovers) to 119 s (48) — its GPUs allocated and billed all that
time. Now a look reads the job's tracking group (``cgroup.procs``, named by the launch line), else follows
``/proc/<pid>/task/*/children`` down from the wrapper, else makes ONE pass over ``/proc``.

Real processes: a crowd of idle processes outside the job, and a stand-in wrapper (the wrapper module's own functions,
run in a process of its own session as the real wrapper runs them) whose job left 20 processes — 10 children that
ignore SIGTERM, each with a grandchild in a session of its own (out of the wrapper's process group: only the walk finds
it). A spy on the wrapper module's ``open`` and ``os.listdir`` counts what each look reads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.executors import tracking, wrapper

ROOT = Path(__file__).resolve().parents[2]
CROWD = 500
"""Idle processes outside the job: enough that a per-process walk of them shows (each `stat` opened once per look
is counted, not timed), few enough not to slow the other xdist workers on a 2-core host."""

_CROWD_CODE = r"""
import os, signal, sys
pids = []
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        signal.pause()
        os._exit(0)
    pids.append(pid)
print(" ".join(map(str, pids)), flush=True)
sys.stdin.read()
"""

_JOB_CODE = r"""
import builtins, json, os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from jupyter_sched.executors import wrapper
mode = sys.argv[2]
members = sys.stdin.readline().strip()  # sent once enrolled in the job's group (mode "group"), as the launch line is
wrapper._become_subreaper()
for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(signum, wrapper._on_signal)
wrapper._child_started = True
ready_r, ready_w = os.pipe()
for _ in range(10):
    if os.fork() == 0:  # a child that ignores SIGTERM, with a grandchild in a session of its own
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # never holds the test's pipe open
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.setsid()
            os.write(ready_w, b"g")
            signal.pause()
            os._exit(0)
        os.write(ready_w, b"c")
        signal.pause()
        os._exit(0)
got = b""
while len(got) < 20:
    got += os.read(ready_r, 20)
if mode == "group":
    wrapper._members_file[:] = [members]
elif mode == "scan":
    wrapper._children_files[:] = [False]  # as on a kernel without CONFIG_PROC_CHILDREN
looks, current = [], {"stat": {}, "listdir": 0}
real_open, real_listdir, real_descendants = builtins.open, os.listdir, wrapper._descendants
def spy_open(path, *args, **kwargs):
    parts = str(path).split("/")
    if len(parts) == 4 and parts[1] == "proc" and parts[3] == "stat":
        current["stat"][parts[2]] = current["stat"].get(parts[2], 0) + 1
    return real_open(path, *args, **kwargs)
def spy_listdir(path="."):
    if str(path) == "/proc":
        current["listdir"] += 1
    return real_listdir(path)
def descendants():
    current["stat"], current["listdir"] = {}, 0
    found = real_descendants()
    looks.append({"stat": current["stat"], "listdir": current["listdir"]})
    return found
wrapper.open = spy_open
os.listdir = spy_listdir
wrapper._descendants = descendants
ended = wrapper._end_leftovers(0.3)
print(json.dumps({"ended": ended, "looks": looks}), flush=True)
"""


@pytest.fixture(scope="module")
def crowd() -> object:
    """``CROWD`` idle processes outside any job (this test's uid), ended with their process group at the end."""
    proc = subprocess.Popen([sys.executable, "-S", "-c", _CROWD_CODE, str(CROWD)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        pids = {int(p) for p in proc.stdout.readline().split()}
        assert len(pids) == CROWD
        yield pids
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _run_job(mode: str) -> dict[str, object]:
    """Run the stand-in wrapper in ``mode`` (``group``: its tracking group named; ``children``: none named;
    ``scan``: neither, and no ``children`` files); what it said: ``{"ended": [[pid, command, fate], ...], "looks":
    [{"stat": {pid: opens}, "listdir": passes over /proc}, ...]}``."""
    tracker = tracking.detect_tracker() if mode == "group" else None
    if mode == "group" and not isinstance(tracker, tracking.CgroupTracker):
        pytest.skip("no writable cgroup hierarchy here (not root): the executor tracks jobs by marker")
    group = tracker.create(f"red37r2-{os.getpid()}", uid=None) if tracker is not None else None
    job = subprocess.Popen([sys.executable, "-c", _JOB_CODE, str(ROOT), mode], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        if group is not None and tracker is not None:
            tracker.enroll(group, job.pid)
        out, _ = job.communicate((tracking.members_file(group) or "" if group else "") + "\n", timeout=120)
        assert job.returncode == 0, out
        said: dict[str, object] = json.loads(out.strip().splitlines()[-1])
        return said
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
        if group is not None and tracker is not None:
            tracker.kill(group)
            tracker.remove(group)


@pytest.mark.parametrize("mode", ["group", "children", "scan"])
def test_red37_r2_job_end_leftover_walk_reads_each_host_process_at_most_once_per_look(crowd: set[int], mode: str) -> None:
    said = _run_job(mode)
    ended = said["ended"]
    looks = said["looks"]
    assert isinstance(ended, list) and isinstance(looks, list)
    # all 20 leftovers found and ended, the fate words right: the children ignored SIGTERM (sent SIGKILL after the
    # grace), their grandchildren — outside the wrapper's process group — ended on the SIGTERM sent them by pid
    fates = sorted(str(entry[2]) for entry in ended)
    assert fates == ["SIGKILL"] * 10 + ["SIGTERM"] * 10, ended
    for entry in ended:
        assert not Path(f"/proc/{entry[0]}").exists() or Path(f"/proc/{entry[0]}/stat").read_text().split(")")[-1].split()[0] == "Z"
    assert len(looks) >= 3
    for look in looks:
        stat = look["stat"]
        # one read of each process's stat per look at most, whatever the job's size
        assert max(stat.values(), default=0) <= 1, look
        assert look["listdir"] <= 1, look
        if mode != "scan":  # the job's own processes only: nobody else's process is read, no pass over /proc
            assert look["listdir"] == 0 and not {int(p) for p in stat} & crowd, look
            assert len(stat) <= 20, look


def test_red37_r2_a_leftover_still_dying_after_the_wait_is_not_called_unkillable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process table is a stand-in (a process that outlives SIGKILL without being in state D cannot be made on
    purpose): "unkillable" only from the state letter D, never from the time passed."""
    ghost = 2**22 + 4321  # above pid_max's default: no real process is signalled
    monkeypatch.setattr(wrapper, "_descendants", lambda: {ghost: "R", ghost + 1: "D"})
    monkeypatch.setattr(wrapper, "_command_of", lambda pid: "python train.py")
    monkeypatch.setattr(wrapper, "_reap", lambda: None)
    monkeypatch.setattr(wrapper.os, "killpg", lambda pgid, signum: None)  # never this test's own group
    monkeypatch.setattr(wrapper.os, "kill", lambda pid, signum: None)
    monkeypatch.setattr(wrapper, "KILLED_WAIT_S", 0.1)
    ended = wrapper._end_leftovers(0.05)
    assert ended == [[ghost, "python train.py", "SIGKILL"], [ghost + 1, "python train.py", "unkillable"]], ended
