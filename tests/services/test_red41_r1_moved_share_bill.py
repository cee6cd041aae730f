"""Red team 41, R1: after ``POST teams/{team}/move``, a share still running from before kept its usage row's OLD
team, and usage decided "one team holds this GPU" from the rows' teams: the shares packed beside it on one GPU — all
one team now — were each charged their fraction (0.1 + 0.1 for a GPU only teamz's shares held; ~134 of ~519 GPU-s in
the report). A GPU one team's shares alone hold is billed whole between them, whatever team their rows are charged
to: the store decides by each job's team now (as placement and quota count it), and the move charges the moved
shares' GPUs anew at the move's time. The moved share's row stays charged to its old team until its run ends.

Real parts: the services on a real SQLite store (the move, the usage rows as the store writes them), a manual clock;
the jobs' GPUs are rows of a simulated inventory (no GPU here), their usage opened as admission opens it.
"""

from __future__ import annotations

from dataclasses import replace

from jupyter_sched.model import Allocation, JobState, ResourceRequest
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, parse
from jupyter_sched.services.models.teams import MoveTeamRequest
from jupyter_sched.store import JobRecord
from tests.runtime.builders import make_job

GPU = "GPU-sim-vm-0"


def _share(services: Services, job_id: str, team: str) -> None:
    """A running 0.1 share of r41c's on :data:`GPU`, its usage opened now as admission opens it."""
    job = make_job(job_id, user="r41c", team=team, state=JobState.RUNNING,
                   allocation=Allocation(node="vm", gpu_uuids=(GPU,), gpu_milli=100))
    job = replace(job, spec=replace(job.spec, resources=ResourceRequest(gpus=1, gpu_milli=100)))
    services.store.insert_job(JobRecord(job=job))
    with services.store.transaction() as tx:
        tx.open_usage(job_id=job_id, attempt=1, user="r41c", team=team, kind="training", gpus=[(GPU, "sim", 0.1)],
                      started_at=services.ctx.clock.now())


def _open(services: Services) -> dict[str, tuple[str, float]]:
    with services.store.transaction(write=False) as tx:
        rows = tx.usage_rows(since=services.ctx.clock.now())
    return {r.job_id: (r.team, round(r.charged, 6)) for r in rows if r.ended_at is None}


def test_red41_r1_share_moved_to_another_team_packs_and_is_billed_whole(services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {
        "quotas": [{"team": "teamc", "guaranteed": 1}], "user_teams": {"r41c": ["teamz"]}}))
    clock = services.ctx.clock
    _share(services, "j-c-s1", "teamc")
    assert _open(services) == {"j-c-s1": ("teamc", 1.0)}  # alone: the whole GPU
    clock.advance(60)  # type: ignore[attr-defined]
    plan = services.teams.move(boss, "teamc", parse(MoveTeamRequest, {"to": "teamz", "dry_run": True}))
    holding = plan.model_dump(mode="json")["holding"]  # the lone share counts whole, as quota counts it (not 0.1)
    assert (holding["in_use"], holding["in_use_after"]) == (0, 1), holding
    assert "teamz holds 0 GPUs now, 1 after the move" in holding["text"], holding
    moved = services.teams.move(boss, "teamc", parse(MoveTeamRequest, {"to": "teamz", "with_quota": True}))
    assert moved.moved == 1
    assert _open(services) == {"j-c-s1": ("teamc", 1.0)}  # still alone: its row stays teamc's, charged whole
    clock.advance(60)  # type: ignore[attr-defined]
    _share(services, "j-c-s2", "teamz")  # packs beside it: both teamz's now, the GPU held whole by teamz
    assert _open(services) == {"j-c-s1": ("teamc", 0.5), "j-c-s2": ("teamz", 0.5)}


def test_red41_r1_a_move_recharges_a_gpu_its_shares_now_hold_for_one_team_from_the_moves_time(
        services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {
        "quotas": [{"team": "teamc", "guaranteed": 1}, {"team": "teamz", "guaranteed": 1}],
        "user_teams": {"r41c": ["teamz", "teamc"]}}))
    clock = services.ctx.clock
    _share(services, "j-c-s1", "teamc")
    _share(services, "j-c-s2", "teamz")
    assert _open(services) == {"j-c-s1": ("teamc", 0.1), "j-c-s2": ("teamz", 0.1)}  # two teams: each its fraction
    clock.advance(60)  # type: ignore[attr-defined]
    at = clock.now()
    holding = services.teams.move(boss, "teamc", parse(MoveTeamRequest, {"to": "teamz"})).model_dump(
        mode="json")["holding"]  # teamz's 0.1 beside teamc's: 0.1 now; the GPU whole after
    assert (round(holding["in_use"], 6), round(holding["in_use_after"], 6)) == (0.1, 1), holding
    assert _open(services) == {"j-c-s1": ("teamc", 0.5), "j-c-s2": ("teamz", 0.5)}  # one team now: whole between them
    with services.store.transaction(write=False) as tx:
        rows = tx.usage_rows()
    before = sorted((r.job_id, round(r.charged, 6)) for r in rows if r.ended_at is not None)
    assert before == [("j-c-s1", 0.1), ("j-c-s2", 0.1)], rows  # the minute before the move: as it was
    assert all(r.ended_at == at for r in rows if r.ended_at is not None), rows


def test_red41_r1_a_move_to_a_group_the_hub_poll_has_not_read_yet_says_when_it_read_and_to_retry(
        services: Services) -> None:
    """In hub mode a move knows the hub's groups as the poll last read them, while a user's own requests (GET me)
    know their groups from their login: for up to a poll's interval the move answered only "no team 'teamz'" while
    GET me already said teamz. The refusal now says which read it went by, when, and to retry after the next."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.services.hub_teams import groups_of_models

    boss = services.caller("boss", admin=True)
    _share(services, "j-c-s1", "teamc")
    services.quotas.teams_from_hub = True
    services.quotas.hub_groups = groups_of_models({"r41c": {"groups": ["teamc"]}}, services.ctx.clock.now())
    read = services.ctx.clock.now()
    try:
        services.teams.move(boss, "teamc", parse(MoveTeamRequest, {"to": "teamz"}))
    except ValidationError as err:
        assert err.field == "to", err
        assert f"no team 'teamz' in the hub's groups as last read, at {read:%H:%M:%S} UTC" in err.message, err.message
        assert err.hint is not None and "hub_poll_interval_s): retry then" in err.hint, err.hint
        assert "did you mean teamc?" in err.hint, err.hint
    else:
        raise AssertionError("moved to a team the hub's groups do not have")
    services.quotas.hub_groups = groups_of_models({"r41c": {"groups": ["teamz"]}}, services.ctx.clock.now())
    assert services.teams.move(boss, "teamc", parse(MoveTeamRequest, {"to": "teamz"})).moved == 1  # the next read
