"""New user 30, n8: at a restart, a lease whose kernel was gone is released by the server — its audit row read
``cancel by root (job l-…, user root): released by the server: its kernel was gone …`` (actor: the lease's
owner) beside ``lease_released by server``. The server's own act is audited as the server's."""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest


def test_newuser30_n8_a_lease_released_by_the_server_is_audited_as_the_server(services: Services) -> None:
    root = services.caller("root", admin=True)
    lease = services.leases.request(root, SubmitJobRequest(gpus=1, kernel_id="k-gone"))
    services.engine.tick()
    released = services.leases.release_kernel("k-gone", reason="its kernel was gone when the server started")
    assert [r.id for r in released] == [lease.id]
    rows = [e for e in services.store.list_events(job_id=lease.id) if e.action not in ("submit", "admit")]
    actors = {e.action: e.actor for e in rows}
    assert actors.get("lease_released") == "server", [(e.action, e.actor) for e in rows]
    ended = [e for e in rows if e.action != "lease_released"]
    assert ended and all(e.actor == "server" for e in ended), [(e.action, e.actor, e.message) for e in rows]
    assert any("released by the server: its kernel was gone when the server started" in (e.message or "") for e in ended), \
        [(e.action, e.message) for e in rows]
    # the owner still reads it as the server's act, not "released by you"
    seen = services.jobs.get(root, lease.id)
    assert "released by the server" in str(seen.to_wire()), seen.to_wire()
