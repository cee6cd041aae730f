"""red29 R3: the firing pass decoded every active definition's whole spec on the engine's thread.

1,500 active definitions with ~180 KB specs (env, args, parameters under their caps) made each pass
(every 5 s, and after each definition write) read and decode every spec: ~1.2 s of the leading
engine's thread a pass, another user's submit → start 1.4 → 6.0 s median, RSS 173 MiB → 4.1 GiB.
Now the pass decides what is due from the columns alone (schedule, zone, cursor, version) and reads
the whole row only of a definition that is due; a pass fires at most ``max_due_per_pass`` due
definitions, the rest in turn at the next passes. Real services on a real store, a manual clock;
copies past the per-user cap are written straight into the store, as the red team did. (The cap
itself, ``c.SchedApp.definition_limit_per_user``: tests/definitions/test_s28_red28_r6_definitions_list.py.)
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from def_builders import Server, at

from jupyter_sched.definitions.firing import DefinitionFiring
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.store import definitions as stored

HEAVY = {"script": "report.py", "schedule": "0 3 1 1 *", "timezone": "UTC", "gpus": 0,
         "env": {f"K{i}": "v" * 1000 for i in range(60)}, "args": ["a" * 1000] * 60,
         "parameters": {f"p{i}": "w" * 1000 for i in range(60)}}


def _copies(server: Server, first: str, n: int, *, prefix: str = "d-syn", **changes: Any) -> list[str]:
    """``n`` copies of the definition ``first`` written into the store (past the cap, as red29's SQL did)."""
    with server.store.transaction(write=False) as tx:
        model = stored.get_definition(tx, first)
    ids = []
    with server.store.transaction() as tx:
        for i in range(n):
            made = replace(model, id=f"{prefix}{i:05d}", name=f"{prefix}{i}",
                           created_at=model.created_at + timedelta(seconds=i + 1),  # type: ignore[operator]
                           **changes)
            ids.append(stored.insert_definition(tx, made).id)
    return ids


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of every definition row decoded whole (its spec parsed) while the test runs."""
    seen: list[str] = []
    whole = stored._from_row

    def counted(row: Any) -> Any:
        seen.append(row["id"])
        return whole(row)

    monkeypatch.setattr(stored, "_from_row", counted)
    return seen


def test_red29_r3_a_pass_over_100_big_definitions_none_due_decodes_no_spec(sqlite_db: str, tmp_path: Path,
                                                                          decodes: list[str]) -> None:
    clock = ManualClock(at("2026-12-06T05:30:00+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs", limit_per_user=0)
    first = server.create({**HEAVY, "name": "big"}, user="mal")["id"]
    _copies(server, first, 99)
    hourly = server.create({**HEAVY, "name": "hourly", "schedule": "0 * * * *"}, user="eve")["id"]
    decodes.clear()

    report = server.fire_due()  # 05:30: nothing is due (yearly ones in January, the hourly one at 06:00)
    assert report.created == [] and report.conflicts == 0
    assert decodes == []  # 101 active definitions, no spec read
    assert report.next_due == at("2026-12-06T06:00:00+00:00")

    clock.advance(31 * 60)  # 06:01: the hourly one is due, once
    report = server.fire_due()
    assert len(report.created) == 1 and report.duplicates == 0
    assert set(decodes) == {hourly}  # the whole row of the due one only (read, then re-read as it fires)
    runs = server.get(hourly, user="eve")
    assert runs["id"] == hourly
    with server.store.transaction(write=False) as tx:
        fired = stored.list_runs(tx, [hourly])
    assert [r.scheduled_for for r in fired] == [at("2026-12-06T06:00:00+00:00")]
    assert fired[0].job_id == report.created[0]

    decodes.clear()
    again = server.fire_due()  # fired once: the next pass fires nothing and decodes nothing
    assert again.created == [] and decodes == []
    assert again.next_due == at("2026-12-06T07:00:00+00:00")


def test_red29_r3_a_pass_fires_at_most_max_due_per_pass_the_rest_in_turn(sqlite_db: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DefinitionFiring, "max_due_per_pass", 4)
    clock = ManualClock(at("2026-12-06T05:30:00+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs", limit_per_user=0, max_firings_per_user_hour=0)
    first = server.create({"notebook": "report.ipynb", "schedule": "0 * * * *", "gpus": 0, "name": "h"},
                          user="mal")["id"]
    ids = {first, *_copies(server, first, 9)}
    clock.advance(31 * 60)  # 06:01: all ten are due

    firsts = server.fire_due()
    assert len(firsts.created) == 4 and firsts.next_due == clock.now()  # bounded; read again at the next tick
    seconds = server.fire_due()
    assert len(seconds.created) == 4 and seconds.next_due == clock.now()
    thirds = server.fire_due()
    assert len(thirds.created) == 2
    fourths = server.fire_due()
    assert fourths.created == [] and fourths.next_due == at("2026-12-06T07:00:00+00:00")
    with server.store.transaction(write=False) as tx:
        fired = stored.list_runs(tx, sorted(ids))
    assert sorted(r.definition_id for r in fired) == sorted(ids)  # each one exactly once
    assert {r.scheduled_for for r in fired} == {at("2026-12-06T06:00:00+00:00")}


def test_red29_r3_the_pass_reads_the_firing_index_alone_and_a_version_24_store_gets_it(db_url: str) -> None:
    import sqlalchemy as sa

    from jupyter_sched.store import Store
    from jupyter_sched.store.migrations import latest_version

    store = Store(db_url)
    with store.engine.begin() as conn:  # a store written by the previous release
        conn.execute(sa.text("DROP INDEX ix_definitions_firing"))
        conn.execute(sa.text("DELETE FROM schema_version WHERE version >= 25"))
    store.close()
    reopened = Store(db_url)
    try:
        assert reopened.schema_version() == latest_version() >= 25
        indexes = {i["name"]: i["column_names"] for i in sa.inspect(reopened.engine).get_indexes("definitions")}
        assert indexes["ix_definitions_firing"] == ["paused", "deleted_at", "id", "schedule", "timezone", "cursor",
                                                   "version"]
        with reopened.transaction(write=False) as tx:
            assert stored.list_firing_heads(tx) == []
        if reopened.dialect == "sqlite":  # the schedules, cursors and versions from the index, no row (no spec) read
            query = stored.firing_heads_query()
            text = str(query.compile(dialect=reopened.engine.dialect, compile_kwargs={"literal_binds": True}))
            with reopened.engine.connect() as conn:
                plan = " | ".join(str(row[-1]) for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + text))
            assert "USING COVERING INDEX ix_definitions_firing" in plan, plan
    finally:
        reopened.close()
