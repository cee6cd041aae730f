"""Verify 21, V8: with ``c.SchedApp.priority_grants = {"users": {"root": ["high"]}}`` and team ml's
policy allowing only ``normal``, GET me offered ``ml: [high, normal]`` (and the panel's list, and the
403 hint for ``--priority low`` said "use high or normal"); ``submit --team ml --priority high`` was
accepted and waited for ever (the core's gate holds a class the team's policy does not list).

Now the classes a user may use in a team are the grants bounded by a stored team policy (``normal``
and its list): GET me, the hints and the panel (which reads GET me) offer only those, and a submit
of a class the team does not allow is refused at once (403, field ``priority``, the team's list).
Teams without a stored policy keep the grants (the core holds nothing there).

Real parts: a SQLite store, the local executor, the services' admission step; 2 simulated GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    policy = AdmissionPolicy.from_settings({"user_teams": {"ana": ["ml", "vision", "open"]},
                                            "priority_grants": {"users": {"ana": ["high"]}}})
    svc = Services(store=Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now), inventory=SimulatedInventory(2),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock, policy=policy)
    svc.quotas.set(svc.caller("root", admin=True), SetQuotasRequest.model_validate({"teams": [
        {"team": "ml", "allowed_priorities": ["normal"]},
        {"team": "vision", "allowed_priorities": ["high", "normal", "low"]}]}))
    yield svc
    svc.store.close()


def test_verify21_v8_get_me_offers_per_team_the_grants_the_team_allows(services: Services) -> None:
    me = services.accounting.me(services.caller("ana", admin=False)).model_dump(mode="json")
    assert me["priorities"]["ml"] == ["normal"]  # was ["high", "normal"]: high never starts in ml
    assert me["priorities"]["vision"] == ["high", "normal", "low"]
    assert me["priorities"]["open"] == ["high", "normal", "low"]  # no stored policy: the grants decide


def test_verify21_v8_a_class_the_team_does_not_allow_is_refused_at_submit(services: Services) -> None:
    ana = services.caller("ana", admin=False)
    with pytest.raises(AuthorizationError) as refused:  # was: accepted, pending "Priority" for ever
        services.jobs.submit(ana, SubmitJobRequest(team="ml", priority="high", gpus=1, time_limit="10m",
                                                   command=["true"]))
    err = refused.value
    assert err.field == "priority"
    assert err.message == "team 'ml' may not use priority 'high' (allowed: normal)"
    # ana's teams vision and open take it (newuser22 N12: the refusal names them)
    assert err.hint == ("use normal, or submit with team (--team vision) or team (--team open), which allow 'high', "
                        "or ask an admin to allow 'high' for team 'ml'")
    with pytest.raises(AuthorizationError) as low:  # its hint offered "high or normal"
        services.jobs.submit(ana, SubmitJobRequest(team="ml", priority="low", gpus=1, time_limit="10m",
                                                   command=["true"]))
    assert "(allowed: normal)" in low.value.message and low.value.hint.startswith("use normal, or ")
    # the team that allows it still takes it
    job = services.jobs.submit(ana, SubmitJobRequest(team="vision", priority="high", gpus=1, time_limit="10m",
                                                     command=["true"]))
    assert job.model_dump(mode="json")["priority"] == "high"
