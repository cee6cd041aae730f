"""The request log of polled answers (issue 17): a successful answer builds no debug log record
that no handler would show, but still records its Prometheus request-duration sample; errors and
refusals are logged as before, and with debug logging on every answer is logged again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

QUEUE_HANDLER = "jupyter_sched.extension.handlers.QueueHandler"


class Seen(logging.Filter):
    """A logger filter: every record the logger builds passes it (kept, never dropped)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return True


@pytest.fixture
def server_log(jp_serverapp: Any, monkeypatch: Any) -> Callable[[int], Seen]:
    """``server_log(level)``: from now on the server's logger has one handler, of ``level``, and a
    filter that sees every record it builds (called in the test body: pytest attaches its own
    capturing handlers when the test starts, after fixtures are set up)."""

    def only(level: int) -> Seen:
        log = jp_serverapp.log
        seen = Seen()
        monkeypatch.setattr(log, "handlers", [logging.NullHandler(level)])
        monkeypatch.setattr(log, "propagate", False)
        monkeypatch.setattr(log, "filters", [seen])
        monkeypatch.setattr(log, "level", logging.DEBUG)  # as traitlets sets it, whatever --log-level says
        log.manager._clear_cache()
        return seen

    return only


def _count(status: str) -> float:
    return REGISTRY.get_sample_value("http_request_duration_seconds_count",
                                     {"method": "GET", "handler": QUEUE_HANDLER, "status_code": status}) or 0.0


def _about_queue(seen: Seen) -> list[logging.LogRecord]:
    return [r for r in seen.records if "api/sched/queue" in r.getMessage()]


async def test_a_successful_poll_builds_no_hidden_record_but_is_still_counted(sched_app: Any, api: Any,
                                                                            server_log: Any) -> None:
    seen = server_log(logging.WARNING)
    before = _count("200")
    status, _ = await api("GET", "queue")
    assert status == 200
    assert _about_queue(seen) == [], "no debug record built when no handler shows debug"
    assert _count("200") == before + 1, "the request-duration sample is still recorded"


async def test_a_refused_poll_is_still_logged(sched_app: Any, api: Any, server_log: Any) -> None:
    seen = server_log(logging.WARNING)
    before = _count("400")
    status, _ = await api("GET", "queue", params={"state": "running"})
    assert status == 400
    logged = [r for r in _about_queue(seen) if r.levelno == logging.WARNING]  # the request log's line
    assert len(logged) == 1 and logged[0].getMessage().startswith("400 GET")
    assert _count("400") == before + 1


async def test_with_debug_logging_on_every_poll_is_logged(sched_app: Any, api: Any, server_log: Any) -> None:
    seen = server_log(logging.DEBUG)
    status, _ = await api("GET", "queue")
    assert status == 200
    logged = _about_queue(seen)
    assert [r.levelno for r in logged] == [logging.DEBUG] and "200 GET" in logged[0].getMessage()
