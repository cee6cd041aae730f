"""A stand-in for the hub's proxy in front of the scheduler service, for the ride-out tests.

Real parts: a real HTTP server on a real port (stdlib ``ThreadingHTTPServer`` in a thread) speaking
the proxy's wire answers (a handler class decides them: 503 while "restarting", then the service's
JSON). Used where a real JupyterHub + proxy restart cannot be timed to the second.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from jupyter_sched.client import ride_out

__all__ = ["ServiceDoubleHandler", "serve_service_double", "step_the_ride_out_clock"]


class ServiceDoubleHandler(BaseHTTPRequestHandler):
    """Base of the stand-ins' handler classes: one answer written whole (:meth:`_send`), no request log."""

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        """Answer ``status`` with ``body`` as ``kind`` (its length said)."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return


@contextmanager
def serve_service_double(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) in a thread; yield the service's hub URL
    (``http://127.0.0.1:PORT/services/jupyter-sched/``); shut it down after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/services/jupyter-sched/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def step_the_ride_out_clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The ride-out's pauses, taken on a clock of its own instead of slept: returns the pauses taken."""
    taken: list[float] = []
    monkeypatch.setattr(ride_out, "_clock", lambda: sum(taken))
    monkeypatch.setattr(ride_out, "_sleep", taken.append)
    return taken
