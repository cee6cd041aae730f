"""New user 23, N12 (server side): a per-user quota line whose user is not in the line's team is
warned in PUT (and GET) quotas' ``warnings`` — the panel's quota editor saved ``User: nobody`` (a
typo) on team ml's line without a word, and ml's other members were left at 0 GPUs.

Real parts: a SQLite store, the local executor, the services (the ``services`` fixture).
"""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest


def _put(services: Services, body: dict[str, object]) -> list[str]:
    answer = services.quotas.set(services.caller("root", admin=True), SetQuotasRequest.model_validate(body))
    return list(answer.warnings or [])


def test_s23_newuser23_n12_a_line_for_a_user_not_in_its_team_is_warned_naming_the_line(services: Services) -> None:
    lines = [{"team": "ml", "guaranteed": 1, "borrowing_limit": 1},
             {"team": "ml", "user": "nobody", "guaranteed": 1, "borrowing_limit": 0},
             {"team": "ml", "user": "bo", "guaranteed": 0, "borrowing_limit": 1},
             {"team": "ml", "user": "ana", "guaranteed": 0, "borrowing_limit": 1},
             {"team": "default", "user": "zed", "guaranteed": 0, "borrowing_limit": 1}]
    said = _put(services, {"quotas": lines, "user_teams": {"ana": ["ml"], "bo": ["cv"]}, "dry_run": True})
    about = [w for w in said if w.startswith("quotas[")]
    assert about == [
        "quotas[1] (team ml, user nobody): nobody is in no team here (user_teams and teams' members name them "
        "nowhere) — a typo? The line counts only for nobody's own work in ml; give a user name as they log in, "
        "or no user for a line for the whole team",
        "quotas[2] (team ml, user bo): bo is not a member of ml (their teams: cv) — the line counts only for work bo "
        "charges to ml; add them to ml (user_teams), or give the line to one of their teams",
    ], said  # ana is in ml; zed, in no team, is in the default team
    assert services.store.quota_set().quotas == (), "a dry run stores nothing"

    # a team policy's members count as membership; the saved set's GET says the same warnings
    _put(services, {"quotas": lines, "user_teams": {"ana": ["ml"]},
                    "teams": [{"team": "ml", "members": ["bo", "nobody"]}]})
    got = services.quotas.get(services.caller("root", admin=True)).warnings or []
    assert not [w for w in got if w.startswith("quotas[")], got

