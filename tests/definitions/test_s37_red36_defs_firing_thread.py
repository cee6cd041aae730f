"""red36 (s37-defs): one user's due definitions held everyone's scheduling while they fired.

100 minutely definitions of one user (the per-user cap) fired in one burst on the engine's thread:
43 ms a firing (one store transaction), ~128 ms with an 8.5 MiB notebook read and checked per firing
— 6-13 s a minute in which nothing was scheduled for anyone (another user's submit → start went from
~0.5 s to 1.4-3.6 s); and they fired in id order, so another user's one definition created later
fired after the whole burst (or in the next pass, past the pass's bound).

Now the engine's hook only starts a firing pass on its own thread, and a pass takes its due
definitions owner by owner in turn. The slow preparation here is the owner lookup made slow — the
definitions' ``owner_caller``, which in hub mode asks the hub who the owner is — held on an event the
test opens (a gate, not a timing): the real lookup answers once it opens. Real services, a real
SQLite store, the engine's real tick, a manual clock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from def_builders import Server, at

from jupyter_sched.definitions.firing import DefinitionFiring
from jupyter_sched.definitions.turns import in_turn
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import definitions as stored
from tests.leftovers import end_jobs

MINUTELY = {"notebook": "report.ipynb", "schedule": "* * * * *", "timezone": "UTC", "gpus": 0, "overlap": "allow"}


def _runs(server: Server, ids: list[str]) -> dict[str, list[Any]]:
    with server.store.transaction(write=False) as tx:
        return {d: stored.list_runs(tx, [d]) for d in ids}


def test_red36_defs_a_flood_of_slow_firings_holds_no_other_users_start(sqlite_db: str, tmp_path: Path) -> None:
    """fay's five due firings are being prepared (held: her owner lookup waits) while gil submits: the
    tick that started the pass has ended, and the next tick starts gil's job — before any of fay's runs
    exists. Failed before: the tick ran the pass itself and never ended while fay's lookup waited."""
    clock = ManualClock(at("2026-12-07T07:00:30+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs")
    flood = [server.create({**MINUTELY, "name": f"m{i}"}, user="fay")["id"] for i in range(5)]
    real, gate, preparing = server.definitions.owner_caller, threading.Event(), threading.Event()

    def slow_owner(user: str) -> Any:  # the hub's lookup of the owner, answering once the gate opens
        if user == "fay":
            preparing.set()
            gate.wait(120)
        return real(user)

    server.definitions.owner_caller = slow_owner
    engine, gil = server.services.engine, server.caller("gil")
    ticked = threading.Event()
    clock.set(at("2026-12-07T07:01:05+00:00"))  # fay's five are due
    ticker = threading.Thread(target=lambda: (engine.tick(), ticked.set()), name="test-engine-tick", daemon=True)
    job = None
    try:
        ticker.start()
        assert preparing.wait(60), "the firing pass started preparing fay's runs"
        job = server.services.jobs.submit(gil, SubmitJobRequest(gpus=1, name="g", command=["sleep", "60"]))
        assert ticked.wait(60), "the tick that started the firing pass ended while fay's runs were still prepared"
        engine.tick()
        assert server.services.jobs.get(gil, job.id).state == "running", "gil's job started during fay's firings"
        assert not gate.is_set() and all(runs == [] for runs in _runs(server, flood).values())
        server.services.jobs.cancel(gil, job.id)
        engine.tick()
    finally:
        gate.set()
    assert server.definitions.wait_firing(60), "the firing pass ended once the lookup answered"
    runs = _runs(server, flood)
    assert {d: [r.scheduled_for for r in rs] for d, rs in runs.items()} == \
        {d: [at("2026-12-07T07:01:00+00:00")] for d in flood}  # each firing recorded exactly once
    ticker.join(60)
    assert end_jobs(server.services.executor) == []


def test_red36_defs_another_users_one_definition_fires_among_the_floods_first(
        sqlite_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fay's seven minutely definitions and gil's one, created after them (its id sorts last), all due:
    the first pass (bound 3 here, 100 in production) fires fay's first, gil's, fay's second — gil's in
    the same minute and the same pass as the flood's first. Failed before: the pass took fay's three
    by id, gil's fired passes later. The rest of fay's fire in the next passes, each once."""
    monkeypatch.setattr(DefinitionFiring, "max_due_per_pass", 3)
    clock = ManualClock(at("2026-12-07T07:00:30+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs")
    flood = [server.create({**MINUTELY, "name": f"m{i}"}, user="fay")["id"] for i in range(7)]
    clock.advance(1)
    one = server.create({**MINUTELY, "name": "mine"}, user="gil")["id"]
    clock.set(at("2026-12-07T07:01:05+00:00"))

    first = server.fire_due()
    owners = [server.store.get_job(job_id).job.spec.user for job_id in first.created]
    assert owners == ["fay", "gil", "fay"], owners
    assert [r.scheduled_for for r in _runs(server, [one])[one]] == [at("2026-12-07T07:01:00+00:00")]
    for _ in range(3):  # 5 of fay's left: 3, then 2
        server.fire_due()
    assert {d: [r.scheduled_for for r in rs] for d, rs in _runs(server, flood).items()} == \
        {d: [at("2026-12-07T07:01:00+00:00")] for d in flood}


def test_red36_defs_a_pass_stops_between_firings_when_asked(sqlite_db: str, tmp_path: Path) -> None:
    """A pass asked to stop (the server no longer leads, or shuts down) ends between two firings: each
    firing made is whole, the rest stay due and the next pass fires them, each once."""
    clock = ManualClock(at("2026-12-07T07:00:30+00:00"))
    server = Server(sqlite_db, clock, tmp_path / "jobs")
    flood = [server.create({**MINUTELY, "name": f"m{i}"}, user="fay")["id"] for i in range(4)]
    clock.set(at("2026-12-07T07:01:05+00:00"))
    asked: list[int] = []
    report = server.definitions.firing.fire_due(stop=lambda: (asked.append(1), len(asked) > 2)[1])
    assert len(report.created) == 2 and report.next_due == clock.now()
    assert len(server.fire_due().created) == 2
    assert sorted(len(rs) for rs in _runs(server, flood).values()) == [1, 1, 1, 1]


@pytest.mark.parametrize(("due", "limit", "turns", "owner_turn", "want", "want_turns"), [
    pytest.param([("a", 1), ("a", 2), ("a", 3), ("b", 1)], 10, {}, 0, ["a1", "b1", "a2", "a3"], {},
                 id="one owner's many and another's one: the other's is second"),
    pytest.param([("a", 1), ("a", 2), ("a", 3), ("b", 1)], 2, {}, 0, ["a1", "b1"], {"a": 1},
                 id="a cut pass: every owner's first, and the cut owner's turn moves on"),
    pytest.param([("a", 1), ("a", 2), ("a", 3)], 2, {"a": 1}, 0, ["a2", "a3"], {"a": 3},
                 id="an owner's turn rotates their own: a first that fails every pass holds none back"),
    pytest.param([("a", 1), ("a", 2), ("b", 1), ("b", 2)], 3, {}, 1, ["b1", "a1", "b2"], {"a": 1},
                 id="the owners' order turns too: a cut mid-round falls on another owner next pass"),
])
def test_red36_defs_due_definitions_are_taken_owner_by_owner(
        due: list[tuple[str, int]], limit: int, turns: dict[str, int], owner_turn: int, want: list[str],
        want_turns: dict[str, int]) -> None:
    taken, following = in_turn(due, lambda item: item[0], limit, turns, owner_turn)
    assert [f"{owner}{n}" for owner, n in taken] == want
    assert following == want_turns
