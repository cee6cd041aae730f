"""Red team 20, R2 through the services (red20 a36_modelline.py part b): quotas vision 1+1, nlp 2+0,
ops 1+1 and one per-user line in hub group ghost (red20a 0+1); red20d, also in ghost, got 4 of 4
GPUs (every GPU of the cluster). Now a member of a team named only by others' per-user lines is
bounded by the unlisted line (c.SchedApp.unlisted_team_borrowing_limit, 0 by default), red20a by
her own line, and GET quotas names the uncovered scopes to an admin.

Real parts: a SQLite store, the local executor, the service's own cycle; 2 simulated A100 and 2
simulated H100 on two nodes (the mixed cluster of part a).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import QuotaError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Inventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


class _Mixed:
    """Two simulated nodes: ``a`` with 2 A100, ``h`` with 2 H100."""

    def current(self) -> Inventory:
        nodes = tuple(SimulatedInventory(2, model=model, node=node).current().nodes[0]
                      for node, model in (("a", "A100"), ("h", "H100")))
        return Inventory(nodes=nodes, source="simulated")


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now), inventory=_Mixed(),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    yield svc
    svc.store.close()

LINES = [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}, {"team": "nlp", "guaranteed": 2, "borrowing_limit": 0},
         {"team": "ops", "guaranteed": 1, "borrowing_limit": 1},
         {"team": "ghost", "user": "red20a", "guaranteed": 0, "borrowing_limit": 1}]


def _quotas(services: Services, lines: list[dict[str, object]]) -> None:
    services.quotas.set(services.caller("carol", admin=True), SetQuotasRequest.model_validate({"quotas": lines}))


def test_red20_r2_a_member_of_a_team_named_only_by_a_user_line_gets_no_gpu(services: Services) -> None:
    services.store.unlisted_borrowing_limit = 0.0
    _quotas(services, LINES)
    red20d = services.caller("red20d", admin=False, groups=["ghost"])
    red20a = services.caller("red20a", admin=False, groups=["ghost", "vision"])
    with pytest.raises(QuotaError) as refused:  # was 4 of 4 running
        services.jobs.submit(red20d, SubmitJobRequest(gpus=1, team="ghost", command=["sleep", "60"]))
    assert refused.value.field == "team"
    assert refused.value.message.startswith("team ghost has only a quota line for user red20a: its other members may "
                                            "use 0 GPUs"), refused.value.message
    services.jobs.submit(red20a, SubmitJobRequest(gpus=1, team="ghost", command=["sleep", "60"]))  # her own line
    with pytest.raises(QuotaError) as capped:
        services.jobs.submit(red20a, SubmitJobRequest(gpus=2, team="ghost", command=["sleep", "60"]))
    assert "per-user limit of red20a in team ghost" in capped.value.message, capped.value.message
    me = services.accounting.me(red20d).model_dump(mode="json")
    ghost = next(t for t in me["by_team"] if t["team"] == "ghost")
    assert ghost["unlisted"] is True and "no limit" not in me["quota_text"], me


def test_red20_r2_get_quotas_warns_of_each_uncovered_scope(services: Services) -> None:
    services.store.unlisted_borrowing_limit = 0.0
    _quotas(services, [*LINES, {"team": "ml", "gpu_model": "A100", "guaranteed": 0, "borrowing_limit": 2}])
    warnings = services.quotas.get(services.caller("carol", admin=True, groups=["ml"])).warnings or []
    assert any(w.startswith("team ghost has only a quota line for user red20a: its other members may use 0 GPUs")
               for w in warnings), warnings
    assert any(w.startswith("team ml has no share of the H100 GPUs (no quota line for that model): it may use 0 GPUs there "
                            "(c.SchedApp.unlisted_team_borrowing_limit), you included") for w in warnings), warnings
    assert not any("team vision" in w or "team nlp" in w for w in warnings), warnings  # their lines cover any model
    mo = services.caller("mo", admin=False, groups=["ml"])
    with pytest.raises(QuotaError) as refused:  # and ml's work there is refused naming the model
        services.jobs.submit(mo, SubmitJobRequest(gpus=1, team="ml", model="H100", command=["sleep", "5"]))
    assert refused.value.field == "model" and "--model <one team ml has a line for: A100>" in (refused.value.hint or "")
    services.jobs.submit(mo, SubmitJobRequest(gpus=2, team="ml", command=["sleep", "5"]))  # fits its A100 line
