"""A user server whose central service goes away reconnects with backoff and says so (issue 17).

Real parts: the central service is a real jupyter_server + jupyter_sched subprocess (embedded
mode, as in ``test_forwarding.py``) that the test stops and starts again on the same port and
store; the user server is pytest-jupyter's ``jp_serverapp`` forwarding to it; the client is
:class:`~jupyter_sched.client.AsyncSchedClient`, whose event stream reconnects by itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.client import AsyncSchedClient, Connection, SchedClient
from jupyter_sched.errors import SchedError

CENTRAL_TOKEN = "central-token-reconnect"
SERVER_TOKEN = "user-server-token-reconnect"


class Central:
    """A central service subprocess that can be stopped and started again (same port, same store)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        (base / "config").mkdir()
        (base / "config" / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"jpserver_extensions": {
            "jupyterlab": False, "jupyter_lsp": False, "notebook_shim": False, "jupyter_server_terminals": False,
            "jupyter_sched": True}}}))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(self.base / "config"), "JUPYTER_DATA_DIR": str(self.base / "data"),
               "JUPYTER_RUNTIME_DIR": str(self.base / "runtime")}
        env.pop("JUPYTER_SCHED_HUB_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={CENTRAL_TOKEN}",
             "--ServerApp.open_browser=False", "--allow-root",
             f"--SchedApp.db_url=sqlite:///{self.base / 'central.sqlite'}", "--SchedApp.inventory_source=simulated",
             "--SchedApp.simulated_gpus=2", f"--SchedApp.log_dir={self.base / 'logs'}"],
            cwd=self.base, env=env, stdout=subprocess.DEVNULL, stderr=(self.base / "central.log").open("ab"))

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{self.url}api/sched/config", headers={"Authorization": f"token {CENTRAL_TOKEN}"},
                             timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process is None or self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("central server did not start:\n" + (self.base / "central.log").read_text()[-4000:])
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Central]:
    service = Central(tmp_path_factory.mktemp("central"))
    service.start()
    try:
        service.wait_ready()
        yield service
    finally:
        service.stop()


@pytest.fixture
def jp_base_url() -> str:
    return "/"


@pytest.fixture
def listening(sched_app: Any, http_server: Any) -> Any:
    """The forwarding SchedApp with the user server's HTTP port listening (pytest-jupyter's ``http_server``)."""
    return sched_app


@pytest.fixture
def jp_server_config(central: Central) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True}, "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": SERVER_TOKEN},
        "SchedApp": {"hub_service_url": central.url, "hub_service_token": CENTRAL_TOKEN},
    }


async def next_event(events: AsyncIterator[dict[str, Any]], wanted: Any, timeout_s: float = 90) -> dict[str, Any]:
    """The next event for which ``wanted(event)`` holds."""
    async def find() -> dict[str, Any]:
        async for event in events:
            if wanted(event):
                return event
        raise AssertionError("the event stream ended")
    return await asyncio.wait_for(find(), timeout_s)


def central_state(event: dict[str, Any]) -> Any:
    return event["data"].get("central", "absent") if event["type"] == "connection" else "absent"


async def test_a_gone_central_service_is_retried_with_growing_gaps_and_shown_until_it_is_back(
        listening: Any, central: Central, jp_http_port: int, jp_base_url: str) -> None:
    api = AsyncSchedClient(Connection(f"http://127.0.0.1:{jp_http_port}{jp_base_url}", SERVER_TOKEN))
    events = api.events()
    try:
        assert (await api.config())["mode"] == "embedded"  # the central's answer, forwarded
        first = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.5)  # the stream is open before the service goes
        central.stop()

        with pytest.raises(Exception) as refused:  # the first request finds it gone ...
            await api.jobs()
        error = refused.value
        assert "reconnecting to the central service (attempt 1, next in 1 s)" in str(error)
        assert error.details["reconnecting"]["attempt"] == 1  # type: ignore[attr-defined]
        assert "127.0.0.1" not in str(error)  # the address goes to the log only
        magic_client = SchedClient(Connection(f"http://127.0.0.1:{jp_http_port}{jp_base_url}", SERVER_TOKEN))
        with pytest.raises(SchedError) as said:  # what %gpu and the CLI print (the sync client)
            await asyncio.to_thread(magic_client.jobs)
        assert "reconnecting to the central service (attempt " in said.value.message
        magic_client.close()

        # ... and the panel's stream says so at every attempt, the gaps growing (1 s, 2 s, 4 s ...)
        event = await asyncio.wait_for(first, 60)
        if central_state(event) == "absent":  # the central's own last words, or a reconnect marker
            event = await next_event(events, lambda e: central_state(e) not in ("absent", None))
        attempts = [central_state(event)]
        while attempts[-1]["attempt"] < 3:
            attempts.append(central_state(await next_event(events, lambda e: central_state(e) not in ("absent", None))))
        assert [a["attempt"] for a in attempts][-2:] == [2, 3]
        assert attempts[-1]["next_in_s"] > attempts[-2]["next_in_s"] > 0.5
        assert attempts[-1]["message"].startswith("reconnecting to the central service (attempt 3, next in ")

        with pytest.raises(Exception) as still:  # meanwhile requests still fail with the loop's state
            await api.jobs()
        assert "reconnecting to the central service (attempt " in str(still.value)
        assert still.value.details["reconnecting"]["attempt"] >= 3  # type: ignore[attr-defined]

        central.start()
        await next_event(events, lambda e: central_state(e) is None)  # back: said on the same stream
        assert isinstance(await api.jobs(), list)  # forwarded again
        # the user server ended its stand-in stream; the client reconnected by itself to the real
        # one and is told it missed events (the restarted central cannot resume: another epoch)
        marker = await next_event(events, lambda e: e["type"] == "lagged")
        assert marker["data"].get("reconnected") is True or marker["data"].get("resumed") is False, marker
        job = await api.submit({"gpus": 0, "command": ["true"]})
        seen = await next_event(events, lambda e: e["type"] == "job" and e["data"].get("id") == job["id"])
        assert seen["data"]["user"]
    finally:
        await events.aclose()
        await api.aclose()
        if central.process is None or central.process.poll() is not None:
            central.start()
        central.wait_ready()
