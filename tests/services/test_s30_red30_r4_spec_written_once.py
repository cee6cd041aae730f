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
        fresh = _get(store, "j-r4")  # a record read back from the row: its spec is the row's
        record = _update(store, replace(fresh, job=replace(fresh.job, state=JobState.RUNNING, started_at=at)))
        assert writes == []  # before: 5 writes of the 62 KB spec
        assert _get(store, "j-r4").job.spec.env == BIG_ENV and _get(store, "j-r4").job.state is JobState.RUNNING

        changed = _update(store, replace(record, job=replace(record.job, spec=replace(
            record.job.spec, priority=PriorityClass.LOW))))  # a spec that changed is written
        assert len(writes) == 1
        back = _update(store, replace(changed, job=replace(changed.job, spec=job.spec)))  # and changed back
        assert len(writes) == 2 and _get(store, "j-r4").job.spec.priority is job.spec.priority
        assert _get(store, "j-r4").version == back.version
        with store.engine.connect() as conn:
            kept = json.loads(conn.execute(sa.text("SELECT spec FROM jobs WHERE id = 'j-r4'")).scalar_one())
        assert kept["priority"] == job.spec.priority.value and kept["env"] == BIG_ENV
        ended = _update(store, replace(back, job=replace(back.job, state=JobState.SUCCEEDED, finished_at=at,
                                                         exit_code=0)))
        assert len(writes) == 3  # its end writes the spec it keeps (env as names: the next test)
        _update(store, replace(ended, job=replace(ended.job, message="done")))
        assert len(writes) == 3
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


def test_red30_r4_a_finished_jobs_row_keeps_its_env_as_names_and_its_command_cut(db_url: str) -> None:
    store = Store(db_url, now=lambda: T0)
    try:
        args = tuple(secrets.token_hex(512) for _ in range(60))  # 60 KB of random arguments
        job = make_job("j-r4cut", user="mal", gpus=0, env=BIG_ENV, command=("true", *args))
        record = store.insert_job(JobRecord(job=job))
        record = _update(store, replace(record, job=replace(record.job, state=JobState.RUNNING, started_at=T0)))
        assert _get(store, "j-r4cut").job.spec.env == BIG_ENV  # kept whole while it runs
        writes = _spec_writes(store)
        record = _update(store, replace(record, job=replace(record.job, state=JobState.SUCCEEDED, finished_at=T0,
                                                            exit_code=0)))
        with store.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT spec FROM jobs WHERE id = 'j-r4cut'")).scalar_one()
        assert len(stored.encode()) < 4096, len(stored)  # before: 124 KB kept for 400 days
        spec = _get(store, "j-r4cut").job.spec
        assert list(spec.env) == list(BIG_ENV) and set(spec.env.values()) == {""}  # names only
        assert spec.command == ("true", args[0]) and spec.not_kept["env_bytes"] == sum(
            len(k) + len(v) for k, v in BIG_ENV.items())
        assert spec.not_kept["command_bytes"] == 59 * 1024
        _update(store, replace(record, job=replace(record.job, message="ended")))
        assert len(writes) == 1  # the end's one write; a later change of the row leaves the cut spec alone
    finally:
        store.close()


def test_red30_r4_the_answer_and_the_cli_line_say_the_env_was_kept_as_names(services: Any) -> None:
    from jupyter_sched.admission import Caller
    from jupyter_sched.wording.jobs import job_detail

    small = make_job("j-small", user="mal", gpus=0, env={"BATCH": "64"}, command=("python", "train.py"))
    big = make_job("j-big", user="mal", gpus=0, env=BIG_ENV, command=("true", *[secrets.token_hex(512)] * 4))
    for job in (small, big):
        record = services.store.insert_job(JobRecord(job=job))
        with services.store.transaction() as tx:
            tx.update_job(replace(record, job=replace(record.job, state=JobState.SUCCEEDED, started_at=T0,
                                                      finished_at=T0, exit_code=0)))
    mal = Caller(user="mal", teams=("default",))
    answer = services.jobs.get(mal, "j-big").to_wire()
    assert answer["not_kept"] == {"env_bytes": 60 * (3 + 1024), "command_bytes": 3 * 1024}
    assert answer["not_kept_text"] == ("env kept as names only after the job ended (60 KB of values not kept) · its "
                                       "command cut: 3 KB more, not kept after the job ended — give --env and the "
                                       "arguments again to run it again")
    assert answer["not_kept_text"] in job_detail(answer, None)  # the CLI's jobs line
    kept = services.jobs.get(mal, "j-small").to_wire()  # an ordinary job keeps its request: Resubmit works
    assert kept["env"] == {"BATCH": "64"} and kept["command"] == ["python", "train.py"]
    assert "not_kept" not in kept and "not_kept_text" not in kept
