"""red31 R4 (high): while the hub restarted, a local account that took the hub API's loopback port was believed by
the central service — ``GET user`` answered ``admin``/``groups``/``scopes`` for any token (the squatter became a
scheduler admin: cancelled others' jobs, read their logs, set quotas that outlived the window) — and it collected the
service's own hub token and users' tokens. Every connection the service (and a user's server) makes to a loopback hub
API address is now checked once connected, before the first byte (:mod:`jupyter_sched.hub.hub_peer`): another
account's is closed unused, said once (ERROR), and the request fails as "the hub did not answer".

The squatter is a real HTTP server run as a real other OS account on a free loopback port, answering as a fake hub
and writing down every Authorization header it receives. The service is the real ``jupyter-sched serve``."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupyter_sched.hub import hub_peer
from jupyter_sched.hub.hubapi import HubAPI, HubLookupError
from jupyter_sched.hub.narrow_token import NarrowTokens
from jupyter_sched.hub.service_token import check_token_blocking
from tests import accounts
from tests.ports import free_port

from .test_red17_front_door import Service

pytestmark = pytest.mark.skipif(accounts.skip_reason() is not None, reason=accounts.skip_reason() or "")

SERVICE_TOKEN = "the-services-own-hub-token"
USER_TOKEN = "amys-scheduler-token"

FAKE_HUB = textwrap.dedent('''
    import http.server, json, sys
    ADMIN = {"kind": "user", "name": "mallory", "admin": True, "groups": ["teamA", "teamB"],
             "scopes": ["access:services!service=s", "custom:jupyter-sched:admin"], "servers": {}}
    class Hub(http.server.BaseHTTPRequestHandler):
        def _any(self):
            with open(sys.argv[2], "a") as seen:
                seen.write(self.command + " " + self.path + " " + self.headers.get("Authorization", "-") + "\\n")
            body = json.dumps({"items": [ADMIN], "_pagination": {"next": None}} if "/users?" in self.path
                              else ADMIN).encode()
            self.send_response(201 if self.command == "POST" else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = do_PUT = do_PATCH = _any
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hub)
    print("listening", flush=True)
    server.serve_forever()
''')


@pytest.fixture
def squatter() -> Iterator[tuple[accounts.Account, str, Path]]:
    """(the squatter's account, the hub API URL it holds, the file of what it received)."""
    with accounts.shared_dir() as shared, accounts.os_accounts(1) as (mallory,):
        script, seen = shared / "fakehub.py", shared / "seen.txt"
        script.write_text(FAKE_HUB)
        seen.touch()
        seen.chmod(0o666)
        port = free_port()
        python = accounts.account_python() or sys.executable
        proc = subprocess.Popen(["runuser", "-u", mallory.name, "--", python, str(script), str(port), str(seen)],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
            yield mallory, f"http://127.0.0.1:{port}/hub/api", seen
        finally:
            proc.kill()
            proc.wait(timeout=30)
            hub_peer.set_hub_uids(())


def test_red31_r4_the_service_hub_client_sends_no_token_to_a_squatter_and_believes_nothing(
        squatter: tuple[accounts.Account, str, Path], caplog: pytest.LogCaptureFixture) -> None:
    mallory, api, seen = squatter

    async def ask() -> None:
        hub = HubAPI(api, SERVICE_TOKEN, timeout_s=10)
        for _ in range(2):
            with pytest.raises(HubLookupError) as failed:
                await hub.request("GET", "users/amy")
            assert failed.value.outage, failed.value  # "the hub did not answer", never the squatter's word
        held = [r for r in caplog.records if r.levelno == logging.ERROR and f"held by uid {mallory.uid}" in r.message]
        assert len(held) == 1 and "c.HubSchedApp.hub_uids" in held[0].message, caplog.text  # said once
        # the blocking start-up check and a user's server's narrow-token mint: nothing sent either
        check = await asyncio.to_thread(check_token_blocking, api, SERVICE_TOKEN, timeout_s=10)
        assert check.accepted is None and f"held by uid {mallory.uid}" in check.why
        minted = await NarrowTokens(api, "amy", USER_TOKEN, "s").mint()
        assert isinstance(minted, str), minted

    with caplog.at_level(logging.ERROR, logger="jupyter_sched.hub.hub_peer"):
        asyncio.run(ask())
    assert seen.read_text() == ""


def test_red31_r4_jupyterhubs_own_client_is_refused_too(squatter: tuple[accounts.Account, str, Path]) -> None:
    """HubAuth's token checks (JupyterHub's aiohttp client), as the service's identity provider guards it."""
    from jupyterhub.httpclient import JupyterHubHTTPClient
    from jupyterhub.services.auth import HubAuth
    from tornado import web

    _, api, seen = squatter

    async def check() -> None:
        hub_peer.guard_hub_auth(JupyterHubHTTPClient.instance())
        auth = HubAuth(api_url=api, api_token=SERVICE_TOKEN, cache_max_age=0)
        with pytest.raises(web.HTTPError) as failed:
            await auth.user_for_token(USER_TOKEN, use_cache=False, sync=False)
        assert "Failed to connect to Hub API" in str(failed.value.log_message)
        await JupyterHubHTTPClient.instance().close()

    asyncio.run(check())
    assert seen.read_text() == ""


def test_red31_r4_the_hubs_own_account_is_believed_when_named(squatter: tuple[accounts.Account, str, Path]) -> None:
    mallory, api, seen = squatter
    hub_peer.set_hub_uids([mallory.uid])  # c.HubSchedApp.hub_uids: the hub runs as this account
    assert asyncio.run(HubAPI(api, SERVICE_TOKEN).request("GET", "users/amy"))["admin"] is True
    assert SERVICE_TOKEN in seen.read_text()


def test_red31_r4_the_real_service_makes_no_admin_of_a_squatter(
        squatter: tuple[accounts.Account, str, Path]) -> None:
    mallory, api, seen = squatter
    with accounts.shared_dir() as folder:
        service = Service(folder, hub_api=api, hub_token=SERVICE_TOKEN)
        try:
            me = httpx.get(service.base + "api/sched/me", headers={"Authorization": f"token {USER_TOKEN}"}, timeout=60)
            assert me.status_code == 503, me.text  # "could not ask the hub who you are", not mallory's admin
            assert "is_admin" not in me.text
        finally:
            service.stop()
        said = service.log.read_text()
    assert seen.read_text() == "", seen.read_text()  # neither the service's token nor the user's
    assert f"held by uid {mallory.uid}, not the hub" in said, said[-3000:]
