"""newuser38 n12: after ``pip install`` under a running ``jupyter lab``, job lines said "jupyter_sched was reinstalled
under this running server …" (newuser31 N10), but nothing said it *before* a submit: ``jupyter-sched status`` showed
the server and its version with no line, the panel's header LIVE and 4/4 free — a newcomer saw free GPUs and a job
that does not start. Now ``GET config`` carries ``reinstalled`` (the notice), ``status`` prints it under the server
line, and the panel's header shows it (labextension/test/s38_newuser38_n12_reinstalled.test.ts).

Real parts, as tests/reliability/test_s32_newuser31_n10_reinstalled_under_running_server.py: a jupyter server
started from a copy of the package whose files are moved away while it runs (what ``pip install -e`` does to a
wheel's), the CLI and REST against it, then the real restart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.wording.reinstall import reinstalled_notice
from tests.reliability.harness import EmbeddedServer
from tests.reliability.test_s32_newuser31_n10_reinstalled_under_running_server import two_installs_server

SAID = ("jupyter_sched was reinstalled under this running server (0.1.0+g8d235e7 → 0.1.0+g4ed6989): restart jupyter "
        "lab — batch jobs are held until then, GPU leases are still granted")


def _config(server: EmbeddedServer) -> dict[str, object]:
    with server.client() as api:
        answer = api.get("config")
        answer.raise_for_status()
        config: dict[str, object] = answer.json()
        return config


def test_newuser38_n12_status_and_config_say_the_reinstall_before_any_job_waits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: no status line and no config field said it until a job was submitted."""
    wheel, server = two_installs_server(tmp_path, monkeypatch)
    try:
        assert _config(server)["reinstalled"] is None  # runs what is installed: nothing said
        rc, out, err = server.cli("status")
        assert rc == 0 and "reinstalled" not in out, (out, err)
        (wheel / "jupyter_sched").rename(wheel / "jupyter_sched-0.1.0.removed")  # pip install -e: the wheel's files go
        assert _config(server)["reinstalled"] == SAID
        rc, out, err = server.cli("status")
        lines = out.splitlines()
        assert rc == 0 and lines[0].startswith("server ") and lines[1] == " " * 11 + SAID, (out, err)
        server.restart()  # the way out it names
        assert _config(server)["reinstalled"] is None
    finally:
        server.kill()


def test_newuser38_n12_a_hub_service_names_its_admin() -> None:
    said = reinstalled_notice("0.1.0+g1", "0.1.0+g2", service=True)
    assert said == ("jupyter_sched was reinstalled under the running scheduler service (0.1.0+g1 → 0.1.0+g2): the hub "
                    "admin restarts it (jupyter-sched serve) — batch jobs are held until then, GPU leases are still "
                    "granted"), said
    assert "its job launcher gone" in reinstalled_notice("0.1.0", "0.1.0", wrapper_gone=True)
