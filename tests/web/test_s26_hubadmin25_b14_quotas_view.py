"""hubadmin25 B14 (its last part): no ``jupyter-sched quotas`` — every quota, budget and policy check of the
month was GET api/sched/quotas with JSON read by hand. Now ``jupyter-sched quotas`` shows the set in force:
the lines as a table, the budgets (for an admin, where each stands), the team policies, who set it, and an
admin's warnings; ``--json`` the answer itself.

Real parts: the ``jupyter-sched`` program as a subprocess against the test server (tests/web/conftest.py:
ivan a user, boss an admin).
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_hubadmin25_b14_quotas_shows_lines_budgets_and_policies(api: Any, cli: Any) -> None:  # noqa: F811
    status, _ = await api("PUT", "quotas", {
        "quotas": [{"team": "default", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 1},
                   {"team": "default", "user": "ivan", "guaranteed": 1, "borrowing_limit": None}],
        "budgets": [{"team": "default", "gpu_hours": 40, "period": "week"}],
        "teams": [{"team": "default", "weight": 2, "allowed_priorities": ["high", "normal", "low"]}]}, token=BOSS_TOKEN)
    assert status == 200
    admin = await cli("quotas", "--token", BOSS_TOKEN)
    assert admin.code == EXIT_OK, admin.err
    lines = admin.out.splitlines()
    assert [line.split() for line in lines[:3]] == [["TEAM", "USER", "MODEL", "GUARANTEED", "LIMIT"],
                                                    ["default", "-", "*", "2", "+1"], ["default", "ivan", "*", "1", "none"]]
    budget = lines[lines.index("Budgets:") + 1]
    assert budget.startswith("  default: 0 of 40 GPU-hours this week (0%), 40 left until "), budget
    policies = lines.index("Team policies:")
    assert lines[policies + 2].split() == ["default", "2", "high,normal,low", "-", "0"], lines
    assert any(line.startswith("set by boss with PUT quotas at ") for line in lines), admin.out
    mine = await cli("quotas")  # a user: the budget as set, not another team's standing
    assert mine.code == EXIT_OK and "  default: 40 GPU-hours a week" in mine.out.splitlines(), mine.out
    raw = await cli("quotas", "--json")
    assert json.loads(raw.out)["budgets"] == [{"team": "default", "user": None, "gpu_hours": 40.0, "period": "week"}], raw.out
