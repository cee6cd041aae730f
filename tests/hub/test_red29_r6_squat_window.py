"""red29 R6: a squat report for a window the PREVIOUS service process served was audited as checked.

verify28 V5 refuses a report whose refusals lie after the service began listening — but the front door knows only
THIS process's start. After a restart at 05:45 mal reported eve's uid holding the service's address 05:41-05:43:30,
while the previous process was listening (it wrote audit rows then); the report was taken, and the row said "the
service checked that it was not listening then". The service keeps no record of an earlier process's listening
spans, so the row now says what it checked: the holder is not its own account, and this process (listening since
05:45) was not listening then; of an earlier process it cannot tell.

Real parts: :func:`~jupyter_sched.hub.squat_log.parse_squat_report` and :func:`~.record_squats` as the route calls
them, on a real SQLite store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.hub.squat_log import SQUAT_ACTION, parse_squat_report, record_squats
from jupyter_sched.store import Store, sqlite_url

RESTARTED = datetime(2026, 12, 6, 5, 45, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 12, 6, 5, 49, 0, tzinfo=timezone.utc)
REPORT = {"refusals": [{"holder_uid": 1022, "address": "127.0.0.1:19905", "first_at": "2026-12-06T05:41:00+00:00",
                        "last_at": "2026-12-06T05:43:30+00:00", "count": 40}]}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        yield opened
    finally:
        opened.close()


def test_red29_r6_a_report_of_a_window_before_this_process_listened_says_an_earlier_process_is_unknown(
        store: Store) -> None:
    held = parse_squat_report(REPORT, NOW, listening_since=RESTARTED, own_uids={os.geteuid()})
    assert record_squats(store, "mal", held, RESTARTED) == 1
    [row] = store.list_events(action=SQUAT_ACTION)
    assert row.actor == row.user == "mal"
    assert "checked that it was not listening then" not in row.message, row.message
    assert row.message.endswith(
        "(the reporting server's word; the service checked that the holder is not its own account and that its "
        "process listening since 2026-12-06 05:45:00 UTC was not listening then; whether an earlier process of the "
        "service was, it cannot tell)"), row.message


def test_red29_r6_without_a_known_listening_start_the_row_claims_no_time_check(store: Store) -> None:
    held = parse_squat_report(REPORT, NOW, listening_since=None, own_uids={os.geteuid()})
    record_squats(store, "mal", held)
    [row] = store.list_events(action=SQUAT_ACTION)
    assert row.message.endswith("(the reporting server's word; the service checked that the holder is not its own "
                                "account; whether the service was listening then it cannot tell)"), row.message
