"""Where a job reaches the scheduler (``JUPYTER_SCHED_URL``), and that a job token is never sent to the hub
(s21-hubjobs item 1; the whole flow with a real hub: tests/hub/test_red19_r5_body.py,
test_s21_hub_a_jobs_own_process_reports_progress_and_another_users_job_token_is_refused).

Pure parts: :func:`jupyter_sched.extension.job_tokens.job_url` and the central service's default
(:meth:`~jupyter_sched.hub.central.HubSchedApp.job_url_default`) over stand-in server settings; the start's
warning for pods with the real ``install_job_tokens``; the front door's oversize audit with a recording hub.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tornado import httputil

from jupyter_sched.extension.job_tokens import install_job_tokens, job_url, unreachable_from_pods
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.oversize import audit_too_large
from jupyter_sched.store import Store, sqlite_url

PREFIX = "/services/jupyter-sched/"


def _server(port: int = 10101, ip: str = "127.0.0.1", sock: str = "") -> Any:
    host = "sched-pod-7f9c" if ip in ("0.0.0.0", "") else ip
    return SimpleNamespace(port=port, base_url=PREFIX, sock=sock, connection_url=f"http://{host}:{port}{PREFIX}")


@pytest.mark.parametrize(("service_url", "server", "want"), [
    ("http://jupyter-sched.hub.svc:10101", _server(ip="0.0.0.0"), f"http://jupyter-sched.hub.svc:10101{PREFIX}"),
    ("http://127.0.0.1:10101", _server(), f"http://127.0.0.1:10101{PREFIX}"),
    ("https://sched.example.org", _server(port=443, ip="0.0.0.0"), f"https://sched.example.org{PREFIX}"),
    ("http://jupyter-sched:10101", _server(port=8010), f"http://127.0.0.1:8010{PREFIX}"),
    ("http://0.0.0.0:10101", _server(ip="0.0.0.0"), f"http://sched-pod-7f9c:10101{PREFIX}"),
    ("", _server(), f"http://127.0.0.1:10101{PREFIX}"),
    ("http://jupyter-sched:notaport", _server(), f"http://127.0.0.1:10101{PREFIX}"),
], ids=["the hub's address for the service, listening on every interface", "a loopback service",
        "https on its default port", "--port elsewhere: the server's own address",
        "a wildcard in the hub's address: the server's own", "no JUPYTERHUB_SERVICE_URL", "a port that is no number"])
def test_s21_hub_jobs_reach_the_service_where_the_hub_does(monkeypatch: pytest.MonkeyPatch, service_url: str,
                                                           server: Any, want: str) -> None:
    monkeypatch.setenv("JUPYTERHUB_SERVICE_URL", service_url)
    app = SimpleNamespace(serverapp=server, job_api_url="")
    app.job_url_default = lambda: HubSchedApp.job_url_default(app)  # type: ignore[arg-type]
    assert job_url(app) == want


def test_s21_job_api_url_wins_and_embedded_is_the_connection_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_SERVICE_URL", "http://jupyter-sched:10101")
    embedded = SimpleNamespace(serverapp=SimpleNamespace(connection_url="http://127.0.0.1:8888/lab"), job_api_url="")
    assert job_url(embedded) == "http://127.0.0.1:8888/lab/"  # no hub default outside the central service
    embedded.job_api_url = "http://10.0.0.5:8888/"
    assert job_url(embedded) == "http://10.0.0.5:8888/"


@pytest.mark.parametrize(("url", "unreachable"), [
    ("http://127.0.0.1:10101/s/", True), ("http://localhost:8888/", True), ("http://[::1]:8888/", True),
    ("http://127.3.0.1/", True), ("http://jupyter-sched.hub.svc:10101/", False), ("http://10.0.0.5:8888/", False),
    ("http://sched-pod-7f9c:8888/", False),
])
def test_s21_a_loopback_url_is_unreachable_from_pods(url: str, unreachable: bool) -> None:
    assert unreachable_from_pods(url) is unreachable


class _Executor:
    def __init__(self, name: str) -> None:
        self.name = name
        self.job_env: Any = None


@pytest.mark.parametrize(("executor", "job_api_url", "warned"), [
    ("kubernetes", "", True), ("kubernetes", "http://jupyter-sched.hub.svc:10101/", False), ("local", "", False),
], ids=["pods and a loopback address: said", "pods and job_api_url: nothing", "local jobs: nothing"])
def test_s21_the_start_says_when_pods_cannot_reach_the_service(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                               executor: str, job_api_url: str, warned: bool) -> None:
    app = SimpleNamespace(job_api_url=job_api_url, job_token_secret_file=str(tmp_path / "secret"),
                          sched_data_dir=tmp_path, serverapp=SimpleNamespace(connection_url="http://127.0.0.1:8888/"))
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    services = SimpleNamespace(executor=_Executor(executor), ctx=object(), store=store)
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.extension.job_tokens"):
        install_job_tokens(app, services)
    store.close()
    said = [r.getMessage() for r in caplog.records]
    assert bool(said) is warned, said
    if warned:
        assert "cannot reach this server at http://127.0.0.1:8888/" in said[0] and "c.SchedApp.job_api_url" in said[0]
    assert services.executor.job_env is not None


class _RecordingHub:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def user_for_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        self.asked.append(token)
        return {"kind": "user", "name": "eve"}


def test_s21_an_oversize_body_with_a_job_token_never_sends_the_token_to_the_hub() -> None:
    hub = _RecordingHub()
    serverapp = SimpleNamespace(identity_provider=SimpleNamespace(hub_auth=hub),
                                extension_manager=SimpleNamespace(extension_apps={}))
    token = "jsjob1.j-1m9.1." + "A" * 43
    headers = httputil.HTTPHeaders({"Authorization": f"token {token}"})
    asyncio.run(audit_too_large(serverapp, headers, "POST /services/s/api/sched/jobs/j-1m9/progress", None, 1024))
    assert hub.asked == []  # failed before: the job token went to the hub's token check
    asyncio.run(audit_too_large(serverapp, httputil.HTTPHeaders({"Authorization": "token a-hub-token"}),
                                "POST /services/s/api/sched/jobs", None, 1024))
    assert hub.asked == ["a-hub-token"]  # a hub token is still asked about (red team 19, R5)
