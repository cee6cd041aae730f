"""newuser36 N6: the quickstart's lease on a shared hub — ``--no-preempt`` waits, and a release that ends a reclaim
lately says what it costs the team.

newuser36 ran notebooks/quickstart.ipynb on a hub with quotas: ``%gpu request 1`` reclaimed another team's borrowed
GPU (its running job evicted), ``%gpu release`` 2 s later said only "Released lease …", and the team's reclaims then
waited 15 minutes (the reclaim cool-down), told to admins in the audit only. Here, through the service the REST
handlers call (SchedulerService in-process, real SQLite store, real core, 4 simulated GPUs, leases only: no
processes to start): a ``no_preempt`` lease of vision pends with the reason and evicts nothing; a lease that does
reclaim names the victim's owner and team while it waits; its release answers with ``reclaim_cooldown``, which
``cancel_outcome`` (the one renderer of ``%gpu release`` and ``jupyter-sched cancel``) says.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from jupyter_sched.wording import cancel_outcome
from tests.runtime.borrowed_world import borrowing_world
from tests.runtime.test_engine import state_of, wait_until


def test_newuser36_n6_no_preempt_lease_waits_and_a_reclaiming_release_says_its_cost(sqlite_db: str,
                                                                                     tmp_path: Path) -> None:
    svc, clock, _, borrowed = borrowing_world(sqlite_db, tmp_path, "n36a", "n36b", "n36c")

    # the quickstart's request with --no-preempt: it waits for a free GPU, evicting nothing, and says why
    demo = svc.submit({"gpus": 1, "kernel_id": "k-b1", "no_preempt": True}, user="n36b", kind="lease")
    assert demo["no_preempt"] is True
    for _ in range(3):
        svc.tick()
    assert (state_of(svc, demo["id"]), state_of(svc, borrowed)) == ("pending", "running")
    reason = svc.get_job(demo["id"], user="n36b")["reason"]
    assert reason["code"] == "WaitingForCapacity", reason
    assert "waiting for a free GPU: this request does not preempt or reclaim (--no-preempt)" in reason["message"]
    assert "waiting for a free GPU: this request does not preempt or reclaim (--no-preempt)" in \
        reason["text"]["summary"], reason["text"]
    assert not svc.audit(action="reclaim")
    withdrawn = svc.cancel(demo["id"], user="n36b")  # it took nothing: its withdrawal costs nothing
    assert "reclaim_cooldown" not in withdrawn

    # without it the lease reclaims (as designed); while it waits its line names whose job goes, of which team
    taker = svc.submit({"gpus": 1, "kernel_id": "k-b2"}, user="n36b", kind="lease")["id"]

    def said() -> str:
        svc.tick()
        job = svc.get_job(taker, user="n36b")
        return str(job["reason"]["message"]) if job["state"] == "pending" and job.get("reason") else ""

    line = wait_until(lambda: (m := said()).startswith("preempting") and m, "the reclaim's wait line")
    assert line.startswith(f"preempting n36c's kernel lease ({borrowed}) of team nlp to free GPUs on vm"), line
    wait_until(lambda: state_of(svc, taker) == "running", "the reclaiming lease to run", tick=svc.tick)
    started = svc.get_job(taker, user="n36b")["started_at"]

    clock.advance(2)  # %gpu release 2 s later: the answer says what it costs vision's reclaims
    released = svc.cancel(taker, user="n36b")
    cost = released["reclaim_cooldown"]
    [reclaim] = svc.audit(action="reclaim")
    took = datetime.fromisoformat(reclaim["at"])
    until = took + timedelta(seconds=900)
    assert (cost["team"], datetime.fromisoformat(cost["until"]), cost["cooldown_s"]) == ("vision", until, 900.0)
    assert cost["held_s"] == round((clock.now() - datetime.fromisoformat(started)).total_seconds(), 1)
    words = (f"team vision's reclaims of other teams' borrowed GPUs wait until {until:%H:%M} UTC (a reclaim "
             f"cool-down: the GPUs you took back were used for ")
    assert cost["text"].startswith(words), cost
    line = cancel_outcome(None, released, now=clock.now())
    assert line.startswith(f"released lease {taker} (") and f"; {words}" in line, line
