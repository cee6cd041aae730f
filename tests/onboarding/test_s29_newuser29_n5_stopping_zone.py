"""newuser29 N5: with TZ set (newuser26 n14's zone-aware CLI), a stopping job's line said "cancel requested by root
at 07:04 CET UTC; killed at 06:04:46 UTC if still running" — the zone's name with UTC after it, and the kill time
in another zone. Both times now come from the one clock renderer in the reader's zone; the keepalive line of
``%gpu keepalive`` and a busy answer's "retry after" too (the client-side renderers that printed raw UTC)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from jupyter_sched.client.busy import gave_up
from jupyter_sched.errors import BusyError
from jupyter_sched.model.units import shown_in
from jupyter_sched.wording.jobs import stopping_text

NOW = datetime(2026, 12, 6, 6, 5, tzinfo=timezone.utc)
JOB = {"state": "running", "stopping_since": "2026-12-06T06:04:16Z",
       "stop_requested": {"intent": "cancel", "by": "root", "kill_at": "2026-12-06T06:04:46Z"}}


def test_newuser29_n5_a_stopping_line_says_both_times_in_the_readers_zone_once() -> None:
    with shown_in("Europe/Berlin"):
        said = stopping_text(JOB, NOW)
    assert said == "stopping (cancel requested by root at 07:04 CET; killed at 07:04:46 CET if still running)", said
    assert stopping_text(JOB, NOW) == ("stopping (cancel requested by root at 06:04 UTC; killed at 06:04:46 UTC if "
                                       "still running)")
    with shown_in("America/New_York"):
        hint = gave_up(BusyError("busy"), "2", retries=1, now=NOW).hint
    assert hint is not None and re.fullmatch(r"retry after 01:05:02 EST \(in 2 s\)", hint), hint
    assert NOW + timedelta(seconds=2) == datetime(2026, 12, 6, 6, 5, 2, tzinfo=timezone.utc)
