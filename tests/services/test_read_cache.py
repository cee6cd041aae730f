"""Polled pages (GET queue, GET jobs) are answered again while the jobs they show are unchanged
(issue 17), and never once something changed them — in this process or another sharing the
store — nor to a caller whose view differs. The jobs change counter on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Job, JobSpec
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest, SubmitJobRequest
from jupyter_sched.store import JobRecord, Store, StoreTx, sqlite_url
from tests.leftovers import end_jobs


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                   executor=LocalExecutor(tmp_path / "jobs"))
    yield svc
    assert end_jobs(svc.executor) == []  # its started jobs end with the test (tests/leftovers.py)
    svc.store.close()


def test_a_polled_page_is_kept_until_a_job_changes_here_or_in_another_process(services: Services,
                                                                              tmp_path: Path) -> None:
    ana = services.caller("ana", admin=False)
    first = services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"])).id
    request = GetQueueRequest(limit=10)
    page = services.jobs.queue_page(ana, request)
    assert services.jobs.queue_page(ana, request) is page, "nothing changed: the same answer again"
    mine = services.jobs.list(ana, ListJobsRequest(limit=10))
    assert services.jobs.list(ana, ListJobsRequest(limit=10)) is mine

    other = Store(sqlite_url(tmp_path / "sched.sqlite"))  # another server (or the CLI) on the same store
    try:
        other.insert_job(JobRecord(job=Job(id="j-elsewhere", spec=JobSpec(name="e", user="ana", command=("true",)),
                                           submitted_at=datetime.now(timezone.utc))))
    finally:
        other.close()
    assert [e.id for e in services.jobs.queue_page(ana, request).entries.root] == [first, "j-elsewhere"]
    assert "j-elsewhere" in [j.id for j in services.jobs.list(ana, ListJobsRequest(limit=10)).jobs.root]

    services.jobs.cancel(ana, first)  # a change through this server
    assert [e.id for e in services.jobs.queue_page(ana, request).entries.root] == ["j-elsewhere"]
    services.engine.tick()  # a decision: the job now holds the GPU
    [entry] = services.jobs.queue_page(ana, request).entries.root
    assert entry.id == "j-elsewhere" and entry.state != "pending" and entry.position is None, "listed as holding the GPU"


def test_a_kept_page_is_never_another_callers_view(services: Services) -> None:
    ana, bo = services.caller("ana", admin=False), services.caller("bo", admin=False)
    services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true", "--token", "secret"]))
    request = GetQueueRequest()
    assert services.jobs.queue(ana, request).root[0].mine
    seen_by_bo = services.jobs.queue(bo, request).root[0]
    assert not seen_by_bo.mine and "command" not in seen_by_bo.to_wire(), "bo never sees ana's command"
    assert [j.id for j in services.jobs.list(bo, ListJobsRequest()).jobs.root] == [], "bo's own jobs: none"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = Store(sqlite_url(tmp_path / "s.sqlite") if request.param == "sqlite"
                   else request.getfixturevalue("pg_url"))
    yield opened
    opened.close()


def test_the_jobs_counter_grows_with_each_transaction_that_writes_a_job_and_only_then(store: Store) -> None:
    def version() -> int:
        with store.transaction(write=False) as tx:
            return tx.jobs_version()

    start = version()
    assert start >= 0
    job = Job(id="j-1", spec=JobSpec(name="c", user="ana", command=("true",)), submitted_at=datetime.now(timezone.utc))
    record = store.insert_job(JobRecord(job=job))
    assert version() == start + 1
    store.add_event(actor="ana", action="note", message="not a job row")
    store.list_jobs()
    assert version() == start + 1, "reads and other tables leave it"
    with store.transaction() as tx:
        tx.update_job(record)
        tx.add_event(actor="ana", action="note", message="same transaction")
    assert version() == start + 2
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.update_job(store.get_job("j-1"))
        raise RuntimeError("rolled back")
    assert version() == start + 2, "a rolled-back write does not count"


def test_the_quota_set_is_read_again_once_any_process_replaced_it(store: Store) -> None:
    from jupyter_sched.model import Quota, QuotaSet

    other = Store(store.url)  # another server on the same store
    try:
        assert store.quota_set() == QuotaSet()
        kept = store.quota_set()
        assert store.quota_set() is kept, "unchanged: the set read before, no four queries again"
        with other.transaction() as tx:
            tx.replace_quota_set(QuotaSet(quotas=(Quota(team="ml", guaranteed=2),), user_teams={"ana": ("ml",)}))
            assert tx.quota_set().user_teams == {"ana": ("ml",)}, "the writing transaction reads its own replacement"
        assert store.quota_set().user_teams == {"ana": ("ml",)} and store.quota_set().quotas[0].guaranteed == 2
        with store.transaction() as tx:
            tx.replace_quota_set(QuotaSet(user_teams={"ana": ("cv",)}))
        assert other.quota_set().user_teams == {"ana": ("cv",)} and other.quota_set().quotas == ()
    finally:
        other.close()


def test_queue_lines_are_shared_by_viewers_and_rebuilt_only_when_they_change(services: Services) -> None:
    ana, bo, cy = (services.caller(name, admin=False) for name in ("ana", "bo", "cy"))
    first = services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"])).id
    services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
    request = GetQueueRequest(limit=10)
    seen_by_bo = services.jobs.queue(bo, request).root
    seen_by_cy = services.jobs.queue(cy, request).root
    assert all(b is c for b, c in zip(seen_by_bo, seen_by_cy, strict=True)), "one line object for every other viewer"
    assert not any(line.mine for line in seen_by_bo) and all(line.mine for line in services.jobs.queue(ana, request).root)
    services.jobs.submit(cy, SubmitJobRequest(gpus=1, command=["true"]))  # a new job: the page changes
    after = services.jobs.queue(bo, request).root
    assert after[0] is seen_by_bo[0] and after[1] is seen_by_bo[1] and len(after) == 3, "unchanged lines reused"
    services.jobs.cancel(ana, first)
    assert first not in [line.id for line in services.jobs.queue(bo, request).root], "a cancelled job leaves"


def test_redteam3_kept_answers_are_bounded_in_rows_and_per_caller() -> None:
    """Red-team finding 3 (session 3): one user asking GET queue?limit=1000,999,… kept 256 pages of
    ~2 MB each. Kept answers are weighed in rows: a total bound, no page over a quarter of it, and
    a per-caller cap so one caller's many pages evict only their own."""
    from jupyter_sched.services.readcache import ReadCache, ReadVersion

    version = ReadVersion(jobs=1, leader=True, reasons=None, simulated=False)
    cache = ReadCache(limit=256, max_rows=1_000, per_owner=4)
    cache.put(("queue", "ana", 10), version, "ana's page", owner="ana", rows=10)
    for limit in range(250, 200, -1):  # eve asks fifty different big pages
        cache.put(("queue", "eve", limit), version, f"eve {limit}", owner="eve", rows=limit)
        assert cache.rows <= 1_000
    eves = [limit for limit in range(250, 200, -1) if cache.get(("queue", "eve", limit), version) is not None]
    assert len(eves) <= 4 and eves == sorted(eves, reverse=True)[:len(eves)]
    assert cache.get(("queue", "ana", 10), version) == "ana's page", "another caller's answer was not evicted"
    cache.put(("queue", "eve", 9999), version, "too big to keep", owner="eve", rows=251)
    assert cache.get(("queue", "eve", 9999), version) is None
    cache.put(("queue", "ana", 10), version, "ana's page again", owner="ana", rows=10)  # replacing counts once
    assert cache.rows == 10 + sum(eves)


@pytest.mark.parametrize("route", ["queue", "jobs"])
def test_a_page_many_callers_miss_together_is_read_and_built_once(services: Services, route: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifty panels polling in step all missed the same page after each submit, and every bulk
    request thread built it again at once (issue 17): one builds it, the others wait and get it."""
    ana = services.caller("ana", admin=False)
    services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
    reads: list[int] = []
    inside, go_on = threading.Event(), threading.Event()
    read = StoreTx.queue_page if route == "queue" else StoreTx.list_jobs

    def held(self: StoreTx, *args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        inside.set()
        assert go_on.wait(10)
        return read(self, *args, **kwargs)

    monkeypatch.setattr(StoreTx, "queue_page" if route == "queue" else "list_jobs", held)
    answers: list[Any] = []

    def poll() -> None:
        if route == "queue":
            answers.append(services.jobs.queue_page(ana, GetQueueRequest(limit=10)))
        else:
            answers.append(services.jobs.list(ana, ListJobsRequest(limit=10)))

    first = threading.Thread(target=poll)
    first.start()
    assert inside.wait(10), "the first poll reads the page"
    others = [threading.Thread(target=poll) for _ in range(5)]
    for thread in others:
        thread.start()
    time.sleep(0.2)  # the five wait for the first instead of reading it too
    assert len(reads) == 1, reads
    go_on.set()
    for thread in (first, *others):
        thread.join(10)
    assert len(answers) == 6 and all(answer is answers[0] for answer in answers), "one page, built once"
    assert len(reads) == 1


def test_when_the_page_being_built_fails_the_callers_waiting_for_it_build_it_themselves(
        services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    ana = services.caller("ana", admin=False)
    services.jobs.submit(ana, SubmitJobRequest(gpus=1, command=["true"]))
    queue_page, calls = StoreTx.queue_page, []
    inside, go_on = threading.Event(), threading.Event()

    def first_fails(self: StoreTx, *args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            inside.set()
            assert go_on.wait(10)
            raise RuntimeError("the database went away")
        return queue_page(self, *args, **kwargs)

    monkeypatch.setattr(StoreTx, "queue_page", first_fails)
    request, failed, answers = GetQueueRequest(limit=10), [], []

    def poll() -> None:
        try:
            answers.append(services.jobs.queue_page(ana, request))
        except RuntimeError as err:
            failed.append(err)

    first = threading.Thread(target=poll)
    first.start()
    assert inside.wait(10)
    waiting = threading.Thread(target=poll)
    waiting.start()
    time.sleep(0.2)
    assert len(calls) == 1, "the second waits for the first"
    go_on.set()
    first.join(10)
    waiting.join(10)
    assert len(failed) == 1 and len(answers) == 1 and len(calls) == 2, "the waiter read it itself"
    assert [e.id for e in answers[0].entries.root] == [e.id for e in services.jobs.queue_page(ana, request).entries.root]


def test_get_me_of_one_user_missed_by_many_at_once_is_computed_once(services: Services,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifty panels of one user miss their kept ``GET me`` together each second and after each
    submit (issue 17): one request thread computes it, the others wait and get the same answer."""
    ana = ("ana", False, None)
    services.jobs.submit(services.caller("ana", admin=False), SubmitJobRequest(gpus=1, command=["true"]))
    monkeypatch.setattr(services.accounting.ctx, "clock", ManualClock(datetime.now(timezone.utc)))  # one second
    reads: list[int] = []
    inside, go_on = threading.Event(), threading.Event()
    quota_set = StoreTx.quota_set

    def held(self: StoreTx, *args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        inside.set()
        assert go_on.wait(10)
        return quota_set(self, *args, **kwargs)

    monkeypatch.setattr(StoreTx, "quota_set", held)
    answers: list[Any] = []
    first = threading.Thread(target=lambda: answers.append(services.accounting.me_of(ana)))
    first.start()
    assert inside.wait(10), "the first poll computes it"
    others = [threading.Thread(target=lambda: answers.append(services.accounting.me_of(ana))) for _ in range(5)]
    for thread in others:
        thread.start()
    time.sleep(0.2)  # the five wait for the first instead of computing it too
    assert len(reads) == 1, reads
    go_on.set()
    for thread in (first, *others):
        thread.join(10)
    assert len(answers) == 6 and all(answer is answers[0] for answer in answers), "one answer, computed once"
    assert len(reads) == 1 and answers[0].user == "ana"
