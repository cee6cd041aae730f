"""New user 11's findings of branch nu11-fix (/work/coord/notes/newuser11.md; the lead's split: reasons, ETA
wording, panel and telemetry display — N1 N4 N11 N12 N16 N19 here; nu11-fix2's are in test_newuser11.py),
each its own test, against a real embedded server (simulated GPUs), the real core, the installed
``jupyter-sched`` command or real OS accounts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests import leftovers
from tests.onboarding.test_cli_firsthour import api, clear, wait_state
from tests.onboarding.test_newuser10 import USERS
from tests.reliability.harness import EmbeddedServer


def test_newuser11_n4_an_admitted_job_reads_starting_in_every_list() -> None:
    """N4: ``%schedule queue`` called a job "admitted" (GPUs granted, process not started yet) while the
    CLI's queue and ``%schedule jobs`` said running a moment later; "admitted" was said nowhere else.
    It reads "starting" in the one renderer the CLI, the magics' tables and (``stateWord``) the panel
    use; ``--state starting`` / ``--state admitted`` both list it; a job the cluster holds back still
    reads "pending (in the cluster)"."""
    from datetime import datetime, timezone

    from jupyter_sched.magics.render import queue_frame
    from jupyter_sched.wording.jobs import cancel_outcome, job_line, state_filter, state_word

    now = datetime.now(timezone.utc)
    job = {"id": "j-1", "name": "nbjob", "user": "ann", "kind": "training", "state": "admitted", "priority": "normal",
           "resources": {"gpus": 1}, "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"], "gpu_milli": 1000},
           "reason": None}
    assert state_word(job) == "starting"
    assert queue_frame([job], now)["state"].tolist() == ["starting"]
    assert job_line(job, now).startswith("job j-1 (nbjob): starting on vm: GPU-sim-vm-0")
    for asked in ("starting", "admitted"):
        query, keep = state_filter(asked)
        assert query == "admitted" and keep(job), asked
    assert cancel_outcome(job, {**job, "state": "running"}, grace_s=60) == \
        "cancelled j-1 (nbjob; was starting; stopping, grace 60 s)"  # its name too (newuser34 n1)
    from jupyter_sched.wording import wait_progress

    assert wait_progress(job, now).label.startswith("starting on vm")  # `wait`'s bar said "admitted on vm · 0s"
    held = {**job, "reason": {"code": "Unschedulable", "message": "Kubernetes cannot place the pod"}}
    assert state_word(held) == "pending (in the cluster)"


def test_newuser11_n1_a_job_waiting_on_a_stopping_job_expects_it_gone_by_its_kill_time(tmp_path: Path) -> None:
    """N1: stubborn (traps SIGTERM, no time limit) was cancelled; its row said "killed at 13:53:20" while
    big2, waiting for its GPU, said "ETA 13:54 (in 58s), when stubborn ends": the core took the 60 s
    grace of preemption victims (``SchedulingProfile.grace_s``) for every stop, while a cancel's SIGKILL
    comes after the engine's stop grace. The engine now tells the core the grace each stop was sent
    with (``Snapshot.stop_grace_s``). Real server, stop grace 10 s, a real process that ignores SIGTERM."""
    from datetime import datetime, timedelta

    srv = EmbeddedServer.start(tmp_path / "srv", users=USERS, admin_users=["boss"], simulated_gpus=1, stop_grace_s=10)
    try:
        ann = api(srv, "tok-ann")
        stubborn = ann.post("jobs", json={"gpus": 1, "name": "stubborn", "working_dir": str(tmp_path),
                                          "command": ["bash", "-c", "trap '' TERM; echo ready; sleep 300"]}).json()["id"]
        wait_state(srv, "tok-ann", stubborn, "running")
        deadline = time.monotonic() + 30
        while "ready" not in str(ann.get(f"jobs/{stubborn}/logs").json().get("text")):  # its trap is set
            assert time.monotonic() < deadline
            time.sleep(0.1)
        big = ann.post("jobs", json={"gpus": 1, "name": "big2", "command": ["true"], "working_dir": str(tmp_path)}).json()["id"]
        assert ann.delete(f"jobs/{stubborn}").status_code == 200
        stopping = ann.get(f"jobs/{stubborn}").json()
        since = datetime.fromisoformat(stopping["stopping_since"])
        deadline = time.monotonic() + 30
        while True:  # the next cycles project big2 on stubborn's end
            job = ann.get(f"jobs/{big}").json()
            reason = job.get("reason") or {}
            if job["state"] != "pending" or (reason.get("eta") and stubborn in str(reason.get("details"))):
                break
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        assert job["state"] == "pending", job  # seen waiting on stubborn's stop, with an ETA
        eta = datetime.fromisoformat(reason["eta"])
        # its kill time (+ a margin for cycles late on a loaded machine), not the victims' 60 s grace
        assert eta <= since + timedelta(seconds=10 + 10), (eta, since, reason)
        leftovers.kill_sigterm_ignorers([stubborn])  # its grace's SIGKILL, now: what it is said to wait on is read
        wait_state(srv, "tok-ann", big, "running", "succeeded")
    finally:
        clear(srv)
        srv.kill()


def test_newuser11_n16_a_preempted_job_keeps_its_preemptors_name_after_that_job_ended() -> None:
    """N16: ``requeued after preemption by eve-two (j-…)`` became ``… by j-…`` once eve-two ended (the core
    names jobs from the cycle's snapshot, which holds live work only). The name travels in the reason's
    details (``preempted_by_name``) and is kept from the job's last reason. Real core, built jobs."""
    from dataclasses import replace

    from jupyter_sched.scheduling import run_cycle
    from tests.core.core_builders import make_job, make_node, running, snapshot

    nodes = [make_node("n1", gpus=1)]
    preemptor = running(make_job("j-9", gpus=1))
    preemptor = replace(preemptor, spec=replace(preemptor.spec, name="eve-two"))
    victim = replace(make_job("low1", gpus=1), preempted_by="j-9")
    [first] = [p.reason for p in run_cycle(snapshot(nodes, [preemptor, victim])).pending]
    assert "requeued after preemption by eve-two (j-9)" in first.message, first.message
    assert first.details["preempted_by_name"] == "eve-two", first.details
    other = running(make_job("j-10", gpus=1))  # j-9 ended; another job holds the GPU now
    [later] = [p.reason for p in run_cycle(snapshot(nodes, [other, replace(victim, reason=first)])).pending]
    assert "requeued after preemption by eve-two (j-9)" in later.message, later.message


_AS_ACCOUNT = """
import os, sys
from jupyter_sched.userfiles import file_problem
os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[1]))
print(file_problem(sys.argv[3], sys.argv[4]))
"""


def test_newuser11_n19_a_link_into_a_folder_one_may_not_read_names_that_folder(tmp_path: Path) -> None:
    """N19: ``--script amy.py``, eve's link to /home/amy/proj/train_amy.py (proj 0700), said "cannot be read
    by eve (permission denied on /home/eve)" — her own home, as if she should chmod it. It names the folder
    that refused her: the link's target's. Real account, real link, the CLI's check (userfiles.file_problem)."""
    import subprocess
    import sys

    from tests.accounts import os_accounts, shared_dir, skip_reason
    from tests.onboarding.test_newuser10 import ROOT

    if skip_reason():
        pytest.skip(skip_reason() or "")
    with shared_dir() as shared, os_accounts(1) as (eve,):
        proj = Path(shared) / "amy" / "proj"
        proj.mkdir(parents=True)
        (proj / "train_amy.py").write_text("print(1)\n")
        proj.chmod(0o700)  # root's, closed to eve
        mine = Path(shared) / "eve"
        mine.mkdir()
        (mine / "amy.py").symlink_to(proj / "train_amy.py")
        os.chown(mine, eve.uid, eve.gid)
        done = subprocess.run([sys.executable, "-c", _AS_ACCOUNT, str(eve.uid), str(eve.gid), "amy.py", str(mine)],
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=shared, capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip()
    assert said == f"cannot be read by {eve.name} (permission denied on {proj})", said


def test_newuser11_n11_a_job_preempted_by_a_reclaim_says_why() -> None:
    """N11: a job preempted by another team's reclaim said only ``requeued after preemption by eve-two
    (j-…)`` — not that its team was borrowing and eveteam took back its guaranteed quota. The clause says
    why, from the core's own preemption sentence carried by the requeue (code ``Preempted``), and keeps it
    in later cycles (and in the backoff's words). Real core, built jobs."""
    from dataclasses import replace
    from datetime import timedelta

    from jupyter_sched.model import PendingReason
    from jupyter_sched.scheduling import run_cycle
    from tests.core.core_builders import T0, make_job, make_node, running, snapshot

    nodes = [make_node("n1", gpus=1)]
    taker = running(make_job("j-9", gpus=1, team="eveteam"))
    taker = replace(taker, spec=replace(taker.spec, name="eve-two"))
    requeued = PendingReason(code="Preempted", message="preempted: preempted to return borrowed quota to eveteam",
                             details={"preempted_by": "j-9"})
    victim = replace(make_job("amy-cell-job", gpus=1, team="amyteam"), preempted_by="j-9", reason=requeued)
    [first] = [p.reason for p in run_cycle(snapshot(nodes, [taker, victim])).pending]
    want = "requeued after preemption by eve-two (j-9), to return borrowed quota to eveteam"
    assert want in first.message, first.message
    [later] = [p.reason for p in run_cycle(snapshot(nodes, [taker, replace(victim, reason=first)])).pending]
    assert want in later.message, later.message
    backing_off = replace(victim, not_before=T0 + timedelta(seconds=30))
    [gated] = [p.reason for p in run_cycle(snapshot(nodes, [taker, backing_off])).pending]
    assert gated.code == "Backoff" and gated.message.startswith(want + "; retries from "), gated.message


def test_newuser11_n12_a_free_simulated_gpu_shows_no_utilization_of_a_job_that_ended() -> None:
    """N12: right after a job ended, ``%gpu status`` showed its last sample on the GPU it left (``allocated_to
    '' util_pct 22.9 memory_used_mib 48``): "someone is using a free GPU". A simulated GPU's figures are the
    CPU activity of the work placed on it, so a free one reads 0; a real GPU's sample stands (a process the
    scheduler does not know may use it, case 014), and a held simulated GPU keeps its sample."""
    from jupyter_sched.magics.render import gpu_frame

    def gpu(index: int, simulated: bool) -> dict[str, object]:
        return {"uuid": f"GPU-{index}", "index": index, "node": "vm", "model": "m", "memory_mib": 80, "simulated": simulated}

    held = {"id": "j-1", "name": "run", "user": "ann", "kind": "training", "state": "running", "resources": {"gpus": 1},
            "allocation": {"node": "vm", "gpu_uuids": ["GPU-1"], "gpu_milli": 1000}}
    samples = [{"gpu_uuid": f"GPU-{i}", "utilization_pct": 22.9, "memory_used_mib": 48.0} for i in range(3)]
    frame = gpu_frame({"gpus": [gpu(0, True), gpu(1, True), gpu(2, False)]}, [held], samples)
    assert frame["util_pct"].tolist() == [0.0, 22.9, 22.9], frame
    assert frame["memory_used_mib"].tolist() == [0.0, 48.0, 48.0], frame
