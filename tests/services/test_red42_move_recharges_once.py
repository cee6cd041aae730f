"""Red team 42 (nit beside R2): a team move charged the GPUs of each moved share anew as it moved that share, each at
its own reading of the clock: two shares of teamz packed on one GPU (billed 0.5 + 0.5), moved together to teamc, were
billed 0.1 + 0.1 for the moment between the two jobs' recharges (the first moved, teamc's, beside the second, still
teamz's: two teams keep nothing whole) — 15 ms on red42's hub, a row of each in usage. The move now charges the moved
shares' GPUs once, after every job moved, from one time.

Real parts: the services on a real SQLite store (the move, usage rows as the store writes them). The clock moves a
millisecond at each reading, as a real clock moves between two statements (a manual clock that stands still hid it).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

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


def test_red42_a_team_move_recharges_the_moved_shares_gpus_once(services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {
        "quotas": [{"team": "teamz", "guaranteed": 1}], "user_teams": {"r41c": ["teamz", "teamc"]}}))
    clock = services.ctx.clock
    _share(services, "j-z-s1", "teamz")
    _share(services, "j-z-s2", "teamz")
    assert _open(services) == {"j-z-s1": ("teamz", 0.5), "j-z-s2": ("teamz", 0.5)}
    clock.advance(60)  # type: ignore[attr-defined]
    read = clock.now

    def ticking() -> datetime:
        clock.advance(0.001)  # type: ignore[attr-defined]
        return read()

    services.ctx.clock.now = ticking  # type: ignore[method-assign]
    try:
        services.teams.move(boss, "teamz", parse(MoveTeamRequest, {"to": "teamc", "with_quota": True}))
    finally:
        services.ctx.clock.now = read  # type: ignore[method-assign]
    with services.store.transaction(write=False) as tx:
        rows = tx.usage_rows()
    # every stretch of the GPU billed whole: never 0.1 + 0.1 between two jobs' recharges
    lengths = [r for r in rows if r.ended_at is not None and r.ended_at - r.started_at < timedelta(seconds=1)]
    assert lengths == [], rows
    assert {round(r.charged, 6) for r in rows} == {0.5}, rows
    assert _open(services) == {"j-z-s1": ("teamz", 0.5), "j-z-s2": ("teamz", 0.5)}
