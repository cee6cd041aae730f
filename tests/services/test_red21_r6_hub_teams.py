"""Red team 21, R6 through the services: in hub mode a membership stored by ``PUT quotas``
``user_teams`` kept a user in a team after the hub admin removed her from the hub group (she still
submitted as that team, no ``team_left``), and ``team_members_changed`` rows carried no user.

Now the hub's groups are the one source of teams in hub mode: ``PUT quotas`` refuses memberships
(``user_teams``, ``teams[i].members``) with a 400 naming the field, memberships an earlier version
stored are not read (GET quotas names them in a warning and says the hub's groups decide), and each
``team_members_changed`` row carries the user changed. The same on a real hub:
tests/hub/test_red21_r6_hub.py.

Real parts: a SQLite store, the local executor; 2 simulated GPUs. Hub mode as the central service
sets it (``services.quotas.teams_from_hub``), callers with their hub groups.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import AuthorizationError, ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(2, model="A100-80GB"), executor=LocalExecutor(tmp_path / "jobs"),
                   clock=clock)
    yield svc
    svc.store.close()


LINES = [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}, {"team": "nlp", "guaranteed": 1, "borrowing_limit": 1}]


def _put(services: Services, body: dict[str, Any]) -> dict[str, Any]:
    answer = services.quotas.set(services.caller("carol", admin=True, groups=[]), SetQuotasRequest.model_validate(body))
    return dict(answer.model_dump(mode="json"))


def _submit_as_vision(services: Services, user: str, groups: list[str]) -> str:
    caller = services.caller(user, admin=False, groups=groups)
    job = services.jobs.submit(caller, SubmitJobRequest(gpus=1, team="vision", command=["true"]))
    return str(job.model_dump(mode="json")["team"])


@pytest.mark.parametrize("body, field", [
    pytest.param({"user_teams": {"red21a": ["vision"], "red21d": "vision"}}, "user_teams", id="user_teams"),
    pytest.param({"teams": [{"team": "nlp"}, {"team": "vision", "members": ["red21d"]}]}, "teams[1].members",
                 id="a team policy's members"),
])
def test_red21_r6_hub_mode_put_quotas_refuses_memberships_naming_the_field(
        services: Services, body: dict[str, Any], field: str) -> None:
    services.quotas.teams_from_hub = True
    _put(services, {"quotas": LINES})
    with pytest.raises(ValidationError) as refused:  # was 200: a second source of teams beside the hub's groups
        _put(services, body)
    assert refused.value.field == field and "hub mode" in str(refused.value), refused.value
    assert "hub" in (refused.value.hint or "") and "groups" in (refused.value.hint or ""), refused.value.hint
    assert services.store.quota_set().user_teams == {} and all(not t.members for t in services.store.quota_set().teams)
    # an empty membership is taken (it clears what an earlier version stored)
    assert _put(services, {"user_teams": {}, "teams": [{"team": "vision", "members": []}]})["user_teams"] == {}


def test_red21_r6_hub_mode_reads_no_stored_membership_and_get_quotas_says_the_hub_decides(services: Services) -> None:
    _put(services, {"quotas": LINES, "teams": [{"team": "nlp", "members": ["red21d"]}]})
    services.quotas.set_members("carol", {"red21a": ("vision",)})  # stored before hub mode refused them
    services.quotas.teams_from_hub = True

    # red21a is no longer in hub group vision, red21d never was: neither may charge vision
    for user, groups in (("red21a", []), ("red21d", ["nlp"])):
        assert "vision" not in services.caller(user, admin=False, groups=groups).teams
        with pytest.raises(AuthorizationError) as refused:  # was 201 on vision (red21 a11)
            _submit_as_vision(services, user, groups)
        assert refused.value.field == "team", refused.value
    assert services.caller("red21d", admin=False, groups=["ml"]).teams == ("ml",)  # not nlp (teams[0].members)
    assert _submit_as_vision(services, "amy", ["vision"]) == "vision"  # the hub's group decides

    got = services.quotas.get(services.caller("carol", admin=True, groups=[])).model_dump(mode="json")
    assert got["user_teams"] == {}, got  # none is in force here
    assert got["user_teams_source"]["set_by"] == "hub" and "hub groups" in got["user_teams_source"]["text"], got
    unused = [w for w in got["warnings"] if w.startswith("user_teams:")]
    assert len(unused) == 1 and "red21a" in unused[0] and "red21d (teams[0].members)" in unused[0], got["warnings"]
    assert '"user_teams": {}' in unused[0] and "not used" in unused[0], unused


def test_red21_r6_each_team_members_changed_row_carries_the_user(services: Services) -> None:
    _put(services, {"quotas": LINES, "user_teams": {"red21a": ["vision"], "red21d": "vision"}})
    _put(services, {"user_teams": {"red21d": ["nlp", "vision"]}})
    admin = services.caller("carol", admin=True, groups=[])
    rows = sorted(services.audit.list(admin, GetAuditRequest(action="team_members_changed")).root, key=lambda r: r.id)
    assert [(r.user, r.message) for r in rows] == [  # was two rows with user None
        ("red21a", "team memberships changed by carol: added red21a (vision)"),
        ("red21d", "team memberships changed by carol: added red21d (vision)"),
        ("red21a", "team memberships changed by carol: removed red21a (vision)"),
        ("red21d", "team memberships changed by carol: changed red21d: vision → nlp, vision")]
    assert rows[-1].details == {"old": ["vision"], "new": ["nlp", "vision"],
                                "changes": ["changed red21d: vision → nlp, vision"]}, rows[-1].details
    mine = services.audit.list(admin, GetAuditRequest(action="team_members_changed", user="red21a")).root
    assert len(mine) == 2, mine  # GET audit?user= finds her joining and leaving
