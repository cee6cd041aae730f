"""Exactly one run per scheduled instant with real servers: SIGKILL between firings, restart, two servers.

Two real ``jupyter server`` processes with jupyter_sched share one store. A definition fires every
3 seconds (a six-field schedule; the servers allow it with ``definition_min_interval_s = 1``).
During the run the test SIGKILLs each server in turn between firings and restarts it. Only the
leading engine fires; after a leader is killed the other server takes the lease within its
TTL (5 s here), and firings from the gap are still within the 60 s grace, so they run late but once.
At the end every scheduled instant since the definition was created has exactly one run, and
every run's job exists once — nothing missing, nothing doubled.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.definitions.schedule import firings_between, parse_schedule
from jupyter_sched.store import Store
from jupyter_sched.store.definitions import list_runs
from tests.reliability.harness import EmbeddedServer, no_strays, wait_until

pytestmark = pytest.mark.slow

EVERY_3_S = "*/3 * * * * *"
# a 5-s leader lease (the default is 15 s): the other server takes over a killed leader sooner (session 34)
SETTINGS: dict[str, Any] = {"definition_min_interval_s": 1.0, "cycle_interval": 0.5, "leader_lease_ttl_s": 5.0}


def runs(server: EmbeddedServer, definition_id: str) -> list[dict[str, Any]]:
    with server.client() as c:
        r = c.get(f"definitions/{definition_id}/runs", params={"limit": 500})
        r.raise_for_status()
        found: list[dict[str, Any]] = r.json()
        return found


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def test_sigkill_restarts_and_two_servers_give_exactly_one_run_per_firing(tmp_path: Path) -> None:
    """On the embedded default store (SQLite, WAL, two processes); the unique key's race on
    PostgreSQL and SQLite is pinned in test_firing.py."""
    db_url = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    (tmp_path / "tick.py").write_text("print('tick')\n")
    with no_strays(tmp_path):
        a = EmbeddedServer.start(tmp_path, db_url=db_url, name="a", **SETTINGS)
        b = EmbeddedServer.start(tmp_path, db_url=db_url, name="b", **SETTINGS)
        try:
            with a.client() as c:
                r = c.post("definitions", json={"name": "tick", "script": str(tmp_path / "tick.py"),
                                                "schedule": EVERY_3_S, "gpus": 0})
                assert r.status_code == 201, r.text
                definition = r.json()
            wait_until(lambda: len(runs(b, definition["id"])) >= 2, "two firings", timeout_s=30)
            for victim in (a, b):                         # each server killed between firings, then restarted
                time.sleep(1.5)                           # mid-way between two 3-second firings
                victim.kill()
                time.sleep(4)
                victim.restart()
                before = len(runs(victim, definition["id"]))
                wait_until(lambda v=victim, n=before: len(runs(v, definition["id"])) > n, "firings go on",
                           timeout_s=45)
            end = datetime.now(timezone.utc)
        finally:
            a.terminate()
            b.terminate()
    store = Store(db_url)
    try:
        with store.transaction(write=False) as tx:  # read after both servers stopped: nothing fires meanwhile
            found = [{"scheduled_for": r.scheduled_for.isoformat(), "job_id": r.job_id}
                     for r in list_runs(tx, [definition["id"]])]
        run_jobs = [r for r in store.list_jobs() if r.job.spec.name.startswith("tick @")]
    finally:
        store.close()
    created = utc(definition["created_at"])
    schedule = parse_schedule(EVERY_3_S, "UTC", min_interval_s=1)
    scheduled = [utc(r["scheduled_for"]) for r in found]
    assert len(scheduled) == len(set(scheduled)), "no scheduled instant has two runs"
    last = max(scheduled)
    expected = set(firings_between(schedule, created, last))
    assert set(scheduled) == expected, (
        f"missing: {sorted(expected - set(scheduled))}, unexpected: {sorted(set(scheduled) - expected)}")
    assert last >= end - timedelta(seconds=20), "firings continued up to the end"
    assert len({r["job_id"] for r in found}) == len(found), "one job per run"
    assert sorted(r.job.id for r in run_jobs) == sorted(r["job_id"] for r in found), "no job without its run"
