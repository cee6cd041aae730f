"""verify27 V2: the SDK's httpx paths had no connected-socket check. While the service was down another
account listened on its port: ``jupyter-sched status`` refused it (verify26 V2), but ``connect_async()``'s
client and ``SchedClient.events()`` sent the user's scheduler token to it and showed its ``{}`` as an answer.
Every client transport now checks the connection before its first byte (:func:`jupyter_sched.client._http.
connected_check`): another account's socket is :class:`AddressTaken`, nothing sent.

Real OS accounts (the squatter runs as one), real sockets.
"""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from jupyter_sched.client import AsyncSchedClient, SchedClient
from jupyter_sched.client._http import AddressTaken
from jupyter_sched.client.discovery import Connection
from tests.accounts import os_accounts, shared_dir, skip_reason

from .hub_harness import _free_port
from .test_verify26_v5_connected_check import _received, squat

TOKEN = "amys-token-v27v2"

@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_verify27_v2_the_async_client_and_the_event_stream_refuse_a_port_another_account_holds() -> None:
    port = _free_port()
    connection = Connection(url=f"http://127.0.0.1:{port}/services/jupyter-sched/", token=TOKEN)
    with os_accounts(1, prefix="v27s") as (mal,), shared_dir() as folder:
        folder.chmod(0o1777)
        out = folder / "squat.txt"
        squatter = squat(folder, port, out, mal.uid, mal.gid)
        try:
            async def me() -> object:
                async with AsyncSchedClient(connection, timeout_s=5) as client:
                    return await client.me()

            with pytest.raises(AddressTaken) as async_said:
                asyncio.run(me())
            with pytest.raises(AddressTaken) as stream_said:
                next(iter(SchedClient(connection, timeout_s=5).events(reconnect=False)))
            for _ in range(100):  # the squatter writes down each connection once it closed (two)
                if out.exists() and len(out.read_text().splitlines()) >= 2:
                    break
                time.sleep(0.05)
        finally:
            squatter.send_signal(signal.SIGKILL)
            squatter.wait(timeout=10)
        for said in (async_said.value, stream_said.value):
            assert f"is held by uid {mal.uid}, not the service: not sending your request nor its token" in \
                said.message, said.message
        got = _received(out)
        assert got and all(data == b"" for data in got), [d[:120] for d in got]  # connected, then not one byte
