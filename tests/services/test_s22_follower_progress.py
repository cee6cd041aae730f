"""Session 21's note: a server that is not the scheduler leader showed a new progress report only after
the next job change. Pages of ``GET jobs`` / ``GET queue`` are kept while the store's ``jobs`` counter is
unchanged (:mod:`jupyter_sched.services.readcache`); the leader rebuilds them every cycle (its engine's
reasons change identity), a follower never did — and a progress report writes no job row.

Now every stored report moves the store's ``progress`` counter, and a follower's kept pages are right
while the counter, as last taken, is unchanged; it is taken at most once per cycle interval (the
leader's rate), so a follower shows a fresh report within one cycle and many reports within one cycle
rebuild its pages once.

Two servers' services on one store (SQLite and the session's real PostgreSQL): ``a`` ticks and leads,
``b`` never ticks (a follower); the job runs (a real process of ``a``'s local executor) and reports
through ``a``, as its token's URL may say; ana reads through ``b``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services import jobs as jobs_module
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest, ReportProgressRequest, SubmitJobRequest
from jupyter_sched.store import Store
from tests.leftovers import end_jobs
from tests.runtime.builders import T0

CYCLE_S = 5.0


@pytest.fixture
def servers(db_url: str, tmp_path: Path) -> Iterator[tuple[Services, Services, ManualClock]]:
    clock = ManualClock(T0)
    made = [Services(store=Store(db_url, now=clock.now), inventory=SimulatedInventory(2, node="vm"),
                     executor=LocalExecutor(tmp_path / name), clock=clock, owner_id=name, cycle_interval_s=CYCLE_S)
            for name in ("a", "b")]
    yield made[0], made[1], clock
    for svc in made:
        assert end_jobs(svc.executor) == []
        svc.store.close()


def _fraction_in_jobs(b: Services, job_id: str) -> float | None:
    ana = b.caller("ana", admin=False)
    page = b.jobs.kept_list(ana.user, ListJobsRequest()) or b.jobs.list(ana, ListJobsRequest())
    (row,) = [r for r in page.jobs.root if r.id == job_id]
    return None if row.progress is None else row.progress.fraction


def _fraction_in_queue(b: Services, job_id: str) -> float | None:
    ana = b.caller("ana", admin=False)
    page = b.jobs.kept_queue(ana.user, GetQueueRequest()) or b.jobs.queue_page(ana, GetQueueRequest())
    (entry,) = [e for e in page.entries.root if e.id == job_id]
    return None if entry.progress is None else entry.progress.fraction


def test_s22_a_follower_shows_a_new_progress_report_within_one_cycle(
        servers: tuple[Services, Services, ManualClock]) -> None:
    a, b, clock = servers
    ana = a.caller("ana", admin=False)
    job = a.jobs.submit(ana, SubmitJobRequest(gpus=1, name="train", command=["sleep", "60"])).id
    a.engine.tick()
    assert a.engine.is_leader and not b.engine.is_leader
    clock.advance(40)  # past the first 30 s of the run (a lone early report is not read for ETAs, still shown)
    assert _fraction_in_jobs(b, job) is None and _fraction_in_queue(b, job) is None  # b keeps both pages
    a.progress.report(ana, job, ReportProgressRequest(done=1, total=4))
    clock.advance(CYCLE_S)  # one cycle later; no job row was written meanwhile
    assert _fraction_in_jobs(b, job) == 0.25, "GET jobs on the follower (failed before: the kept page)"
    assert _fraction_in_queue(b, job) == 0.25, "GET queue on the follower (failed before)"
    clock.advance(20)
    a.progress.report(ana, job, ReportProgressRequest(done=3, total=4))
    clock.advance(CYCLE_S)
    assert (_fraction_in_jobs(b, job), _fraction_in_queue(b, job)) == (0.75, 0.75)


def test_s22_reports_within_one_cycle_rebuild_a_followers_page_once(
        servers: tuple[Services, Services, ManualClock], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, clock = servers
    builds: list[int] = []  # pages computed (each reads its running jobs' reports once)
    real = jobs_module.reports_of

    def counting(*args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jobs_module, "reports_of", counting)
    ana = a.caller("ana", admin=False)
    jobs = [a.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["sleep", "60"])).id for _ in range(2)]
    a.engine.tick()
    clock.advance(40)
    assert _fraction_in_jobs(b, jobs[0]) is None
    clock.advance(CYCLE_S)
    a.progress.report(ana, jobs[0], ReportProgressRequest(done=1, total=4))  # the counter moves: taken now
    assert _fraction_in_jobs(b, jobs[0]) == 0.25
    built = len(builds)
    for step in range(1, 4):  # both jobs report, inside the same cycle
        clock.advance(1)
        a.progress.report(ana, jobs[step % 2], ReportProgressRequest(done=step, total=8))
        _fraction_in_jobs(b, jobs[0])
    assert len(builds) == built, "the kept page served within the cycle"
    clock.advance(CYCLE_S)
    # then the newest stored: job 1's first (its later one and job 0's came under 10 s after their last: coalesced)
    assert (_fraction_in_jobs(b, jobs[0]), _fraction_in_jobs(b, jobs[1])) == (0.25, 0.125)
    assert len(builds) == built + 1, "one page built for the cycle's reports"
