"""newuser38 n20: a definition's outputs say every clock in ONE zone, the definition's.

``%schedule define runs`` said ``scheduled_for 11:28 CET`` beside reasons in UTC (the server's message, written in
UTC), and ``%schedule define list`` the next run in the definition's zone beside the last run's end in the reader's.
The frames are rendered from the REST answer's shape (GET definitions/{id}'s ``runs``; a waiting job's structured
``reason`` with its ``eta``) — pure functions, no server needed; the CLI's side runs against a real server in
tests/web/test_s38_defs_cli_one_server.py (test_newuser38_n20_…).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from jupyter_sched.magics.define import definitions_frame, runs_frame
from jupyter_sched.model.units import clock_text, shown_in
from jupyter_sched.wording.definitions import in_its_zone, zone_header


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _runs(now: datetime) -> list[dict[str, Any]]:
    reason = {"code": "insufficient_gpus", "message": "waiting for 1 GPU (0 free)", "position": 1,
              "eta": _iso(now + timedelta(minutes=30)), "details": {}}
    pending = {"id": "j-p", "state": "pending", "kind": "batch", "gpus": 1, "reason": reason}
    ended = {"id": "j-e", "state": "succeeded", "exit_code": 0, "message": "exited with code 0",
             "started_at": _iso(now - timedelta(minutes=3)), "finished_at": _iso(now - timedelta(minutes=2))}
    return [{"job_id": "j-p", "scheduled_for": _iso(now), "trigger": "manual", "job": pending},
            {"job_id": "j-e", "scheduled_for": _iso(now - timedelta(minutes=4)), "trigger": "manual", "job": ended}]


def test_newuser38_n20_magic_runs_and_list_say_the_definitions_zone_only() -> None:
    now = datetime.now(timezone.utc)
    runs = _runs(now)
    with shown_in("UTC"):  # the reader's zone, as the magics set it: UTC here
        frame = runs_frame(runs, "Asia/Tokyo")
        listed = definitions_frame([{"id": "d-1", "name": "rep", "timezone": "Asia/Tokyo", "schedule": "0 3 * * *",
                                     "next_run_at": _iso(now + timedelta(hours=5)), "last_run": runs[1]}])
    waiting = frame.iloc[0]
    assert waiting["scheduled_for"].endswith(" JST"), waiting
    eta = clock_text(now + timedelta(minutes=30), now, zone="Asia/Tokyo")
    assert f"ETA {eta}" in waiting["reason"] and "UTC" not in waiting["reason"], waiting["reason"]  # was the server's
    row = listed.iloc[0]
    assert row["next_run"].endswith(" JST") and " JST (ran " in row["last_reason"], row.to_dict()
    assert "UTC" not in row["last_reason"], row["last_reason"]


def test_newuser38_n20_in_its_zone_and_its_header() -> None:
    when = datetime(2026, 12, 7, 10, 53, tzinfo=timezone.utc)
    with shown_in("America/New_York"), in_its_zone({"timezone": "Europe/Berlin"}):
        assert clock_text(when, when) == "11:53 CET"
    with shown_in("America/New_York"), in_its_zone({}):  # a definition without a zone: UTC, as its schedule reads
        assert clock_text(when, when) == "10:53 UTC"
    with shown_in("America/New_York"):
        assert clock_text(when, when) == "05:53 EST"  # the reader's zone again after it
    assert zone_header({"timezone": "Europe/Berlin"}) == "times in Europe/Berlin, the definition's zone"
