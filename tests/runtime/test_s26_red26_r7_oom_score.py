"""red26 R7: a job's processes had the same OOM priority as the service and PostgreSQL (0), so the kernel,
out of memory, could kill the service (the largest process) rather than the many-process job.

Now every local job process runs with ``oom_score_adj`` 500 (the executor sets it on the waiting wrapper
before its launch line; children inherit it) and the service's own is unchanged. As its owner's account
(hub mode, the service root with CAP_SYS_RESOURCE) the job cannot lower it again: root's write is also
its floor (in a container without that capability the kernel keeps no floor; the test says which). Real
jobs, real ``/proc``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_sched.executors import limits
from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.limits import LocalLimits
from jupyter_sched.executors.local import JOB_OOM_SCORE_ADJ, LocalExecutor
from jupyter_sched.model import Allocation
from tests.accounts import Account
from tests.runtime.test_local_executor import job_for, wait_event
from tests.runtime.test_runas import GPU, accounts, hub_executor, needs_accounts, py_job, root, run_as, wait_exit

__all__ = ["accounts", "root"]  # the fixtures, for this module's tests

READ_AND_LOWER = """
def adj(path="/proc/self/oom_score_adj"):
    return int(open(path).read())
own = adj()
child = subprocess.run([sys.executable, "-c", "print(open('/proc/self/oom_score_adj').read().strip())"],
                       capture_output=True, text=True).stdout.strip()
try:
    with open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("0")
    lowered = adj()
except OSError as exc:
    lowered = type(exc).__name__
print(json.dumps({"own": own, "child": int(child), "lowered": lowered}), flush=True)
"""


def _seen(text: str) -> dict[str, object]:
    return dict(json.loads(text.strip().splitlines()[-1]))


def test_red26_r7_a_jobs_processes_are_the_first_oom_victims_not_the_service(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    service_before = int(Path("/proc/self/oom_score_adj").read_text())
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, READ_AND_LOWER), Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    text = ex.logs("j-1")[0]
    assert isinstance(ended, Exited) and ended.exit_code == 0, text
    seen = _seen(text)
    assert seen["own"] == JOB_OOM_SCORE_ADJ == 500 and seen["child"] == 500, seen
    assert int(Path("/proc/self/oom_score_adj").read_text()) == service_before, "the service's own is unchanged"
    assert JOB_OOM_SCORE_ADJ > service_before
    # said at every start (the service's log line on local jobs' isolation; doctor's "isolation:"), where the
    # service holds CAP_SYS_RESOURCE (without it: tests/runtime/test_verify26_v15_oom_floor.py)
    monkeypatch.setattr(limits, "holds_cap_sys_resource", lambda: True)
    assert LocalLimits(root=tmp_path / "cg", make=False).summary().endswith(
        "; oom_score_adj 500 (out of memory, the kernel kills a job before this service)")


@needs_accounts
def test_red26_r7_as_its_owner_a_job_cannot_lower_its_oom_score_adj(accounts: list[Account], root: Path) -> None:
    alice = accounts[0]
    ex = hub_executor(root)
    ex.start(py_job("j-oom", READ_AND_LOWER, user=alice.name), GPU, run_as(alice))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    text = ex.logs("j-oom")[0]
    assert ended.exit_code == 0, text
    seen = _seen(text)
    assert (seen["own"], seen["child"]) == (500, 500), seen
    if _has_cap_sys_resource():  # root's write set the floor (oom_score_adj_min)
        assert seen["lowered"] == "PermissionError", seen
    else:  # a container without CAP_SYS_RESOURCE (Docker's default): the kernel sets no floor then
        assert seen["lowered"] in (0, "PermissionError"), seen


def _has_cap_sys_resource() -> bool:
    """Whether this process has CAP_SYS_RESOURCE (bit 24 of CapEff)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> 24 & 1)
    return False
