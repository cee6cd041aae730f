"""hubadmin23 A15: the admin's audit at twenty users was mostly ``eta_moved`` rows whose message read
``ETA moved 2026-12-05T09:57:08.832159+00:00 → 2026-12-05T09:37:18.474991+00:00: …``. The message now
says its clocks as every surface does (``Dec 5 09:57 UTC``, seconds where both fall in one minute), the
record's ``from``/``to`` fields stay ISO. Also the waiter's withheld form (another user's progress)."""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.model.units import moved_text
from jupyter_sched.services.withheld import _PROGRESS_MOVE


def test_s23_hubadmin23_a15_eta_moved_message_clocks() -> None:
    a = datetime(2026, 12, 5, 9, 57, 8, 832159, tzinfo=timezone.utc)
    b = datetime(2026, 12, 5, 9, 37, 18, 474991, tzinfo=timezone.utc)
    assert moved_text(a, b) == ("Dec 5 09:57 UTC", "Dec 5 09:37 UTC")
    assert moved_text(a, a.replace(second=40)) == ("Dec 5 09:57:08 UTC", "Dec 5 09:57:40 UTC")  # one minute: seconds
    assert moved_text(a.isoformat(), "2026-12-05T09:37:18Z") == ("Dec 5 09:57 UTC", "Dec 5 09:37 UTC")  # the record's ISO
    assert moved_text(None, b) == ("unknown", "Dec 5 09:37 UTC")
    assert moved_text("unknown", "not a time") == ("unknown", "unknown")
    said = _PROGRESS_MOVE.format(frm=moved_text(a.isoformat(), None)[0], to="unknown")
    assert said.startswith("ETA moved Dec 5 09:57 UTC → unknown:") and "+00:00" not in said
