"""Red team 24, R4: carried notebooks were read out of the database on every ``GET queue``.

A pending job's row carries its notebook (``notebook_json``, up to 8 MiB) in its spec; the queue
page read every listed row whole, so 30 pending carried jobs of one user made everyone's queue
read 3-4 s (PostgreSQL moved ~225 MB per read). The rows the process's row cache keeps at their
version (the engine's snapshot keeps every live one) are now served from it: the queue page and
the live listings read ``id, version`` and fetch whole rows only for what changed.
Real parts: the store on SQLite and on a real PostgreSQL server (tests/pg.py); SQLAlchemy's
statement events show which columns were read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.errors import BusyError
from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.services import Services
from jupyter_sched.services import jobs as jobs_module
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)
NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "pad": "' + "x" * 200_000 + '"}'


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = sqlite_url(tmp_path / "s.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    opened = Store(url)
    with opened.transaction(now=T0) as tx:
        for i in range(6):  # six carried notebooks waiting, one running
            spec = JobSpec(name=f"nb{i}", user="dora", notebook="carried.ipynb", notebook_json=NOTEBOOK)
            state = JobState.RUNNING if i == 5 else JobState.PENDING
            tx.insert_job(JobRecord(job=Job(id=f"j-{i}", spec=spec, state=state, submitted_at=T0 + timedelta(seconds=i))))
    yield opened
    opened.close()


def spec_reads(store: Store, read: Any) -> tuple[Any, list[str]]:
    """``read(tx)``'s result and the statements it ran that read the jobs' ``spec`` column."""
    seen: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "jobs.spec" in statement:
            seen.append(statement)

    engine = store.engine
    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        with store.transaction(write=False) as tx:
            result = read(tx)
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)
    return result, seen


def test_red24_r4_a_queue_page_and_live_listings_do_not_read_kept_carried_notebooks_again(store: Store) -> None:
    store.live_jobs()  # the engine's snapshot: every live row decoded and kept
    page, seen = spec_reads(store, lambda tx: tx.queue_page(head=50, also_user="dora"))
    assert [record.job.id for _, _, record in page] == [f"j-{i}" for i in range(5)]
    assert page[0][2].job.spec.notebook_json == NOTEBOOK  # the kept record, whole
    assert seen == [], seen  # no row read whole again: before, every listed row's spec (each 200 KB)
    holding, seen = spec_reads(store, lambda tx: tx.list_jobs(states=[JobState.RUNNING, JobState.ADMITTED]))
    assert [record.job.id for record in holding] == ["j-5"] and seen == [], seen


def test_red24_r4_a_changed_row_is_read_whole_again_and_a_finished_one_left_out(store: Store) -> None:
    store.live_jobs()
    with store.transaction(now=T0) as tx:
        record = tx.get_job("j-1")
        tx.update_job(replace(record, job=replace(record.job, message="moved")))
        done = tx.get_job("j-2")
        tx.update_job(replace(done, job=replace(done.job, state=JobState.CANCELLED, finished_at=T0)))
    page, seen = spec_reads(store, lambda tx: tx.queue_page(head=50))
    assert {record.job.id: record.job.message for _, _, record in page}["j-1"] == "moved"  # the row as it is now
    assert "j-2" not in [record.job.id for _, _, record in page]
    assert len(seen) == 1, seen  # the changed row, by id


def _notebook(size: int) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [],
                                  "execution_count": None}], "metadata": {"pad": "x" * size},
                       "nbformat": 4, "nbformat_minor": 5})


def test_red24_r4_a_users_unfinished_jobs_carry_a_bounded_number_of_bytes_then_429_audited(
        services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs_module, "MAX_CARRIED_PER_USER", 1 << 20)  # 64 MiB in production
    dora, eve = services.caller("dora", admin=False), services.caller("eve", admin=False)
    body = {"gpus": 4, "notebook": "carried.ipynb", "notebook_json": _notebook(300_000)}
    for _ in range(3):
        services.jobs.submit(dora, SubmitJobRequest(**body))
    with pytest.raises(BusyError) as refused:  # a fourth would hold ~1.2 MiB
        services.jobs.submit(dora, SubmitJobRequest(**body))
    assert refused.value.field == "notebook_json" and "at most 1 MiB per user" in refused.value.message
    assert "notebook: path" in (refused.value.hint or "")
    assert [e.actor for e in services.store.list_events(action="refused")] == ["dora"]
    services.jobs.submit(eve, SubmitJobRequest(**body))  # another user's bound is their own
    services.jobs.submit(dora, SubmitJobRequest(gpus=4, command=["true"]))  # work that carries nothing still goes


def test_red24_r4_a_finished_jobs_row_keeps_no_carried_notebook(store: Store) -> None:
    with store.transaction(now=T0) as tx:
        record = tx.get_job("j-3")
        tx.update_job(replace(record, job=replace(record.job, state=JobState.CANCELLED, finished_at=T0)))
    with store.engine.connect() as conn:
        sizes = dict(conn.execute(sa.text("SELECT id, length(spec) FROM jobs")).all())
    assert sizes["j-3"] < 2_000 < sizes["j-4"], sizes  # the pending ones still carry theirs (200 KB)
    kept = store.get_job("j-3")
    assert kept.job.spec.notebook_json is None and kept.job.spec.notebook == "carried.ipynb"
    assert kept.job.state is JobState.CANCELLED
