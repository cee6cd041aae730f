"""newuser41 N1, the hub half, kernel side: ``%gpu request`` in a kernel the server did not start, on a host the
server cannot check by pid, starts the lease's heartbeat keeper (:mod:`jupyter_sched.client.heartbeat`), and
``%gpu release`` stops it. The rule it feeds is tested in tests/services/test_newuser41_N1_hub_heartbeat.py and end to
end through a hub in tests/hub/test_newuser9_leases.py; here the magics' wiring, on tests/web's real server. The
kernel's host is made another one by its ``asking_process`` (this process is the server's own host otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from typing import Any

import pytest

import jupyter_sched.magics.parsing as parsing
from jupyter_sched.client import connect
from jupyter_sched.magics.core import SchedMagics

from .conftest import IVAN_TOKEN, running_job, wait_for


async def test_newuser41_N1_hub_gpu_request_starts_the_heartbeat_keeper_and_release_stops_it(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"
    for name in ("JUPYTER_SCHED_KERNEL_ID", "JUPYTER_SCHED_JOB_ID", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(parsing, "asking_process", lambda: {"pid": 4242, "started": 7, "host": "another-boot/pid:[1]"})
    busy = await running_job(api, gpus=4)  # the lease stays pending: nothing to apply to CUDA here
    magics = SchedMagics(None, client_factory=lambda: connect(url, IVAN_TOKEN))
    loop = asyncio.get_running_loop()

    def gpu(line: str) -> str:
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown):
            magics.gpu(line)  # type: ignore[call-arg]  # IPython's decorator types it without the line
        return shown.getvalue()

    said = await loop.run_in_executor(None, gpu, "request 1 --no-wait")
    assert "Not waiting" in said, said
    keeper = magics._keeper
    assert keeper is not None and keeper.lease_id == str(magics.lease["id"] if magics.lease else ""), keeper

    async def beating() -> bool:
        return keeper.beats >= 1 or not keeper.running  # the first goes at once

    await wait_for(beating)
    assert keeper.running and keeper.stopped is None, keeper.stopped  # needed: the server cannot see its process
    assert sched_app.services.heartbeats.last_beat(keeper.lease_id) is not None
    await loop.run_in_executor(None, gpu, "release")
    assert magics._keeper is None and keeper.stopped == "released", keeper.stopped
    await loop.run_in_executor(None, keeper.thread.join, 15)
    assert not keeper.running
    status, _ = await api("DELETE", f"jobs/{busy}")
    assert status == 200
