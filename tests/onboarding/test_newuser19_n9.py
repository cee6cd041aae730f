"""New user 19, N9: ``%schedule serve app.py --port P`` with P held by a process outside the
scheduler said so ("the job waits until it is free") and then printed ``URL from this kernel:
http://127.0.0.1:P/`` — a link that answered from the other process (on a hub: another account's
server). While the port answers from something that is not the job, no URL is given.

Real parts: the embedded server (2 simulated GPUs), the magics through the real client, a real
listening socket held by the test.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import USERS, api, module_server
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import EmbeddedServer

APP = "import os, time\ntime.sleep(300)\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu19n9", USERS)


def _listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def test_newuser19_n9_no_url_is_given_while_another_process_answers_on_the_port(
        server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app.py").write_text(APP)
    monkeypatch.chdir(tmp_path)
    magics = _magics(server)
    with _listening() as other:
        port = other.getsockname()[1]
        job_id = magics.schedule(f"serve app.py --port {port} --gpus 0 --name svc-busy")
        said = capsys.readouterr().out
        api(server, "tok-ann").delete(f"jobs/{job_id}")
    assert "is bound on this host by a process outside the scheduler" in said, said  # the server's note
    assert f"http://127.0.0.1:{port}/" not in said and "proxy/" not in said, said
    assert f"No URL yet: port {port} answers now from a process outside the scheduler, not your app; " \
           f"%schedule status {job_id} says when the job has the port and is ready there." in said, said

    free = _free_port()  # the usual answer where nothing holds the port
    job_id = magics.schedule(f"serve app.py --port {free} --gpus 0 --name svc-free")
    said = capsys.readouterr().out
    api(server, "tok-ann").delete(f"jobs/{job_id}")
    assert f"URL from this kernel: http://127.0.0.1:{free}/" in said and "No URL yet" not in said, said
