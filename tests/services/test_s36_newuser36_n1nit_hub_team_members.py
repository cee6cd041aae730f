"""newuser36 n1 (nit): on a hub, ``jupyter-sched quotas`` "Team policies" said ``MEMBERS 0`` for vision, whose hub
group has 3 members — on a hub a user's teams are their hub groups (a policy's ``members`` is refused unless []), so
"0" read as "an empty team". The cell now counts the team's users from the memberships GET quotas answers (the
hub's groups as the service read them, marked ``(hub group)``; embedded: ``user_teams`` and the policy's
``members``, as a caller's teams are resolved); a user, whose answer holds only their own membership, reads
``hub group``.

Real parts: the application services on a SQLite store in hub mode as the central service sets it
(``quotas.teams_from_hub``, the hub's groups as its poll read them); the CLI's ``quotas`` view reading their
answers as JSON, through a client that hands it the services' answer for each route (no HTTP hop).
"""

from __future__ import annotations

import io
import json
from typing import Any

from jupyter_sched.cli.admin_views import quotas
from jupyter_sched.cli.main import Streams
from jupyter_sched.services import Services
from jupyter_sched.services.hub_teams import groups_of_models
from jupyter_sched.services.models import SetQuotasRequest
from tests.runtime.builders import T0


class _Routes:
    """``client.call(Req)`` answered by the services for ``caller``, as the REST handlers answer (JSON)."""

    def __init__(self, services: Services, caller: Any) -> None:
        self.services, self.caller = services, caller

    def call(self, req: Any) -> Any:
        answer = {"quotas": lambda: self.services.quotas.get(self.caller),
                  "me": lambda: self.services.accounting.me(self.caller)}[req.path]()
        return json.loads(json.dumps(answer.model_dump(mode="json")))


def _view(services: Services, caller: Any) -> list[list[str]]:
    out = io.StringIO()
    assert quotas(_Routes(services, caller), _args(), Streams(out=out, err=io.StringIO(), stdin=io.StringIO())) == 0
    lines = out.getvalue().splitlines()
    at = lines.index("Team policies:")
    return [line.split(None, 4) for line in lines[at + 1:at + 4]]


def _args() -> Any:
    import argparse

    return argparse.Namespace(json=False, action=None, since=None, until=None, month=None, quarter=None)


def test_newuser36_n1nit_hub_team_policies_count_the_hub_groups_members(services: Services) -> None:
    lead = services.caller("lead36", admin=True, groups=[])
    services.quotas.set(lead, SetQuotasRequest.model_validate({
        "quotas": [{"team": "vision", "guaranteed": 3, "borrowing_limit": 1}, {"team": "nlp", "guaranteed": 1}],
        "teams": [{"team": "vision", "allowed_priorities": ["high", "normal", "low"]}, {"team": "nlp"}]}))
    services.quotas.teams_from_hub = True
    services.quotas.hub_groups = groups_of_models({"n36a": {"groups": ["vision"]}, "n36b": {"groups": ["vision"]},
                                                   "n36c": {"groups": ["vision", "nlp"]}}, T0)
    admin = _view(services, lead)
    # before: ["vision", "1", "high,normal,low", "-", "0"] and nlp "0"
    assert admin[2] == ["vision", "1", "high,normal,low", "-", "3 (hub group)"], admin
    assert admin[1] == ["nlp", "1", "normal,low", "-", "1 (hub group)"], admin
    user = _view(services, services.caller("n36b", admin=False, groups=["vision"]))
    assert user[1][-1] == "hub group" and user[2][-1] == "hub group", user  # only their own membership is theirs
    services.quotas.hub_groups = None  # not read from the hub yet
    assert _view(services, lead)[2][-1] == "hub group"
