"""newuser26 n11 (session 27): an ordinary restart (SIGTERM to ``jupyter lab``) logged a running job's in-flight
progress report at ERROR with a header dump — ``[E … ServerApp] { "Host": …, "Accept": … }`` then ``[E …] 503 POST
/api/sched/jobs/j-…/progress`` — after the product's own calm line ("the server is stopping (shutdown): …"). A
planned stop made admins' ``grep '\\[E '`` light up. The refusal is now its one INFO line, nothing at ERROR.

Real parts: the server extension in jupyter_server (``jp_fetch``), its request log (``log_request``).
"""

from __future__ import annotations

import logging
from typing import Any

from .conftest import API, IVAN_TOKEN


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_newuser26_n11_a_stopping_servers_503_is_one_info_line_not_an_error_with_headers(
        sched_app: Any, jp_fetch: Any, jp_serverapp: Any) -> None:
    seen = _Records()
    loggers = {jp_serverapp.log, logging.getLogger("tornado.access"), logging.getLogger()}
    for logger in loggers:
        logger.addHandler(seen)
    try:
        await sched_app.stop_extension()  # the server stops: its extensions first, HTTP still answering
        reply = await jp_fetch(*API.split("/"), "jobs", "j-none", "progress", method="POST",
                               body='{"done": 1, "total": 10}', raise_error=False,
                               headers={"Authorization": f"token {IVAN_TOKEN}"})
        assert reply.code == 503, reply.body
    finally:
        for logger in loggers:
            logger.removeHandler(seen)
    said = [(r.levelname, r.getMessage()) for r in seen.records]
    errors = [s for s in said if s[0] in ("ERROR", "CRITICAL")]
    assert errors == [], said  # before: the headers' JSON and "503 POST …/progress" at ERROR
    assert any(level == "INFO" and "the server is stopping (shutdown)" in text for level, text in said), said
