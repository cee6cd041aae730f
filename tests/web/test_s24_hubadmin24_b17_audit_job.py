"""Hubadmin24 B17 addendum: ``jupyter-sched audit`` had no ``--job ID`` although ``GET audit`` takes
``job_id`` — "what happened to j-…?" meant ``audit --user U --limit 500 | grep``. Now ``audit --job ID``
lists that job's rows only. Real parts: the program against a real Jupyter server with the extension
(tests/web/conftest.py: ivan a user, boss an admin).
"""

from __future__ import annotations

import sys
from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_s24_hubadmin24_b17_audit_job_lists_that_jobs_rows_only(cli: Any) -> None:  # noqa: F811
    """Failed before: ``--job`` an unknown argument (rc 2)."""
    ids = []
    for name in ("b17-a", "b17-b"):
        run = await cli("submit", "--gpus", "0", "--name", name, "--", sys.executable, "-c", "print(1)")
        assert run.code == EXIT_OK, run.err
        ids.append(run.out.split()[1].rstrip(":"))
    assert (await cli("wait", ids[0])).code == EXIT_OK
    rows = await cli("audit", "--job", ids[0], "--token", BOSS_TOKEN)
    assert rows.code == EXIT_OK, rows.err
    lines = rows.out.splitlines()[1:]
    assert lines and all(ids[0] in line and ids[1] not in line for line in lines), rows.out
    assert any(" submit " in line for line in lines), rows.out


async def test_s24_hubadmin24_b17_cancel_all_narrowed_to_one_user_or_team(cli: Any) -> None:  # noqa: F811
    """Failed before: ``--user``/``--team`` unknown arguments (rc 2); the admin copied ids from the queue by hand."""
    import json

    sleep = ["--", sys.executable, "-c", "import time; time.sleep(60)"]
    mine = [(await cli("--json", "submit", "--gpus", "0", "--name", f"b17-{i}", *sleep)) for i in range(2)]
    boss = await cli("--json", "--token", BOSS_TOKEN, "submit", "--gpus", "0", "--name", "b17-boss", *sleep)
    assert all(run.code == EXIT_OK for run in (*mine, boss)), [run.err for run in (*mine, boss)]
    ivan_ids = {json.loads(run.out)["id"] for run in mine}
    boss_job = json.loads(boss.out)
    try:
        alone = await cli("cancel", "--user", "ivan", "--yes", "--token", BOSS_TOKEN)
        assert alone.code != EXIT_OK and "--user and --team narrow --all" in alone.err, alone
        done = await cli("cancel", "--all", "--user", "ivan", "--yes", "--token", BOSS_TOKEN)
        assert done.code == EXIT_OK, done.err
        assert done.out.startswith("cancelled 2 jobs"), done.out  # ivan's two, not boss's
        listed = [line for line in done.err.splitlines() if " j-" in line]
        assert {line.split()[1] for line in listed} == ivan_ids, done.err
        team = str(boss_job.get("team") or "")
        assert team, boss_job
        other = await cli("cancel", "--all", "--team", team + "-not", "--yes", "--token", BOSS_TOKEN)
        assert other.code == 2 and other.err.strip().endswith(  # hubadmin25 B14: an unknown team is said so
            f"--team: no team {team}-not (teams: {team}) — did you mean {team}? [usage_error]"), other
        by_team = await cli("cancel", "--all", "--team", team, "--yes", "--token", BOSS_TOKEN)
        assert by_team.code == EXIT_OK and by_team.out.startswith("cancelled "), by_team  # all here are one team
        assert boss_job["id"] in by_team.err, by_team.err
    finally:
        await cli("cancel", "--all", "--yes", "--token", BOSS_TOKEN)
