"""newuser27 N8, the rest.

(b) The owner's line kept saying "60 % done, reported 22:27 UTC (1m10s ago) · projected end …, from its progress
report of 22:27:38 UTC" while the job's reports went to a server that had stopped. Past the run's stale bound (3 of
its report intervals, at least 2 minutes: the bound past which the ETAs no longer read the report) the line says
"no progress report since 22:27:38 UTC (3m10s)" — status, queue, jobs, the magics (wording.reported) and the panel.

(a) A job's own in-job client (``jupyter_sched.client.connect()``, not only ``report_progress``) finds the store's
current server when the address it was given stops answering: the host registry names this account's schedulers,
one that holds the job (``GET jobs/{id}`` answers) is taken, the same code path as report_progress's.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_sched.wording.jobs import job_line
from jupyter_sched.wording.reported import progress_text

AT = "2026-12-05T22:27:38Z"


def _job(**progress: Any) -> dict[str, Any]:
    return {"id": "j-big", "name": "big-prog", "kind": "training", "state": "running", "mine": True,
            "started_at": "2026-12-05T22:20:00Z", "time_limit_s": 1800,
            "allocation": {"node": "vm", "gpu_uuids": ["GPU-0"], "gpu_milli": 1000},
            "progress": {"fraction": 0.6, "done": 240, "total": 400, "at": AT, "run_started_at": "2026-12-05T22:20:00Z",
                         "ran_s": 458.0, "reports": 45, **progress}}


def test_newuser27_n8_the_owners_line_says_when_reports_stopped() -> None:
    fresh = datetime(2026, 12, 5, 22, 28, 48, tzinfo=timezone.utc)  # 70 s: within 2 min, as reported
    assert progress_text(_job(), fresh) == "60 % done, reported 22:27 UTC (1m10s ago)"
    later = datetime(2026, 12, 5, 22, 30, 48, tzinfo=timezone.utc)  # 190 s: past the bound
    assert progress_text(_job(), later) == "60 % done, no progress report since 22:27:38 UTC (3m10s)"
    assert "no progress report since 22:27:38 UTC (3m10s)" in job_line(_job(), later)  # status JOB
    # a job reporting every 5 minutes is not stale at 10 minutes (3 intervals: 15 min)
    slow = _job(ran_s=1800.0, reports=6)
    assert progress_text(slow, datetime(2026, 12, 5, 22, 37, 38, tzinfo=timezone.utc)).endswith("(10m ago)")
    # the server's own text (no clock) is unchanged
    assert progress_text(_job(), None) == "60 % done, reported Dec 5 22:27 UTC"


class _Server:
    """A tiny HTTP server answering ``GET api/sched/jobs/{id}`` for the ids it holds (404 otherwise), recording
    the Authorization headers it was sent."""

    def __init__(self, holds: set[str]) -> None:
        import http.server
        import threading

        from tests.onboarding.fake_hub import send_json

        seen: list[str] = []
        self.seen = seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("Authorization", ""))
                job_id = self.path.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
                found = self.path.startswith("/api/sched/jobs/") and job_id in holds
                send_json(self, 200 if found else 404, {"id": job_id, "state": "running", "name": "big-prog"} if found
                          else {"error": {"code": "not_found", "message": f"no job {job_id}"}})

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_newuser27_n8_a_jobs_connect_client_follows_the_store(monkeypatch: Any, capsys: Any) -> None:
    import os
    import socket

    from jupyter_sched.client import connect, discovery
    from jupyter_sched.extension import host_schedulers
    from jupyter_sched.extension.host_schedulers import HostScheduler

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    other_store, new, someone_elses = _Server(set()), _Server({"j-n8"}), _Server({"j-n8"})
    try:
        tokens = {other_store.url: "tok-other", new.url: "tok-new", someone_elses.url: "tok-elses"}
        mine = {other_store.url, new.url}  # this account's runtime files: not the other account's server
        monkeypatch.setattr(discovery, "_runtime_server",
                            lambda url, _dir: (url, tokens[url]) if url in mine else None)

        def entry(url: str, uid: int) -> HostScheduler:
            return HostScheduler(user="me", uid=uid, pid=4242, url=url, gpus=1, simulated=True, kind="jupyter lab")

        monkeypatch.setattr(host_schedulers, "others", lambda **_: [
            entry(gone, os.getuid()), entry(other_store.url, os.getuid()), entry(someone_elses.url, os.getuid() + 1),
            entry(new.url, os.getuid())])
        monkeypatch.setenv("JUPYTER_SCHED_JOB_ID", "j-n8")
        monkeypatch.setenv("JUPYTER_SCHED_URL", gone)
        monkeypatch.delenv("JUPYTER_SCHED_TOKEN", raising=False)
        monkeypatch.delenv("JUPYTER_SCHED_HUB_URL", raising=False)
        client = connect()
        assert client.connection.url == gone and client.connection.source == "kernel-env"
        job = client.job("j-n8")  # the job's own client, its first request after the server stopped
        assert job["id"] == "j-n8" and client.connection.url == new.url, client.connection
        assert other_store.seen == ["token tok-other"], other_store.seen  # refused (404: not its store), next
        assert new.seen == ["token tok-new", "token tok-new"], new.seen  # the check, then the request itself
        assert someone_elses.seen == [], "never another account's server"
        said = capsys.readouterr().err
        assert said.count("stopped answering") == 1 and f"this client now speaks to {new.url}" in said, said
        client.job("j-n8")
        assert len(new.seen) == 3 and "stopped answering" not in capsys.readouterr().err
    finally:
        for server in (other_store, new, someone_elses):
            server.close()
