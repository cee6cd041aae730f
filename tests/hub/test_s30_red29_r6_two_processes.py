"""red29 R6 with two real service processes, one after the other, on one store and one port.

After a restart mal reported a squat for a window the PREVIOUS process served, and it was taken: the service knew
only its running process's start. Now each process keeps its listening span in the store (schema 26): the first
``jupyter-sched serve`` writes its span once it listens and its end on a clean stop (SIGTERM); the second, on the
same port, refuses 400 (field ``last_at``, audited as a refusal) a report of a window the first served, and takes
one of a window before any span, saying what it checked.

Real parts: ``jupyter-sched serve`` twice (a SQLite store in one folder), the hub double knowing alice's token, the
route over HTTP. Nothing timed: the test waits for rows.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from jupyter_sched.hub.squat_log import LISTEN_SKEW
from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service, _free_port
from tests.hub.test_verify23_v5_pipelined_share import _hub


def _spans(folder: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(folder / "store.sqlite") as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM service_spans ORDER BY id")]


def _rows(folder: Path, action: str) -> list[dict[str, Any]]:
    with sqlite3.connect(folder / "store.sqlite") as db:
        found = db.execute("SELECT user, message, details FROM events WHERE action = ? ORDER BY id",
                           (action,)).fetchall()
    return [{"user": u, "message": m, "details": json.loads(d)} for u, m, d in found]


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _report(service: Service, first: datetime, last: datetime) -> httpx.Response:
    return httpx.post(service.base + "api/sched/squat-refused", timeout=30,
                      headers={"Authorization": "token token-of-alice"},
                      json={"refusals": [{"holder_uid": 1022, "address": f"127.0.0.1:{service.port}",
                                          "first_at": first.isoformat(), "last_at": last.isoformat(), "count": 3}]})


def test_s30_red29_r6_the_second_process_refuses_a_report_of_the_first_ones_window() -> None:
    with shared_dir("jsched-s30d-") as shared:  # the jobs' folder must be reachable by every account (mode 755)
        _two_processes(shared / "svc", _free_port())


def _two_processes(folder: Path, port: int) -> None:
    folder.mkdir()
    with _hub() as api:
        first = Service(folder, hub_api=api, hub_token=TOKEN, port=port)
        try:
            for _ in range(600):  # its span is written once it listens (the first beat)
                if _spans(folder):
                    break
                time.sleep(0.1)
            [span] = _spans(folder)
            assert (span["port"], span["pid"], span["ended_at"]) == (port, first.process.pid, None), span
            started = _when(span["started_at"])
            while datetime.now(started.tzinfo) < started + 3 * LISTEN_SKEW:  # a span longer than the skew at both ends
                time.sleep(0.2)
        finally:
            first.stop()  # SIGTERM: a clean stop writes its end
        [span] = _spans(folder)
        assert span["ended_at"] is not None and not span["end_inferred"], span
        ended = _when(span["ended_at"])
        assert ended >= started + 3 * LISTEN_SKEW
        shutil.rmtree(folder / "jobs")  # the second process: the same store and port
        second = Service(folder, hub_api=api, hub_token=TOKEN, port=port)
        try:
            inside = _report(second, started - timedelta(seconds=30), ended)  # the first one's window
            before = _report(second, started - timedelta(seconds=60), started - timedelta(seconds=30))
        finally:
            second.stop()
    assert inside.status_code == 400, inside.text
    error = inside.json()["error"]
    assert error["field"] == "last_at", error
    assert (f"the service was listening on port {port} of this host then (its process {first.process.pid}, from "
            f"{started:%Y-%m-%d %H:%M:%S} UTC to {ended:%Y-%m-%d %H:%M:%S} UTC): nobody else held its address"
            ) in error["message"], error
    assert before.status_code == 200 and before.json() == {"recorded": 1}, before.text
    [row] = _rows(folder, "squat_refused")
    assert row["message"].endswith(
        f"none of its processes listened on port {port} of this host then (it keeps their listening times since "
        f"{started:%Y-%m-%d %H:%M:%S} UTC; of the time before, it cannot tell))"), row["message"]
    refused = [r for r in _rows(folder, "refused") if r["user"] == "alice"]
    assert [r["details"]["request"] for r in refused] == ["squat report"], refused
    spans = _spans(folder)
    assert len(spans) == 2 and spans[1]["pid"] == second.process.pid and spans[1]["ended_at"] is not None, spans
