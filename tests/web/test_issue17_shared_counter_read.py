"""Polls that arrived before a counter read began share it; a poll that arrives after a write never does (issue 17).

Every kept answer served on the event loop (``GET jobs``, ``queue``, ``me``, ``inventory``) read the
store's change counters once per request: ~7 % of the loop's time under ``status_bench``'s fifty
pollers, whose polls reach the loop in bursts. A read that began after a request arrived is now as
good as the request's own (``Store.counters_now(asked_at=...)``; handlers stamp ``asked_at`` when
tornado makes them, after the request was read), so the polls of one turn of the loop share it.

What must never happen: a poll that arrived after a commit — of this server or of another process
sharing the store — answered from a read that began before that commit.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.model import Job, JobSpec, ResourceRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url

from .conftest import server_config
from .test_kept_on_loop import _quiet


def _insert_elsewhere(url: str, job_id: str, user: str = "ivan") -> None:
    """A pending job of ``user`` committed by another process's store object (another server)."""
    other = Store(url)
    try:
        spec = JobSpec(name=job_id, user=user, resources=ResourceRequest(gpus=1), command=("true",))
        with other.transaction() as tx:
            tx.insert_job(JobRecord(job=Job(id=job_id, spec=spec, submitted_at=other._now())))
    finally:
        other.close()


def test_issue17_a_counter_read_begun_after_a_request_arrived_answers_it_and_no_later_one(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        arrived = time.monotonic()
        first = store.counters_now(asked_at=arrived)
        assert first is not None and store.counter_reads == 1
        # the polls of the same turn (arrived before that read began) share it
        assert store.counters_now(asked_at=arrived) == first
        assert store.jobs_version_now(asked_at=arrived) == first[0]
        assert store.counter_reads == 1
        _insert_elsewhere(store.url, "j-elsewhere")
        # a request that arrived after the commit: never the read that began before it
        later = time.monotonic()
        assert store.counters_now(asked_at=later) == (first[0] + 1, first[1])
        assert store.counter_reads == 2
        assert store.counters_now() == (first[0] + 1, first[1]), "no asked_at: read now"
        assert store.counter_reads == 3
    finally:
        store.close()
    assert store.counters_now(asked_at=0.0) is None, "closed: nothing kept is answered"


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, cycle_interval=3600)  # full cycles only when something happens


@pytest.mark.parametrize("route", ["jobs", "queue", "me"])
async def test_issue17_a_poll_after_another_process_wrote_reads_the_counters_again(
        sched_app: Any, api: Any, route: str) -> None:
    store = sched_app.services.store
    await _quiet(sched_app)
    params = {"limit": "5"} if route != "me" else None
    for _ in range(2):  # the second is kept, on the loop, from a counter read of its own
        status, before = await api("GET", route, params=params)
        assert status == 200
    reads = store.counter_reads
    _insert_elsewhere(store.url, f"j-elsewhere-{route}")
    status, after = await api("GET", route, params=params)
    assert status == 200
    assert store.counter_reads > reads, "the poll arrived after the last read began: read again"
    if route == "me":
        assert after["pending"] == before["pending"] + 1
    else:
        assert f"j-elsewhere-{route}" in [line["id"] for line in after]
