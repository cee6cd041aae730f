"""New user 21, N5: the running job the scheduler will preempt at a known time says so on its own line.

ivan's lowml (low, 4 GPUs) was preempted once for judy's hi and started again, so it is protected for
its first 5 minutes (the minimum runtime); judy's norm2 (normal, 1 GPU) then waits, its ETA the moment
lowml has run 5 min — "then lowml … is preempted for it" (new user 20, N18). lowml's own line said only
"ends by …, its 10m time limit". Now the queue and jobs answers carry ``preemption_planned`` on lowml
(the waiter's ETA, the waiter as the queue names it), and the CLI's queue and jobs lines say it.

Real parts: a jupyter_server with jupyter_sched, per-user tokens, real job processes (``sleep``) on four
simulated GPUs, the SQLite store, the ``jupyter-sched`` CLI as a subprocess.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_sched.model.units import clock_text
from jupyter_sched.wording.reasons import wire_time

from .conftest import EVE_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for
from .test_cli import cli  # noqa: F401  (the fixture: the CLI as a subprocess against this server)


async def test_newuser21_n5_the_victims_line_says_its_planned_preemption(sched_app: Any, api: Any, cli: Any) -> None:  # noqa: F811
    low = await running_job(api, gpus=4, name="lowml", priority="low", command=["sleep", "600"])
    status, hi = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "hi"}, token=JUDY_TOKEN)
    assert status == 201, hi

    async def requeued() -> bool:  # its first run was young but the only choice: preempted at once
        _, job = await api("GET", f"jobs/{low}")
        return bool(job["state"] == "pending" and job.get("preempted_by") == hi["id"])

    await wait_for(requeued)
    status, _ = await api("DELETE", f"jobs/{hi['id']}", token=JUDY_TOKEN)
    assert status == 200

    async def restarted() -> bool:
        _, job = await api("GET", f"jobs/{low}")
        return bool(job["state"] == "running")

    await wait_for(restarted)  # this run is protected for its first 5 min (it was preempted once)
    status, norm2 = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "norm2", "time_limit": "5m"},
                              token=JUDY_TOKEN)
    assert status == 201, norm2

    async def planned() -> dict[str, Any]:
        _, entries = await api("GET", "queue")
        by_id = {entry["id"]: entry for entry in entries}
        return by_id if "preemption_planned" in by_id.get(low, {}) and by_id[norm2["id"]]["eta"] else {}

    entries = await wait_for(planned)
    waiter = entries[norm2["id"]]
    assert waiter["reason"]["details"]["eta_code"] == "MinRuntime" and waiter["reason"]["details"]["eta_waits_on"] == [low]
    plan = entries[low]["preemption_planned"]
    at = wire_time(plan["at"])
    assert at is not None and at == wire_time(waiter["eta"])  # the victim's plan is its waiter's ETA
    assert {k: plan[k] for k in ("for_job", "for_name", "for_owner", "for_priority", "for_team", "same_team", "verb")} \
        == {"for_job": norm2["id"], "for_name": "norm2", "for_owner": "judy", "for_priority": "normal",
            "for_team": waiter["team"], "same_team": True, "verb": "preempted"}
    words = (f"to be preempted at ~{{}} for judy's job \"norm2\" ({norm2['id']}), normal priority of the same team, "
             "unless it ends first")
    assert plan["text"] == words.format(clock_text(at, None))
    _, rows = await api("GET", "jobs")
    assert {row["id"]: row for row in rows}[low]["preemption_planned"] == plan
    # another user reads the same plan — the waiter as its own queue line shows it, nothing more
    _, theirs = await api("GET", "queue", token=EVE_TOKEN)
    seen = {entry["id"]: entry for entry in theirs}
    assert seen[low]["preemption_planned"] == plan
    assert (seen[norm2["id"]]["name"], seen[norm2["id"]]["user"], seen[norm2["id"]]["priority"]) == \
        ("norm2", "judy", "normal")
    assert "preemption_planned" not in seen[norm2["id"]]  # pending work is no victim
    # the CLI's queue and jobs lines: after "ends by …, its 10m time limit"
    for command in ("queue", "jobs"):
        said = " — " + words.format(clock_text(at, datetime.now(timezone.utc)))  # today's clock, as the CLI says it
        run = await cli(command)
        assert run.code == 0, run.err
        line = next(line for line in run.out.splitlines() if "time limit" in line and "to be preempted" in line)
        assert line.strip().endswith(", its 10m time limit" + said), run.out
