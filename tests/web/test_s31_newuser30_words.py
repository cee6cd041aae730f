"""New user 30's last words (session 31): n11 in the server's budget lines, n19 "held by you".

- n11: ``status`` said a daily budget "used this UTC day, resets 16:00 PST" in Los Angeles (session 30), but
  ``jupyter-sched quotas`` and ``queue --summary`` printed the server's sentence: "used today … until Dec 7 00:00
  UTC" — the server does not know its reader's zone. The server's own words now say "this UTC day" (true in every
  zone), and the CLI says the standing again from its numbers in its reader's words: "this UTC day" and the
  reset in PST in Los Angeles, "today" and UTC to a reader on UTC — as ``status`` does.
- n19: a user's own hold read "held by ivan at …" in ``status JOB``, ``queue`` and the answers of ``hold`` /
  ``release`` ("already held by ivan since …"), where the panel said "held by you". The reason is said from the
  row's ``mine`` flag (the server knows the caller), the answers by the server, which knows the caller too.

Real parts: a Jupyter server with the extension (pytest-jupyter), the installed ``jupyter-sched`` in a
subprocess, the magics' renderer over the same REST rows.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Any

from .conftest import BOSS_TOKEN, SLEEP_JOB, running_job
from .test_cli import cli  # noqa: F401  (the fixture: a real jupyter-sched subprocess against this server)


def _budget_lines(out: str, head: str) -> list[str]:
    """The lines of ``out`` under ``head`` that say a budget (``default: …``)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    return [line.strip() for line in lines[start + 1:] if line.strip().startswith(("default:", "team default:"))]


async def test_newuser30_n11_quotas_and_queue_summary_say_a_day_budget_as_status_does(cli: Any, api: Any) -> None:  # noqa: F811
    status, put = await api("PUT", "quotas", {"quotas": [{"team": "default", "guaranteed": 2, "borrowing_limit": 2}],
                                              "budgets": [{"team": "default", "gpu_hours": 5, "period": "day"}]},
                            token=BOSS_TOKEN)
    assert status == 200, put
    status, got = await api("GET", "quotas", token=BOSS_TOKEN)
    assert status == 200, got
    (standing,) = got["budget_standings"]
    # the server's own words: read in every zone, so the day is named as UTC's
    assert standing["text"].startswith("default: 0 of 5 GPU-hours this UTC day (0%), 5 left until "), standing

    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    for zone, day, clock in (("America/Los_Angeles", "this UTC day", " PST"), ("UTC", "today", " UTC")):
        environ = {**env, "TZ": zone}
        said = {}
        for name, argv in (("status", ["status"]), ("quotas", ["quotas"]), ("summary", ["queue", "--summary"])):
            run = await cli(*argv, environ={**environ, "JUPYTER_SCHED_TOKEN": BOSS_TOKEN})
            assert run.code == 0, (argv, run)
            said[name] = run.out
        (line,) = [line[len("budget"):].strip() for line in said["status"].splitlines() if line.startswith("budget")]
        assert line.startswith(f"team default: 0 of 5 GPU-hours used {day}, resets "), (zone, said["status"])
        assert line.endswith(clock), (zone, line)
        for name, head in (("quotas", "Budgets:"), ("summary", "Budgets now:")):
            (budget,) = _budget_lines(said[name], head)
            assert budget.startswith(f"default: 0 of 5 GPU-hours {day} (0%), 5 left until "), (zone, name, said[name])
            assert budget.split(" left until ")[1].split(";")[0].endswith(clock), (zone, name, budget)  # the reset
            assert ("today" in budget) == (day == "today"), (zone, name, budget)


async def test_newuser30_n19_ones_own_hold_reads_held_by_you(cli: Any, api: Any) -> None:  # noqa: F811
    from jupyter_sched.magics.render import reason_line

    for i in range(4):  # every GPU busy: the job stays pending
        await running_job(api, 1, name=f"fill-{i}")
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "mine"})
    assert status == 201, job
    jid = job["id"]
    run = await cli("hold", "mine")
    assert run.code == 0 and "held (release with" in run.out, run

    run = await cli("status", "mine")
    assert "held by you at " in run.out and "held by ivan" not in run.out, run
    run = await cli("queue")
    assert "held by you at " in run.out and "held by ivan" not in run.out, run
    status, row = await api("GET", f"jobs/{jid}")
    assert row["mine"] is True and row["reason"]["text"]["summary"].startswith("held by you at "), row["reason"]
    assert reason_line(row, datetime.now(timezone.utc)).split(" · ")[1].startswith("held by you at "), row  # %schedule
    # another reader (an admin) reads whose hold it is
    run = await cli("--token", BOSS_TOKEN, "queue", "--all")
    assert "held by ivan at " in run.out and "held by you" not in run.out, run

    run = await cli("hold", "mine")
    assert run.out.startswith(f"{jid} (mine): already held by you since "), run
    run = await cli("release", "mine")
    assert run.code == 0 and run.out.startswith(f"{jid} (mine): released (held by you since "), run
