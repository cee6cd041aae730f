"""New user 17, N24: a hub user server that stops while the scheduler service is down logged "could
not release this server's leases at exit" and two full httpx tracebacks (~40 lines) — now one line
naming the service and what happens to the leases; the traceback only at debug level."""

from __future__ import annotations

import logging
import socket

import pytest

from jupyter_sched.hub.forward import ForwardingService


def test_newuser17_n24_a_server_stopping_while_the_service_is_down_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port nothing listens on: the service is down (a real refused connection)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    service = ForwardingService(f"http://127.0.0.1:{port}/services/sched/", "tok", kernel_ids=lambda: ["k-1"])
    caplog.set_level(logging.WARNING)
    service._release_at_exit()
    records = [r for r in caplog.records if "could not release" in r.getMessage()]
    assert len(records) == 1, caplog.text
    assert records[0].exc_info is None and "Traceback" not in caplog.text, caplog.text
    assert records[0].getMessage() == (
        f"jupyter_sched: could not release this server's leases at exit: the scheduler "
        f"(http://127.0.0.1:{port}/services/sched/api/sched/) refused the connection — they are released once "
        "the hub lists no server of yours")
