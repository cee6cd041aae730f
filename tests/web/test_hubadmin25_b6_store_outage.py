"""hubadmin25 B6: a PostgreSQL restart is said once, reminded once a minute and its end is said; the
engine resumes within 5 s; every surface prints the reference a 5xx answer's hint asks for.

The session's real PostgreSQL (tests/pg.py), stopped with ``pg_ctl -m fast stop`` and started
again, under a real Jupyter server with jupyter_sched (its engine, activity report and requests).
Before: ~500 log lines a second of chained tracebacks and request-header dumps, no "back" line, a
reconnect backoff up to 60 s, and a CLI line ending "give an admin the reference:" with no reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.backoff import DATABASE_BACKOFF
from jupyter_sched.cli.main import error_line, failure
from jupyter_sched.client import error_from_response
from jupyter_sched.magics.core import _one_line
from jupyter_sched.store.outage import StoreOutage
from tests.pg import PostgresServer

from .conftest import BOSS_TOKEN, server_config


@pytest.fixture
def jp_server_config(tmp_path: Path, pg_server: PostgresServer) -> dict[str, Any]:
    return server_config(tmp_path, db_url=pg_server.create_database("b6"))


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_hubadmin25_b6_a_postgresql_restart_is_said_once_and_its_end_too(
        sched_app: Any, api: Any, pg_server: PostgresServer, caplog: pytest.LogCaptureFixture) -> None:
    status, _ = await api("GET", "me", token=BOSS_TOKEN)
    assert status == 200
    store = sched_app.services.store
    clock = FakeMonotonic()
    store.outage = StoreOutage(store.outage.target, monotonic=clock)  # the minute between reminders, driven
    caplog.set_level(logging.DEBUG)
    caplog.clear()
    pg_server.halt()
    try:
        answers = [await api("GET", "me", token=BOSS_TOKEN) for _ in range(4)]
        await asyncio.sleep(1.5)  # the engine's ticks and the activity report fail meanwhile
        clock.now += 61
        answers.append(await api("GET", "audit", token=BOSS_TOKEN))
    finally:
        pg_server.resume()
    assert [status for status, _ in answers] == [503] * 5, answers
    back = None
    for _ in range(50):  # the next request that reaches the database says it is back
        status, _ = await api("GET", "me", token=BOSS_TOKEN)
        if status == 200 and (back := [r for r in caplog.records if "answers again after" in r.getMessage()]):
            break
        await asyncio.sleep(0.2)
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    down = [r for r in loud if "does not answer (since" in r.getMessage()]
    assert len(down) == 1 and "connection" in down[0].getMessage().lower(), [r.getMessage() for r in down]
    reminders = [r for r in loud if "still does not answer after 61 s" in r.getMessage()]
    assert len(reminders) == 1 and "failed reads and writes" in reminders[0].getMessage()
    assert not [r for r in loud if r.exc_info], [r.getMessage() for r in loud if r.exc_info]  # no traceback above DEBUG
    assert not [r for r in loud if r.getMessage().lstrip().startswith("{")], "no request-header dump"
    references = [body["error"]["reference"] for _, body in answers]
    for reference in references:  # each 503 is one line, with the reference the user is asked to give
        lines = [r for r in caplog.records if f"[reference {reference}]" in r.getMessage()]
        assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    # at the outage's level (session 42: an INFO line never reached the server's log, whose package level is WARNING)
    assert back and back[0].levelno == logging.WARNING
    assert len(loud) == len(down) + len(reminders) + len(references) + len(back), [r.getMessage() for r in loud]

    # every surface prints the reference: the CLI's line and --json, the magics, the client's hint
    error = error_from_response(503, json.dumps(answers[0][1]))
    assert error.hint and error.hint.endswith(f"(reference {references[0]})")
    line = error_line("status", error)
    assert f"the server log has the cause (reference {references[0]}) [store_error]" in line
    assert json.loads(failure(argparse.Namespace(json=True), line, error))["error"]["details"] == {
        "reference": references[0]}
    assert f"(reference {references[0]})" in _one_line(error)


def test_hubadmin25_b6_the_engine_tries_the_database_at_least_every_5_seconds() -> None:
    # a 5-minute maintenance: the engine's backoff stays at 5 s (it was 1, 2, 4 … 60 s)
    assert max(DATABASE_BACKOFF.ceiling(attempt) for attempt in range(1, 200)) == 5.0
