"""Shares counted whole, said whole, through the service (newuser39 n4, n5, n7).

A GPU only one team's shares hold counts whole against the team's quota line (red team 38 R3); admission
counted so, while its readers said fractions: a 5th 0.5 share waited "cv would use 2.5 GPUs" (n4), ``status``
said "2 GPUs in use by the team, 1.7 GPUs of them yours" with all of it the reader's (n5), and ``queue
--summary`` said RUNNING 1.7 / BORROWED 0.7 while the team sat at its limit of 2 (n7). Real store, engine and
local executor (``sleep``); the GPUs are the simulated inventory's (no GPU here).
"""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.model.team_load import team_rows
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest


def _halves(services: Services, count: int) -> tuple[str, list[dict[str, object]]]:
    root, al = services.caller("root", admin=True), services.caller("al", admin=False)
    team = services.accounting.me(al).team
    services.quotas.set(root, SetQuotasRequest.model_validate(
        {"quotas": [{"team": team, "guaranteed": 1, "borrowing_limit": 1}]}))
    al = services.caller("al", admin=False)
    jobs = [services.jobs.submit(al, SubmitJobRequest.model_validate(
        {"name": f"half{i}", "command": ["sleep", "60"], "gpus": 0.5, "mem_per_gpu": "1GiB"})) for i in range(count)]
    services.engine.tick()
    return team, [services.jobs.get(al, j.id).model_dump(mode="json") for j in jobs]


def test_newuser39_n4_a_share_opening_a_gpu_of_its_own_waits_at_the_whole_count(services: Services) -> None:
    team, wires = _halves(services, 5)
    states = [w["state"] for w in wires]
    assert states.count("pending") == 1, states  # 4 halves on 2 GPUs: the team's limit of 2
    reason = next(w for w in wires if w["state"] == "pending")["reason"]
    assert reason["code"] == "BorrowingLimitReached", reason
    # its charge is the GPU it would open (3 in all), not its fraction (2.5)
    assert reason["details"]["requested"] == 1 and reason["details"]["share"] == 0.5, reason["details"]
    assert f"{team} would use 3 GPUs, above its limit of 2 GPUs" in reason["message"], reason["message"]
    assert "2.5 GPUs" not in reason["message"], reason["message"]
    assert "this 0.5 GPU share would take a GPU of its own" in reason["message"], reason["message"]


def test_newuser39_n5_status_says_the_team_count_is_all_yours_and_counted_whole(services: Services) -> None:
    al = services.caller("al", admin=False)
    team = services.accounting.me(al).team
    root = services.caller("root", admin=True)
    services.quotas.set(root, SetQuotasRequest.model_validate(
        {"quotas": [{"team": team, "guaranteed": 1, "borrowing_limit": 1}]}))
    al = services.caller("al", admin=False)
    for i in range(2):  # 70 GiB of an 80 GiB GPU each: a GPU of its own each, 2 whole GPUs held for 0.2 asked
        services.jobs.submit(al, SubmitJobRequest.model_validate(
            {"name": f"tenth{i}", "command": ["sleep", "60"], "gpus": 0.1, "mem_per_gpu": "70GiB"}))
    services.engine.tick()
    me = services.accounting.me(al).model_dump(mode="json")
    assert me["team_in_use"] == 2.0 and me["team_held_whole"] == 1.8, (me["team_in_use"], me["team_held_whole"])
    entry = next(t for t in me["by_team"] if t["team"] == team)
    assert entry["in_use"] == 2.0 and entry["held_whole"] == 1.8 and entry["yours"] == 0.2, entry
    text = me["quota_text"]
    assert ("2 GPUs in use by the team (all yours: 0.2 GPU asked; a GPU only the team's shares hold counts whole "
            "against the line)") in text, text
    assert "of them yours" not in text, text


def test_newuser39_n7_queue_summary_counts_shares_whole_as_admission(services: Services) -> None:
    team, wires = _halves(services, 3)  # 3 halves: 2 GPUs held (one with its unused half), 1.5 asked
    assert [w["state"] for w in wires].count("pending") == 0, wires
    root = services.caller("root", admin=True)
    rows = services.jobs.queue(root).model_dump(mode="json")
    quotas = services.quotas.get(root).model_dump(mode="json")
    row = next(r for r in team_rows(rows, quotas, datetime.now(timezone.utc)) if r["team"] == team)
    assert row["running"] == 2.0 and row["borrowed"] == 1.0 and row["shares_rest"] == 0.5, row
