"""New user 24, N12: ``%schedule serve`` on a port my own running service holds said, in one answer,
"port P is also the port of your service mysvc" and "No URL yet: port P answers now from a process
outside the scheduler, not your app" — the second false (mysvc is a job of the scheduler). Now the
URL line names the job holding the port: "No URL yet: mysvc (j-…) holds port P; this service starts
when it ends".

Real parts: the embedded server (simulated GPUs), the magics through the real client, a real service
job listening on its $PORT.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import USERS, api, module_server
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import EmbeddedServer

APP = ("import os, socket, time\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
       "s.bind(('127.0.0.1', int(os.environ['PORT'])))\ns.listen()\ntime.sleep(300)\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu24n12", USERS)


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def _answers(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_newuser24_n12_serve_on_my_own_services_port_names_that_service(
        server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app.py").write_text(APP)
    monkeypatch.chdir(tmp_path)
    magics = _magics(server)
    port = _free_port()
    first = magics.schedule(f"serve app.py --port {port} --gpus 0 --name mysvc")
    try:
        client = api(server, "tok-ann")
        for _ in range(600):  # until mysvc runs and listens (no timed assertion: a bounded wait)
            if client.get(f"jobs/{first}").json().get("state") == "running" and _answers(port):
                break
            time.sleep(0.1)
        assert _answers(port), client.get(f"jobs/{first}").json()
        capsys.readouterr()
        second = magics.schedule(f"serve app.py --port {port} --gpus 0 --name dupport")
        said = capsys.readouterr().out
        client.delete(f"jobs/{second}")
    finally:
        api(server, "tok-ann").delete(f"jobs/{first}")
    assert "outside the scheduler" not in said, said
    assert f"No URL yet: mysvc ({first}) holds port {port}; this service starts when it ends" in said, said
