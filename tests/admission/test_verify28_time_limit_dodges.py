"""verify28 V1-V3 (real hub, session 28): the queue time limits of session 27 were dodged through ``PATCH jobs``.

- V3 (high): a job that GAVE no limit is planned (and promised a start) on its queue's default; its owner's
  ``PATCH {"time_limit": "1000h"}`` was compared with "none given", read as not longer, so neither the queue's
  maximum nor red27 R1's promise drop applied: the job ran 1000 h ahead of another user's reservation.
- V1 (medium): a class change carried a limit past the new class's maximum (a 4-h ``low`` job moved to
  ``normal``, whose maximum is 2 h).
- V2 (low): 3,601 s over a 1-h maximum read "time limit 1h00m is above the maximum … (1h00m)", and ``PATCH``
  worded the refusal another way than submit.
Each through the service on a real SQLite store, refusals audited and nothing written."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import AuthorizationError
from jupyter_sched.model import PendingReason
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.services import build_services
from jupyter_sched.services.models import SubmitJobRequest, UpdateJobRequest

RULES = [{"team": "vision", "default_s": 1800, "max_s": 3600}, {"max_s": 7200}, {"priority": "low", "max_s": 14400}]


def _services(tmp_path: Path) -> Any:
    return build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                           "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off",
                           "admin_users": ["carol"], "time_limits": RULES,
                           "user_teams": {"mal": ["vision"], "eve": ["nlp"]},
                           "priority_grants": {"teams": {"vision": ["normal", "low"], "nlp": ["normal", "low"]}}})


def _submit(services: Any, user: str, body: dict[str, Any]) -> str:
    request = SubmitJobRequest.model_validate({"gpus": 0, "command": ["true"], **body})
    return str(services.jobs.submit(services.caller(user, admin=False), request).id)


def _patch(services: Any, user: str, job_id: str, body: dict[str, Any], *, admin: bool = False) -> Any:
    return services.jobs.update(services.caller(user, admin=admin), job_id, UpdateJobRequest.model_validate(body))


def _refused(services: Any, user: str, job_id: str, body: dict[str, Any]) -> AuthorizationError:
    before = services.store.get_job(job_id).job
    with pytest.raises(AuthorizationError) as caught:
        _patch(services, user, job_id, body)
    assert services.store.get_job(job_id).job == before, body  # nothing written
    audited = [e for e in services.store.list_events(user=user) if e.action == "refused" and e.job_id == job_id]
    assert audited and audited[-1].message == caught.value.message, [e.message for e in audited]
    return caught.value


def test_verify28_v3_a_job_that_gave_no_limit_is_not_lengthened_past_its_queues_maximum(tmp_path: Path) -> None:
    services = _services(tmp_path)
    try:
        job_id = _submit(services, "mal", {})  # no limit: planned on vision's 30-min default
        err = _refused(services, "mal", job_id, {"time_limit": "1000h"})
        assert err.field == "time_limit"
        assert err.message == "time limit 41d16h is above the maximum of team vision's queue (1h00m)", err.message
        assert f"jupyter-sched update {job_id} --time-limit 1h00m" in (err.hint or "")
        # within the maximum but longer than the default it was planned on: taken, and its promise dropped
        record = services.store.get_job(job_id)
        promised = PendingReason(code="WaitingForCapacity", message="waiting", details={
            PROMISE: {"at": record.job.submitted_at.isoformat(),
                      "start": (record.job.submitted_at + timedelta(minutes=5)).isoformat()}})
        with services.store.transaction() as tx:
            tx.update_job(replace(record, job=replace(record.job, reason=promised)))
        _patch(services, "mal", job_id, {"time_limit": "50m"})
        job = services.store.get_job(job_id).job
        assert job.spec.time_limit_s == 3000 and PROMISE not in (job.reason.details if job.reason else {})
    finally:
        services.store.close()


def test_verify28_v1_a_class_change_keeps_the_limit_within_the_new_classs_maximum(tmp_path: Path) -> None:
    services = _services(tmp_path)
    try:
        job_id = _submit(services, "eve", {"time_limit": "4h", "priority": "low"})  # low's maximum
        err = _refused(services, "eve", job_id, {"priority": "normal"})
        assert err.field == "priority"
        assert err.message == "class normal: time limit 4h00m is above the maximum of team nlp's queue (2h00m)", \
            err.message
        assert f"jupyter-sched update {job_id} --time-limit 2h00m" in (err.hint or "") and "keep class low" in \
            (err.hint or "")
        _refused(services, "eve", job_id, {"time_limit": "4h", "priority": "normal"})
        # the end state is what is checked: 2 h and normal together is a legal job, in either key order
        _patch(services, "eve", job_id, {"time_limit": "2h", "priority": "normal"})
        assert services.store.get_job(job_id).job.spec.time_limit_s == 7200
        other = _submit(services, "eve", {"time_limit": "1h"})
        _patch(services, "eve", other, {"priority": "low", "time_limit": "4h"})  # low's maximum is 4 h
        assert services.store.get_job(other).job.spec.time_limit_s == 14400
        # an admin may go over it, as at submit
        _patch(services, "carol", other, {"priority": "normal"}, admin=True)
        assert services.store.get_job(other).job.spec.priority.value == "normal"
    finally:
        services.store.close()


def test_verify28_v2_a_limit_seconds_over_the_maximum_is_said_to_the_second_in_one_wording(tmp_path: Path) -> None:
    services = _services(tmp_path)
    try:
        with pytest.raises(AuthorizationError) as at_submit:
            _submit(services, "mal", {"time_limit": 3601})
        assert at_submit.value.message == "time limit 1h00m01s is above the maximum of team vision's queue (1h00m)"
        job_id = _submit(services, "eve", {"time_limit": "2h"})
        err = _refused(services, "eve", job_id, {"time_limit": "+0.5s"})
        assert err.message == "time limit 2h00m00.5s is above the maximum of team nlp's queue (2h00m)", err.message
        assert err.details["max_s"] == 7200
    finally:
        services.store.close()


def test_verify28_time_limit_zero_is_stopped_at_the_queues_maximum_once_it_starts(tmp_path: Path) -> None:
    """newuser28 N2 / red28 R1: ``--time-limit 0`` ran with no limit in a queue whose maximum refused 2 h. Case 033
    keeps it accepted with its note and planned as unlimited (never backfilled); it is stopped at the maximum."""
    services = _services(tmp_path)
    try:
        request = SubmitJobRequest.model_validate({"gpus": 1, "command": ["true"], "time_limit": 0})
        answer = services.jobs.submit(services.caller("mal", admin=False), request)
        assert any(w.startswith("time limit 0 = unlimited; this job can only start when nothing is reserved; team "
                                "vision's queue stops it at its maximum (1h00m) once it starts") for w in
                   answer.warnings or ()), answer.warnings
        pending = services.store.get_job(answer.id).job
        assert pending.spec.unlimited and pending.spec.time_limit_s is None  # planned as unlimited (case 033)
        services.engine.tick()
        started = services.store.get_job(answer.id).job
        assert started.admitted_at is not None, started.state
        assert started.spec.time_limit_s == 3600 and not started.spec.unlimited  # its executor stops it there
        # a pending job's owner may ask for none too: the same, and its promise is made anew
        other = _submit(services, "eve", {"gpus": 2, "command": ["true"], "time_limit": "1h"})
        _patch(services, "eve", other, {"time_limit": 0})
        assert services.store.get_job(other).job.spec.unlimited
        _ended(services)
    finally:
        asyncio.run(services.stop())


def _ended(services: Any) -> None:
    """Every job of the test ended (each runs ``true``): the engine ticked until none is live (bounded)."""
    deadline = time.monotonic() + 30
    while any(not r.job.state.terminal for r in services.store.list_jobs()) and time.monotonic() < deadline:
        services.engine.tick()
        time.sleep(0.05)
