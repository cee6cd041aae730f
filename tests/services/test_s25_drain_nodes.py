"""hubadmin24 (s25 drain): an admin cordons, drains and uncordons a node — ``POST nodes/{node}/cordon``
and ``/uncordon`` through the services, on a real store (SQLite and PostgreSQL) and real job processes.

Before: there was no such act (README "Maintenance" told a workaround: mark each GPU unhealthy in the
inventory file). Now a cordon is admins' only (others 403, audited ``refused``), audited itself
(``node_cordoned`` / ``node_uncordoned``), stored (it outlives a restart), shown on the inventory with
its sentence, and the engine places nothing new on the node; a drain's deadline stops the work still
there, which is requeued.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import AuthorizationError, NotFoundError, ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SubmitJobRequest, parse
from jupyter_sched.services.models.nodes import CordonNodeRequest, UncordonNodeRequest
from tests.services.restarts import Restarts, restarting


@pytest.fixture
def server(db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Restarts]:
    yield from restarting(Restarts(db_url, tmp_path, caplog))


def _audit(services: Services, action: str) -> list[tuple[str, str]]:
    boss = services.caller("boss", admin=True)
    return [(e.actor, e.message) for e in services.audit.list(boss, GetAuditRequest(action=action)).root]


def test_s25_drain_a_cordon_is_admins_only_audited_and_outlives_a_restart(server: Restarts) -> None:
    services, _ = server.start_with({}, "cordon")
    node = services.ctx.inventory().nodes[0].name
    judy, boss = services.caller("judy", admin=False), services.caller("boss", admin=True)

    with pytest.raises(AuthorizationError) as refused:
        services.nodes.cordon(judy, node, CordonNodeRequest(reason="mine now"))
    assert refused.value.field == "node" and "cordoning a node needs admin rights" in refused.value.message
    assert [actor for actor, _ in _audit(services, "refused")] == ["judy"]
    assert services.store.node_cordons() == {}

    plan = services.nodes.cordon(boss, node, CordonNodeRequest(reason="PSU swap", dry_run=True))
    assert plan.dry_run and plan.cordoned and plan.cordon is not None and services.store.node_cordons() == {}
    assert plan.text.startswith(f"node {node} would be cordoned for maintenance: PSU swap, by boss at ")

    done = services.nodes.cordon(boss, node, CordonNodeRequest(reason="PSU swap"))
    assert done.changed and not done.dry_run and done.cordon is not None and done.cordon.evict_at is None
    assert done.text.startswith(f"node {node} is cordoned for maintenance: PSU swap, by boss at ")
    said = _audit(services, "node_cordoned")
    assert len(said) == 1 and said[0][0] == "boss" and f"node {node} is cordoned for maintenance: PSU swap" in said[0][1]

    services, _ = server.start_with({}, "cordon")  # a restart: the cordon is in the store
    shown = next(n for n in services.system.inventory(services.caller("ann", admin=False)).nodes if n.name == node)
    assert shown.unschedulable and shown.cordon is not None
    assert (shown.cordon.reason, shown.cordon.by) == ("PSU swap", "boss")
    assert shown.cordon.text.startswith(f"node {node} is cordoned for maintenance: PSU swap, by boss at ")

    boss = services.caller("boss", admin=True)
    lifted = services.nodes.uncordon(boss, node, UncordonNodeRequest())
    assert lifted.changed and not lifted.cordoned and lifted.previous is not None and lifted.previous.reason == "PSU swap"
    assert [actor for actor, _ in _audit(services, "node_uncordoned")] == ["boss"]
    again = services.nodes.uncordon(boss, node, UncordonNodeRequest())
    assert not again.changed and again.text == f"node {node} was not cordoned: nothing changed."
    assert len(_audit(services, "node_uncordoned")) == 1  # nothing changed, nothing audited

    services, _ = server.start_with({}, "cordon")
    assert services.store.node_cordons() == {}
    assert not services.ctx.inventory().nodes[0].unschedulable


@pytest.mark.parametrize(("body", "field", "said"), [
    pytest.param({"reason": "   "}, "reason", "reason is blank", id="a blank reason"),
    pytest.param({"reason": "swap\u200b"}, "reason", "invisible character", id="an invisible character in the reason"),
    pytest.param({}, "reason", "reason", id="no reason"),
    pytest.param({"reason": "x", "evict_after_s": -5}, "evict_after_s", "evict_after_s", id="a negative deadline"),
    pytest.param({"reason": "x", "evict_after_s": "2h"}, "evict_after_s", "evict_after_s", id="a deadline as text"),
    pytest.param({"reason": "x", "nodes": "n1"}, "nodes", "nodes", id="an unknown field"),
])
def test_s25_drain_bad_input_is_a_400_naming_the_field(services: Services, body: dict[str, object], field: str,
                                                        said: str) -> None:
    boss = services.caller("boss", admin=True)
    with pytest.raises(ValidationError) as bad:
        services.nodes.cordon(boss, "vm", parse(CordonNodeRequest, body))
    assert bad.value.field == field and said in bad.value.message, bad.value.to_json()
    assert services.store.node_cordons() == {}


def test_s25_drain_an_unknown_node_is_a_404_naming_the_nearest(services: Services) -> None:
    boss = services.caller("boss", admin=True)
    with pytest.raises(NotFoundError) as missing:
        services.nodes.cordon(boss, "vn", CordonNodeRequest(reason="typo"))
    assert missing.value.field == "node" and "no node 'vn' in the inventory — did you mean vm?" in missing.value.message
    with pytest.raises(NotFoundError):
        services.nodes.uncordon(boss, "vn", UncordonNodeRequest())


def _state(services: Services, job_id: str) -> str:
    return str(services.jobs.get(services.caller("ann", admin=False), job_id).state)


def _tick_until(services: Services, what: str, done: object) -> None:
    deadline = time.monotonic() + 30
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        services.engine.tick()
        time.sleep(0.05)


def test_s25_drain_nothing_new_starts_and_the_drained_work_is_stopped_after_the_deadline_then_requeued(
        services: Services) -> None:
    ann, boss = services.caller("ann", admin=False), services.caller("boss", admin=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    running = services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=sleeper, name="long", time_limit="1h"))
    _tick_until(services, "the job to run", lambda: _state(services, running.id) == "running")

    plan = services.nodes.cordon(boss, "vm", CordonNodeRequest(reason="PSU swap", evict_after_s=600, dry_run=True))
    assert [(w.id, w.user, w.gpus) for w in plan.work] == [(running.id, "ann", 1.0)]
    assert plan.work[0].fate == "stopped at 12:10 UTC (grace 1m), then requeued", plan.work[0].fate
    services.nodes.cordon(boss, "vm", CordonNodeRequest(reason="PSU swap", evict_after_s=600))

    waiting = services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=["true"], name="new"))
    services.engine.tick()
    services.engine.tick()
    job = services.jobs.get(ann, waiting.id)
    assert job.state == "pending" and job.reason is not None and job.reason.code == "NodeCordoned", job.reason
    # a one-node service: no "other nodes" (newuser27 n5)
    assert job.reason.text.summary == ("needs 1 Simulated GPU 80GB; node vm is cordoned for "
                                       "maintenance: PSU swap, by boss at Nov 29 12:00 UTC; work still on it is stopped "
                                       "at Nov 29 12:10 UTC (requeued).")
    assert _state(services, running.id) == "running"  # before the deadline it runs on

    services.clock.advance(601)  # type: ignore[attr-defined]
    services.cordons.invalidate()
    _tick_until(services, "the drained job to be requeued", lambda: _state(services, running.id) == "pending")
    requeued = services.jobs.get(ann, running.id)
    assert requeued.reason is not None and requeued.reason.code in ("Preempted", "NodeCordoned"), requeued.reason
    preempts = [e for e in services.audit.list(boss, GetAuditRequest(action="preempt")).root if e.job_id == running.id]
    assert len(preempts) == 1 and "node vm is drained for maintenance by boss (PSU swap)" in preempts[0].message
    # hubadmin26 B2: the requeue's row said the verb twice ("preempted: preempted: node vm is drained …")
    (again,) = [e for e in services.audit.list(boss, GetAuditRequest(action="requeued")).root if e.job_id == running.id]
    assert again.message == "preempted: node vm is drained for maintenance by boss (PSU swap)", again.message
    services.engine.tick()
    assert _state(services, running.id) == "pending"  # requeued, it is not placed on the node again
    for job_id in (running.id, waiting.id):
        services.jobs.cancel(ann, job_id)
