"""red29 (06:03, LOW): a flood of refused made-up tokens wrote two log lines per request.

Each request whose token the hub names nobody by was answered 403 and logged twice — jupyterhub's HubAuth
``No Hub user identified for request`` and Jupyter's access line ``403 GET … (@127.0.0.1)`` — 1,291 lines in 10 s,
~1 MB of service log a minute, while the front door's summary line a minute already counts them. Now each kind is
written once a minute; the next one says how many were not written one by one
(:class:`jupyter_sched.extension.request_log.Repeats`, on every handler of the server's log).

Real parts: ``jupyter-sched serve`` with the hub double (which names nobody by a made-up token), its log file;
the filter on a real logging handler with Jupyter's own access-log function.
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

import httpx

from jupyter_sched.extension.request_log import REPEATS_EVERY_S, Repeats
from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service
from tests.hub.test_verify23_v5_pipelined_share import _hub

REFUSED = 60


def test_s30_red29_a_refused_token_flood_writes_each_kind_of_line_once_a_minute() -> None:
    with shared_dir("jsched-s30d-") as shared, _hub() as api:
        folder = shared / "svc"
        folder.mkdir()
        service = Service(folder, hub_api=api, hub_token=TOKEN)
        try:
            with httpx.Client(timeout=30) as client:
                statuses = [client.get(service.base + "api/sched/me",
                                       headers={"Authorization": f"token {secrets.token_hex(16)}"}).status_code
                            for _ in range(REFUSED)]
        finally:
            service.stop()
        log = Path(service.log).read_text(errors="replace")
    assert statuses == [403] * REFUSED, statuses
    unidentified = [line for line in log.splitlines() if "No Hub user identified for request" in line]
    access = [line for line in log.splitlines() if " 403 GET /services/s/api/sched/me (@" in line]
    assert len(unidentified) == 1 and len(access) == 1, (len(unidentified), len(access))  # was 60 and 60


def test_s30_red29_repeats_says_how_many_were_not_written_once_the_minute_is_over() -> None:
    from functools import partial
    from types import SimpleNamespace

    from jupyter_server.log import log_request

    now = [1000.0]
    written: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            written.append(record.getMessage())

    handler = Collect()
    handler.addFilter(Repeats(lambda: now[0]))
    logger = logging.getLogger("s30d-repeats")
    logger.addHandler(handler)
    logger.propagate = False
    request = SimpleNamespace(method="GET", remote_ip="127.0.0.1", uri="/services/s/api/sched/me",
                              headers={}, request_time=lambda: 0.002)

    def refused(user: object = None, status: int = 403) -> None:  # Jupyter's own access line of a refused request
        stub = SimpleNamespace(get_status=lambda: status, request=request, log=logger, settings={},
                               current_user=user)  # user: a hub user model (its name in the line) or None
        partial(log_request, record_prometheus_metrics=False)(stub)

    try:
        for _ in range(50):
            refused()
            logger.warning("No Hub user identified for request")
            now[0] += 1.0
        refused(status=404)  # another answer of nobody: its own kind, once a minute (red39 R7)
        refused(status=404)
        refused(user={"name": "amy"}, status=404)  # a named user's answers: every one written
        refused(user={"name": "amy"}, status=404)
        assert [line.split(" (")[0] for line in written] == ["403 GET /services/s/api/sched/me",
                                                             "No Hub user identified for request",
                                                             "404 GET /services/s/api/sched/me",
                                                             "404 GET /services/s/api/sched/me",
                                                             "404 GET /services/s/api/sched/me"], written
        assert "(@" not in written[-1] + written[-2] and "(@" in written[-3], written
        now[0] += REPEATS_EVERY_S
        refused()
        logger.warning("No Hub user identified for request")
        assert written[-2].startswith("403 GET /services/s/api/sched/me (@127.0.0.1) ") and written[-2].endswith(
            "(and 49 more requests refused 403 with a token or cookie the hub names nobody by in the 110 s before, "
            "not written one by one)"), written[-2]
        assert written[-1] == ("No Hub user identified for request (and 49 more in the 110 s before, not written "
                               "one by one)"), written[-1]
    finally:
        logger.removeHandler(handler)
