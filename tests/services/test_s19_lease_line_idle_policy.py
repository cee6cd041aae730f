"""Session 19 (s19-left's leftover): a running lease's own line — the CLI's ``jobs``/``queue``, the
``%schedule`` queue table, ``%gpu``'s queue frame, all :func:`~jupyter_sched.wording.jobs.ends_by` —
said "held until released (%gpu release) or reclaimed when idle" whatever the server's idle policy,
also on a server that reclaims nothing. Each lease holding GPUs now carries ``idle_release`` (what
its own idle policy does to it: release after window + grace, notify, off; the same policy N10's
lease ETA reads), and the line says it.

Real parts: SQLite store, the engine, the local executor, the REST models (``jobs.get``,
``jobs.list``, ``jobs.queue``) and the shared renderer the CLI and the magics call.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.reclaim import IdlePolicies, IdlePolicy, ReclaimMode
from jupyter_sched.services import Services
from jupyter_sched.services.models import ListJobsRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.jobs import ends_by
from tests.runtime.builders import T0

OWN = "a kernel's GPUs: held until released (%gpu release){}, no time limit{}"
OTHERS = "a kernel's GPUs: held until its owner releases them{}, no time limit{}"


@pytest.mark.parametrize(("policies", "idle", "own", "others"), [
    pytest.param(IdlePolicies(default=IdlePolicy(window_s=3600.0, grace_s=600.0)),
                 # red39 R8: the busy-kernel bound (IdlePolicy's own default: 4 h + the grace, notify) is said too
                 {"action": "release", "after_s": 4200.0, "busy_after_s": 15000.0, "busy_action": "notify"},
                 OWN.format(" or reclaimed after 1h10m idle (kept while its kernel is busy; 4h10m with idle GPUs is "
                            "reported, not reclaimed)", ""),
                 OTHERS.format(" or they are reclaimed after 1h10m idle", ""), id="released after 1h10m idle"),
    pytest.param(IdlePolicies(default=IdlePolicy(window_s=3600.0, lease_mode=ReclaimMode.NOTIFY)),
                 {"action": "notify"},
                 OWN.format("", "; this server reports idle leases, it does not reclaim them"),
                 OTHERS.format("", "; this server reports idle leases, it does not reclaim them"), id="notify only"),
    pytest.param(None, {"action": "off"},
                 OWN.format("", "; this server does not reclaim idle leases"),
                 OTHERS.format("", "; this server does not reclaim idle leases"), id="idle reclaim off"),
])
def test_s19_lease_line_says_the_idle_policy_of_this_server(tmp_path: Path, policies: IdlePolicies | None,
                                                            idle: dict[str, object], own: str, others: str) -> None:
    """Failed before: every case said "or reclaimed when idle" (and the wire had no idle_release)."""
    clock = ManualClock(T0)
    services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                        inventory=SimulatedInventory(2, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                        clock=clock, idle_policies=policies)
    bob, ann = services.caller("bob", admin=False), services.caller("ann", admin=False)
    held = services.leases.request(bob, SubmitJobRequest(gpus=1, kernel_id="k-bob"))
    services.engine.tick()
    now = clock.now()
    got = services.jobs.get(bob, held.id).model_dump(mode="json", exclude_none=True)
    assert got["state"] == "running", got
    assert got["idle_release"] == idle
    listed = services.jobs.list(bob, ListJobsRequest()).model_dump(mode="json", exclude_none=True)
    rows = [row for row in listed["jobs"] if row["id"] == held.id]  # GET leases / jobs: the CLI's jobs, %gpu
    assert len(rows) == 1 and rows[0]["idle_release"] == idle, rows
    assert ends_by(got, now, cancel="jupyter-sched cancel") == own  # the CLI's jobs line
    for viewer, want in ((bob, own), (ann, others)):  # the queue: %schedule's table and the CLI's queue
        queue = services.jobs.queue(viewer).model_dump(mode="json", exclude_none=True)
        entry = next(e for e in queue if e["id"] == held.id)
        assert entry["idle_release"] == idle, entry
        assert ends_by(entry, now, cancel="%schedule cancel") == want
    services.store.close()


def test_s19_lease_line_without_the_field_keeps_the_old_words() -> None:
    """A row from an older server (or an event's engine row) has no idle_release: the line says
    what it always did, not that reclaim is off."""
    row = {"kind": "lease", "state": "running", "id": "l-1", "kernel_id": "k-1", "name": "kernel lease"}
    assert ends_by(row, T0) == OWN.format(" or reclaimed when idle", "")
    loose = {"kind": "lease", "state": "running", "id": "l-2"}
    assert ends_by(loose, T0, cancel="jupyter-sched cancel") == (
        "GPUs held for no kernel: `jupyter-sched cancel l-2` releases them (or idle reclaim), no time limit")
