"""verify26 V8: a squat of the service's port that a user server refused was never audited.

While ``jupyter-sched serve`` is down another account may take its port; the user server's forwarder refuses to
send anything there (red team 25 R5, verify26 V5) and said so only in its OWN log, which no admin reads. Now the
forwarder keeps what it refused (holder uid, address, first/last time, how many) and, once a request reaches the
real service again, reports it (``POST api/sched/squat-refused`` with its own token); the service writes one
``squat_refused`` audit record per holder, naming the holder's account, with the reporter as actor and user (a
report is the reporter's word: :mod:`jupyter_sched.hub.squat_log`). Bounded: one report a minute per reporter
(429, audited), at most 4 holders a report, a malformed one 400 naming the field.

Real parts: a real second account listening on the port (as verify26's squat3.py), the real forwarder
(``ForwardingService``), then ``jupyter-sched serve`` on that port asking the hub double about tokens, its store.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.hub.forward import ForwardingService
from jupyter_sched.hub.listener import ListenerRefused
from tests.accounts import Account, account_python, os_accounts, shared_dir, skip_reason
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service, _free_port
from tests.hub.test_verify23_v5_pipelined_share import _hub

_LISTENER = textwrap.dedent("""
    import socket, sys
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1]))); server.listen(16); print("listening", flush=True)
    while True:
        conn, _ = server.accept(); conn.close()
""")


def _squat(folder: Path, port: int, mal: Account) -> subprocess.Popen[str]:
    script = folder / "listener.py"
    script.write_text(_LISTENER)
    script.chmod(0o644)
    proc = subprocess.Popen([str(account_python()), str(script), str(port)], stdout=subprocess.PIPE, text=True,
                            user=mal.uid, group=mal.gid, extra_groups=[], cwd=folder)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
    return proc


def _rows(folder: Path, action: str) -> list[dict[str, Any]]:
    with sqlite3.connect(folder / "store.sqlite") as db:
        found = db.execute("SELECT actor, user, message, details FROM events WHERE action = ? ORDER BY id",
                           (action,)).fetchall()
    return [{"actor": a, "user": u, "message": m, "details": json.loads(d)} for a, u, m, d in found]


@pytest.fixture
def squatted() -> Iterator[tuple[Account, Path, int]]:
    with os_accounts(1, prefix="v26q") as (mal,), shared_dir() as folder:
        folder.chmod(0o1777)
        yield mal, folder, _free_port()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_verify26_v8_a_squat_the_forwarder_refused_is_audited_once_the_service_is_back(
        squatted: tuple[Account, Path, int]) -> None:
    mal, folder, port = squatted
    url = f"http://127.0.0.1:{port}/services/s/"

    async def run() -> tuple[Service, int, dict[str, Any]]:
        forwarder = ForwardingService(url, "token-of-alice", kernel_ids=lambda: ["k1"], poll_interval_s=3600,
                                      kernel_report_interval_s=0)
        squatter = _squat(folder, port, mal)
        refused = 0
        try:
            for _ in range(3):  # alice's server reports its kernels while mal holds the port: refused, nothing sent
                try:
                    await forwarder.report_kernels()
                except ListenerRefused:
                    refused += 1
        finally:
            squatter.send_signal(signal.SIGKILL)
            squatter.wait(timeout=10)
        service = await asyncio.to_thread(Service, folder / "svc", hub_api=api, hub_token=TOKEN, port=port)
        await forwarder.report_kernels()  # the service is back: the squats go with the next request that gets through
        for _ in range(200):
            if forwarder._squat_report is None:
                break
            await asyncio.sleep(0.05)
        # a second report at once (a hostile user flooding the route), and a malformed one
        again = await forwarder.client.post("squat-refused", json={"refusals": [
            {"holder_uid": mal.uid, "address": f"127.0.0.1:{port}", "first_at": "2026-01-01T00:00:00+00:00",
             "last_at": "2026-01-01T00:00:00+00:00", "count": 1}]})
        bad = await forwarder.client.post("squat-refused", json={"refusals": [{"holder_uid": -1}] * 5})
        await forwarder.client.aclose()
        return service, refused, {"again": (again.status_code, again.headers.get("Retry-After"), again.json()),
                                  "bad": (bad.status_code, bad.json())}

    (folder / "svc").mkdir()
    with _hub() as api:
        service, refused, answers = asyncio.run(run())
        try:
            rows = _rows(folder / "svc", "squat_refused")
            refusals = _rows(folder / "svc", "refused")
        finally:
            service.stop()
    assert refused == 3
    assert len(rows) == 1, rows  # one holder, one record
    row = rows[0]
    assert row["actor"] == row["user"] == "alice", row  # the reporter: never a name from the body
    assert (f"alice's Jupyter server says it refused to send its token to the scheduler's address 127.0.0.1:{port} "
            "3 times " in row["message"]), row["message"]
    assert (f"it says the address was held by account {mal.name} (uid {mal.uid}), not the service (the reporting "
            "server's word; the service checked that the holder is not its own account and that none of its "
            f"processes listened on port {port} of this host then (it keeps their listening times since "
            ) in row["message"], row["message"]  # red29 R6: every process's listening span is kept (s30-door)
    assert row["message"].endswith(" UTC; of the time before, it cannot tell))"), row["message"]
    details = row["details"]
    assert (details["holder_uid"], details["holder_account"], details["count"], details["reported_by"]) == (
        mal.uid, mal.name, 3, "alice"), details
    status, retry_after, error = answers["again"]  # one report a minute per reporter
    assert (status, retry_after) == (429, "60") and error["error"]["field"] == "refusals", answers
    status, error = answers["bad"]
    assert status == 400 and error["error"]["field"] == "refusals" and "1 to 4 holders" in error["error"]["message"]
    assert {r["details"]["request"] for r in refusals if r["user"] == "alice"} == {"squat report"}, refusals


def test_verify26_v8_the_forwarders_log_is_bounded_and_kept_until_it_gets_through() -> None:
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.hub.squat_log import MAX_HOLDERS, SquatLog, parse_squat_report

    log, t0 = SquatLog(), datetime(2026, 12, 5, 21, 0, tzinfo=timezone.utc)
    for i in range(1000):  # one holder refused 1000 times: one entry
        log.seen(2000, "127.0.0.1:8010", t0 + timedelta(seconds=i))
    for uid in range(2001, 2001 + MAX_HOLDERS):  # more holders than kept: the least recent goes
        log.seen(uid, "127.0.0.1:8010", t0 + timedelta(seconds=1000))
    taken = log.take()
    assert len(taken) == MAX_HOLDERS and {h.uid for h in taken} == set(range(2001, 2001 + MAX_HOLDERS))
    assert not log
    log.seen(2001, "127.0.0.1:8010", t0 + timedelta(hours=1))
    log.put_back(taken)  # the report did not get through: kept, merged with what came meanwhile
    kept = {h.uid: h for h in log.take()}
    assert kept[2001].count == 2 and kept[2001].last_at == t0 + timedelta(hours=1)
    assert kept[2001].first_at == t0 + timedelta(seconds=1000)
    wire = {"refusals": [h.to_wire() for h in kept.values()]}
    assert [h.uid for h in parse_squat_report(json.loads(json.dumps(wire)), t0 + timedelta(hours=2))] == list(kept)
    with pytest.raises(Exception, match="not in the future"):
        parse_squat_report(wire, t0)
