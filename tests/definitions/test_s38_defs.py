"""Session 38 (s38-defs): definitions' leftovers from session 37, on the real services over a real store.

Real services (:class:`def_builders.Server`: the composition root the server uses) on SQLite and PostgreSQL, a manual
clock; the CLI's and REST's end to end is ``tests/web/test_s38_defs_cli_one_server.py``.

- item 1: a definition's parameters in a list, compact (:func:`~jupyter_sched.wording.definitions.parameters_brief`,
  the CLI list's and the magics' column).
- item 2: a notebook definition stored with arguments before they were refused keeps firing as it always did (its
  runs never had them: a notebook run takes no argv) and every read of it says so and how to drop them.
- item 5: a definition's ``no_preempt`` reaches the job of each scheduled firing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.store import definitions as stored
from jupyter_sched.wording.definitions import parameters_brief


@pytest.mark.parametrize("parameters, want", [
    ({}, ""),
    ({"epochs": 3, "region": "eu"}, "parameters epochs=3 region=eu"),
    ({"title": "two words"}, "parameters 'title=two words'"),
    ({"flags": [1, 2], "on": True}, "parameters 'flags=[1, 2]' on=true"),
    ({"note": "y" * 30}, f"parameters note={'y' * 23}…"),
    ({f"k{n}": n for n in range(20)}, "parameters k0=0 k1=1 k2=2 k3=3 k4=4 k5=5 k6=6 k7=7 k8=8 k9=9 k10=10 "
                                      "… and 9 more"),
], ids=["none: nothing said", "as show writes them", "a value with a blank is quoted as typed",
        "a list and a bool as JSON", "a long value is cut", "past the line's share: counted"])
def test_s38_defs_1_parameters_brief_is_compact_and_counts_what_it_leaves_out(parameters: dict[str, object],
                                                                              want: str) -> None:
    assert parameters_brief({"parameters": parameters}) == want


def test_s38_defs_1_the_magics_list_has_the_parameters_column() -> None:
    from jupyter_sched.magics.define import definitions_frame

    frame = definitions_frame([{"id": "d-1", "name": "nightly", "notebook": "a.ipynb", "schedule": "0 6 * * *",
                                "timezone": "UTC", "paused": False, "parameters": {"epochs": 2}}])
    row = frame.iloc[0] if hasattr(frame, "iloc") else frame.data.iloc[0]
    assert row["parameters"] == "epochs=2"


def _notebook(path: Path) -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "epochs = 3", "outputs": [],
                                           "metadata": {"tags": ["parameters"]}, "execution_count": None}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_s38_defs_2_a_stored_notebook_definition_with_args_keeps_firing_and_says_so(db_url: str,
                                                                                    tmp_path: Path) -> None:
    """Decided: keep firing. Its runs never had the arguments (a notebook run is given no argv: run_body leaves them
    out), so refusing its firings now would stop a schedule that has worked, for a field that never did anything.
    Every read says it (GET / list ``warnings``), with the way to drop them; an edit of another field is taken, an
    edit that keeps a notebook with arguments is refused."""
    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    nb = _notebook(tmp_path / "old.ipynb")
    d_id = server.create({"name": "old-nb", "notebook": str(nb), "schedule": "* * * * *", "gpus": 0,
                          "overlap": "allow"}, user="ann")["id"]
    with server.store.transaction() as tx:  # as a row saved before session 38 refused them
        row = stored.get_definition(tx, d_id)
        stored.update_definition(tx, replace(row, args=("--epochs", "3")))
    warnings = server.get(d_id, user="ann").get("warnings") or []
    said = next(w for w in warnings if "a notebook takes none" in w)
    assert said.startswith("args '--epochs 3' are a script's arguments: a notebook takes none: its runs leave them out")
    assert f"definitions edit {d_id} --args ''" in said, said
    listed = next(d for d in server.list(user="ann") if d["id"] == d_id)
    assert said in (listed.get("warnings") or []), listed
    clock.advance(60)
    report = server.fire_due()
    assert len(report.created) == 1, report
    job = server.store.get_job(report.created[0]).job
    assert job.spec.notebook == str(nb) and not job.spec.command, job.spec  # it ran as it always did
    assert server.update(d_id, {"gpus": 0, "time_limit": "5m"}, user="ann")["job"]["time_limit"] == "5m"
    from jupyter_sched.errors import ValidationError

    with pytest.raises(ValidationError) as refused:
        server.update(d_id, {"args": ["--epochs", "4"]}, user="ann")
    assert refused.value.field == "args"
    cleared = server.update(d_id, {"args": []}, user="ann")
    assert cleared["args"] == [] and not any("notebook takes none" in w for w in cleared.get("warnings") or [])
    assert not any("notebook takes none" in w for w in server.get(d_id, user="ann").get("warnings") or [])


def test_s38_defs_5_a_scheduled_firing_submits_what_the_definition_says_no_preempt_included(
        db_url: str, tmp_path: Path) -> None:
    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    nb = _notebook(tmp_path / "np.ipynb")
    made = server.create({"name": "np", "notebook": str(nb), "schedule": "* * * * *", "gpus": 1, "no_preempt": True,
                          "overlap": "allow"}, user="ann")
    assert made["job"]["no_preempt"] is True
    clock.advance(60)
    first = server.fire_due().created
    assert len(first) == 1 and server.store.get_job(first[0]).job.spec.no_preempt is True
    server.update(made["id"], {"no_preempt": False}, user="ann")
    clock.advance(60)
    second = server.fire_due().created
    assert len(second) == 1 and server.store.get_job(second[0]).job.spec.no_preempt is False


# ---- item 3: a firing skipped over its owner's rate is decided from memory ------------------------------------------

EVERY_MINUTE = {"script": "rate.py", "schedule": "* * * * *", "timezone": "UTC", "gpus": 0, "overlap": "allow"}


def _rate_server(url: str, tmp_path: Path, *, from_memory: bool = True) -> tuple[Server, list[str], ManualClock]:
    """mallory's three minutely definitions, at most two firings an hour: at 10:01 two run, one is skipped."""
    from jupyter_sched.definitions.rate_skips import RateSkips

    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(url, clock, tmp_path / "jobs", max_firings_per_user_hour=2)
    if not from_memory:  # the pass as before session 38: every skip on the full path
        server.definitions.firing._rate_skips = RateSkips(0, 60.0)
    ids = []
    for n in range(3):  # a second apart: ids sort as made, so two stores take them in one order
        ids.append(server.create({**EVERY_MINUTE, "name": f"r{n}"}, user="mallory")["id"])
        clock.advance(1)
    clock.advance(57)
    first = server.fire_due()
    assert len(first.created) == 2 and first.skipped == 1, first
    return server, ids, clock


def test_s38_defs_3_a_firing_over_the_rate_reads_no_row_and_writes_the_pass_in_one_transaction(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each firing skipped over its owner's rate read the definition's whole row, its newest run and that run's
    job, and wrote the row back in a transaction of its own (4 store round-trips a skip, on the firing thread). Now a
    pass of such skips reads the firing heads and owners and writes once; the skips are kept as before (``skipped``,
    the cursor, one audit record an hour)."""
    server, ids, clock = _rate_server(db_url, tmp_path)
    reads: list[str] = []
    transactions: list[bool] = []

    def spy(name: str, real: Callable[..., Any], *, write: bool = False) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            (transactions.append(kwargs.get("write", True)) if write else reads.append(name))
            return real(*args, **kwargs)
        return called

    for name in ("get_definition", "list_runs", "list_definitions", "_from_row"):
        monkeypatch.setattr(stored, name, spy(name, getattr(stored, name)))
    monkeypatch.setattr(server.store, "transaction", spy("transaction", server.store.transaction, write=True))
    monkeypatch.setattr(server.store, "get_job", spy("get_job", server.store.get_job))
    for _ in range(3):  # 10:02, 10:03, 10:04: every firing over the rate
        clock.advance(60)
        transactions.clear()
        report = server.fire_due()
        assert report.skipped == 3 and not report.created and not report.conflicts, report
        assert not reads, reads  # no row, run or job read
        assert transactions.count(True) == 1 and len(transactions) <= 3, transactions  # heads, owners, one write
    monkeypatch.undo()
    for d_id in ids:
        d = server.get(d_id, user="mallory")
        skipped = d["skipped"]
        assert skipped["cause"] == "rate" and skipped["last"] == "2026-12-07T10:04:00Z", skipped
        assert "mallory's definitions already fired 2 runs in the hour" in skipped["why"], skipped
        with server.store.transaction(write=False) as tx:
            row = stored.get_definition(tx, d_id)
        assert row.cursor == at("2026-12-07T10:04:00+00:00") and row.args == () and row.job["gpus"] == 0, row
    assert {server.get(d_id, user="mallory")["skipped"]["count"] for d_id in ids} == {3, 4}  # r2 skipped at 10:01 too
    audited = server.store.list_events(action="definition_skipped", limit=100)
    assert len(audited) == 3 and all(e.job_id is None for e in audited), [e.message for e in audited]


def test_s38_defs_3_the_skips_told_from_memory_are_the_skips_the_full_path_writes(tmp_path: Path) -> None:
    """Same scenario, two stores: the pass deciding from memory and the pass as before leave the same definitions
    (cursor, skipped) and the same audit records, over an hour and a half (its hourly summary records included)."""
    from jupyter_sched.store import sqlite_url

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    new, new_ids, new_clock = _rate_server(sqlite_url(tmp_path / "a" / "s.sqlite"), tmp_path / "a")
    old, old_ids, old_clock = _rate_server(sqlite_url(tmp_path / "b" / "s.sqlite"), tmp_path / "b", from_memory=False)
    for _ in range(90):
        new_clock.advance(60)
        old_clock.advance(60)
        a, b = new.fire_due(), old.fire_due()
        assert (len(a.created), a.skipped) == (len(b.created), b.skipped), (a, b)

    def kept(server: Server, ids: list[str]) -> list[tuple[object, ...]]:
        with server.store.transaction(write=False) as tx:
            rows = [stored.get_definition(tx, d_id) for d_id in ids]
        return [(d.name, d.cursor, d.skipped) for d in rows]

    assert kept(new, new_ids) == kept(old, old_ids)
    said = [(e.message, {k: v for k, v in e.details.items() if k != "definition_id"})
            for e in new.store.list_events(action="definition_skipped", limit=1000)]
    assert said == [(e.message, {k: v for k, v in e.details.items() if k != "definition_id"})
                    for e in old.store.list_events(action="definition_skipped", limit=1000)]
    assert len(said) >= 6  # each definition's first skip and its hourly summaries


def test_s38_defs_3_a_definition_changed_meanwhile_is_not_written_and_is_read_again(db_url: str,
                                                                                     tmp_path: Path) -> None:
    """An edit between two passes: the next firing takes the full path (its row read); a change between the
    decision and the write: the write finds another version and leaves the row (a conflict, nothing written)."""
    server, ids, clock = _rate_server(db_url, tmp_path)
    clock.advance(60)
    assert server.fire_due().skipped == 3
    server.update(ids[0], {"time_limit": "5m"}, user="mallory")
    firing = server.definitions.firing
    assert ids[0] not in firing._rate_skips.known or \
        firing._rate_skips.known[ids[0]].version != server.get(ids[0], user="mallory")["version"]
    with server.store.transaction(write=False) as tx:
        before = stored.get_definition(tx, ids[1])
    assert before.skipped is not None
    with server.store.transaction() as tx:  # a stale version: refused, nothing written
        assert not stored.record_skips(tx, ids[1], version=before.version - 1, cursor=at("2026-12-07T11:00:00+00:00"),
                                       skipped=before.skipped)
    with server.store.transaction(write=False) as tx:
        assert stored.get_definition(tx, ids[1]) == before
    clock.advance(60)
    report = server.fire_due()
    assert report.skipped == 3 and not report.conflicts, report
    assert server.get(ids[0], user="mallory")["skipped"]["last"] == "2026-12-07T10:03:00Z"
