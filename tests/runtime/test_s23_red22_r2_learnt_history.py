"""Red team 22, R2 caveats (session 22's fix left them): a waiting job's reason said another user's
*history* to every reader — "ETA …, when eve's job "eve-two" (j-…) ends (if it ends at ~40 % of its
time limit, as its owner's other runs did)", and once it ran past that, "j-… ran longer than ~4m (its
owner's other runs ended at ~40 % of their time limits)" — while that history (how eve's other jobs
ran) is eve's alone. And the queue kept one line for every reader but the waiter's owner, so the
blocker's own owner and admins read it withheld too.

Now the learnt share and the learnt figure of a re-estimate note are said only to the blocker's owner
and admins ("as estimated from past runs" / "ran longer than its estimate from past runs" to others),
on every surface that shows another user's reason: ``GET jobs/{id}``, ``GET jobs``, ``GET queue`` (one
line per reader class), the event stream, the ETA move record in the reason, the CLI's queue/wait lines
and ``%schedule``'s — each rendered from the wire reason the server answers.

Real parts: the engine and services on the SQLite store, the local executor running eve's job as a
real process; eve's earlier runs are finished jobs in the store (the engine's RuntimeFeed learns from
them). Users: eve (the blocker's owner), amy (waits), zoe (a third user), boss (an admin).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.magics.render import reason_line
from jupyter_sched.model import JobState
from jupyter_sched.services.facade import SchedulerService
from jupyter_sched.services.models import ListJobsRequest, ReportProgressRequest, parse
from jupyter_sched.services.models.definitions import (
    CreateDefinitionRequest,
    ListDefinitionRunsRequest,
    RunDefinitionRequest,
)
from jupyter_sched.services.visibility import event_for
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.wording import render_reason, wait_progress
from tests.leftovers import end_jobs
from tests.runtime.builders import T0, make_job

LOOP = [sys.executable, "-c", "import time; time.sleep(600)"]
HISTORY = ("other runs", "~40 %", "~4m")
"""What eve's history says in words: whose runs, the share of the limit, the learnt runtime."""


class World:
    """eve runs ``eve-two`` (both GPUs, 10m limit; her three earlier runs of other programs ended at 40 %
    of their limits), amy's ``amy-cell-job`` waits behind it."""

    def __init__(self, svc: SchedulerService, clock: ManualClock, blocker: str, waiter: str) -> None:
        self.svc, self.clock, self.blocker, self.waiter = svc, clock, blocker, waiter

    def reason(self, user: str, *, admin: bool = False) -> dict[str, Any]:
        """The waiter's reason in ``GET jobs/{id}`` as ``user`` reads it."""
        reason: dict[str, Any] = self.svc.get_job(self.waiter, user=user, is_admin=admin)["reason"]
        return reason

    def line(self, user: str) -> dict[str, Any]:
        """The waiter's line in ``GET queue`` as ``user`` reads it."""
        [line] = [e for e in self.svc.queue(user=user) if e["id"] == self.waiter]
        return line


@pytest.fixture
def world(sqlite_db: str, tmp_path: Path) -> Iterator[World]:
    clock = ManualClock(T0)
    executor = LocalExecutor(tmp_path / "runs")
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(2, node="n1"),
                           executor=executor, clock=clock, owner_id="a",
                           cycle_interval_s=0.0, admins=("boss",))
    for i, (command, ran_s, limit_s) in enumerate(((("echo", "a"), 24.0, 60.0), (("env",), 48.0, 120.0),
                                                   (("sleep", "120"), 120.0, 300.0))):
        job = make_job(f"past-{i}", user="eve", command=command, time_limit_s=limit_s)
        start = T0 - timedelta(hours=1) + timedelta(minutes=10 * i)
        svc.store.insert_job(JobRecord(job=replace(job, state=JobState.SUCCEEDED, admitted_at=start, started_at=start,
                                                   finished_at=start + timedelta(seconds=ran_s))))
    blocker = svc.submit({"gpus": 2, "command": LOOP, "time_limit": "10m", "name": "eve-two"}, user="eve")
    jobs = [(blocker, "eve")]
    try:
        svc.tick()
        assert svc.get_job(blocker["id"], user="eve")["state"] in ("admitted", "running")
        waiter = svc.submit({"gpus": 1, "command": ["true"], "time_limit": "1m", "name": "amy-cell-job"}, user="amy")
        jobs.append((waiter, "amy"))
        clock.advance(10)
        svc.tick()
        yield World(svc, clock, blocker["id"], waiter["id"])
    finally:
        for job, user in jobs:
            if svc.get_job(job["id"], user=user)["state"] not in ("cancelled", "succeeded", "failed"):
                svc.cancel(job["id"], user=user)
        svc.tick()
        assert end_jobs(executor) == []  # eve's process, whatever the cancel's grace left of it


def _said(reason: dict[str, Any], now: datetime) -> str:
    """Everything a client reads of ``reason``: its data and its words as the server and the renderer say them."""
    text = render_reason(reason, now=now, relative=True)
    return json.dumps(reason) + " ".join((text.summary, text.eta, text.unblock, text.line))


def _history(reason: dict[str, Any], now: datetime) -> list[str]:
    said = _said(reason, now)
    return [word for word in HISTORY if word in said]


def test_s23_red22_r2_get_job_the_waiters_owner_reads_no_other_users_history(world: World) -> None:
    """GET jobs/{id}. Failed before: amy read "(if it ends at ~40 % of its time limit, as its owner's other runs did)"."""
    admin = world.reason("boss", admin=True)
    assert admin["details"]["eta_learned_other"] == {world.blocker: 0.4}, admin["details"]
    assert "as its owner's other runs did" in admin["text"]["eta"], admin["text"]
    amy = world.reason("amy")
    assert _history(amy, world.clock.now()) == [], amy
    assert amy["text"]["eta"].endswith(f'when eve\'s job "eve-two" ({world.blocker}) ends (if it ends as estimated '
                                       "from past runs)"), amy["text"]
    assert amy["eta"] == admin["eta"], "the ETA itself stays the waiter's"
    assert amy["details"]["eta_withheld"] == [world.blocker], amy["details"]


def test_s23_red22_r2_get_jobs_list_rows_withhold_it_too(world: World) -> None:
    """GET jobs (the page's rows are kept per job). Failed before: amy's row said eve's ~40 %."""
    svc = world.svc.services
    page = svc.jobs.list(svc.caller("amy", admin=False), ListJobsRequest(state="pending")).to_wire()
    [row] = [r for r in page["jobs"] if r["id"] == world.waiter]
    assert _history(row["reason"], world.clock.now()) == [], row["reason"]
    admin = svc.jobs.list(svc.caller("boss", admin=True), ListJobsRequest(user="amy", state="pending")).to_wire()
    [row] = [r for r in admin["jobs"] if r["id"] == world.waiter]
    assert "~40 %" in row["reason"]["text"]["eta"], row["reason"]["text"]


def test_s23_red22_r2_queue_lines_per_reader_class(world: World) -> None:
    """GET queue. Failed before: zoe (a third user) read eve's ~40 % in amy's line; with progress figures
    (session 22's fix) eve and boss read the line everyone else shared, withheld."""
    now = world.clock.now()
    zoe, eve, boss, amy = (world.line(user) for user in ("zoe", "eve", "boss", "amy"))
    assert _history(zoe["reason"], now) == [] and _history(amy["reason"], now) == [], (zoe, amy)
    for seen in (eve, boss):  # the blocker's owner and an admin read its history
        assert "~40 % of its time limit, as its owner's other runs did" in seen["reason"]["text"]["eta"], seen
        assert "eta_withheld" not in seen["reason"]["details"], seen["reason"]["details"]
    assert "as estimated from past runs" in zoe["reason"]["text"]["eta"], zoe["reason"]["text"]
    assert world.line("zoe") is not None and _history(world.line("zoe")["reason"], now) == [], \
        "a third user after eve and boss read theirs: still the withheld line"


def test_s23_red22_r2_re_estimate_note_and_move_record(world: World) -> None:
    """The re-estimate note and the ETA's move record. Failed before: amy read "j-… ran longer than ~4m (its
    owner's other runs ended at ~40 % of their time limits)" in eta_note and the move's message."""
    world.clock.advance(250)  # past the 4m guess: re-estimated to its 10m limit
    world.svc.tick()
    admin = world.reason("boss", admin=True)["details"]
    assert "(its owner's other runs ended at ~40 % of their time limits)" in admin["eta_note"], admin
    amy = world.reason("amy")
    assert _history(amy, world.clock.now()) == [], amy["details"]
    assert amy["details"]["eta_note"] == (f"{world.blocker} ran longer than its estimate from past runs, so it is "
                                          "now expected to run to its 10m time limit"), amy["details"]
    assert "eta_note_learnt" not in amy["details"], amy["details"]
    if "eta_moved" in admin and admin["eta_moved"]["cause"] == "overran":  # recorded at the move's cycle
        assert "~40 %" in admin["eta_moved"]["message"] and "~40 %" not in amy["details"]["eta_moved"]["message"]
    line = world.line("zoe")
    assert _history(line["reason"], world.clock.now()) == [], line["reason"]["details"]


def test_s23_red22_r2_events_carry_it_to_its_reader_only(world: World) -> None:
    """The event stream (the engine's job dict, read per receiver). Failed before: amy's event said ~40 %."""
    [data] = [d for d in world.svc.list_jobs(user="amy", state="pending") if d["id"] == world.waiter]
    event = {"type": "job", "data": data}
    caller = world.svc.services.caller
    amy = event_for(caller("amy", admin=False), event)
    boss = event_for(caller("boss", admin=True), event)
    assert amy is not None and boss is not None
    assert _history(amy["data"]["reason"], world.clock.now()) == [], amy["data"]["reason"]
    assert "~40 %" in boss["data"]["reason"]["text"]["eta"], boss["data"]["reason"]


def test_s23_red22_r2_cli_wait_and_magics_render_what_the_server_answers(world: World) -> None:
    """CLI ``wait``/``queue`` and ``%schedule`` render the wire reason themselves. Failed before: their lines
    said "as its owner's other runs did" from amy's own GET jobs/{id} and zoe's queue line."""
    now = world.clock.now()
    job = world.svc.get_job(world.waiter, user="amy")
    frame = wait_progress(job, now)  # the CLI's `wait` bar and the magics' wait widget
    for words in (frame.label, frame.long_label, reason_line(job, now), reason_line(world.line("zoe"), now)):
        assert not [w for w in HISTORY if w in words], words
        assert "as estimated from past runs" in words or "queued" in words, words
    assert "as estimated from past runs" in frame.long_label, frame.long_label


def test_s23_red22_r2_definition_runs_are_built_for_their_reader(world: World, tmp_path: Path) -> None:
    """Answers built with no reader (a definition's runs) withheld everything, even from an admin.
    Failed before: boss's GET definitions/{id}/runs said eve's job ends "from its reported progress",
    not its figure, which boss reads in GET jobs/{id}."""
    svc, caller = world.svc.services, world.svc.services.caller
    svc.progress.min_interval_s = 0.0
    eve = caller("eve", admin=False)
    for done in (50, 100, 150, 200):  # eve's job reports, to 20 %: a line through them, which the ETA reads
        world.clock.advance(10)
        assert svc.progress.report(eve, world.blocker, ReportProgressRequest(done=done, total=1000)).stored
    script = tmp_path / "nightly.py"
    script.write_text("print('x')\n")
    amy = caller("amy", admin=False)
    made = svc.definitions.create(amy, parse(CreateDefinitionRequest, {
        "name": "nightly", "script": str(script), "schedule": "0 3 * * *", "timezone": "UTC", "gpus": 1,
        "time_limit": "1m"}))
    run = svc.definitions.run_now(amy, made.id, RunDefinitionRequest())
    try:
        world.clock.advance(5)
        world.svc.tick()
        boss = caller("boss", admin=True)
        [seen] = svc.definitions.runs(boss, made.id, ListDefinitionRunsRequest()).to_wire()
        assert seen["job"]["state"] == "pending", seen
        assert seen["job"]["reason"]["details"].get("eta_progress") == {world.blocker: 0.2}, seen["job"]["reason"]
        assert "20 % done" in seen["job"]["reason"]["text"]["eta"], seen["job"]["reason"]["text"]
        [mine] = svc.definitions.runs(amy, made.id, ListDefinitionRunsRequest()).to_wire()
        assert mine["job"]["reason"]["details"]["eta_progress"] == {world.blocker: None}, mine["job"]["reason"]
        assert "from its reported progress" in mine["job"]["reason"]["text"]["eta"], mine["job"]["reason"]["text"]
    finally:
        world.svc.cancel(run.job_id, user="amy")
        svc.definitions.delete(amy, made.id)
