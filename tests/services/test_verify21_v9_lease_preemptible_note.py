"""Verify 21, V9: the low-priority note at submit (new user 21, N5) was given word for word to a
**lease** — "once preempted, each restart is protected … a preempted job goes back to the queue
with its submit time" — but a preempted lease ends at once (it neither restarts nor requeues).
A lease now gets its own true sentence; a job keeps the job's.

Real parts: a SQLite store, the local executor, the service's own profile; 2 simulated GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from tests.services.test_newuser21_n5_preemptible_note import _services


def _lease_notes(services: Services, priority: str) -> list[str]:
    lease = services.leases.request(services.caller("ana", admin=False),
                                    SubmitJobRequest(gpus=1, priority=priority, kernel_id="k-v9"))
    return [w for w in lease.warnings or [] if w.startswith(f"priority {priority}:")]


@pytest.mark.parametrize("profile, want", [
    pytest.param(None, "priority low: higher-priority work may take these GPUs at any moment (a lease in use and "
                 "younger than 5m is spared only when another can make room; an idle one is not); a preempted lease ends and its GPUs leave this "
                 "kernel — %gpu request asks again", id="default profile"),
    pytest.param(SchedulingProfile(min_runtime_s=0), "priority low: higher-priority work may take these GPUs at any "
                 "moment; a preempted lease ends and its GPUs leave this kernel — %gpu request asks again",
                 id="no minimum runtime: no sparing promised"),
    pytest.param(SchedulingProfile(preemption=False), None, id="preemption off: no note"),
])
def test_verify21_v9_a_low_lease_is_told_a_preempted_lease_ends(tmp_path: Path, profile: SchedulingProfile | None,
                                                                 want: str | None) -> None:
    svc = _services(tmp_path, profile)
    try:
        notes = _lease_notes(svc, "low")
        assert _lease_notes(svc, "normal") == []
    finally:
        svc.store.close()
    # was: the job's note ("each restart is protected …; a preempted job goes back to the queue")
    assert notes == ([want] if want else []), notes
    assert not any("restart" in n or "back to the queue" in n for n in notes)


def test_verify21_v9_definitions_create_and_edit_priority_low_carry_the_jobs_note(tmp_path: Path) -> None:
    """``definitions create/edit --priority low``: its runs are low jobs, and nothing said so (new user
    21, N5 nit). The answer now carries the job's note in ``warnings`` (the CLI prints it); a normal
    definition, and an edit that leaves the run's request as it was (a pause), carry none."""
    from jupyter_sched.services.models import parse
    from jupyter_sched.services.models.definitions import CreateDefinitionRequest, UpdateDefinitionRequest

    svc = _services(tmp_path, None)
    script = tmp_path / "nightly.py"
    script.write_text("print('x')\n")
    ana = svc.caller("ana", admin=False)
    try:
        low = svc.definitions.create(ana, parse(CreateDefinitionRequest, {
            "name": "nightly", "script": str(script), "schedule": "0 3 * * *", "timezone": "UTC", "gpus": 1,
            "time_limit": "10m", "priority": "low"}))
        plain = svc.definitions.create(ana, parse(CreateDefinitionRequest, {
            "name": "plain", "script": str(script), "schedule": "0 3 * * *", "timezone": "UTC", "gpus": 1,
            "time_limit": "10m"}))
        edited = svc.definitions.update(ana, plain.id, parse(UpdateDefinitionRequest, {"priority": "low"}))
        paused = svc.definitions.pause(ana, low.id)
    finally:
        svc.store.close()
    note = [w for w in low.warnings or [] if w.startswith("priority low:")]  # was: no warnings at all
    assert len(note) == 1 and note[0].endswith("a preempted job goes back to the queue with its submit time"), note
    assert "warnings" not in plain.to_wire()
    assert [w for w in edited.warnings or [] if w.startswith("priority low:")] == note
    assert "warnings" not in paused.to_wire()


def test_verify21_v9_a_low_job_without_gpus_is_not_told_it_may_be_preempted(tmp_path: Path) -> None:
    """Preemption frees GPUs: a job holding none is never its victim, so it gets no note."""
    svc = _services(tmp_path, None)
    try:
        job = svc.jobs.submit(svc.caller("ana", admin=False),
                              SubmitJobRequest(gpus=0, priority="low", time_limit="10m", command=["true"]))
    finally:
        svc.store.close()
    assert not [w for w in job.warnings or [] if w.startswith("priority low:")], job.warnings


def test_verify21_v9_schedule_define_says_the_servers_note(tmp_path: Path) -> None:
    """``%schedule define … --priority low`` prints the answer's note as ``Note: …`` (as %gpu request does)."""
    from jupyter_sched.client._wire import Req
    from jupyter_sched.magics.define import run_define
    from jupyter_sched.services.models import parse
    from jupyter_sched.services.models.definitions import CreateDefinitionRequest

    svc = _services(tmp_path, None)
    script = tmp_path / "nightly.py"
    script.write_text("print('x')\n")
    ana = svc.caller("ana", admin=False)

    def call(req: Req) -> object:  # the server's answer to the create the magic sends
        assert (req.method, req.path) == ("POST", "definitions"), req
        return svc.definitions.create(ana, parse(CreateDefinitionRequest, dict(req.body))).to_wire()

    said: list[str] = []
    try:
        run_define(call, ["nightly.py", "--cron", "0 3 * * *", "--gpus", "1", "--time-limit", "10m", "--priority",
                          "low", "--tz", "UTC"], resolve=lambda p, what: script, say=said.append)
    finally:
        svc.store.close()
    assert any(s.startswith("Note: priority low: higher-priority work may preempt it") for s in said), said
