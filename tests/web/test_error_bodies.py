"""Error bodies never carry driver or library text (issue 15 item 9): a failing store answers 503 with
our sentence, a hint and a reference; the server log has the database's own words under it."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import ExecutorError, StoreError, TelemetryError, ValidationError

from .conftest import BOSS_TOKEN

LIBRARY_WORDS = ("OperationalError", "sqlite", "no such table", "SELECT", "sqlalchemy", "postgresql")


async def test_a_failing_store_answers_503_without_the_database_text(sched_app: Any, api: Any, tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    status, _ = await api("GET", "audit", token=BOSS_TOKEN)
    assert status == 200
    with sqlite3.connect(tmp_path / "sched.sqlite") as db:  # the store breaks under the server, for real
        db.execute("DROP TABLE events")
    caplog.set_level(logging.ERROR)
    status, body = await api("GET", "audit", token=BOSS_TOKEN)
    assert status == 503, body
    error = body["error"]
    assert error["code"] == "store_error" and error["message"] == "the scheduler's database failed to answer"
    assert error["hint"] and len(error["reference"]) == 8
    assert not [w for w in LIBRARY_WORDS if w.lower() in str(body).lower()], body
    logged = [r.getMessage() for r in caplog.records if error["reference"] in r.getMessage()]
    assert logged and "no such table" in logged[0], "the log line under the reference has the cause"


@pytest.mark.parametrize("error", [StoreError("store failure: OperationalError: FATAL password for sched@db"),
                                   ExecutorError("(403) Forbidden: pods is forbidden: User system:serviceaccount"),
                                   TelemetryError("could not parse b'\\x00garbage'")],
                         ids=["store", "executor", "telemetry"])
def test_5xx_errors_answer_our_sentence_and_a_reference(error: Any) -> None:
    body = error.public_json("abcd1234")["error"]
    assert body["reference"] == "abcd1234" and body["code"] == error.code
    assert error.message not in str(body) and body["message"] == type(error).public_message


def test_4xx_errors_keep_their_field_message_and_hint() -> None:
    err = ValidationError("gpus must be a number", field="gpus", hint="e.g. 1")
    assert err.to_json()["error"] == {"code": "validation_error", "message": "gpus must be a number",
                                      "field": "gpus", "hint": "e.g. 1"}
