"""Red team 15, R10 (floods): 3,000 event streams opened by one user, each past the 16th closing an
older one, and 930 answers 429 — none of it on the audit log. Now a flood is audited at most once per
user per minute, the rest counted into one record when the minute has ended.

Real parts: the server's :class:`~jupyter_sched.extension.events.EventHub` and a real SQLite store;
the handler is its settings mapping (what :func:`~jupyter_sched.extension.floods.audit_flood` reads),
the minutes run on a test clock.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jupyter_sched.extension.events import MAX_STREAMS_PER_USER, EventHub
from jupyter_sched.extension.floods import FLOODS_SETTING, audit_flood, stream_replacements
from jupyter_sched.services.callers import RefusalWindows
from jupyter_sched.store import Store, sqlite_url


def test_red15_r10_replaced_streams_and_busy_answers_are_audited_once_a_user_a_minute(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"))
    clock = [0.0]
    handler: Any = SimpleNamespace(settings={"jupyter_sched": SimpleNamespace(services=SimpleNamespace(store=store)),
                                             FLOODS_SETTING: RefusalWindows(per_minute=1, monotonic=lambda: clock[0])})
    hub = EventHub(16)
    try:
        for _ in range(MAX_STREAMS_PER_USER + 40):  # 40 streams past the cap: 40 older ones closed
            hub.subscribe(owner="bob", replaced=stream_replacements(handler, "bob"))
        assert hub.replaced_clients == 40
        rows = store.list_events(action="refused", limit=100)
        assert len(rows) == 1, rows
        assert rows[0].user == "bob" and rows[0].details["code"] == "streams_replaced"
        assert f"opened more than {MAX_STREAMS_PER_USER} event streams" in rows[0].message

        audit_flood(handler, "ann", code="busy", request="POST dryrun", message="ann was answered 429 (busy): …")
        clock[0] = 61.0  # the minute ended: its 39 counted replacements are said in one record
        audit_flood(handler, "bob", code="busy", request="POST dryrun", message="bob was answered 429 (busy): …")
        rows = store.list_events(action="refused", limit=100)
        said = sorted((r.user, r.details["code"], r.details.get("suppressed")) for r in rows)
        assert said == [("ann", "busy", None), ("bob", "busy", None), ("bob", "streams_replaced", None),
                        ("bob", "suppressed", 39)], said
    finally:
        store.close()
