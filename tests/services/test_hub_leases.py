"""Through a hub, a lease must name its kernel (red-team finding 6): the central service frees a lease
when its kernel or its owner's server is gone, so a lease bound to nothing would hold its GPUs until the
idle or 4-hour rules. The real services over SQLite; ``leases_need_kernel`` is what HubSchedApp sets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobKind
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                   executor=LocalExecutor(tmp_path / "jobs"))
    yield svc
    svc.store.close()


def test_a_hub_lease_without_a_kernel_is_refused_and_audited(services: Services) -> None:
    services.admission.leases_need_kernel = True
    mallory = services.caller("mallory", admin=False, groups=["interns"])
    with pytest.raises(ValidationError) as refused:
        services.jobs.submit(mallory, SubmitJobRequest(gpus=1), kind=JobKind.LEASE)
    assert refused.value.field == "kernel_id"
    (record,) = services.store.list_events(action="refused", user="mallory")
    assert record.details == {"request": "request lease", "field": "kernel_id", "code": "validation_error",
                              "status": 400}
    lease = services.jobs.submit(mallory, SubmitJobRequest(gpus=1, kernel_id="k-1"), kind=JobKind.LEASE)
    assert lease.kernel_id == "k-1"


def test_embedded_leases_may_be_bound_to_nothing(services: Services) -> None:
    ana = services.caller("ana", admin=False)
    lease = services.jobs.submit(ana, SubmitJobRequest(gpus=1), kind=JobKind.LEASE)
    assert lease.kernel_id is None
