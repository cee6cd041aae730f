"""CI of session 26's final commit: ``%schedule wait`` failed at once through a real restart of the service.

The client connected while the old service was being killed: its listener took the connection, then died, so no
live socket held the other end when the connected-socket check (verify26 V5) looked. The check said "not accepted
by a live socket" and the client raised :class:`AddressTaken` — an error no wait rides out. A connection gone before
its first byte is a connection closed before an answer: nothing sent (the squat guard holds) and
:class:`HttpUnreachable`, which a wait rides out like the refused connections around it.

Real sockets; the accepting side closes the connection between connect and the check — a moment no test can time
against the real restart, so ``socket.create_connection`` is wrapped to close it there.
"""

from __future__ import annotations

import socket

import pytest

from jupyter_sched.client import _http
from jupyter_sched.client._http import AddressTaken, ConnectionGone, HttpUnreachable, StdlibHttp
from jupyter_sched.client.sync import why_unreachable


def test_ci26_a_connection_its_listener_closed_before_the_check_is_unreachable_not_address_taken(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        real = socket.create_connection

        def connect_then_the_listener_dies(address: tuple[str, int], timeout: float | None = None) -> socket.socket:
            sock = real(address, timeout=timeout)
            accepted, _ = server.accept()
            accepted.close()  # the old service, SIGKILLed with the connection in its accept queue
            return sock

        monkeypatch.setattr(_http.socket, "create_connection", connect_then_the_listener_dies)
        http = StdlibHttp(f"http://127.0.0.1:{port}/api/sched/", {"Authorization": "token secret-token"}, 2.0)
        try:
            with pytest.raises(HttpUnreachable) as caught:
                http.request("GET", "me")
        finally:
            http.close()
    assert not isinstance(caught.value, AddressTaken)
    # raised by the check, before the request's first byte (the token least of all)
    assert isinstance(caught.value.cause, ConnectionGone), repr(caught.value.cause)
    assert "not accepted by a live socket" in str(caught.value.cause)
    assert why_unreachable(caught.value).startswith("the connection closed before anything was sent")
