"""hubadmin25 B13: ``JUPYTER_SCHED_HUB_URL`` with ``JUPYTER_SCHED_TOKEN`` (README's "From any other shell")
works for the Python client and the admin notebook as for the CLI — one resolution (discover) for all —
and a connection says which server it is and how it was found (with no variable set, the admin notebook
ran on another Jupyter server of the same account and said only "admin: True")."""

from __future__ import annotations

import pytest

from jupyter_sched.client.discovery import Connection, discover

HUB = "http://127.0.0.1:9/services/jupyter-sched/"


@pytest.mark.parametrize(("env", "want_token"), [
    pytest.param({"JUPYTER_SCHED_HUB_URL": HUB, "JUPYTER_SCHED_TOKEN": "sched-tok"}, "sched-tok",
                 id="JUPYTER_SCHED_TOKEN with the hub URL, as the CLI reads it"),
    pytest.param({"JUPYTER_SCHED_HUB_URL": HUB, "JUPYTER_SCHED_TOKEN": "sched-tok", "JUPYTERHUB_API_TOKEN": "hub-tok"},
                 "sched-tok", id="JUPYTER_SCHED_TOKEN before JUPYTERHUB_API_TOKEN"),
    pytest.param({"JUPYTER_SCHED_HUB_URL": HUB, "JUPYTERHUB_API_TOKEN": "hub-tok"}, "hub-tok",
                 id="JUPYTERHUB_API_TOKEN alone, as before"),
])
def test_hubadmin25_b13_the_hub_url_takes_the_token_the_cli_takes(env: dict[str, str], want_token: str) -> None:
    found = discover(env=env, runtime_dir="/nonexistent")
    assert (found.url, found.token, found.source) == (HUB, want_token, "hub-service")


def test_hubadmin25_b13_the_client_reads_them_and_says_which_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTER_SCHED_KERNEL_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", HUB)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "sched-tok")
    found = discover()  # connect() then swaps the token for one scoped to the scheduler (verify25 V7, verify26 V3)
    assert found.token == "sched-tok"
    assert found.described == f"{HUB} — a JupyterHub's scheduler, from JUPYTER_SCHED_HUB_URL"


def test_hubadmin25_b13_a_runtime_file_server_is_said_as_such() -> None:
    found = Connection(url="http://127.0.0.1:8888/", token="t", source="runtime-file", root="/root")
    assert found.described == ("http://127.0.0.1:8888/ — a Jupyter server of this account found through its runtime "
                               "file (root /root) — for a hub's scheduler set JUPYTER_SCHED_HUB_URL and "
                               "JUPYTER_SCHED_TOKEN")
