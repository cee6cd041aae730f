"""A stand-in for a JupyterHub user server that refuses the caller's token: what another user's
server answers (hub/forward.py's JSON for JupyterHub's 403, "request refused"). A JupyterHub with two
accounts is tests/hub's harness, minutes to start; the CLI's wording of this answer needs only the answer."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["refusing_hub", "send_json"]


def send_json(handler: http.server.BaseHTTPRequestHandler, status: int, payload: Any) -> None:
    """Answer ``handler``'s request with ``status`` and ``payload`` as JSON (the stand-ins' one answer shape)."""
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class _Refuse(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        send_json(self, 403, {"error": {"code": "forbidden", "message": "request refused", "field": None, "hint": None}})

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def refusing_hub() -> Iterator[str]:
    """A local HTTP server answering every GET with 403 ``request refused``; yields its base URL
    (``http://127.0.0.1:PORT``) and is shut down on leaving."""
    hub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{hub.server_address[1]}"
    finally:
        hub.shutdown()
        hub.server_close()
