"""New user 19, N6: ``jupyter-sched serve --port 18910`` (no hub service environment) said
"JUPYTERHUB_SERVICE_URL is not set (run as a JupyterHub service, or pass --ip and --port)" although
--port was given: the line names what is missing."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.hub.serve import main

HUB_API = {"JUPYTER_SCHED_DB_URL": "sqlite:///x.db", "JUPYTERHUB_API_URL": "http://h/hub/api",
           "JUPYTERHUB_API_TOKEN": "t"}


@pytest.mark.parametrize(("argv", "said"), [
    (["--port", "18910"], "jupyter-sched serve: --port is given but --ip is not: pass --ip as well, e.g. --ip 127.0.0.1 "
                          "(or run as a JupyterHub service, which sets JUPYTERHUB_SERVICE_URL)"),
    (["--ip", "127.0.0.1"], "jupyter-sched serve: --ip is given but --port is not: pass --port as well, e.g. --port 8010 "
                            "(or run as a JupyterHub service, which sets JUPYTERHUB_SERVICE_URL)"),
    ([], "jupyter-sched serve: JUPYTERHUB_SERVICE_URL is not set (run as a JupyterHub service, or pass --ip and --port)"),
], ids=["port without ip", "ip without port", "neither"])
def test_newuser19_n6_serve_names_the_listen_option_that_is_missing(
        monkeypatch: pytest.MonkeyPatch, argv: list[str], said: str) -> None:
    for name in ("JUPYTER_SCHED_DB_URL_FILE", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in HUB_API.items():
        monkeypatch.setenv(name, value)
    err = io.StringIO()
    assert main(argv, err=err) == 2
    assert err.getvalue().strip() == said, err.getvalue()
