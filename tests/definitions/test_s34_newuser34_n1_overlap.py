"""newuser34 n1: a definition whose runs waited behind a long queue stacked one more pending run per firing
(3 after two minutes, each charged when it ran) and nothing said so. Now a definition has an overlap
policy (Kubernetes CronJob's concurrencyPolicy): by default a firing while the previous run still waits
is skipped — no run, no job — and the skip is kept on the definition (``skipped``: count, first, last,
why), said by ``definitions show`` / ``runs`` and the magics, and audited.

The decision is pure (table tests below); one scenario runs the real services on a real SQLite store
with a manual clock (no engine cycle: the run stays pending, as one behind a long queue does).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from def_builders import Server, at

from jupyter_sched.definitions.model import OverlapPolicy, SkippedFirings
from jupyter_sched.definitions.overlap import PreviousRun, overlap_decision, skipped_after
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import SchedError
from jupyter_sched.model import JobState
from jupyter_sched.store.definitions import list_runs
from jupyter_sched.wording.definitions import skipped_text


@dataclass(frozen=True)
class Case:
    id: str
    policy: OverlapPolicy
    previous: PreviousRun | None
    want_skip: bool
    want_cause: str = ""
    want_why: str = ""


def _run(state: JobState, code: str | None = None, reason: str = "") -> PreviousRun:
    return PreviousRun(job_id="j-1", state=state, reason_code=code, reason=reason)


WAITING = _run(JobState.PENDING, "WaitingForCapacity", "waiting for 1 GPU: #201 in line")
CASES = [
    Case("no previous run: it fires", OverlapPolicy.SKIP_WAITING, None, False),
    Case("a finished previous run: it fires", OverlapPolicy.SKIP_UNFINISHED, _run(JobState.FAILED), False),
    Case("the default skips while the previous run waits", OverlapPolicy.SKIP_WAITING, WAITING, True, "waiting",
         "its run j-1 still waits: waiting for 1 GPU: #201 in line"),
    Case("a waiting run with no reason yet still holds it", OverlapPolicy.SKIP_WAITING, _run(JobState.PENDING), True,
         "waiting", "its run j-1 still waits to start"),
    Case("a preempted run waits again", OverlapPolicy.SKIP_WAITING, _run(JobState.PREEMPTED), True, "waiting"),
    Case("the default lets a firing run while the previous run runs", OverlapPolicy.SKIP_WAITING,
         _run(JobState.RUNNING), False),
    Case("skip_unfinished skips while the previous run runs", OverlapPolicy.SKIP_UNFINISHED, _run(JobState.RUNNING),
         True, "unfinished", "its run j-1 is still running"),
    Case("skip_unfinished skips while it is admitted", OverlapPolicy.SKIP_UNFINISHED, _run(JobState.ADMITTED), True,
         "unfinished"),
    Case("allow queues behind a waiting run", OverlapPolicy.ALLOW, WAITING, False),
    Case("a spent budget holds it whatever the policy", OverlapPolicy.ALLOW,
         _run(JobState.PENDING, "BudgetExhausted", "ml has spent its GPU-hour budget"), True, "budget",
         "its run j-1 still waits: ml has spent its GPU-hour budget"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_newuser34_n1_overlap_decision(case: Case) -> None:
    got = overlap_decision(case.policy, case.previous)
    assert got.skip is case.want_skip, got
    if case.want_skip:
        assert got.cause == case.want_cause and got.job_id == "j-1", got
    if case.want_why:
        assert got.why == case.want_why, got


def test_newuser34_n1_skips_count_on_from_the_last_run_and_say_why() -> None:
    t0 = datetime(2026, 12, 7, 10, 1, tzinfo=timezone.utc)
    one = skipped_after(None, [t0], cause="waiting", why="its run j-1 still waits: #3 in line", job_id="j-1")
    two = skipped_after(one, [t0 + timedelta(minutes=1)], cause="waiting", why="its run j-1 still waits: #2 in line",
                        job_id="j-1")
    assert two == SkippedFirings(count=2, first=t0, last=t0 + timedelta(minutes=1), cause="waiting",
                                 why="its run j-1 still waits: #2 in line", job_id="j-1")
    assert skipped_after(two, [], cause="waiting", why="", job_id=None) is two
    wire = {"timezone": "UTC", "skipped": {"count": 2, "first": "2026-12-07T10:01:00Z", "last": "2026-12-07T10:02:00Z",
                                           "why": two.why, "cause": "waiting", "job_id": "j-1"}}
    said = skipped_text(wire, datetime(2026, 12, 7, 10, 3, tzinfo=timezone.utc))
    assert said.startswith("skipped 2 firings (10:01 UTC to 10:02 UTC) since its last scheduled run: its run j-1 "
                           "still waits: #2 in line; "), said
    assert "--overlap allow" in said, said
    assert skipped_text({"skipped": None}, None) == ""


EVERY_MINUTE = {"notebook": "report.ipynb", "schedule": "* * * * *", "timezone": "UTC", "gpus": 1,
                "time_limit": "5m"}


def test_newuser34_n1_a_definition_behind_a_queue_keeps_one_waiting_run_and_says_the_skips(
        sqlite_db: str, tmp_path: Path) -> None:
    """Failed before the fix: 3 firings made 3 pending runs, and the definition said nothing."""
    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs")
    with pytest.raises(SchedError) as refused:
        server.create({**EVERY_MINUTE, "name": "bad", "overlap": "never"}, user="nu34")
    assert refused.value.field == "overlap", refused.value
    assert all(word in refused.value.message for word in ("skip_waiting", "skip_unfinished", "allow")), refused.value
    d = server.create({**EVERY_MINUTE, "name": "d7"}, user="nu34")
    assert d["overlap"] == "skip_waiting" and d["skipped"] is None
    for _ in range(3):  # 10:01, 10:02, 10:03: the first run waits (no cycle admits it), the others skip
        clock.advance(60)
        server.fire_due()
    with server.store.transaction(write=False) as tx:
        runs = list_runs(tx, [d["id"]], limit=10)
    assert len(runs) == 1, [(r.scheduled_for, r.job_id) for r in runs]
    waiting = runs[0].job_id
    shown = server.get(d["id"], user="nu34")
    assert shown["skipped"] == {"count": 2, "first": "2026-12-07T10:02:00Z", "last": "2026-12-07T10:03:00Z",
                                "why": f"its run {waiting} still waits to start", "cause": "waiting",
                                "job_id": waiting}, shown["skipped"]
    (record,) = server.store.list_events(action="definition_skipped", limit=10)  # one a hour, the rest counted
    assert record.details["cause"] == "waiting" and waiting in record.message, record.message
    # the owner asks for every firing: the next one queues a second run, and the skips are over
    edited = server.update(d["id"], {"overlap": "allow"}, user="nu34")
    assert edited["overlap"] == "allow" and edited["skipped"]["count"] == 2
    clock.advance(60)
    server.fire_due()
    with server.store.transaction(write=False) as tx:
        assert len(list_runs(tx, [d["id"]], limit=10)) == 2
    assert server.get(d["id"], user="nu34")["skipped"] is None


def test_newuser34_n1_a_definition_stored_before_reads_as_the_default(sqlite_db: str, tmp_path: Path) -> None:
    """A row written before the overlap policy (no ``overlap`` in its spec) keeps working: the default."""
    import json

    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs")
    d = server.create({**EVERY_MINUTE, "name": "old"}, user="nu34")
    with server.store.transaction(now=clock.now()) as tx:
        table = sa.table("definitions", sa.column("id"), sa.column("spec"))
        spec: dict[str, Any] = json.loads(tx.conn.execute(sa.select(table.c.spec).where(table.c.id == d["id"])).scalar_one())
        del spec["overlap"]
        tx.conn.execute(table.update().where(table.c.id == d["id"]).values(spec=json.dumps(spec)))
    assert server.get(d["id"], user="nu34")["overlap"] == "skip_waiting"
