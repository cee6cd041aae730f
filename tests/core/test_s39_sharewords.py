"""Shares counted whole, said whole (newuser39 n4, n7; red39 R3), over built snapshots.

A GPU only one team's shares hold counts whole against the team's quota line (red team 38 R3). Readers
said fractions beside it: a share that would open a GPU of its own waited "would use 2.5 GPUs" when no
rest of its team's GPUs was left (n4); the "no preemption" note said "needs 0.1 with 0.1 already in use,
above the guarantee" of 1 (R3); ``queue --summary`` counted RUNNING by fraction (n7).
"""

from __future__ import annotations

from datetime import datetime, timezone

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.model.team_load import team_rows
from jupyter_sched.scheduling import SchedulingProfile, run_cycle

SHARED = SchedulingProfile(gpu_sharing="team")
GIB = 1024


def test_newuser39_n4_a_share_with_no_rest_to_pack_on_is_refused_at_the_gpu_it_would_open() -> None:
    # cv: limit 2 (1 + 1); four halves fill GPUs 0 and 1 (no rest): a fifth would open GPU 2 — charged 3, not 2.5
    halves = [running(make_job(f"h{i}", milli=500, team="cv", user="carol"), "n1", [i // 2], milli=500)
              for i in range(4)]
    fifth = make_job("h4", milli=500, team="cv", user="carol", submitted=1)
    limit = quotas(Quota(team="cv", guaranteed=1, borrowing_limit=1))
    result = run_cycle(snapshot([make_node(gpus=4)], [*halves, fifth], quota=limit), SHARED)
    assert result.admits == (), result.admits
    reason = next(p.reason for p in result.pending if p.job_id == "h4")
    assert reason.code == "BorrowingLimitReached", reason
    assert reason.details["requested"] == 1 and reason.details["share"] == 0.5, reason.details
    assert "cv would use 3 GPUs, above its limit of 2 GPUs" in reason.message, reason.message
    assert "this 0.5 GPU share would take a GPU of its own" in reason.message, reason.message
    assert "2.5" not in reason.message, reason.message


def test_newuser39_n4_a_share_that_would_pack_beside_another_teams_share_keeps_its_fraction() -> None:
    # gpu_sharing "any": cv's fifth half would sit beside teama's half on GPU 2 — it opens nothing: 2.5 is right
    halves = [running(make_job(f"h{i}", milli=500, team="cv", user="carol"), "n1", [i // 2], milli=500)
              for i in range(4)]
    other = running(make_job("a0", milli=500, team="teama", user="ann"), "n1", [2], milli=500)
    busy = running(make_job("a1", team="teama", user="ann"), "n1", [3])
    fifth = make_job("h4", milli=500, team="cv", user="carol", submitted=1)
    limit = quotas(Quota(team="cv", guaranteed=1, borrowing_limit=1))
    result = run_cycle(snapshot([make_node(gpus=4)], [*halves, other, busy, fifth], quota=limit),
                       SchedulingProfile(gpu_sharing="any"))
    reason = next(p.reason for p in result.pending if p.job_id == "h4")
    assert reason.details["requested"] == 0.5 and "share" not in reason.details, reason.details
    assert "cv would use 2.5 GPUs" in reason.message, reason.message


def test_red39_r3_no_preemption_note_counts_a_lone_share_whole_as_admission() -> None:
    # teamc guaranteed 1; its 0.1/70 GiB share holds GPU 0 alone (1 GPU counted); teama's whole GPUs the rest.
    # A second such share would open a GPU of its own: borrowing, which reclaim never serves
    tenth = running(make_job("cs0", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol"), "n1", [0],
                    milli=100)
    whole = [running(make_job(f"a{i}", team="teama", user="ann"), "n1", [i], started=-120) for i in (1, 2, 3)]
    queued = make_job("cs1", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol", submitted=1)
    limits = quotas(Quota(team="teamc", guaranteed=1), Quota(team="teama", guaranteed=1))
    result = run_cycle(snapshot([make_node(gpus=4)], [tenth, *whole, queued], quota=limits), SHARED)
    assert result.preemptions == (), result.preemptions
    message = next(p.reason.message for p in result.pending if p.job_id == "cs1")
    assert "needs 0.1 with 0.1 already in use" not in message, message
    assert ("teamc already uses its 1 guaranteed GPU (0.9 GPU of it the unused rest of GPUs only its shares hold), "
            "so this job (a GPU of its own for its 0.1 GPU share) may only borrow") in message, message


def test_newuser39_n7_team_rows_count_a_teams_shares_whole() -> None:
    now = datetime.now(timezone.utc)

    def row(team: str, uuids: list[str], milli: int, state: str = "running") -> dict[str, object]:
        return {"team": team, "state": state, "resources": {"gpus": 1, "gpu_milli": milli, "workers": 1},
                "allocation": {"node": "n1", "gpu_uuids": uuids, "gpu_milli": milli, "workers": []},
                "submitted_at": now.isoformat()}

    # cv: halves filling GPU 0, a half and a 0.2 on GPU 1 (0.3 unused rest): 1.7 asked, 2 counted
    # teama: a half beside cv's on GPU 2 (not its alone: fractions), and a whole GPU
    queue = [row("cv", ["G0"], 500), row("cv", ["G0"], 500), row("cv", ["G1"], 500), row("cv", ["G1"], 200),
             row("cv", ["G2"], 300), row("teama", ["G2"], 500), row("teama", ["G3"], 1000),
             {"team": "cv", "state": "pending", "resources": {"gpus": 1, "gpu_milli": 100}, "allocation": None,
              "submitted_at": now.isoformat()}]
    lines = {"quotas": [{"team": "cv", "guaranteed": 1, "borrowing_limit": 1}]}
    rows = {r["team"]: r for r in team_rows(queue, lines, now)}
    assert rows["cv"]["running"] == 2.3 and rows["cv"]["shares_rest"] == 0.3, rows["cv"]
    assert rows["cv"]["borrowed"] == 2.3 - 1, rows["cv"]
    assert rows["teama"]["running"] == 1.5 and rows["teama"]["shares_rest"] == 0, rows["teama"]
    assert rows["cv"]["pending_gpus"] == 0.1, rows["cv"]
