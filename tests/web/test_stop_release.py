"""New-user 4 finding 19: stopping the server printed a traceback — jupyter_server shuts its
kernels down after its extensions, and releasing a kernel's lease went to the extension's request
threads, already shut down ("cannot schedule new futures after shutdown"); the lease stayed held
until the server started again. Once stopped, the extension releases on the loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.store import Store, sqlite_url


async def test_newuser4_finding_19_a_kernel_shut_down_after_the_extension_stopped_releases_its_lease(
        sched_app: Any, api: Any, kernel: Any, tmp_path: Path) -> None:
    kid_stopping = await kernel()
    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": kid_stopping}, params={"wait_ms": "5000"})
    assert status == 201 and lease["state"] in ("admitted", "running"), lease
    await sched_app.stop_extension()  # the server stops: its extensions first ...
    await sched_app._release_kernel(kid_stopping, "shutdown")  # ... then its kernels (no exception)
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    try:
        record = store.get_job(lease["id"])
    finally:
        store.close()
    assert record is not None and record.job.state.value == "cancelled", record
