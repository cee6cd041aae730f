"""Hubadmin24 B13: while the hub was down every poll logged a 17-line traceback ("could not list the
hub's users for offboarding; will retry" with exc_info), ~1,000 lines an hour at the default poll, plus
per-user lines each tick. Now the hub client says an outage once (one WARNING naming the hub URL, the
reason and since when) and once when the hub answers again; the pollers' own lines for an unanswered
request go to debug, and no WARNING carries a traceback. Real HTTP: a closed loopback port, then the
hub double on it.
"""

from __future__ import annotations

import asyncio

import pytest
from tornado.httpserver import HTTPServer

from jupyter_sched.hub.hubapi import HubAPI, HubLookupError, active_users, user_servers
from tests.hub.hub_double import TOKEN, hub_app
from tests.hub.serve_start import _free_port


def test_s24_hubadmin24_b13_a_hub_outage_is_one_line_then_one_back_line_and_no_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    port = _free_port()
    hub = HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN, timeout_s=5)

    async def polls() -> None:
        for _ in range(3):  # three polls while it is down
            with pytest.raises(HubLookupError) as caught:
                await active_users(hub)
            assert caught.value.outage
            assert await user_servers(hub, "ha24b") is None
        server = HTTPServer(hub_app({"ha24b": {"": True}}))
        server.listen(port, "127.0.0.1")
        try:
            assert "ha24b" in await active_users(hub)
            assert "ha24b" in await active_users(hub)
        finally:
            server.stop()

    with caplog.at_level("DEBUG", logger="jupyter_sched"):
        asyncio.run(polls())
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    said = [r.getMessage() for r in warnings]
    assert len(said) == 2, said
    assert said[0].startswith(f"jupyter_sched: the hub at http://127.0.0.1:{port}/hub/api/ does not answer (") \
        and "since" in said[0] and "retried at each poll" in said[0], said
    assert said[1].startswith(f"jupyter_sched: the hub at http://127.0.0.1:{port}/hub/api/ answers again"), said
    assert all(r.exc_info is None for r in warnings)
    assert any("could not ask the hub about ha24b" in r.getMessage() for r in caplog.records
               if r.levelname == "DEBUG")  # the per-user line is still there, at debug
