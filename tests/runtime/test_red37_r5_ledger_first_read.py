"""red37 R5: the usage ledger's first read (each start, or rows removed by hand) sums the closed rows
in the database instead of decoding every row of the window on the engine's thread.

300,000 closed rows of one user's instant jobs held everyone's first start after each restart
6.5-12.5 s (0.6 s without). The database now sums GPU-seconds per user (decayed) and per
(team, user, UTC day); the engine decodes only open rows, rows spanning days and odd rows. These
tests count the rows decoded and hold the figures to the old full read (real SQLite and PostgreSQL).
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from jupyter_sched.engine.usage_ledger import UsageLedger
from jupyter_sched.store import Store, StoreTx
from jupyter_sched.store.codec import ts
from tests.runtime.test_red26_r1_usage_ledger import BUDGETS, HALF_LIFE_S, NOW, _insert, _old, _rows, _same


def _flood(n: int, rng: random.Random) -> list[dict[str, object]]:
    """``n`` closed rows: 300 of any length (some spanning days, some before the window), the rest
    instant or short jobs inside their UTC day (what one user's flood leaves), some of no length."""
    rows = _rows(n, now=NOW, rng=rng, first=0)
    for row in rows[300:]:
        start = (NOW - timedelta(seconds=rng.uniform(600, 40 * 86400))).replace(hour=rng.randrange(0, 23))
        row["started_at"] = ts(start)
        row["ended_at"] = ts(start + timedelta(seconds=rng.choice([0.0, 0.3, 5.0, 600.0])))
    return rows


def _first_read_decodes(store: Store, monkeypatch: pytest.MonkeyPatch) -> tuple[object, int]:
    calls = [0]
    real = StoreTx._usage_decoded_row

    def counting(self: StoreTx, r: object) -> object:
        calls[0] += 1
        return real(self, r)  # type: ignore[arg-type]

    monkeypatch.setattr(StoreTx, "_usage_decoded_row", counting)
    ledger = UsageLedger(store, half_life_s=HALF_LIFE_S)
    got = ledger.read(NOW, BUDGETS)
    monkeypatch.undo()
    return got, calls[0]


def _check(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(375)
    rows = _flood(6_000, rng) + _rows(40, now=NOW, rng=rng, first=90_000, open_every=4)
    _insert(store, rows)
    got, decoded = _first_read_decodes(store, monkeypatch)
    # the 300 long rows and 40 open/other ones (at most), not 6,000
    assert decoded <= 400, decoded
    _same(got, _old(store, NOW))
    # the incremental reads after it go on from the database's sums with the same figures
    ledger = UsageLedger(store, half_life_s=HALF_LIFE_S)
    ledger.read(NOW, BUDGETS)
    later = NOW + timedelta(hours=30)
    _same(ledger.read(later, BUDGETS), _old(store, later))


def test_red37_r5_first_ledger_read_sums_in_sqlite_decoding_a_bounded_number_of_rows(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r5.db'}")
    _check(store, monkeypatch)


def test_red37_r5_first_ledger_read_sums_in_postgresql_decoding_a_bounded_number_of_rows(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(pg_url)
    _check(store, monkeypatch)
