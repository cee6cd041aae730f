"""red27 R2: ``PATCH jobs/{id}`` took no rate bound — a hold/release loop on one's own pending job wrote ~20
audit rows a second (kept a year), as many service-log lines, and a full cycle each. A change of a job now takes
a token of the same per-user bucket as submits and definition changes (``max_submits_per_user_minute``): past
it 429 ``busy`` naming the setting, audited as a refusal. Admins (a maintenance hold of many jobs) take none.

Real services on a real SQLite store, a manual clock, the bucket's clock manual too."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import BusyError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.callers import SubmitBuckets
from jupyter_sched.services.models import SubmitJobRequest, UpdateJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


def _services(tmp_path: Path, *, per_minute: int) -> Services:
    """Services on a SQLite store, a manual clock, ``per_minute`` submits a minute, the bucket's clock still."""
    clock = ManualClock(T0)
    services = Services(store=Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now),
                        inventory=SimulatedInventory(1, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                        clock=clock, policy=AdmissionPolicy(submits_per_minute=per_minute))
    services.admission.rate = SubmitBuckets(monotonic=lambda: 0.0)
    return services


def test_red27_r2_job_changes_past_the_submit_rate_are_429_naming_it_and_audited(tmp_path: Path) -> None:
    services = _services(tmp_path, per_minute=5)
    try:
        mal, boss = services.caller("mal", admin=False), services.caller("boss", admin=True)
        job = services.jobs.submit(mal, SubmitJobRequest.model_validate({"gpus": 1, "command": ["true"]}))
        done, refused = 0, None
        try:
            for i in range(20):  # red27/p3_patchflood.py: hold, release, hold, release …
                services.jobs.update(mal, job.id, UpdateJobRequest.model_validate({"held": i % 2 == 0}))
                done += 1
        except BusyError as exc:
            refused = exc
        assert refused is not None and done == 4, done  # the submit took the first of 5 tokens
        assert refused.field == "max_submits_per_user_minute"
        assert refused.message == ("mal is changing jobs faster than 5 a minute, the most per user "
                                   "(c.SchedApp.max_submits_per_user_minute)"), refused.message
        assert refused.hint == "retry in 12 s (submits and changes of jobs and definitions share it)", refused.hint
        changes = [e for e in services.store.list_events(job_id=job.id) if e.action in ("job_held", "job_released")]
        assert len(changes) == 4, [e.action for e in changes]
        assert [e.details["field"] for e in services.store.list_events(action="refused")] == \
            ["max_submits_per_user_minute"]
        # an admin's changes take no token (a maintenance hold of many jobs)
        for i in range(10):
            services.jobs.update(boss, job.id, UpdateJobRequest.model_validate({"held": i % 2 == 0}))
    finally:
        services.store.close()


@pytest.mark.parametrize("body", [{"time_limit": "+1m"}, {"priority": "low"}])
def test_red27_r2_every_kind_of_change_takes_a_token(tmp_path: Path, body: dict[str, object]) -> None:
    services = _services(tmp_path, per_minute=1)
    try:
        mal = services.caller("mal", admin=False)
        job = services.jobs.submit(mal, SubmitJobRequest.model_validate(
            {"gpus": 1, "command": ["true"], "time_limit": "1h"}))
        with pytest.raises(BusyError):
            services.jobs.update(mal, job.id, UpdateJobRequest.model_validate(body))
    finally:
        services.store.close()
