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
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from jupyter_sched.client import AsyncSchedClient, SchedClient
from jupyter_sched.client._http import AddressTaken
from jupyter_sched.client.discovery import Connection
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason

from .hub_harness import _free_port

TOKEN = "amys-token-v27v2"

_LISTENER = textwrap.dedent("""
    import socket, sys
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1]))); server.listen(16); print("listening", flush=True)
    while True:
        conn, _ = server.accept(); conn.settimeout(1)
        try:
            data = conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 2\\r\\n"
                         b"Connection: close\\r\\n\\r\\n{}")
        except OSError:
            data = b""
        conn.close()
        open(sys.argv[2], "a").write(data.hex() + "\\n")
""")


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_verify27_v2_the_async_client_and_the_event_stream_refuse_a_port_another_account_holds() -> None:
    port = _free_port()
    connection = Connection(url=f"http://127.0.0.1:{port}/services/jupyter-sched/", token=TOKEN)
    with os_accounts(1, prefix="v27s") as (mal,), shared_dir() as folder:
        folder.chmod(0o1777)
        out, script = folder / "squat.txt", folder / "listener.py"
        script.write_text(_LISTENER)
        script.chmod(0o644)
        squatter = subprocess.Popen([str(account_python()), str(script), str(port), str(out)], stdout=subprocess.PIPE,
                                    text=True, user=mal.uid, group=mal.gid, extra_groups=[], cwd=folder)
        try:
            assert squatter.stdout is not None and squatter.stdout.readline().strip() == "listening"

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
        got = [bytes.fromhex(line) for line in Path(out).read_text().splitlines()] if out.exists() else []
        assert got and all(data == b"" for data in got), [d[:120] for d in got]  # connected, then not one byte
