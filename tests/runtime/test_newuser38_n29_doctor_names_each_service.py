"""newuser38 n29: ``jupyter-sched doctor`` on the embedded default store, with two ``jupyter-sched serve`` services on
the host, named only the first (``note: … jupyter-sched serve of root (pid 4528, …) runs on this host``); the admin
may well mean the other. Each is named now. Real parts: the host's scheduler registry in a folder of this test, two
live processes registered in it as services (sleeps: the registry vouches for a live pid of the account)."""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.doctor import StoreChoice, _hub_service_here
from jupyter_sched.extension.host_schedulers import ENV_REGISTRY, HostScheduler, register


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "registry"
    folder.mkdir(mode=0o1777)
    monkeypatch.setenv(ENV_REGISTRY, str(folder))
    yield folder


def _service(folder: Path, port: int) -> tuple[subprocess.Popen[bytes], object]:
    proc = subprocess.Popen(["sleep", "120"])
    me = HostScheduler(user="root", uid=os.getuid(), pid=proc.pid, url=f"http://127.0.0.1:{port}/services/s/",
                       gpus=2, simulated=True, kind="jupyter-sched serve")
    return proc, register(me, folder=folder)


def test_newuser38_n29_doctor_names_every_hub_service_on_the_host(registry: Path) -> None:
    me = pwd.getpwuid(os.getuid()).pw_name
    choice = StoreChoice(url="sqlite:///x.sqlite", source="default", embedded_default=True)
    assert _hub_service_here(choice) == ""
    first, one = _service(registry, 18920)
    try:
        said = _hub_service_here(choice)
        assert f"`jupyter-sched serve` of {me} (pid {first.pid}, http://127.0.0.1:18920/services/s/) runs" in said, said
        assert "check that one with" in said, said
        second, two = _service(registry, 19910)
        try:
            said = _hub_service_here(choice)
            assert (f"2 `jupyter-sched serve` run: of {me} (pid {first.pid}, http://127.0.0.1:18920/services/s/), of "
                    f"{me} (pid {second.pid}, http://127.0.0.1:19910/services/s/), each on this host") in said, said
            assert "check the one you mean with" in said, said
        finally:
            two.withdraw()  # type: ignore[attr-defined]
            second.kill()
            second.wait()
    finally:
        one.withdraw()  # type: ignore[attr-defined]
        first.kill()
        first.wait()
