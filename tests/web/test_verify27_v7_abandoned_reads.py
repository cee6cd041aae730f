"""verify27 V7 (/work/coord/notes/verify27.md): after the clients of four ``telemetry/history`` calls gave up
(ReadTimeout), the service kept computing them for minutes. A bulk read now stops between its chunks once its
client hangs up: the handler sets the request's flag (``on_connection_close``), the service call runs
``abandoned.watched`` by it, and the store's long readers (the usage-row decode, the telemetry rollups) call
``abandoned.check`` every ``CHECK_EVERY_ROWS`` rows. Real jupyter_server; the store part on SQLite."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched import abandoned
from jupyter_sched.store import Store, StoreTx, schema, sqlite_url
from jupyter_sched.store.codec import ts
from tests.runtime.builders import T0

from .conftest import API, EVE_TOKEN, wait_for


async def test_verify27_v7_a_bulk_read_whose_client_hangs_up_stops(sched_app: Any, api: Any, http_server_port: Any,
                                                                   jp_base_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    started, seen = threading.Event(), {"checks": 0, "stopped": False}

    def long_usage(caller: Any, request: Any) -> Any:  # a read of many chunks, checking between them
        started.set()
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                abandoned.check()
                seen["checks"] += 1
                time.sleep(0.02)
        except abandoned.AbandonedError:
            seen["stopped"] = True
            raise
        return {"rows": []}

    status, _ = await api("GET", "me", token=EVE_TOKEN)  # the server answers
    assert status == 200
    monkeypatch.setattr(sched_app.services.accounting, "usage", long_usage)
    port = http_server_port[1]
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {jp_base_url}{API}/usage HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 f"Authorization: token {EVE_TOKEN}\r\n\r\n".encode())
    await writer.drain()

    async def running() -> bool:
        return started.is_set()

    await wait_for(running, timeout_s=20)
    writer.close()

    async def stopped() -> bool:
        return bool(seen["stopped"])

    await wait_for(stopped, timeout_s=10)  # was: on to its end, 30 s later
    assert seen["checks"] >= 1


def test_verify27_v7_the_store_stops_reading_the_rows_of_an_abandoned_read(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(sqlite_url(tmp_path / "s.sqlite"))
    with store.transaction() as tx:
        tx.conn.execute(schema.usage.insert(), [
            {"job_id": f"j-{i}", "attempt": 1, "user": "mal", "team": "t", "kind": "batch", "gpu_uuid": "GPU-0",
             "gpu_model": "A100", "share": 1.0, "started_at": ts(T0 + timedelta(seconds=i)),
             "ended_at": ts(T0 + timedelta(seconds=i + 0.3))} for i in range(10_000)])
    flag, decoded, armed = threading.Event(), [], []
    decode = StoreTx._usage_decoded_row

    def counted(self: StoreTx, row: Any) -> Any:
        decoded.append(1)
        if armed and len(decoded) == 3000:
            flag.set()  # the client hangs up while the rows are read
        return decode(self, row)

    monkeypatch.setattr(StoreTx, "_usage_decoded_row", counted)
    assert len(store.usage_rows(since=T0)) == 10_000  # no request, no flag: read whole
    assert len(abandoned.watched(threading.Event(), store.usage_rows, since=T0)) == 10_000
    decoded.clear()
    armed.append(True)
    with pytest.raises(abandoned.AbandonedError) as stopped:
        abandoned.watched(flag, store.usage_rows, since=T0)
    assert len(decoded) == 2 * abandoned.CHECK_EVERY_ROWS  # stopped at the next check, 6,000 rows before the end
    assert stopped.value.code == "abandoned" and stopped.value.audited  # nobody was refused: never audited
    calls: list[int] = []
    with pytest.raises(abandoned.AbandonedError):  # hung up while it waited for a thread: not started
        abandoned.watched(flag, lambda: calls.append(1))
    assert calls == []
    store.close()
