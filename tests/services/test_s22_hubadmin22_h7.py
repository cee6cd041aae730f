"""hubadmin22 H7 through the services: in hub mode a quota line for a team that is no hub group
(``vison``, a typo of ``vision``) was taken without a word, and GET quotas answered
``"user_teams": {}`` — an admin could not see from the scheduler who is in which team.

Now the hub poll's user listing is kept (read-only) as the hub's groups: GET quotas' ``user_teams``
shows them with when they were read, and each line whose team no hub user is in is warned,
naming the group it may have meant; the case-twin check reads the hub's groups too.

Real parts: a SQLite store, the local executor, 2 simulated GPUs; hub mode as the central service sets
it (``teams_from_hub``, the groups handed in as the hub poll's models are).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.hub_teams import groups_of_models
from jupyter_sched.services.models import SetQuotasRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0

MODELS: dict[str, dict[str, Any]] = {"ha22a": {"groups": ["vision"]}, "ha22b": {"groups": ["nlp", "Ops"]},
                                     "ha22c": {"groups": ["ops"]}, "nogroups": {"name": "nogroups"}}


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(4, model="A100-80GB"), executor=LocalExecutor(tmp_path / "jobs"),
                   clock=clock)
    svc.quotas.teams_from_hub = True
    yield svc
    svc.store.close()


def _put(services: Services, body: dict[str, Any]) -> dict[str, Any]:
    answer = services.quotas.set(services.caller("root", admin=True, groups=[]), SetQuotasRequest.model_validate(body))
    return dict(answer.model_dump(mode="json"))


def test_s22_hubadmin22_h7_a_line_for_no_hub_group_is_warned_with_the_group_meant(services: Services) -> None:
    services.quotas.hub_groups = groups_of_models(MODELS, T0)
    lines = [{"team": "vison", "guaranteed": 1, "borrowing_limit": 0}, {"team": "nlp", "guaranteed": 1},
             {"team": "ops", "guaranteed": 1}, {"team": "zzz", "guaranteed": 0}]
    warnings = _put(services, {"quotas": lines, "dry_run": True})["warnings"]
    assert ("team vison: no hub group of that name (no hub user is in one), so the line applies to nobody — "
            "did you mean vision?") in warnings, warnings
    assert any(w.startswith("team zzz: no hub group") and "remove the line" in w for w in warnings), warnings
    assert not any(w.startswith(("team nlp:", "team ops:")) for w in warnings), warnings
    # the case-twin check reads the hub's groups (verify21 V10's check): ha22b is in Ops, the line is ops
    assert any("team Ops has no quota line but team ops has — did you mean ops?" in w and "ha22b" in w
               for w in warnings), warnings


def test_s22_hubadmin22_h7_get_quotas_shows_the_hub_groups_read_only_with_their_source(services: Services) -> None:
    before = services.quotas.get(services.caller("root", admin=True, groups=[])).model_dump(mode="json")
    assert before["user_teams"] == {} and "not read from the hub yet" in before["user_teams_source"]["text"]
    services.quotas.hub_groups = groups_of_models(MODELS, T0)
    body = services.quotas.get(services.caller("root", admin=True, groups=[])).model_dump(mode="json")
    assert body["user_teams"] == {"ha22a": ["vision"], "ha22b": ["Ops", "nlp"], "ha22c": ["ops"]}
    # a user reads only their own groups, never the hub's roster (red team 23, R1)
    mine = services.quotas.get(services.caller("ha22a", admin=False, groups=["vision"])).model_dump(mode="json")
    assert mine["user_teams"] == {"ha22a": ["vision"]}
    source = body["user_teams_source"]
    assert source["set_by"] == "hub" and "read-only here, as the hub listed them at" in source["text"]
    with pytest.raises(Exception, match="user_teams"):  # still read-only: PUT quotas sets no memberships
        _put(services, {"user_teams": {"ha22a": ["nlp"]}})
