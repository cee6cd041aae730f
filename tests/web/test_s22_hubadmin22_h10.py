"""hubadmin22 H10: no CLI for usage or audit (REST only, found by reading openapi.yaml), and the usage
report's ``cost`` had no unit. Now ``jupyter-sched usage [--by user|team] [--since] [--csv]`` and
``jupyter-sched audit [--action] [--user] [--limit]`` over the existing routes — the server decides who
sees what (admins: everyone's usage and the audit; others: their own usage, the audit refused) — and
``usage`` names cost's unit; the CSV keeps the REST answer's columns.

Real parts: the ``jupyter-sched`` program as a subprocess against a real Jupyter server with the
scheduler extension (tests/web/conftest.py: ivan a user, boss an admin).
"""

from __future__ import annotations

import sys
from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_s22_hubadmin22_h10_usage_and_audit_from_a_terminal_with_cost_unit(cli: Any) -> None:  # noqa: F811
    run = await cli("submit", "--gpus", "1", "--name", "h10", "--", sys.executable, "-c", "print('h10')")
    assert run.code == EXIT_OK, run.err
    job_id = run.out.split()[1].rstrip(":")
    assert (await cli("wait", job_id)).code == EXIT_OK

    mine = await cli("usage")
    assert mine.code == EXIT_OK, mine.err
    # no gpu_prices on this server: the cost's unit is said as none (s23-acct: the rows' cost_unit)
    assert "ivan's usage" in mine.out and "COST: none, no prices are set" in mine.out, mine.out
    by_team = await cli("usage", "--by", "team", "--csv")
    assert by_team.code == EXIT_OK, by_team.err
    header = by_team.out.splitlines()[0]
    assert header.startswith("team,") and "allocated_gpu_seconds,allocated_gpu_hours,utilized_gpu_seconds" in header
    assert ",cost,cost_unit," in header, header  # the unit beside the cost (s23-acct)

    refused = await cli("audit", "--limit", "5")  # ivan is no admin: the server's 403, in words
    assert refused.code != EXIT_OK and "admin" in (refused.err + refused.out).lower(), refused

    everyone = await cli("usage", "--token", BOSS_TOKEN)
    assert everyone.code == EXIT_OK and "everyone's usage" in everyone.out and "ivan" in everyone.out, everyone
    audit = await cli("audit", "--user", "ivan", "--limit", "20", "--token", BOSS_TOKEN)
    assert audit.code == EXIT_OK, audit.err
    lines = audit.out.splitlines()
    assert lines[0].split()[:4] == ["TIME", "ACTOR", "ACTION", "USER"], lines[:2]
    assert any(" ivan " in line and job_id in line for line in lines[1:]), audit.out
    bad = await cli("audit", "--limit", "0", "--token", BOSS_TOKEN)
    assert bad.code != EXIT_OK and "--limit wants a whole number from 1 to 10000" in bad.err, bad.err
