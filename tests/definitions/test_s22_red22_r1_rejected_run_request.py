"""Red team 22, R1: a cron firing that can no longer submit records a *rejected* run — and that run's
job read ``priority normal, gpus 1`` (JobSpec defaults) whatever the definition asked, so the run
list said a normal 1-GPU run was refused "for being low". Now the rejected run carries the request
the firing tried (priority, GPUs, model, workers, time limit), for every kind of refusal; only a
field that no longer parses falls back. Real services on a real store, a manual clock.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.model import Job, JobState
from jupyter_sched.services.models import SetQuotasRequest

LOW_CRON = {"script": "rp.py", "schedule": "* * * * *", "timezone": "UTC", "priority": "low", "gpus": 2,
            "time_limit": "30m", "overlap": "allow"}  # every firing a run: no engine cycle starts them here (the default skips behind a waiting run: newuser34 n1)


def _server(db_url: str, tmp_path: Path) -> tuple[Server, ManualClock]:
    clock = ManualClock(at("2026-12-04T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    (tmp_path / "rp.py").write_text("print(1)\n")
    return server, clock


def _rejected(server: Server, user: str) -> list[Job]:
    return [r.job for r in server.store.list_jobs(user=user, limit=100) if r.job.state is JobState.REJECTED]


def test_s22_red22_r1_a_run_refused_for_its_priority_shows_the_priority_and_gpus_it_asked(
        db_url: str, tmp_path: Path) -> None:
    """Failed before the fix: the rejected run read priority normal, 1 GPU, no time limit."""
    server, clock = _server(db_url, tmp_path)
    root = server.caller("root", admin=True)
    server.create({**LOW_CRON, "name": "lowcron2", "script": str(tmp_path / "rp.py")}, user="red22a")
    server.services.quotas.set(root, SetQuotasRequest.model_validate(
        {"teams": [{"team": "default", "allowed_priorities": ["normal"]}]}))
    clock.advance(60)
    server.fire_due()
    [job] = _rejected(server, "red22a")
    assert job.message == ("could not submit this run: team 'default' may not use priority 'low' "
                           "(allowed: normal)"), job.message
    spec = job.spec
    assert (spec.priority.value, spec.resources.gpus, spec.time_limit_s) == ("low", 2, 1800.0), spec
    assert spec.script == str(tmp_path / "rp.py") and spec.definition_id, spec


def test_s22_red22_r1_every_refusal_kind_keeps_the_request_and_a_bad_field_alone_falls_back(
        db_url: str, tmp_path: Path) -> None:
    """Another refusal (the owner's pending cap), a 0-GPU request (not the default 1), and a run body
    one of whose fields no longer parses: that field is the default, the rest as asked."""
    server, clock = _server(db_url, tmp_path)
    admission = server.services.admission
    admission.policy = replace(admission.policy, max_pending_per_user=1)
    server.create({**LOW_CRON, "name": "cpu", "gpus": 0, "script": str(tmp_path / "rp.py")}, user="mallory")
    for _ in range(2):  # the first run pends (the engine does not run here), the second meets the cap
        clock.advance(60)
        server.fire_due()
    [job] = _rejected(server, "mallory")
    assert "pending jobs; at most 1 per user" in str(job.message), job.message
    assert (job.spec.priority.value, job.spec.resources.gpus, job.spec.time_limit_s) == ("low", 0, 1800.0), job.spec

    runs = server.definitions._runs
    body = {"name": "x @ 10:03", "script": "rp.py", "priority": "low", "gpus": 3, "time_limit": "forever",
            "team": "ml"}
    spec = runs.asked(body, user="mallory")
    assert (spec.priority.value, spec.resources.gpus, spec.team, spec.time_limit_s) == ("low", 3, "ml", None), spec
    bare = runs.asked({"name": "y", "script": "rp.py", "gpus": "many", "priority": "urgent"}, user="mallory")
    assert (bare.name, bare.script, bare.priority.value, bare.resources.gpus) == ("y", "rp.py", "normal", 1), bare
