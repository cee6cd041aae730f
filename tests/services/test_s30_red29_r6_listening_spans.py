"""red29 R6: the service's listening spans are kept in the store, and a squat report is judged against every one.

Only the running process's start was known: after a restart at 05:45 mal reported eve's uid holding the service's
address 05:41-05:43:30, while the previous process was listening; the report was taken. Each process now writes
its span (schema 26, ``service_spans``): its start, its last sign of life, its end on a clean stop — or, killed,
its end inferred at the next start on the same host and port — and a report of a window any of them covers on the
reported port is refused 400 naming the field.

Real parts: the store on SQLite and PostgreSQL (migrated to version 26), :func:`~jupyter_sched.hub.squat_log
.parse_squat_report`, :func:`~.not_while_listening` and :func:`~.record_squats` as the route calls them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from jupyter_sched.errors import ValidationError
from jupyter_sched.hub.squat_log import SQUAT_ACTION, not_while_listening, parse_squat_report, record_squats
from jupyter_sched.store import Store, latest_version

HOST = "gpu-host-1"
T0 = datetime(2026, 12, 6, 5, 40, 0, tzinfo=timezone.utc)  # red29's first process began listening
NOW = datetime(2026, 12, 6, 5, 49, 0, tzinfo=timezone.utc)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store(db_url)
    try:
        yield opened
    finally:
        opened.close()


def _report(first: datetime, last: datetime, port: int = 19905) -> dict[str, object]:
    return {"refusals": [{"holder_uid": 1022, "address": f"127.0.0.1:{port}", "first_at": first.isoformat(),
                          "last_at": last.isoformat(), "count": 40}]}


def _judged(store: Store, first: datetime, last: datetime, port: int = 19905) -> None:
    """What the route does with a report when THIS process began listening at 05:45 (red29's restart)."""
    held = parse_squat_report(_report(first, last, port), NOW, listening_since=T0 + timedelta(minutes=5),
                              own_uids={os.geteuid()})
    not_while_listening(held, store.listening_spans(HOST))


def test_s30_red29_r6_spans_are_kept_an_unclean_end_is_inferred_and_a_clean_one_written(store: Store) -> None:
    assert store.schema_version() == latest_version() >= 26
    first = store.open_listening_span(HOST, 19905, 4001, T0, T0)
    store.touch_listening_span(first, T0 + timedelta(minutes=4, seconds=10))  # its last beat; then it was killed
    other = store.open_listening_span(HOST, 8010, 4002, T0, T0)  # another port: not this one's to end
    elsewhere = store.open_listening_span("gpu-host-2", 19905, 4003, T0, T0)
    second = store.open_listening_span(HOST, 19905, 5001, T0 + timedelta(minutes=5), T0 + timedelta(minutes=5))
    spans = {span.id: span for span in store.listening_spans(HOST)}
    assert set(spans) == {first, other, second}
    assert (spans[first].ended_at, spans[first].end_inferred) == (T0 + timedelta(minutes=4, seconds=10), True)
    assert spans[other].ended_at is None and spans[second].ended_at is None
    assert [span.pid for span in store.listening_spans(HOST, {19905})] == [4001, 5001]  # oldest first
    assert [span.id for span in store.listening_spans("gpu-host-2")] == [elsewhere]
    store.close_listening_span(second, T0 + timedelta(minutes=8))  # a clean stop
    [_, ended] = store.listening_spans(HOST, {19905})
    assert (ended.ended_at, ended.end, ended.end_inferred) == (T0 + timedelta(minutes=8),) * 2 + (False,)


def test_s30_red29_r6_a_report_of_a_window_an_earlier_process_served_is_refused(store: Store) -> None:
    first = store.open_listening_span(HOST, 19905, 4001, T0, T0)
    store.touch_listening_span(first, T0 + timedelta(minutes=4, seconds=10))
    store.open_listening_span(HOST, 19905, 5001, T0 + timedelta(minutes=5), T0 + timedelta(minutes=5))
    # red29's report: 05:41-05:43:30 while the first process listened (this one began at 05:45)
    with pytest.raises(ValidationError) as refused:
        _judged(store, T0 + timedelta(minutes=1), T0 + timedelta(minutes=3, seconds=30))
    assert refused.value.field == "first_at", refused.value
    said = str(refused.value)
    assert ("2026-12-06 05:41:00 to 2026-12-06 05:43:30 UTC: the service was listening on port 19905 of this host "
            "then (its process 4001, from 2026-12-06 05:40:00 UTC to 2026-12-06 05:44:10 UTC, its last sign of life "
            "before it stopped without a clean stop): nobody else held its address") in said, said
    assert refused.value.hint == "report only refusals made while the service was down"
    # a window that began before the first process and ran into it: last_at named
    with pytest.raises(ValidationError) as refused:
        _judged(store, T0 - timedelta(minutes=2), T0 + timedelta(minutes=1))
    assert refused.value.field == "last_at"
    # the gap between the two (the first was killed at 05:44:10+, the second began at 05:45), another port, and a
    # window before any span is kept: taken (within the skew at a span's ends too)
    _judged(store, T0 + timedelta(minutes=4, seconds=20), T0 + timedelta(minutes=4, seconds=50))
    _judged(store, T0 + timedelta(minutes=1), T0 + timedelta(minutes=3), port=8010)
    _judged(store, T0 - timedelta(minutes=3), T0 + timedelta(seconds=4))


def test_s30_red29_r6_a_taken_reports_row_says_what_the_spans_checked(store: Store) -> None:
    store.open_listening_span(HOST, 19905, 4001, T0, T0)
    since = T0 + timedelta(minutes=5)
    held = parse_squat_report(_report(T0 - timedelta(minutes=3), T0 - timedelta(minutes=1)), NOW,
                              listening_since=since, own_uids={os.geteuid()})
    record_squats(store, "mal", held, since, spans_since=T0)
    later = parse_squat_report(_report(T0 + timedelta(seconds=30), T0 + timedelta(seconds=32)), NOW,
                               listening_since=since, own_uids={os.geteuid()})
    record_squats(store, "mal", later, since, spans_since=T0 - timedelta(days=1))
    before, after = sorted(store.list_events(action=SQUAT_ACTION), key=lambda row: row.id)
    assert before.message.endswith(
        "(the reporting server's word; the service checked that the holder is not its own account and that none of "
        "its processes listened on port 19905 of this host then (it keeps their listening times since 2026-12-06 "
        "05:40:00 UTC; of the time before, it cannot tell))"), before.message
    assert after.message.endswith("(it keeps their listening times since 2026-12-05 05:40:00 UTC))"), after.message


def test_s30_red29_r6_the_migration_makes_the_table_on_a_version_25_store(db_url: str) -> None:
    from jupyter_sched.store import migrations

    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            for step in migrations.MIGRATIONS[:25]:
                step.upgrade(conn)
        assert not sa.inspect(engine).has_table("service_spans")
        with engine.begin() as conn:
            migrations.MIGRATIONS[25].upgrade(conn)
        assert migrations.MIGRATIONS[25].version == 26
        assert {c["name"] for c in sa.inspect(engine).get_columns("service_spans")} == {
            "id", "host", "port", "pid", "started_at", "seen_at", "ended_at", "end_inferred"}
    finally:
        engine.dispose()
