"""Red team 42 ("held up so far", nit c): GET leases/{another user's} was seen answering 404 "no lease … visible to
you" while POST leases/{same}/heartbeat and GET jobs/{another's} answered 403 "another user's lease/job". The
project's rule (:meth:`~jupyter_sched.services.context.Context.visible`): another user's live work, which the shared
queue lists, is a 403 naming it as another user's; an ended one is a 404 (not shown); every refusal audited. Every
route reading one lease goes through it — pinned here for the three, live and ended (red42's probe script read
``l-x`` by default, an id no lease has: a 404 by the same rule).

Real parts: the services over a real SQLite store, a lease granted by the engine (simulated GPUs, no kernel).
"""

from __future__ import annotations

import pytest

from jupyter_sched.errors import AuthorizationError, NotFoundError, SchedError
from jupyter_sched.model import JobKind
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest


def _refused(call: object) -> tuple[type[SchedError], str]:
    assert callable(call)
    with pytest.raises(SchedError) as raised:
        call()
    return type(raised.value), raised.value.field or ""


def test_red42_c_another_users_lease_is_refused_alike_on_every_route(services: Services) -> None:
    ann, eve = services.caller("ann", admin=False), services.caller("eve", admin=False)
    lease = services.leases.request(ann, SubmitJobRequest(gpus=1, kernel_id="k-ann"))
    services.engine.tick()
    assert services.jobs.get(ann, lease.id, kind=JobKind.LEASE).state == "running"
    routes = {"GET leases/{id}": lambda: services.jobs.get(eve, lease.id, kind=JobKind.LEASE),
              "GET jobs/{id}": lambda: services.jobs.get(eve, lease.id),
              "POST leases/{id}/heartbeat": lambda: services.heartbeats.beat(eve, lease.id)}
    live = {route: _refused(call) for route, call in routes.items()}
    assert live == {"GET leases/{id}": (AuthorizationError, "lease_id"), "GET jobs/{id}": (AuthorizationError, "job_id"),
                    "POST leases/{id}/heartbeat": (AuthorizationError, "lease_id")}, live
    services.jobs.cancel(ann, lease.id, kind=JobKind.LEASE)
    ended = {route: _refused(call)[0] for route, call in routes.items()}
    assert set(ended.values()) == {NotFoundError}, ended
    gone = _refused(lambda: services.jobs.get(eve, "l-x", kind=JobKind.LEASE))
    assert gone == (NotFoundError, "lease_id")
