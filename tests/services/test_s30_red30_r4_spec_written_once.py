"""red30 R4 (first part): every write of a job row — each pending reason, admitted, running, ended — wrote its
whole spec again. On PostgreSQL each rewrite of a big (random, incompressible) spec leaves a dead TOAST copy until
vacuum: one user's loop of instant 0-GPU jobs with 60 KB env and 60 KB args grew the database +80 MB a minute
(~530 KB of table per 122 KB job).

Now an update of a job row leaves the ``spec`` column alone when the row already holds that spec
(:attr:`JobRecord.stored_spec`, :func:`jupyter_sched.store.codec.job_columns` with ``update=True``): a state change
writes the small columns only; a spec that changed (a PATCH, the carried content a finished job's row drops) is
written. Real parts: the store on SQLite and on the session's real PostgreSQL; the statements it sends counted.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from jupyter_sched.model import Allocation, JobState, PendingReason, PriorityClass
from jupyter_sched.store import JobRecord, Store
from tests.runtime.builders import T0, make_job

BIG_ENV = {f"V{i:02d}": secrets.token_hex(512) for i in range(60)}  # 60 KB, random: TOAST cannot compress it


def _spec_writes(store: Store) -> list[str]:
    writes: list[str] = []

    @sa.event.listens_for(store.engine, "before_cursor_execute")
    def seen(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        head = statement.split(" WHERE ")[0]
        if head.lstrip().upper().startswith("UPDATE JOBS") and "spec" in head.replace("\n", " ").split("SET", 1)[1]:
            writes.append(head)

    return writes


def _update(store: Store, record: JobRecord) -> JobRecord:
    with store.transaction() as tx:
        return tx.update_job(record)


def _get(store: Store, job_id: str) -> JobRecord:
    with store.transaction(write=False) as tx:
        return tx.get_job(job_id)


def test_red30_r4_state_changes_of_a_job_do_not_rewrite_its_spec(db_url: str) -> None:
    store = Store(db_url, now=lambda: T0)
    try:
        job = make_job("j-r4", user="mal", gpus=0, env=BIG_ENV, command=("true", *[secrets.token_hex(512)] * 4))
        record = store.insert_job(JobRecord(job=job))
        writes = _spec_writes(store)
        for i in range(3):  # the cycle's pending reasons
            reason = PendingReason(code="Waiting", message=f"waiting {i}")
            record = _update(store, replace(record, job=replace(record.job, reason=reason, message=reason.message)))
        at = T0 + timedelta(seconds=1)
        record = _update(store, replace(record, job=replace(record.job, state=JobState.ADMITTED, admitted_at=at,
                                                              allocation=Allocation("vm", ()))))
        record = _update(store, replace(record, job=replace(record.job, state=JobState.RUNNING, started_at=at)))
        fresh = _get(store, "j-r4")  # a record read back from the row: its spec is the row's
        record = _update(store, replace(fresh, job=replace(fresh.job, state=JobState.SUCCEEDED, finished_at=at,
                                                             exit_code=0)))
        assert writes == []  # before: 6 writes of the 62 KB spec
        assert _get(store, "j-r4").job.spec.env == BIG_ENV and _get(store, "j-r4").job.state is JobState.SUCCEEDED

        changed = _update(store, replace(record, job=replace(record.job, spec=replace(
            record.job.spec, priority=PriorityClass.LOW))))  # a spec that changed is written
        assert len(writes) == 1
        back = _update(store, replace(changed, job=replace(changed.job, spec=job.spec)))  # and changed back
        assert len(writes) == 2 and _get(store, "j-r4").job.spec.priority is job.spec.priority
        assert _get(store, "j-r4").version == back.version
        with store.engine.connect() as conn:
            kept = json.loads(conn.execute(sa.text("SELECT spec FROM jobs WHERE id = 'j-r4'")).scalar_one())
        assert kept["priority"] == job.spec.priority.value and kept["env"] == BIG_ENV
    finally:
        store.close()


def test_red30_r4_a_carried_notebook_is_still_dropped_when_the_job_ends(db_url: str) -> None:
    store = Store(db_url, now=lambda: T0)
    try:
        job = make_job("j-r4nb", user="mal", gpus=0, notebook_json='{"cells": []}' + " " * 5000, source=None)
        record = store.insert_job(JobRecord(job=job))
        writes = _spec_writes(store)
        record = _update(store, replace(record, job=replace(record.job, state=JobState.CANCELLED,
                                                              finished_at=T0)))
        assert len(writes) == 1  # the end drops the carried notebook: that one write
        assert _get(store, "j-r4nb").job.spec.notebook_json is None
        _update(store, replace(record, job=replace(record.job, message="ended")))
        assert len(writes) == 1
    finally:
        store.close()
