"""CI of session 41: ``jupyter-sched logs -f`` ended with exit 3, "cannot reach the jupyter_sched server … the
connection was closed before an answer", when the server restarted during its first requests — the name lookup
(``job_of``), the first read of the log, the look at a job with no output yet — which were sent once, outside the
ride-out its later reads had; ``wait`` had the same gap at its name lookup. A wait rides a restart out from its
first request on: admin.md promises waits ride a restart out, and when a restart lands is nobody's choice.

Real parts: the CLI's ``main`` in a thread against a real server (pytest-jupyter, SQLite, simulated GPUs). As in
newuser36 N2's test, the server is put into its stopping state (its answer to every request while a restart takes
it down) just as the CLI sends the request under test, and taken out of it at the ride-out's first pause (not slept).
"""

from __future__ import annotations

import asyncio
import io
import sys
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, main
from jupyter_sched.client import ride_out
from jupyter_sched.client.sync import SchedClient

from .conftest import IVAN_TOKEN, wait_for

NOTICE = "the server is stopping (shutdown) — it is likely restarting; "


@pytest.mark.parametrize("stops_at", ["job_named", "logs", "job"])
async def test_s42_ci41_logs_follow_and_wait_ride_out_a_restart_at_their_first_requests(
        sched_app: Any, api: Any, http_server: Any, http_server_port: Any, jp_base_url: str,
        monkeypatch: pytest.MonkeyPatch, stops_at: str) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    pauses: list[float] = []

    def back(seconds: float) -> None:  # the ride-out's pause: the server is back by the next poll
        pauses.append(seconds)
        sched_app.stopping = False

    monkeypatch.setattr(ride_out, "_sleep", back)
    real = getattr(SchedClient, stops_at)

    def sent(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not pauses:  # the server begins to stop as the CLI sends its first request of this kind
            sched_app.stopping = True
        return real(self, *args, **kwargs)

    async def cli(*argv: str) -> tuple[int, str, str]:
        pauses.clear()
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(SchedClient, stops_at, sent)
        try:
            code = await asyncio.to_thread(main, list(argv), out=out, err=err, stdin=io.StringIO())
        finally:
            monkeypatch.setattr(SchedClient, stops_at, real)
            sched_app.stopping = False
        return code, out.getvalue(), err.getvalue()

    name = f"ci41-{stops_at}"
    status, job = await api("POST", "jobs", {"gpus": 1, "time_limit": "5m", "name": name,
                                             "command": [sys.executable, "-c", "print('said once')"]})
    assert status == 201, job

    # "job" is asked only where the log is empty: a job with no output, followed by name
    quiet_status, quiet = await api("POST", "jobs", {"gpus": 1, "time_limit": "5m", "name": f"{name}-quiet",
                                                     "command": [sys.executable, "-c", "pass"]})
    assert quiet_status == 201, quiet

    async def ended() -> bool:
        return all([(await api("GET", f"jobs/{made['id']}"))[1]["state"] == "succeeded" for made in (job, quiet)])

    await wait_for(ended)

    # before: exit 3 at once, "cannot reach the jupyter_sched server …" (a restart) / "[stopping]" (its first second)
    code, out, err = await cli("logs", "-f", name)
    assert code == EXIT_OK and out.count("said once") == 1, (code, out, err)
    assert err.count(NOTICE) == 1 and f"{NOTICE}still following {name}'s log" in err, err
    assert "[stopping]" not in err and pauses == [1.0], (err, pauses)

    code, out, err = await cli("logs", "-f", f"{name}-quiet")
    assert code == EXIT_OK and "[stopping]" not in err, (code, out, err)
    assert f"job {quiet['id']} ({name}-quiet): succeeded" in err, err
    assert err.count(NOTICE) == 1 and pauses == [1.0], (err, pauses)

    code, out, err = await cli("wait", name)
    assert code == EXIT_OK and out.startswith(f"job {job['id']} ({name}): succeeded"), (code, out, err)
    if stops_at == "logs":  # a wait reads no log
        return
    assert err.count(NOTICE) == 1 and "[stopping]" not in err and pauses == [1.0], (err, pauses)
