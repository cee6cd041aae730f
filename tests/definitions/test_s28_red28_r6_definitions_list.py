"""red28 R6 (HIGH): one user's definitions exhausted the service's memory.

~1,570 definitions of one user, each ~180 KB (env, args and parameters under their 64 KiB caps), made
each ``GET definitions`` 120 s and 272 MiB (service RSS 339 MiB → 4.75 GiB): the list read every
row and every run of every definition, unpaginated. Now the list is paged (``limit`` default 100,
max 500, a page ends once its rows pass ``PAGE_BYTES``, ``next_cursor`` / ``Link: rel=next`` as
``GET jobs``), the newest run of each definition is one query (never every run), and the
per-user cap (``c.SchedApp.definition_limit_per_user``, default 100) is a ``COUNT``. Real
services on a real store, a manual clock; rows past the cap are written straight into the store,
as the red team did.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.definitions.model import DefinitionRun, JobDefinition, RunTrigger
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import QuotaError
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import ListDefinitionsRequest
from jupyter_sched.store import JobRecord
from jupyter_sched.store import definitions as stored

HEAVY = {"script": "report.py", "schedule": "0 3 1 1 *", "timezone": "UTC", "gpus": 0, "paused": True,
         "env": {f"K{i}": "v" * 1000 for i in range(60)}, "args": ["a" * 1000] * 60,
         "parameters": {f"p{i}": "w" * 1000 for i in range(60)}}


def _copies(server: Server, first: str, n: int, *, user: str) -> list[str]:
    """``n`` copies of the definition ``first`` written into the store (past the cap, as red28's SQL did)."""
    with server.store.transaction(write=False) as tx:
        model = stored.get_definition(tx, first)
    ids = []
    with server.store.transaction() as tx:
        for i in range(n):
            made = replace(model, id=f"d-syn{i:05d}", name=f"syn{i}", user=user,
                           created_at=model.created_at + timedelta(seconds=i + 1),  # type: ignore[operator]
                           updated_at=model.updated_at)
            ids.append(stored.insert_definition(tx, made).id)
    return ids


def test_red28_r6_definitions_list_is_paged_in_rows_and_bytes(db_url: str, tmp_path: Path) -> None:
    from jupyter_sched.services.models.base import PAGE_BYTES

    clock = ManualClock(at("2026-12-06T01:00:00+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    first = server.create({**HEAVY, "name": "big"}, user="mal")["id"]
    ids = {first, *_copies(server, first, 149, user="mal")}
    mal = server.caller("mal")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = server.definitions.list(mal, parse(ListDefinitionsRequest, {"cursor": cursor} if cursor else {}))
        rows = page.definitions.to_wire()
        body = json.dumps(rows).encode()
        # each page: at most the default 100 rows, and about PAGE_BYTES (one row past it at most)
        assert 1 <= len(rows) <= 100
        assert len(body) <= PAGE_BYTES + 300_000, len(body)
        assert all(len(row["args"]) == 60 for row in rows)  # whole rows, never cut
        seen += [row["id"] for row in rows]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen)) == 150  # every one once, newest first
    assert pages >= 150 * 180_000 // PAGE_BYTES  # the bytes ended pages, not only the row limit
    # a limit: that many rows; the next page goes on after them
    small = server.definitions.list(mal, parse(ListDefinitionsRequest, {"limit": "3"}))
    assert len(small.definitions.root) == 3 and small.next_cursor is not None
    after = server.definitions.list(mal, parse(ListDefinitionsRequest, {"limit": "3", "cursor": small.next_cursor}))
    assert [d.id for d in after.definitions.root] == seen[3:6]
    # by name: the CLI resolves a name with one small page
    named = server.definitions.list(mal, parse(ListDefinitionsRequest, {"name": "syn7"}))
    assert [d.name for d in named.definitions.root] == ["syn7"] and named.next_cursor is None


def test_red28_r6_definitions_list_refuses_bad_paging_naming_the_field(db_url: str, tmp_path: Path) -> None:
    from jupyter_sched.errors import ValidationError

    server = Server(db_url, ManualClock(at("2026-12-06T01:00:00+00:00")), tmp_path / "jobs")
    for query, field in (({"limit": "501"}, "limit"), ({"limit": "0"}, "limit"), ({"cursor": "nope"}, "cursor")):
        with pytest.raises(ValidationError) as refused:
            server.definitions.list(server.caller("mal"), parse(ListDefinitionsRequest, query))
        assert refused.value.field == field, (query, refused.value)


def test_red28_r6_definitions_latest_run_is_one_query_not_every_run(db_url: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock(at("2026-12-06T01:00:00+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    made = [server.create({"notebook": "report.ipynb", "schedule": "0 3 * * *", "timezone": "UTC", "gpus": 0,
                           "name": f"d{n}"}, user="amy")["id"] for n in range(3)]
    job = server.store.list_jobs()  # none yet: runs below get jobs of their own
    assert job == []
    from jupyter_sched.model import Job, JobSpec, JobState

    newest: dict[str, str] = {}
    with server.store.transaction() as tx:
        for d_index, definition_id in enumerate(made[:2]):
            for k in range(40):  # 40 runs each; the newest is the last scheduled
                when = at("2026-11-01T03:00:00+00:00") + timedelta(days=k)
                job_id = f"j-run{d_index}-{k:03d}"
                record = JobRecord(job=Job(id=job_id, spec=JobSpec(name=f"r{k}", user="amy"), state=JobState.SUCCEEDED,
                                           submitted_at=when, finished_at=when))
                assert stored.insert_run(tx, DefinitionRun(definition_id=definition_id, job_id=job_id,
                                                           trigger=RunTrigger.SCHEDULE, scheduled_for=when,
                                                           parameters={}, created_at=when), record)
                newest[definition_id] = job_id

    def every_run(*args: object, **kwargs: object) -> list[DefinitionRun]:
        raise AssertionError("a list read every run of its definitions")

    monkeypatch.setattr(stored, "list_runs", every_run)
    rows = {d.id: d for d in server.definitions.list(server.caller("amy"), ListDefinitionsRequest()).definitions.root}
    assert {i: (rows[i].last_run.job_id if rows[i].last_run else None) for i in made} == {
        made[0]: newest[made[0]], made[1]: newest[made[1]], made[2]: None}
    last = rows[made[0]].last_run
    assert last is not None and last.job is not None and last.job.to_wire()["state"] == "succeeded"
    with server.store.transaction(write=False) as tx:
        assert set(stored.latest_runs(tx, made)) == set(made[:2])


def test_red28_r6_definitions_cap_is_a_count_and_refuses_audited(db_url: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock(at("2026-12-06T01:00:00+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs", limit_per_user=3)
    first = server.create({**HEAVY, "name": "big0"}, user="mal")["id"]
    _copies(server, first, 1, user="mal")
    server.create({**HEAVY, "name": "big2"}, user="mal")
    read: list[object] = []
    real = stored.list_definitions

    def counted(*args: object, **kwargs: object) -> list[JobDefinition]:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        read.extend(found)
        return found

    monkeypatch.setattr(stored, "list_definitions", counted)
    with pytest.raises(QuotaError) as refused:
        server.create({**HEAVY, "name": "big3"}, user="mal")
    assert "already keeps 3 job definitions" in refused.value.message
    assert "c.SchedApp.definition_limit_per_user" in (refused.value.hint or "")
    assert "delete" in (refused.value.hint or "")
    assert read == []  # counted, no definition row read to count them (each may be ~250 KB)
    audited = [e for e in server.store.list_events(action="refused") if "already keeps 3 job definitions" in e.message]
    assert len(audited) == 1 and audited[0].actor == "mal", [(e.action, e.message) for e in server.store.list_events()]
    # another user is counted apart
    assert server.create({**HEAVY, "name": "big0"}, user="amy")["user"] == "amy"


def test_red28_r6_definitions_list_is_a_bulk_read() -> None:
    from jupyter_sched.extension.polled import definitions_headers
    from jupyter_sched.extension.web import BULK_READS
    from jupyter_sched.services.models.definitions import DefinitionsPage, ListDefinitionsResponse

    assert "definitions" in BULK_READS  # one user's list reads bounded by SchedApp.bulk_off_loop (red27 R5)
    page = DefinitionsPage(definitions=ListDefinitionsResponse([]), next_cursor="abc")
    [(name, value)] = definitions_headers(page, ListDefinitionsRequest(all=True, limit=50))
    assert name == "Link" and value == '<definitions?all=true&limit=50&cursor=abc>; rel="next"'
