"""s38 (session 37's no_preempt gaps, item 1): a bulk cancel says the reclaim cool-down a single cancel says.

Session 37 made ``DELETE jobs/{id}`` / ``leases/{id}`` answer ``reclaim_cooldown`` when the work ended had taken GPUs
back from another team by reclaim lately (the README: "releasing that soon after holds your team's reclaims for a
while — the release says until when"; ``--no-preempt`` is the way to take nothing). ``jupyter-sched cancel --mine``,
``%schedule cancel --mine --yes`` and REST ``POST jobs/cancel`` ended the same work and said nothing of it. Here,
through the service the REST handlers call (SchedulerService in-process, real SQLite store, real core, 4 simulated
GPUs, leases bound to no kernel — ``cancel --mine`` takes those — so no processes): the bulk cancel's answer carries
each ended job's ``reclaim_cooldown`` and :func:`~jupyter_sched.wording.jobs.bulk_cancel_answers` (the CLI's and
the magics' one line) says it in the single cancel's words (:func:`~jupyter_sched.wording.jobs.reclaim_cost_text`).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.services.models import CancelJobsRequest
from jupyter_sched.wording.jobs import bulk_cancel_answers, cancel_outcome, reclaim_cost_text
from jupyter_sched.wording.preemption import release_cooldown_text
from tests.runtime.borrowed_world import borrowing_world
from tests.runtime.test_engine import state_of, wait_until


def test_s38_nopreempt_bulk_cancel_says_the_reclaim_cooldown_a_single_cancel_says(sqlite_db: str,
                                                                                   tmp_path: Path) -> None:
    svc, clock, _, _ = borrowing_world(sqlite_db, tmp_path, "s38a", "s38b", "s38c")

    # s38b's lease bound to no kernel (cancel --mine takes it) reclaims nlp's borrowed GPU, as designed
    taker = svc.submit({"gpus": 1}, user="s38b", kind="lease")["id"]
    wait_until(lambda: state_of(svc, taker) == "running", "the reclaiming lease to run", tick=svc.tick)
    waiting = svc.submit({"gpus": 4, "no_preempt": True}, user="s38b", kind="lease")["id"]  # takes nothing
    svc.tick()
    assert state_of(svc, waiting) == "pending"
    [reclaim] = svc.audit(action="reclaim")
    until = datetime.fromisoformat(reclaim["at"]) + timedelta(seconds=900)

    clock.advance(2)  # cancel --mine --yes 2 s later
    answer = svc.services.jobs.cancel_many(svc.services.caller("s38b", admin=False), CancelJobsRequest(mine=True))
    by_id = {job.id: job for job in answer.jobs}
    assert set(by_id) == {taker, waiting} and answer.cancelled == 2
    assert by_id[waiting].reclaim_cooldown is None  # a no_preempt request took nothing: its end costs nothing
    cost = by_id[taker].reclaim_cooldown
    assert cost is not None
    assert (cost.team, datetime.fromisoformat(cost.until), cost.cooldown_s) == ("vision", until, 900.0)
    assert cost.held_s is not None and cost.held_s >= 2.0
    words = release_cooldown_text("vision", until, cost.held_s, clock.now())
    assert cost.text == words

    # the CLI's and the magics' line: the counts, then the single cancel's clause, read at the reader's clock
    wire = answer.to_wire()
    line = bulk_cancel_answers([wire], clock.now())
    assert line.startswith("cancelled 2 leases: 2 leases bound to no kernel released; "), line
    assert line.endswith(f"; {words}"), line
    [said] = [job for job in wire["jobs"] if job["id"] == taker]
    assert all("reclaim_cooldown" not in job for job in wire["jobs"] if job["id"] != taker)  # absent where none
    assert reclaim_cost_text(said["reclaim_cooldown"], clock.now()) == words
    # the same clause a single cancel's answer gives (one renderer: cancel_outcome reads it with reclaim_cost_text)
    single = cancel_outcome(None, {"id": taker, "kind": "lease", "state": "cancelled",
                                   "reclaim_cooldown": said["reclaim_cooldown"]}, now=clock.now())
    assert single.endswith(f"; {words}"), single


def _answer(*costs: tuple[str, str, float | None]) -> dict[str, object]:
    """A ``POST jobs/cancel`` answer with one stopping job per (team, until, held_s)."""
    jobs = [{"id": f"j-{i}", "outcome": "stopping", "was": "running", "state": "running", "message": None,
             "reclaim_cooldown": {"team": team, "until": until, "took_at": until, "held_s": held, "cooldown_s": 900.0,
                                  "text": "ignored: the numbers are read"}}
            for i, (team, until, held) in enumerate(costs)]
    jobs.append({"id": "j-x", "outcome": "removed", "was": "pending", "state": "cancelled", "message": None,
                 "reclaim_cooldown": None})
    return {"cancelled": len(jobs), "grace_s": 60.0, "jobs": jobs,
            "counts": {"removed": 1, "released": 0, "stopping": len(costs), "ended": 0, "skipped": 0, "refused": 0,
                       "not_found": 0}}


def test_s38_nopreempt_bulk_cancel_says_one_cooldown_per_team_the_longest() -> None:
    """Several reclaimers of one team ended by one bulk cancel hold its reclaims until the latest of their ends: said
    once, with that one's numbers; another team's in its own clause, in the order the teams come; batches (the CLI
    sends ids 1,000 at a time) read as one."""
    now = datetime(2026, 12, 7, 10, 0, tzinfo=timezone.utc)
    first = _answer(("vision", "2026-12-07T10:10:00+00:00", 5.0), ("nlp", "2026-12-07T10:05:00+00:00", None))
    second = _answer(("vision", "2026-12-07T10:14:00+00:00", 30.0))
    line = bulk_cancel_answers([first, second], now)
    vision = release_cooldown_text("vision", datetime(2026, 12, 7, 10, 14, tzinfo=timezone.utc), 30.0, now)
    nlp = release_cooldown_text("nlp", datetime(2026, 12, 7, 10, 5, tzinfo=timezone.utc), None, now)
    assert line.endswith(f"; {vision}; {nlp}"), line
    assert line.count("reclaims of other teams' borrowed GPUs wait until") == 2
    assert "10:10" not in line and "ignored" not in line
    assert "never used" in nlp and "used for 30s" in vision
    no_cost = _answer()
    assert "cool-down" not in bulk_cancel_answers([no_cost], now)
