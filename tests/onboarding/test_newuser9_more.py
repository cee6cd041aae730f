"""New user 9's findings left after session 9 (/work/coord/notes/newuser9.md, nu9-fix.md "Left"),
each its own test, against a real embedded server (simulated GPUs), its REST API and the installed
``jupyter-sched`` command. The hub finding N1 is tests/hub/test_newuser9_leases.py (a real hub)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu9more"), users=USERS, admin_users=["boss"],
                               stop_grace_s=30, simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)
        srv.kill()


def _env(tmp_path: Path, server: EmbeddedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT),
                "JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann"})
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def test_newuser9_n7_a_node_selector_no_node_carries_is_named_with_the_labels_there(server: EmbeddedServer) -> None:
    """node_selector {"a": "b"} → 422 field "gpus", hint "resubmit asking for fewer GPUs per worker"."""
    ann = api(server, "tok-ann")
    labels = {k: v for node in ann.get("inventory").json()["nodes"] for k, v in (node.get("labels") or {}).items()}
    for selector in ({"a": "b"}, {"a": "b", "c": "d"}, {**dict(list(labels.items())[:1]), "zz": "1"}):
        answer = ann.post("jobs", json={"gpus": 1, "command": ["true"], "node_selector": selector})
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["field"] == "node_selector", error
        assert "no node carries node_selector" in error["message"] and "fewer GPUs" not in (error["hint"] or ""), error
        assert "node_selector" in error["hint"], error
    cpu_only = ann.post("jobs", json={"gpus": 0, "command": ["true"], "node_selector": {"a": "b"}})
    assert cpu_only.status_code == 422 and cpu_only.json()["error"]["field"] == "node_selector", cpu_only.text
