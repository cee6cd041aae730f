"""New user 22, N10 (second half): the owner's running line shows the projected end its waiters are given.

ivan's stuck (4 GPUs, 10m limit) reports its progress; judy's job waits for its GPUs, its ETA "when stuck ends,
from its progress". stuck's own line said only "ends by …, its 10m time limit". Now ivan's answers (GET queue,
GET jobs, GET jobs/{id}) carry ``projected_end`` — the time the waiter's ETA reads — and the CLI's queue line
says it before the limit; judy and eve (who may not see stuck's progress: red team 22, R2) read no projection.

Real parts: a jupyter_server with jupyter_sched, per-user tokens, real job processes (``sleep``) on four simulated
GPUs, the SQLite store, the ``jupyter-sched`` CLI as a subprocess. (newuser31 n3: the owner's answers read the
projection from the report they show; n14: ivan's ``GET me`` and ``status`` say judy's job waits for his GPUs.)
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.model.units import clock_text
from jupyter_sched.wording.reasons import wire_time

from .conftest import BOSS_TOKEN, EVE_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for
from .test_cli import cli  # noqa: F401  (the fixture: the CLI as a subprocess against this server)


async def test_s23_newuser22_n10_the_owners_answers_carry_the_end_the_waiter_is_given(
        sched_app: Any, api: Any, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)  # two reports without the 10 s wait
    stuck = await running_job(api, gpus=4, name="stuck")
    status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4, "name": "waiter2"}, token=JUDY_TOKEN)
    assert status == 201, waiting

    async def projected() -> bool:  # a cycle has run since stuck started: its pace below is minutes long
        _, job = await api("GET", f"jobs/{waiting['id']}", token=JUDY_TOKEN)
        return bool(((job.get("reason") or {}).get("details") or {}).get("eta_code") == "Projected")

    await wait_for(projected)
    for done in (15, 25):
        status, answer = await api("POST", f"jobs/{stuck}/progress", {"done": done, "total": 1000})
        assert status == 200 and answer["stored"], answer

    async def told() -> dict[str, Any]:  # one queue page: the waiter's reason and stuck's end of one cycle
        _, entries = await api("GET", "queue")
        by_id = {entry["id"]: entry for entry in entries}
        details = ((by_id.get(waiting["id"]) or {}).get("reason") or {}).get("details") or {}
        return by_id if details.get("eta_progress") and by_id.get(stuck, {}).get("projected_end") else {}

    entries = await wait_for(told)
    end = entries[stuck]["projected_end"]
    at = wire_time(end["at"])
    assert at is not None and at == wire_time(entries[waiting["id"]]["eta"]), (end, entries[waiting["id"]]["eta"])
    started = wire_time(entries[stuck]["started_at"])
    assert started is not None and at < started + timedelta(minutes=10)  # before its limit's end, all its line said
    report = wire_time(end["report_at"])
    assert end["source"] == "progress" and end["fraction"] == 0.025 and report is not None
    assert end["text"] == (f"projected end ~{clock_text(at, None)}, from its progress report of "
                           f"{clock_text(report, None, seconds=True)}")
    _, rows = await api("GET", "jobs")
    assert {row["id"]: row for row in rows}[stuck]["projected_end"] == end
    _, job = await api("GET", f"jobs/{stuck}")
    assert job["projected_end"] == end
    # the waiter's owner and a bystander: stuck's line, without a projection drawn from its progress
    for token in (JUDY_TOKEN, EVE_TOKEN):
        _, theirs = await api("GET", "queue", token=token)
        line = {entry["id"]: entry for entry in theirs}[stuck]
        assert "projected_end" not in line and "progress" not in line, line
    # an admin's queue line carries it, as GET jobs/{id} does for them (verify 23, V3)
    _, boss = await api("GET", "queue", token=BOSS_TOKEN)
    admin_line = {entry["id"]: entry for entry in boss}[stuck]
    assert admin_line["projected_end"]["at"] == end["at"], admin_line
    # the CLI's queue line: the projection, then the limit's end as the latest
    run = await cli("queue")
    assert run.code == 0, run.err
    now = datetime.now(timezone.utc)
    line = next((line for line in run.out.splitlines() if "projected end ~" in line), "")
    assert f"projected end ~{clock_text(at, now)} (" in line, run.out
    assert f"), from its progress report of {clock_text(report, now, seconds=True)} · at the latest " in line, run.out
    assert ", its 10m time limit" in line, run.out
    # newuser31 n14: ivan holds the GPUs judy's job waits for, and is told so (her name, never her job's)
    said = "1 job of another user (judy) waits for GPUs you hold"
    _, me = await api("GET", "me")
    assert me.get("waiting_on_you") == {"jobs": 1, "users": ["judy"], "text": said}, me
    _, hers = await api("GET", "me", token=JUDY_TOKEN)
    assert "waiting_on_you" not in hers or hers["waiting_on_you"] is None, hers
    run = await cli("status")
    assert run.code == 0 and f"\n           {said}\n" in run.out, run.out
    # newuser31 n3: a report newer than the cycle's is read for the projection shown beside it, not the cycle's
    # older one ("51 % done, reported 12:26" beside "from its progress report of 12:26:28", the 35 % one)
    status, answer = await api("POST", f"jobs/{stuck}/progress", {"done": 40, "total": 1000})
    assert status == 200 and answer["stored"], answer
    _, job = await api("GET", f"jobs/{stuck}")
    shown = job["projected_end"]
    assert (shown["report_at"], shown["fraction"]) == (job["progress"]["at"], job["progress"]["fraction"]), job
    _, rows = await api("GET", "jobs")
    row = {r["id"]: r for r in rows}[stuck]
    assert row["projected_end"]["report_at"] == row["progress"]["at"], row
    for job_id, token in ((waiting["id"], JUDY_TOKEN), (stuck, None)):  # nothing left running
        status, _ = await api("DELETE", f"jobs/{job_id}", **({"token": token} if token else {}))
        assert status == 200
