"""newuser36 N2: `jupyter-sched wait` gave up when its poll met the server's own 503 ``stopping`` (the second
or so of a restart in which jupyter_server has stopped our extension but still answers on its port): "the server
is stopping (shutdown): this request was not carried out … [stopping]", though admin.md promises that waits ride
a restart out. A ``stopping`` answer is now the restart it is: every waiter rides it out (the poll of
:class:`~jupyter_sched.client.ride_out.RideOut`), and a submit answered ``stopping`` — never carried out — is sent
again; a lease request whose wait met the stop is answered with the lease it made, never ``stopping`` (which a
client may take as "send it again").

Real parts: the CLI's ``main`` in a thread against a real server (pytest-jupyter, SQLite, simulated GPUs). The
server is put into its stopping state (``SchedApp.stopping``, the flag ``stop_extension`` sets first) just as the
CLI sends its request, and taken out of it at the ride-out's first pause (not slept): a real stop cannot be timed
into that second, nor come back in the same process. The lease's case shuts the request threads as the stop's
last step does, while the lease request waits.
"""

from __future__ import annotations

import asyncio
import io
import sys
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_TIMEOUT, main
from jupyter_sched.client import ride_out
from jupyter_sched.client.sync import SchedClient

from .conftest import IVAN_TOKEN, running_job, wait_for

NOTICE = "the server is stopping (shutdown) — it is likely restarting; "


async def test_newuser36_n2_wait_and_submit_ride_out_a_stopping_server_and_a_lease_it_made_is_answered(
        sched_app: Any, api: Any, kernel: Any, http_server: Any, http_server_port: Any, jp_base_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    pauses: list[float] = []

    def back(seconds: float) -> None:  # the ride-out's pause: the server is back by the next poll
        pauses.append(seconds)
        sched_app.stopping = False

    monkeypatch.setattr(ride_out, "_sleep", back)

    def stops_at(method: str) -> None:
        """The server begins to stop as the CLI sends its first ``method`` request."""
        real = getattr(SchedClient, method)

        def sent(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not pauses:
                sched_app.stopping = True
            return real(self, *args, **kwargs)

        monkeypatch.setattr(SchedClient, method, sent)

    async def cli(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = await asyncio.to_thread(main, list(argv), out=out, err=err, stdin=io.StringIO())
        return code, out.getvalue(), err.getvalue()

    job_id = await running_job(api, gpus=4, name="n2-long")
    # before: exit 3 at once, "jupyter-sched wait: the server is stopping (shutdown): this request was not carried out"
    stops_at("job")
    code, out, err = await cli("wait", job_id, "--for", "1s")
    assert code == EXIT_TIMEOUT and out.startswith("still running after 1s: "), (code, out, err)
    assert err.count(NOTICE) == 1 and f"{NOTICE}still waiting for {job_id} (for up to 10 min" in err, err
    assert "[stopping]" not in err and len(pauses) == 1, (err, pauses)  # one pause: the server was back

    # a submit answered "stopping" was not carried out: sent again, one job made (before: exit 1, nothing made)
    pauses.clear()
    stops_at("submit_keyed")
    code, out, err = await cli("submit", "--gpus", "0", "--name", "n2-again", "--", sys.executable, "-c", "pass")
    assert code == EXIT_OK and out.startswith("submitted "), (code, out, err)
    assert f"{NOTICE}the submit was not received; sending it again" in err and pauses == [1.0], (err, pauses)
    _, mine = await api("GET", "jobs")
    assert [j["name"] for j in mine if j["name"] == "n2-again"] == ["n2-again"], mine

    # a lease request waiting (wait_ms) for GPUs when the server stops: the lease is made, so it is answered (201,
    # pending) — before: 503 "stopping … not carried out" for a lease that sat in the queue
    asked = asyncio.ensure_future(api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()},
                                      params={"wait_ms": "20000"}))

    async def queued() -> bool:
        _, leases = await api("GET", "leases")
        return any(lease["state"] == "pending" for lease in leases)

    await wait_for(queued)
    sched_app.stopping = True
    sched_app.request_pool.shutdown(wait=False, cancel_futures=True)  # as stop_extension ends
    status, lease = await asyncio.wait_for(asked, 30)
    assert status == 201 and lease["state"] == "pending" and lease["id"].startswith("l-"), (status, lease)
    assert job_id  # the 4-GPU job is cancelled by the fixture's teardown
