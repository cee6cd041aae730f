"""newuser38 n13: a quota change's preview (PUT quotas ``"dry_run": true``, the panel's Save preview) said only
"nlp: running work holds 3 GPUs … it runs on (nothing is stopped)" while vision's pending job, within the new
guarantee, was kept from nlp's now-borrowed GPUs only by vision's reclaim cool-down — at its end nlp's work was
preempted, which nothing had said. And the dry run's answer had no field saying it was one, nor what it would
preempt (admin.md promises the running work the change would preempt).

Now the answer carries ``dry_run`` and ``preempts`` (always; [] says none), and a reclaim the change causes once a
team's cool-down ends is said: "after team teamb's reclaim cool-down ends at HH:MM UTC, this change preempts: …".

Real parts, as tests/runtime/test_s33_red32_r5_reclaim_ends.py (its set-up): SchedulerService in-process on a real
SQLite store, the real core and real subprocesses on 2 simulated GPUs; teamb's cool-down made by a real reclaim
whose preemptor exited at once.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.services.models import SetQuotasRequest
from tests.runtime.test_engine import gated, state_of, wait_until
from tests.runtime.test_s33_red32_r5_reclaim_ends import Reclaim, _end_jobs  # noqa: F401  (autouse: ends the jobs)


def test_newuser38_n13_the_dry_run_says_a_reclaim_held_by_a_cool_down_and_that_it_is_a_dry_run(
        sqlite_db: str, tmp_path: Path) -> None:
    """Failed before: the answer had neither field, and no warning named the reclaim after the cool-down."""
    run = Reclaim(sqlite_db, tmp_path, {"command": gated(tmp_path, "b-go")})
    (tmp_path / "b-go").touch()  # bob's preemptor exits at once: teamb's reclaims wait out the cool-down
    run.ended("succeeded")
    svc = run.svc
    # cid's two jobs: one within teamb's guarantee of 1 (held by the cool-down either way), one only within 2
    waiting = [svc.submit({"gpus": 1, "command": gated(tmp_path, "never"), "name": f"b-wait{i}"}, user="cid")["id"]
               for i in (1, 2)]
    wait_until(lambda: all(state_of(svc, j) == "pending" for j in waiting), "cid's jobs pending", tick=svc.tick)
    assert all(state_of(svc, j) == "running" for j in run.ann)
    admin = svc.services.caller("admin", admin=True)
    calm = svc.services.quotas.set(admin, SetQuotasRequest.model_validate({**_lines(1, 1, limit=1), "dry_run": True}))
    assert (calm.dry_run, calm.preempts) == (True, []), calm  # [] says it: nothing is preempted
    dry = svc.services.quotas.set(admin, SetQuotasRequest.model_validate({**_lines(0, 2), "dry_run": True}))
    assert dry.dry_run is True
    (said,) = dry.preempts
    assert said.startswith("after team teamb's reclaim cool-down ends at ") and " UTC, this change preempts: ann's job " \
        '"a-bor' in said, said
    assert "of teama, 1 GPU" in said and "preempted to return borrowed quota to teamb" in said, said
    assert said in dry.warnings, dry.warnings  # the panel's preview shows the warnings
    assert all(state_of(svc, j) == "running" for j in run.ann), "a dry run preempts nothing"
    done = svc.services.quotas.set(admin, SetQuotasRequest.model_validate(_lines(0, 2)))
    assert done.dry_run is False and done.preempts == [said], done.preempts


def _lines(teama: int, teamb: int, *, limit: int | None = None) -> dict[str, object]:
    return {"quotas": [{"team": "teama", "guaranteed": teama, "borrowing_limit": limit},
                       {"team": "teamb", "guaranteed": teamb, "borrowing_limit": None}]}
