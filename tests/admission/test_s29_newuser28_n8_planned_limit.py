"""newuser28 N8 / verify28 V9 (low; careless user, words): a job that gives no time limit in a queue with a
default is planned with, and stopped at, that default — but nothing said so while it pended: the submit answer
had no note, ``GET jobs/{id}`` said ``time_limit_s: null``, no line of the CLI, the magics or the panel said a
limit, and ``PATCH {"time_limit": "+10m"}`` was refused "the job has none".

Now its answers carry ``planned_time_limit`` (seconds, source, the queue's maximum, ``text``), the submit answer
a note, the lines ``time limit 30m (queue default; none given)`` (case 033's words), and a relative PATCH moves
the planned limit, within the queue's maximum. Through the service on a real SQLite store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import AuthorizationError
from jupyter_sched.magics.render import queue_frame
from jupyter_sched.services import build_services
from jupyter_sched.services.models import ListJobsRequest, SubmitJobRequest, UpdateJobRequest
from jupyter_sched.wording import job_line

RULES = [{"team": "vision", "default_s": 1800, "max_s": 3600}, {"max_s": 7200}]
VISION = {"seconds": 1800.0, "source": "queue default", "max_s": 3600.0,
          "text": "time limit 30m (queue default; none given)"}


def _services(tmp_path: Path) -> Any:
    # no engine runs its cycles here: every job pends (the reporter's node was cordoned)
    return build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                           "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off",
                           "time_limits": RULES, "user_teams": {"mal": ["vision"], "eve": ["nlp"]}})


def _submit(services: Any, user: str, body: dict[str, Any]) -> Any:
    request = SubmitJobRequest.model_validate({"gpus": 1, "command": ["true"], **body})
    return services.jobs.submit(services.caller(user, admin=False), request)


def _wire(view: Any) -> dict[str, Any]:
    return dict(view.model_dump(mode="json", exclude_none=True))


def test_newuser28_n8_a_job_giving_no_limit_says_its_queues_default_while_it_pends(tmp_path: Path) -> None:
    services = _services(tmp_path)
    try:
        mal = services.caller("mal", admin=False)
        answer = _submit(services, "mal", {"name": "dflt"})
        assert ("no time limit given: team vision's queue default 30m applies (it is stopped there); its maximum "
                "is 1h00m: give a time limit up to that for longer") in (answer.warnings or []), answer.warnings
        wire = _wire(answer)
        assert wire.get("time_limit_s") is None and wire["planned_time_limit"] == VISION, wire
        # every read of it while it pends: GET jobs/{id}, GET jobs, GET queue
        got = _wire(services.jobs.get(mal, answer.id))
        assert got["planned_time_limit"] == VISION, got
        listed = [_wire(row) for row in services.jobs.list(mal, ListJobsRequest()).jobs.root]
        assert [row.get("planned_time_limit") for row in listed] == [VISION], listed
        queued = [_wire(entry) for entry in services.jobs.queue(mal).root]
        assert [entry.get("planned_time_limit") for entry in queued] == [VISION], queued
        # the one phrase on the CLI's status line and the magics' queue table
        now = datetime.now(UTC)
        assert job_line(got, now).endswith(" · time limit 30m (queue default; none given)"), job_line(got, now)
        frame = queue_frame(queued, now)
        assert frame["detail"][0].endswith(" · time limit 30m (queue default; none given)"), frame["detail"][0]
        # a queue with a maximum but no default: planned with the maximum, said so
        eve = _wire(_submit(services, "eve", {}))
        assert eve["planned_time_limit"] == {"seconds": 7200.0, "source": "queue max", "max_s": 7200.0,
                                             "text": "time limit 2h00m (queue maximum; none given)"}, eve
        assert "no time limit given: team nlp's queue maximum 2h00m applies (it is stopped there)" in eve["warnings"]
        # a limit given: none planned, nothing said
        given = _wire(_submit(services, "mal", {"time_limit": "20m"}))
        assert "planned_time_limit" not in given and not any("no time limit" in w for w in given.get("warnings", []))
        assert "queue default" not in job_line(given, now)
    finally:
        services.store.close()


def test_verify28_v9_a_relative_patch_moves_the_planned_limit_within_the_queues_maximum(tmp_path: Path) -> None:
    services = _services(tmp_path)
    try:
        mal = services.caller("mal", admin=False)
        longer, shorter = _submit(services, "mal", {}).id, _submit(services, "mal", {}).id
        out = services.jobs.update(mal, longer, UpdateJobRequest.model_validate({"time_limit": "+10m"}))
        assert out.changed == ["time limit 30m (queue default; none given) → 40m"], out.changed
        assert out.time_limit_s == 2400 and out.planned_time_limit is None
        assert services.store.get_job(longer).job.spec.time_limit_s == 2400
        services.jobs.update(mal, shorter, UpdateJobRequest.model_validate({"time_limit": "-10m"}))
        assert services.store.get_job(shorter).job.spec.time_limit_s == 1200
        # past the queue's maximum (1h): refused as an absolute limit past it is, nothing written
        third = _submit(services, "mal", {}).id
        with pytest.raises(AuthorizationError) as caught:
            services.jobs.update(mal, third, UpdateJobRequest.model_validate({"time_limit": "+40m"}))
        assert caught.value.message == "time limit 1h10m is above the maximum of team vision's queue (1h00m)", \
            caught.value.message
        assert services.store.get_job(third).job.spec.time_limit_s is None
    finally:
        services.store.close()


def test_newuser28_n8_once_running_its_line_says_the_limit_came_from_its_queue(tmp_path: Path) -> None:
    """newuser28 N8's second half: once it ran, ``queue`` said "ends by 02:20 UTC (in 9m55s), its 10m time limit" —
    nothing said the 10m was not asked for. The limit admission writes in keeps where it came from."""
    from jupyter_sched.services import SchedulerService
    from jupyter_sched.store import sqlite_url
    from jupyter_sched.wording.jobs import ends_by
    from tests.in_process import cancel_all_and_close, tick_until

    svc = SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                        "simulated_gpus": 1, "telemetry_source": "off", "time_limits": RULES,
                                        "user_teams": {"mal": "vision"}})
    try:
        job = svc.submit({"gpus": 1, "command": ["sleep", "600"], "name": "dflt"}, user="mal")["id"]
        tick_until(svc, "the job to run", lambda: svc.services.store.get_job(job).job.state.holds_gpus)  # type: ignore[union-attr]
        mal = svc.services.caller("mal", admin=False)
        got = _wire(svc.services.jobs.get(mal, job))
        assert got["time_limit_s"] == 1800 and got["time_limit_source"] == "queue default", got
        assert "planned_time_limit" not in got, got
        line = ends_by(got, datetime.now(UTC))
        assert line.startswith("ends by ") and line.endswith(", its 30m time limit (queue default; none given)"), line
        # shortened by its owner: a limit given now, said as such
        out = svc.services.jobs.update(mal, job, UpdateJobRequest.model_validate({"time_limit": "-10m"}))
        assert out.changed[0].startswith("time limit 30m (queue default; none given) → 20m: it is stopped at "), \
            out.changed
        assert out.time_limit_s == 1200 and out.time_limit_source is None
        assert ends_by(_wire(out), datetime.now(UTC)).endswith(", its 20m time limit")
    finally:
        cancel_all_and_close(svc)
