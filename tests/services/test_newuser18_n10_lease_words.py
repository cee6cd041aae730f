"""New user 18, N10 through the service: a lease request waiting behind another user's lease is
told what it waits for and when idle reclaim can end it — the same words in REST (``reason.text``,
what the panel shows), ``%gpu`` and the CLI's ``queue`` (both render the wire reason with
:func:`~jupyter_sched.wording.render_reason`), on a server that reclaims idle leases after 2 h and
on one that reclaims none. Real parts: SQLite store, the engine and its idle step, the local executor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.reclaim import IdlePolicies, IdlePolicy
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording import render_reason
from tests.runtime.builders import T0


@pytest.mark.parametrize(("policies", "want"), [
    pytest.param(IdlePolicies(default=IdlePolicy(window_s=7200.0)),
                 "ETA unknown: it can start only after bob's kernel lease {lease} is released or "
                 "reclaimed after 2h00m idle (a kernel's GPUs have no time limit)", id="idle leases released after 2 h"),
    pytest.param(None, "ETA unknown: it can start only after bob's kernel lease {lease} is released "
                       "(a kernel's GPUs have no time limit, and this server does not reclaim idle leases)", id="no idle reclaim"),
])
def test_newuser18_n10_rest_and_the_cli_say_the_lease_waits_idle_horizon(tmp_path: Path, policies: IdlePolicies | None,
                                                                   want: str) -> None:
    """Failed before: 'or reclaimed when idle' on both servers, never after how long. Since session 25 (new user 25,
    N8) REST words a job's reason for its owner as the CLI does: another user's lease, named by whose it is,
    "is released" (no "by its owner": the reader cannot release it)."""
    clock = ManualClock(T0)
    services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                        inventory=SimulatedInventory(2, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                        clock=clock, idle_policies=policies)
    bob, ann = services.caller("bob", admin=False), services.caller("ann", admin=False)
    held = services.leases.request(bob, SubmitJobRequest(gpus=2, kernel_id="k-bob"))
    services.engine.tick()
    waiting = services.leases.request(ann, SubmitJobRequest(gpus=1, kernel_id="k-ann"))
    for _ in range(2):
        services.engine.tick()
    wire = services.jobs.get(ann, waiting.id).model_dump(mode="json")
    assert wire["state"] == "pending", wire
    rest = wire["reason"]["text"]["eta"]
    assert rest == want.format(lease=held.id), rest
    again = render_reason(wire["reason"], now=clock.now(), relative=True, kind="lease",
                          mine=wire.get("mine") is True).eta  # as cli/commands.py's queue renders it
    # the same words: REST reads the reason as its owner's whenever it is theirs, as the CLI does
    assert again == rest, again
    services.store.close()
