"""newuser27 N8: a running job reported its progress to the server that started it; once another
``jupyter lab`` of the same account took the store over on another port (as the first one's log advises),
every report was dropped ("cannot reach … this report is dropped") and the queue showed a frozen "60 % done".
Now the job's client asks the host's scheduler registry for this account's other servers and sends the
report to the one that takes the job's token (a server of the job's store), said once, and keeps it."""

from __future__ import annotations

import os
import socket
import warnings
from typing import Any

import pytest

import jupyter_sched
from jupyter_sched.client import progress as client_progress
from jupyter_sched.client.sync import SchedClient
from jupyter_sched.errors import AuthenticationError
from jupyter_sched.extension import host_schedulers
from jupyter_sched.extension.host_schedulers import HostScheduler


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _entry(url: str, uid: int | None = None) -> HostScheduler:
    return HostScheduler(user="me", uid=os.getuid() if uid is None else uid, pid=4242, url=url, gpus=1,
                         simulated=True, kind="jupyter lab")


def test_newuser27_n8_a_report_goes_to_the_server_that_took_the_store_over(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = f"http://127.0.0.1:{_closed_port()}/"
    other_store, new, someone_elses = "http://127.0.0.1:18903/", "http://127.0.0.1:18902/", "http://127.0.0.1:18904/"
    monkeypatch.setattr(client_progress, "_state", {"client": None, "sent_at": None, "interval_s": 0.0,
                                                    "warned": set()})
    monkeypatch.setenv("JUPYTER_SCHED_JOB_ID", "j-n8")
    monkeypatch.setenv("JUPYTER_SCHED_URL", gone)
    monkeypatch.setenv("JUPYTER_SCHED_JOB_TOKEN", "jsjob1.j-n8.1.mac")
    monkeypatch.setattr(host_schedulers, "others", lambda **_: [
        _entry(gone), _entry(other_store), _entry(someone_elses, uid=os.getuid() + 1), _entry(new)])
    asked: list[tuple[str, str]] = []
    real = SchedClient.report_progress

    def report(self: SchedClient, job_id: str, done: float, total: float) -> Any:
        asked.append((self.connection.url, self.connection.token))
        if self.connection.url == other_store:
            raise AuthenticationError("invalid job token")
        if self.connection.url == new:
            return {"job_id": job_id, "stored": True, "min_interval_s": 0, "progress": {"done": done, "total": total}}
        return real(self, job_id, done, total)  # the gone server: unreachable

    monkeypatch.setattr(SchedClient, "report_progress", report)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        answer = jupyter_sched.report_progress(3, 10)
    assert answer is not None and answer["stored"] is True, answer
    assert [url for url, _ in asked] == [gone, other_store, new], asked  # never another account's server
    assert {token for _, token in asked} == {"jsjob1.j-n8.1.mac"}
    said = [str(w.message) for w in seen]
    assert len(said) == 1 and said[0].startswith(f"jupyter_sched.report_progress: the server at {gone} that started "
                                                 f"this job stopped answering; its reports go to {new}"), said
    asked.clear()
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert jupyter_sched.report_progress(4, 10) is not None
    assert [url for url, _ in asked] == [new] and not again, (asked, [str(w.message) for w in again])
