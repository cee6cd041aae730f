"""A kept ``GET jobs`` / ``GET queue`` page is answered on the event loop (issue 17).

Fifty panels polling each second mostly get a page the services keep while the jobs are
unchanged; each still hopped to a request thread and back and opened a store transaction to
read the ``jobs`` counter (~180 us). The counter is now read on a plain read-only connection
(microseconds) and a kept page of the caller's own view is answered without the hop. It must
never be a stale page: a write the caller made (or any other process made) moves the counter
before the answer to that write is sent, so the next poll computes the page again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.model import Job, JobSpec, ResourceRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url

from .conftest import BOSS_TOKEN, JUDY_TOKEN, server_config


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    # full cycles only when something happens (each replaces the engine's reasons, which a kept
    # page is checked against): the tests wait until the engine is quiet, then poll
    return server_config(tmp_path, cycle_interval=3600)


async def _quiet(sched_app: Any, holding: int | None = None) -> None:
    """Wait until the store's jobs counter and the engine's reasons stay put (no decision, no
    write) for three looks in a row: a kept page is then current. ``holding``: and until that many jobs
    hold GPUs — under load the cycle after a submit could start after three quiet looks, and the page
    kept then changed under the test (test_kept_me's flake, s29)."""
    engine, store = sched_app.services.engine, sched_app.services.store
    seen: list[tuple[Any, int]] = []
    for _ in range(600):  # a wait for the engine, not a timing assertion
        seen = [*seen[-2:], (engine.reasons, store.jobs_version_now())]
        if len(seen) == 3 and all(s[0] is seen[0][0] and s[1] == seen[0][1] for s in seen) and (
                holding is None or sum(1 for r in store.live_jobs() if r.job.state.holds_gpus) == holding):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the engine never went quiet")


def _count(monkeypatch: Any, service: Any, name: str) -> list[str]:
    """Calls of ``service.<name>`` (the request-thread path), by caller."""
    calls: list[str] = []
    real = getattr(service, name)

    def counted(caller: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(caller.user)
        return real(caller, *args, **kwargs)

    monkeypatch.setattr(service, name, counted)
    return calls


async def test_a_kept_jobs_page_is_answered_without_the_service_call_and_never_stale_after_a_submit(
        sched_app: Any, api: Any, monkeypatch: Any) -> None:
    calls = _count(monkeypatch, sched_app.services.jobs, "list")
    status, first = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "one"})
    assert status == 201
    await _quiet(sched_app, holding=1)
    status, page = await api("GET", "jobs", params={"limit": "5"})
    assert status == 200 and [j["id"] for j in page] == [first["id"]]
    assert calls == ["ivan"]
    status, again = await api("GET", "jobs", params={"limit": "5"})
    assert status == 200 and again == page
    assert calls == ["ivan"], "the kept page was answered on the loop, without the service call"
    # the caller's own write: the very next poll shows it (the counter moved before the 201)
    status, second = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "two"})
    assert status == 201
    status, page = await api("GET", "jobs", params={"limit": "5"})
    assert status == 200 and [j["id"] for j in page][:2] == [second["id"], first["id"]]


async def test_a_write_by_another_process_is_seen_by_the_next_poll(sched_app: Any, api: Any) -> None:
    await _quiet(sched_app)  # so only the store's counter can tell the kept page is stale
    status, page = await api("GET", "jobs", params={"limit": "5"})
    assert status == 200 and page == []
    other = Store(sched_app.services.store.url)  # another server sharing the store
    try:
        spec = JobSpec(name="elsewhere", user="ivan", resources=ResourceRequest(gpus=1), command=("true",))
        with other.transaction() as tx:
            tx.insert_job(JobRecord(job=Job(id="j-from-elsewhere", spec=spec,
                                            submitted_at=sched_app.services.ctx.clock.now())))
    finally:
        other.close()
    status, page = await api("GET", "jobs", params={"limit": "5"})
    assert status == 200 and [j["id"] for j in page] == ["j-from-elsewhere"]


async def test_a_kept_queue_page_is_answered_on_the_loop_per_caller_and_moves_with_a_submit(
        sched_app: Any, api: Any, monkeypatch: Any) -> None:
    calls = _count(monkeypatch, sched_app.services.jobs, "queue_page")
    for name in ("a", "b", "c", "d", "e"):  # four run on the 4 simulated GPUs, one waits
        assert (await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": name}))[0] == 201
    await _quiet(sched_app, holding=4)
    status, ivan_view = await api("GET", "queue", params={"limit": "10"})
    assert status == 200 and len(ivan_view) == 5
    status, judy_view = await api("GET", "queue", params={"limit": "10"}, token=JUDY_TOKEN)
    assert status == 200 and len(judy_view) == 5
    assert calls.count("judy") == 1, "another caller's kept page is never answered to judy"
    assert all(line.get("command") for line in ivan_view), ivan_view[0]  # his own: what they run
    assert not any(line.get("command") for line in judy_view), judy_view[0]  # to judy: left out
    before = len(calls)
    status, again = await api("GET", "queue", params={"limit": "10"})
    assert status == 200 and again == ivan_view
    assert len(calls) == before, "ivan's kept page was answered on the loop"
    status, sixth = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "f"})
    assert status == 201
    status, page = await api("GET", "queue", params={"limit": "10"})
    assert status == 200 and sixth["id"] in [line["id"] for line in page]


async def test_others_jobs_are_never_answered_from_the_loop(sched_app: Any, api: Any, monkeypatch: Any) -> None:
    calls = _count(monkeypatch, sched_app.services.jobs, "list")
    assert (await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"]}, token=JUDY_TOKEN))[0] == 201
    for _ in range(2):  # the second would be a kept page: still the service call, which checks the caller
        status, page = await api("GET", "jobs", params={"all": "true"}, token=BOSS_TOKEN)
        assert status == 200 and [j["user"] for j in page] == ["judy"]
    assert calls == ["boss", "boss"]
    for _ in range(2):  # a non-admin asking for everyone's: refused each time, never a kept page
        status, body = await api("GET", "jobs", params={"all": "true"}, token=JUDY_TOKEN)
        assert status == 403 and body["error"]["field"] == "all"


def test_the_counter_read_without_a_transaction_is_the_counter(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        with store.transaction(write=False) as tx:
            assert store.jobs_version_now() == tx.jobs_version()
        spec = JobSpec(name="x", user="ivan", resources=ResourceRequest(gpus=1), command=("true",))
        before = store.jobs_version_now()
        with store.transaction() as tx:
            tx.insert_job(JobRecord(job=Job(id="j-x", spec=spec, submitted_at=store._now())))
        after = store.jobs_version_now()
        assert before is not None and after == before + 1
    finally:
        store.close()
    assert store.jobs_version_now() is None  # closed: the caller asks in a transaction
    memory = Store("sqlite://")
    try:
        assert memory.jobs_version_now() is None  # no file another connection could read
    finally:
        memory.close()
