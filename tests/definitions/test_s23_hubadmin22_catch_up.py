"""Hub admin 22's unconcluded probe: a minutely definition ran twice after a 90 s service outage.

What happened: the service was down from about 06:07:10 to 06:09; back, one pass of the firing loop
planned a catch-up run for the missed 06:08 (``--missed run_once``) *and* the on-time run for 06:09
— two runs at once, both saying only ``trigger: schedule``. Why: :func:`plan_firings` gave the
policy's catch-up to the newest missed instant even when an on-time instant followed it in the same
pass. The rule now (cron skips missed runs; a Kubernetes CronJob starts only its most recent unmet
schedule time; jupyter-scheduler computes its next run from the restart): the firings missed in an
outage get ONE run together — the first on-time run when there is one, else the latest missed
instant's, late — or none with ``skip``; that run says it is the catch-up, how late it started and
how many earlier firings got no run. Firings within the grace (a leader change) still each run once
(tests/definitions/test_definitions_servers.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from def_builders import Server, at

from jupyter_sched.definitions.schedule import MAX_FIRINGS_PER_CALL, firings_between, parse_schedule, plan_firings
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import ListDefinitionRunsRequest
from jupyter_sched.store import Store
from jupyter_sched.store.definitions import list_runs
from tests.reliability.harness import EmbeddedServer, no_strays, wait_until


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)  # type: ignore[misc]


@dataclass(frozen=True)
class OutageCase:
    id: str
    schedule: str
    cursor: datetime
    now: datetime
    run_missed_once: bool
    want_fire: tuple[datetime, ...]
    want_missed: int
    want_catch_up: bool
    want_missed_span: tuple[datetime, datetime] | None = None


MINUTELY = "* * * * *"
CASES = [
    OutageCase("a minutely definition back after a 90 s outage makes one run, the on-time minute's, standing for "
               "the missed minute", MINUTELY, utc(2026, 12, 5, 6, 7), utc(2026, 12, 5, 6, 9, 5), True,
               (utc(2026, 12, 5, 6, 9),), 1, True, (utc(2026, 12, 5, 6, 8), utc(2026, 12, 5, 6, 8))),
    OutageCase("with --missed skip the on-time minute runs and the missed one does not", MINUTELY,
               utc(2026, 12, 5, 6, 7), utc(2026, 12, 5, 6, 9, 5), False, (utc(2026, 12, 5, 6, 9),), 1, False,
               (utc(2026, 12, 5, 6, 8), utc(2026, 12, 5, 6, 8))),
    OutageCase("back within the grace of the missed minute: it runs, late, and nothing was missed", MINUTELY,
               utc(2026, 12, 5, 6, 7), utc(2026, 12, 5, 6, 8, 40), True, (utc(2026, 12, 5, 6, 8),), 0, False),
    OutageCase("an hourly definition back 30 minutes after its time: one late catch-up, nothing else missed",
               "0 * * * *", utc(2026, 12, 5, 5, 0), utc(2026, 12, 5, 6, 30), True, (utc(2026, 12, 5, 6),), 0, True),
    OutageCase("the same with --missed skip: no run, the hour counted as missed", "0 * * * *",
               utc(2026, 12, 5, 5, 0), utc(2026, 12, 5, 6, 30), False, (), 1, False,
               (utc(2026, 12, 5, 6), utc(2026, 12, 5, 6))),
    OutageCase("a week down: one run, the on-time minute's, with 1000 or more missed minutes counted",
               MINUTELY, utc(2026, 11, 28, 6, 0), utc(2026, 12, 5, 6, 9, 30), True, (utc(2026, 12, 5, 6, 9),),
               MAX_FIRINGS_PER_CALL, True, (utc(2026, 11, 28, 6, 1), utc(2026, 12, 5, 6, 8))),
    OutageCase("a daily definition down for three days: one late catch-up, for the latest day", "0 12 * * *",
               utc(2026, 12, 2, 12, 0), utc(2026, 12, 5, 13, 0), True, (utc(2026, 12, 5, 12),), 2, True,
               (utc(2026, 12, 3, 12), utc(2026, 12, 4, 12))),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_s23_hubadmin22_an_outage_gets_at_most_one_run_for_its_missed_firings(case: OutageCase) -> None:
    schedule = parse_schedule(case.schedule, "UTC")
    plan = plan_firings(schedule, cursor=case.cursor, now=case.now, grace_s=60, run_missed_once=case.run_missed_once)
    assert plan.fire == case.want_fire
    assert plan.missed == case.want_missed
    assert plan.catch_up is case.want_catch_up
    span = (plan.missed_from, plan.missed_to) if plan.missed else None
    assert span == case.want_missed_span
    again = plan_firings(schedule, cursor=plan.cursor, now=case.now, grace_s=60, run_missed_once=case.run_missed_once)
    assert again.fire == () and again.missed == 0, "a second pass at the same time plans nothing"


def test_s23_hubadmin22_the_catch_up_run_says_it_was_late_and_what_it_stands_for(tmp_path: Path) -> None:
    """The whole path on a store: restart after a 90 s outage → one run, stored, listed and audited as the
    catch-up; the next minute is an ordinary run again."""
    clock = ManualClock(at("2026-12-05T06:06:30+00:00"))
    url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
    first = Server(url, clock, tmp_path / "jobs-1")
    d = first.create({"name": "minutely", "script": "tick.py", "schedule": MINUTELY, "gpus": 0,
                      "overlap": "allow"}, user="fay")
    clock.set(at("2026-12-05T06:07:00.5+00:00"))
    assert len(first.fire_due().created) == 1                    # 06:07 on time; then the service is down
    clock.set(at("2026-12-05T06:09:05+00:00"))                   # back after 06:07:10 .. 06:08:40
    second = Server(url, clock, tmp_path / "jobs-2")             # a restarted process on the same file
    report = second.fire_due()
    assert len(report.created) == 1, "one run after the outage, not a catch-up beside the on-time run"
    assert second.fire_due().created == []
    from jupyter_sched.wording.definitions import catch_up_text

    runs = second.definitions.runs(second.caller("fay"), d["id"], parse(ListDefinitionRunsRequest, {})).to_wire()
    latest = runs[0]
    assert latest["scheduled_for"].startswith("2026-12-05T06:09:00")
    assert latest["catch_up"] is True and latest["missed"] == 1 and latest["late_s"] == 5.0
    assert latest["missed_from"].startswith("2026-12-05T06:08:00") and latest["missed_to"] == latest["missed_from"]
    assert catch_up_text(latest, "UTC", clock.now()) == (
        "catch-up, 5s late: 1 earlier firing (06:08 UTC) got no run while no server was running")
    assert runs[1]["catch_up"] is False and runs[1]["missed"] == 0
    missed = second.store.list_events(action="definition_missed")
    assert len(missed) == 1 and "missed 1 firing(s)" in missed[0].message
    assert "one catch-up run, for 2026-12-05T06:09:00" in missed[0].message
    fired = [e for e in second.store.list_events(action="definition_fired") if e.job_id == latest["job_id"]]
    assert "catch-up, 5s late" in fired[0].message
    clock.set(at("2026-12-05T06:10:01+00:00"))
    second.fire_due()
    runs = second.definitions.runs(second.caller("fay"), d["id"], parse(ListDefinitionRunsRequest, {})).to_wire()
    assert runs[0]["scheduled_for"].startswith("2026-12-05T06:10:00") and runs[0]["catch_up"] is False


EVERY_5_S = "*/5 * * * * *"


def _runs(db_url: str, definition_id: str) -> list[Any]:
    store = Store(db_url)
    try:
        with store.transaction(write=False) as tx:
            return sorted(list_runs(tx, [definition_id]), key=lambda r: r.scheduled_for)
    finally:
        store.close()


@pytest.mark.slow
def test_s23_hubadmin22_a_real_restart_after_an_outage_makes_one_catch_up_run(tmp_path: Path) -> None:
    """A real server process on a SQLite file, a definition every 5 s with a 4 s grace and a 3 s leader lease:
    SIGKILL, 12 s down (two or three firings missed), restart. Between the last run before the kill and the first
    after the restart there is exactly one run, the catch-up, and it counts the firings in between."""
    db_url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
    (tmp_path / "tick.py").write_text("print('tick')\n")
    # a 3 s leader lease (the default is 15 s): the restarted server (a new engine) takes the killed one's lease
    # 3 s after the kill, not 15 s (the test waited 20 s down for that lease; session 41: 12 s)
    settings = {"definition_min_interval_s": 1.0, "definition_misfire_grace_s": 4.0, "cycle_interval": 0.5,
                "leader_lease_ttl_s": 3.0}
    with no_strays(tmp_path):
        server = EmbeddedServer.start(tmp_path, db_url=db_url, **settings)
        try:
            with server.client() as c:
                r = c.post("definitions", json={"name": "tick", "script": str(tmp_path / "tick.py"),
                                                "schedule": EVERY_5_S, "gpus": 0})
                assert r.status_code == 201, r.text
                definition_id = r.json()["id"]
            wait_until(lambda: len(_runs(db_url, definition_id)) >= 1, "a first firing", timeout_s=60)
            server.kill()
            killed = datetime.now(timezone.utc)
            last_before = max(r.scheduled_for for r in _runs(db_url, definition_id))
            # 12 s down: killed after the run of firing F0 exists (so at or after F0), the restarted server's first
            # pass comes after F0 + 12 s, past F1 + grace = F0 + 9 s (and past the 3 s lease), so F1 is missed
            # whatever the start-up takes — the catch-up is F2's (on time, within the grace) or a later one's, and
            # F1 lies between (every 10 s, 5 s grace and 20 s down until session 41; 25 s down until session 34)
            time.sleep(12)
            server.restart()
            restarted = datetime.now(timezone.utc)
            wait_until(lambda: any(r.scheduled_for > last_before for r in _runs(db_url, definition_id)),
                       "a run after the restart", timeout_s=60)
        finally:
            server.terminate()
    runs = _runs(db_url, definition_id)
    after = [r for r in runs if r.scheduled_for > last_before]
    first_after = after[0]
    assert first_after.catch_up, "the first run after the outage is the catch-up"
    between = firings_between(parse_schedule(EVERY_5_S, "UTC", min_interval_s=1), last_before,
                              first_after.scheduled_for - timedelta(microseconds=1))
    # 12 s down (and the start-up) holds two or three firings; the catch-up run stands for the latest of them when none came on
    # time, so at least one more lies between it and the last run before the kill (the final fresh-clone run
    # had exactly two in the outage: ">= 2" here read the catch-up's own slot as missed)
    assert len(between) >= 1, f"the outage ({killed:%T} to {restarted:%T}) missed firings"
    assert first_after.missed == len(between), "the catch-up counts every firing that got no run"
    assert (first_after.missed_from, first_after.missed_to) == (between[0], between[-1])
    scheduled = [r.scheduled_for for r in runs]
    assert len(scheduled) == len(set(scheduled)), "no firing has two runs"
    assert [r for r in after[1:] if r.catch_up] == [], "only one catch-up for one outage"
