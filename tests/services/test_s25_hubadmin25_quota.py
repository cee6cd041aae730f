"""hubadmin25's quota findings: B12 (a GPU out for an RMA blocked every quota edit), B17 (the dry run
did not say the change preempts running work), B2 (``quotas_changed`` said not what changed)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import JobState, Quota, QuotaSet
from jupyter_sched.services import SchedulerService, Services
from jupyter_sched.services.hub_teams import groups_of_models
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest, parse
from jupyter_sched.services.models.teams import MoveTeamRequest
from jupyter_sched.store import JobRecord, sqlite_url
from tests.in_process import cancel_all_and_close, tick_until

A100, L40S = "A100-80GB", "L40S"
T0 = datetime(2026, 12, 5, 15, 0, tzinfo=timezone.utc)


def _gpu(uuid: str, model: str, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "model": model, "memory": "80GiB" if model == A100 else "48GiB", **extra}


def service(tmp_path: Path, *, out: bool = True) -> SchedulerService:
    """hubadmin25's hub: node-a 4 A100, node-b 4 L40S; with ``out`` GPU-b0 is marked unhealthy (RMA)."""
    static = tmp_path / "inventory.yaml"
    b0 = {"healthy": False, "health_reason": "ECC errors, RMA"} if out else {}
    static.write_text(yaml.safe_dump({"nodes": [
        {"name": "node-a", "gpus": [_gpu(f"GPU-a{i}", A100) for i in range(4)]},
        {"name": "node-b", "gpus": [_gpu("GPU-b0", L40S, **b0)] + [_gpu(f"GPU-b{i}", L40S) for i in range(1, 4)]}]}))
    return SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                         "inventory_source": "static", "inventory_file": str(static),
                                         "telemetry_source": "off"})


IN_FORCE = (Quota(team="vision", gpu_model=A100, guaranteed=2, borrowing_limit=2),
            Quota(team="vision", gpu_model=L40S, guaranteed=1, borrowing_limit=0),
            Quota(team="nlp", gpu_model=A100, guaranteed=2, borrowing_limit=2),
            Quota(team="nlp", gpu_model=L40S, guaranteed=1, borrowing_limit=1),
            Quota(team="rl", gpu_model=L40S, guaranteed=2, borrowing_limit=0))


def lines(**changed: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines in force as PUT quotas sends them, ``changed`` by ``team_model`` key (``vision_A100``)."""
    out = []
    for q in IN_FORCE:
        line = {"team": q.team, "gpu_model": q.gpu_model, "guaranteed": q.guaranteed,
                "borrowing_limit": q.borrowing_limit}
        out.append({**line, **changed.get(f"{q.team}_{q.gpu_model.split('-')[0]}", {})})
    return out


def in_force(svc: SchedulerService) -> None:
    with svc.store.transaction() as tx:  # set before GPU-b0 went out (the guarantees were honoured then)
        tx.replace_quota_set(QuotaSet(quotas=IN_FORCE))


def test_hubadmin25_b12_a_gpu_out_for_an_rma_blocks_no_edit_of_the_lines_in_force(tmp_path: Path) -> None:
    svc = service(tmp_path)
    in_force(svc)
    # the repro: vision's A100 borrowing limit 2 → 3, every other line as in force (4 L40S guaranteed, 3 usable)
    answer = svc.set_quotas(lines(vision_A100={"borrowing_limit": 3}), actor="boss")
    assert [q["borrowing_limit"] for q in answer["quotas"] if q["team"] == "vision"] == [3, 0]
    (short,) = [w for w in answer["warnings"] if "guaranteed" in w and L40S in w]
    assert short.startswith("teams are guaranteed 4 GPUs of L40S but only 3 of its 4 may get work now (GPU-b0 on "
                            "node-b marked unhealthy (ECC errors, RMA)): until the GPUs are back"), short
    # a line lowered, another raised by as much: the total in force is kept, so taken (warned as above)
    moved = svc.set_quotas(lines(rl_L40S={"guaranteed": 1}, nlp_L40S={"guaranteed": 2}), actor="boss")
    assert {(q["team"], q["guaranteed"]) for q in moved["quotas"] if q["gpu_model"] == L40S} == {
        ("vision", 1), ("nlp", 2), ("rl", 1)}
    # a change that raises the total promise of L40S beyond the usable GPUs stays refused (case 018)
    with pytest.raises(ValidationError) as refused:
        svc.set_quotas(lines(rl_L40S={"guaranteed": 3}), actor="boss")
    assert refused.value.field == "guaranteed"
    assert refused.value.message == ("teams would be guaranteed 5 GPUs of L40S (4 before this change) but only 3 of "
                                     "its 4 may get work now (GPU-b0 on node-b marked unhealthy (ECC errors, RMA))")
    assert "at most 4 (the total in force) until the GPUs are back" in (refused.value.hint or "")
    # lowered to what is usable: no capacity warning any more
    fits = svc.set_quotas(lines(rl_L40S={"guaranteed": 1}), actor="boss")
    assert not [w for w in fits["warnings"] if "may get work" in w], fits["warnings"]


def test_hubadmin25_b12_every_model_short_is_said_not_the_first_alone(tmp_path: Path) -> None:
    svc = service(tmp_path)
    with svc.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(*IN_FORCE, Quota(team="cv", gpu_model=A100, guaranteed=2, borrowing_limit=0))))
    admin = svc.services.quotas.get(svc.services.caller("boss", admin=True)).to_wire()
    said = [w.split(":")[0] for w in admin["warnings"] if w.startswith("teams are guaranteed")]
    assert said == ["teams are guaranteed 6 GPUs of A100-80GB but only 4 exist",
                    "teams are guaranteed 4 GPUs of L40S but only 3 of its 4 may get work now (GPU-b0 on node-b marked "
                    "unhealthy (ECC errors, RMA))"], admin["warnings"]


def _put(services: Services, body: dict[str, object]) -> list[str]:
    answer = services.quotas.set(services.caller("boss", admin=True), SetQuotasRequest.model_validate(body))
    return list(answer.warnings or ())


def _state(services: Services, job_id: str) -> JobRecord:
    record = services.store.get_job(job_id)
    assert record is not None
    return record


def test_hubadmin25_b17_the_dry_run_lists_the_running_work_a_quota_change_preempts_and_the_victim_blames_the_change(
        services: Services) -> None:
    """Failed before: the dry run's only warnings were of unlisted teams; 1 s after the PUT vision's running
    2-GPU job was reclaimed, its owner reading that nlp's user preempted it."""
    both = [{"team": "vision", "guaranteed": 2, "borrowing_limit": 2}, {"team": "nlp", "guaranteed": 2, "borrowing_limit": 2}]
    _put(services, {"quotas": both, "user_teams": {"ana": "vision", "bo": "nlp"}})
    ana, bo = (services.caller("ana", admin=False, groups=["vision"]), services.caller("bo", admin=False, groups=["nlp"]))
    sleep = ["sleep", "600"]
    train = services.jobs.submit(ana, SubmitJobRequest(gpus=2, team="vision", name="v-train", command=sleep)).id
    for i in range(2):
        services.jobs.submit(bo, SubmitJobRequest(gpus=1, team="nlp", name=f"n-run{i}", command=sleep))
    services.engine.tick()
    assert _state(services, train).job.state.holds_gpus
    load = services.jobs.submit(bo, SubmitJobRequest(gpus=1, team="nlp", name="load-0", command=sleep)).id
    services.clock.advance(60)
    services.engine.tick()
    assert _state(services, load).job.state is JobState.PENDING  # every GPU busy, nlp within its guarantee of 2
    changed = {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 2},
                          {"team": "nlp", "guaranteed": 3, "borrowing_limit": 2}]}
    # a change that preempts nothing says nothing of it (nlp 2 → 2, vision limit only)
    calm = _put(services, {"quotas": [{**both[0], "borrowing_limit": 1}, both[1]], "dry_run": True})
    assert not [w for w in calm if "preempts" in w], calm
    dry = _put(services, {**changed, "dry_run": True})
    said = (f'this change preempts at the next cycle: ana\'s job "v-train" ({train}) of vision, 2 GPUs, running 1m — '
            f'preempted to return borrowed quota to nlp, for bo\'s job "load-0" ({load}); it is requeued and its run so '
            f'far is lost unless it checkpoints')
    assert dry[0] == said, dry
    assert _state(services, train).job.state.holds_gpus, "a dry run preempts nothing"
    assert _put(services, changed)[0] == said
    root = services.caller("boss", admin=True)
    row = services.audit.list(root, GetAuditRequest(action="quotas_changed")).root[0]
    assert row.details["would_preempt"] == [train], row.details
    assert said in row.message
    services.clock.advance(60)  # the next full cycle
    services.engine.tick()
    blame = ("boss changed the quotas at Nov 29 12:01 UTC (changed vision: guaranteed 2 → 1; changed nlp: "
             "guaranteed 2 → 3)")
    assert _state(services, train).job.message == f"preempted to return borrowed quota to nlp — after {blame}"
    (reclaim,) = services.audit.list(root, GetAuditRequest(action="reclaim")).root
    assert reclaim.message.endswith(f"preempted to return borrowed quota to nlp — after {blame}"), reclaim.message
    assert reclaim.details["quota_change"] == blame
    for _ in range(100):  # SIGTERM: the sleep ends, the engine requeues it
        if _state(services, train).job.state is JobState.PENDING:
            break
        time.sleep(0.1)
        services.clock.advance(1)
        services.engine.tick()
    services.clock.advance(60)
    services.engine.tick()
    requeued = services.engine.reasons[train].message
    assert f'; requeued after {blame}, to return borrowed quota to nlp, for bo\'s job "load-0" ({load}).' in requeued, \
        requeued


def test_hubadmin25_b2_quotas_changed_says_what_changed_line_by_line(services: Services) -> None:
    """Failed before: the message was "quotas changed by boss" (and a stale budget warning); the change —
    vision lost ``high`` — was only in two whole sets of JSON."""
    root = services.caller("boss", admin=True)
    _put(services, {"quotas": [{"team": "vision", "gpu_model": "*", "guaranteed": 1, "borrowing_limit": 2}],
                    "budgets": [{"team": "vision", "gpu_hours": 4.9}],
                    "teams": [{"team": "vision", "allowed_priorities": ["high", "normal", "low"]}]})
    _put(services, {"quotas": [{"team": "vision", "gpu_model": "*", "guaranteed": 1, "borrowing_limit": None},
                               {"team": "nlp", "guaranteed": 1, "borrowing_limit": 0}],
                    "budgets": [{"team": "vision", "gpu_hours": 10}, {"team": "nlp", "gpu_hours": 5, "period": "week"}],
                    "teams": [{"team": "vision", "allowed_priorities": ["normal", "low"], "weight": 2}]})
    _put(services, {"budgets": [{"team": "vision", "gpu_hours": 10}, {"team": "nlp", "gpu_hours": 5, "period": "week"}]})
    rows = services.audit.list(root, GetAuditRequest(action="quotas_changed")).root
    assert [row.message for row in rows[:2]] == [
        "quotas changed by boss: nothing changed",
        "quotas changed by boss: added nlp (guaranteed 1, borrowing limit 0); changed vision: borrowing limit 2 → none; "
        "added budget nlp (5 GPU-hours a week); changed budget vision: 4.9 GPU-hours a month → 10 GPU-hours a month; "
        "changed team vision: weight 1 → 2, allowed priorities high, normal, low → normal, low"]
    assert rows[1].details["changes"][0] == "added nlp (guaranteed 1, borrowing limit 0)"


def test_hubadmin25_b20_teams_move_preview_holds_each_gpu_model_to_its_own_line(tmp_path: Path) -> None:
    """Failed before: ``nlp holds 0 GPUs now, 3 after the move: … above its guarantee of 4`` (3 A100 + 1 L40S
    summed) — not that the moved L40S work puts nlp 1 over its L40S limit of 2; and each job "stays in rl's
    usage" for "its run so far" while its whole current run stays billed to rl."""
    svc = service(tmp_path, out=False)
    try:
        svc.set_quotas({"quotas": [{"team": "nlp", "gpu_model": A100, "guaranteed": 3, "borrowing_limit": 0},
                                   {"team": "nlp", "gpu_model": L40S, "guaranteed": 1, "borrowing_limit": 1},
                                   {"team": "rl", "gpu_model": L40S, "guaranteed": 3, "borrowing_limit": 0}],
                        "user_teams": {"rlu": "rl"}}, actor="boss")
        sleep = ["sleep", "600"]
        train = svc.submit({"gpus": 2, "gpu_models": [L40S], "team": "rl", "name": "r-train", "command": sleep},
                           user="rlu")["id"]
        small = svc.submit({"gpus": 1, "gpu_models": [L40S], "team": "rl", "name": "r-small", "command": sleep},
                           user="rlu")["id"]
        tick_until(svc, "rl's work to run", lambda: all(svc.services.store.get_job(i).job.state.holds_gpus  # type: ignore[union-attr]
                                                           for i in (train, small)))
        svc.set_quotas({"user_teams": {"rlu": ["rl", "nlp"]}}, actor="boss")  # rl's members joined nlp
        answer = svc.services.teams.move(svc.services.caller("boss", admin=True), "rl",
                                         parse(MoveTeamRequest, {"to": "nlp", "dry_run": True})).model_dump(mode="json")
        assert answer["holding"]["text"] == (
            "nlp on L40S holds 0 GPUs now, 3 after the move: 2 GPUs above its guarantee of 1: borrowed work, which "
            "another team's reclaim of its guaranteed GPUs can take (a reclaimed job waits in the queue again); above "
            "its limit of 2 by 1: nothing is stopped, but no new nlp work on L40S starts until it holds less than 2"), answer
        whys = {item["id"]: item["why"] for item in answer["items"]}
        assert whys[small] == ("counts against nlp's quota from now on (1 GPU); its current run stays billed to rl "
                               "until it ends, a later run (a requeue) is nlp's"), whys
    finally:
        cancel_all_and_close(svc)


def test_hubadmin25_b22_a_submit_that_may_overrun_the_budget_left_is_warned_with_the_numbers(services: Services) -> None:
    """Failed before: 0.34 GPU-hours left, a 1-GPU 3-hour job was admitted with no word (it may use 9x what was left)."""
    _put(services, {"quotas": [], "budgets": [{"team": "vision", "gpu_hours": 0.5}], "user_teams": {"ana": "vision"}})
    ana = services.caller("ana", admin=False, groups=["vision"])
    big = services.jobs.submit(ana, SubmitJobRequest(gpus=1, team="vision", name="b", time_limit="3h",
                                                     command=["true"]))
    assert (big.warnings or [])[-1] == (
        "this job may use up to 3 GPU-hours (1 GPU for its 3h00m time limit) but team vision has 0.5 GPU-hours of its "
        "budget left (0 of 0.5 GPU-hours this month): it starts, and a budget never stops running work, so it may "
        "overrun it — give it a time limit of at most 30m to stay within, or ask an admin to raise the budget"), big
    small = services.jobs.submit(ana, SubmitJobRequest(gpus=1, team="vision", name="s", time_limit="20m",
                                                       command=["true"]))
    assert not [w for w in small.warnings or [] if "budget" in w], small.warnings
    cpu = services.jobs.submit(ana, SubmitJobRequest(gpus=0, team="vision", name="c", time_limit="3h", command=["true"]))
    assert not [w for w in cpu.warnings or [] if "budget" in w], cpu.warnings
    for job in (big, small, cpu):
        services.jobs.cancel(ana, job.id)


def test_hubadmin25_b3_a_dissolved_teams_lines_say_its_running_work_and_what_to_do(tmp_path: Path) -> None:
    """Failed before: with group rl deleted and 3 L40S of rl's work running on its line, GET quotas said
    "the line applies to nobody — add the group on the hub or remove the line" (removing it turns the running
    work into a team without a line); nothing named the work, teams move, or the hub's load_groups."""
    svc = service(tmp_path, out=False)
    try:
        svc.set_quotas({"quotas": [{"team": "rl", "gpu_model": L40S, "guaranteed": 3, "borrowing_limit": 0},
                                   {"team": "nlp", "gpu_model": L40S, "guaranteed": 1, "borrowing_limit": 0}],
                        "user_teams": {"rlu": "rl", "nu": "nlp"}}, actor="boss")
        sleep = ["sleep", "600"]
        ids = [svc.submit({"gpus": gpus, "gpu_models": [L40S], "team": "rl", "name": name, "command": sleep},
                          user="rlu")["id"] for name, gpus in (("r-train", 2), ("r-small", 1))]
        tick_until(svc, "rl's work to run", lambda: all(svc.services.store.get_job(i).job.state.holds_gpus  # type: ignore[union-attr]
                                                           for i in ids))
        quotas = svc.services.quotas  # hub mode: group rl deleted on the hub, its members in nlp now
        quotas.teams_from_hub = True
        quotas.hub_groups = groups_of_models({"rlu": {"groups": ["nlp"]}, "nu": {"groups": ["nlp"]}}, svc.clock.now())
        warnings = quotas.get(svc.services.caller("boss", admin=True)).warnings or []
        (said,) = [w for w in warnings if w.startswith("team rl:")]
        assert said == (f"team rl: no hub group of that name any more (dissolved?), but its running work still counts "
                        f"on its lines: 3 GPUs ({ids[0]}, {ids[1]}) — keep the lines until it ends, or move it to its "
                        f"owners' new team with jupyter-sched teams move rl --to TEAM (its pending work is held); a "
                        f"group deleted on the hub comes back at the hub's next restart while c.JupyterHub.load_groups "
                        f"names it"), warnings
    finally:
        cancel_all_and_close(svc)


def test_hubadmin25_b22_safe_budget_admission_holds_a_job_the_remainder_cannot_cover(tmp_path: Path) -> None:
    """Failed before (no setting): with c.SchedApp.budget_admission = "safe" a 1-GPU 3-hour job on a 0.5
    GPU-hour budget pends naming the numbers and the limit that fits; a 20-minute one starts."""
    svc = SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                        "simulated_gpus": 2, "telemetry_source": "off", "budget_admission": "safe"})
    try:
        svc.set_quotas({"budgets": [{"team": "vision", "gpu_hours": 0.5}], "user_teams": {"ana": "vision"}},
                       actor="boss")
        sleep = ["sleep", "600"]
        big = svc.submit({"gpus": 1, "time_limit": "3h", "command": sleep, "name": "big"}, user="ana")
        assert "it waits until the budget resets (c.SchedApp.budget_admission is safe)" in big["warnings"][-1], big
        small = svc.submit({"gpus": 1, "time_limit": "20m", "command": sleep, "name": "small"}, user="ana")["id"]
        tick_until(svc, "the small job to run",
                   lambda: svc.services.store.get_job(small).job.state.holds_gpus)  # type: ignore[union-attr]
        reason = svc.services.engine.reasons[big["id"]]
        assert reason.code == "BudgetExhausted", reason
        assert reason.message.startswith(
            "vision has 0.5 GPU-hours of its budget left this month (0 of 0.5); this job may use up to 3 GPU-hours "
            "(1 GPU for its 3h00m time limit) (c.SchedApp.budget_admission is safe)"), reason.message
        assert reason.unblock.startswith("resubmit with a time limit of at most 30m"), reason.unblock
        bare = svc.submit({"gpus": 1, "time_limit": 0, "command": sleep, "name": "bare"}, user="ana")["id"]
        tick_until(svc, "a reason for the job with no limit", lambda: bare in svc.services.engine.reasons)
        unbounded = svc.services.engine.reasons[bare]
        assert unbounded.code == "BudgetUnbounded" and unbounded.eta is None, unbounded
        assert "this job has no time limit, so its GPU-hours are not bounded" in unbounded.message, unbounded
    finally:
        cancel_all_and_close(svc)


def test_hubadmin25_b22_queue_summary_says_a_safe_hold_is_the_remainder_not_a_spent_budget() -> None:
    """Failed before: a job "safe" budget admission holds read "held by a spent budget" beside "0.5 left"."""
    from jupyter_sched.cli.queue_summary import budget_held

    message = ("vision has 0.5 GPU-hours of its budget left this month (0 of 0.5); this job may use up to 3 GPU-hours "
               "(1 GPU for its 3h00m time limit) (c.SchedApp.budget_admission is safe)")
    rows = [{"id": "j-1", "state": "pending", "team": "vision",
             "reason": {"code": "BudgetExhausted", "message": message, "eta": None}}]
    assert budget_held(rows, T0) == [f"vision: 1 pending job held by what its budget has left — {message}; they start "
                                     f"when it resets, or when an admin raises it"]
