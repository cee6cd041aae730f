"""hubadmin26 B13: the service's own log was no incident timeline — after a busy admin session (a drain that
evicted three jobs, secret rotations, a team move, quota changes, forty job starts and ends) its log had none of
them: only the database held them, which is the thing that is gone when the incident is the database (an
outage, a restore that loses hours). Now every committed audit record is one INFO line of the service log, in
the record's own words and grep-able by job id and user (``jupyter_sched audit: …``); estimates' moves and
progress notes, many a minute and changing no placement or policy, are left out.

Real parts: the services on a real SQLite store, a real job process, the logger the server passes.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import pytest

from jupyter_sched.services import build_services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models.quotas import SetQuotasRequest


def test_hubadmin26_b13_each_audit_record_is_a_line_of_the_service_log(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    app_log = logging.getLogger("test-b13-SchedApp")  # the extension app's logger (the server's log)
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "simulated_gpus": 2, "telemetry_source": "off"}, log=app_log)
    try:
        with caplog.at_level(logging.INFO, logger="test-b13-SchedApp"):
            boss = services.caller("boss", admin=True)
            services.quotas.set(boss, SetQuotasRequest.model_validate({"quotas": [{"team": "default", "guaranteed": 2}]}))
            job = services.jobs.submit(boss, SubmitJobRequest(gpus=1, command=[sys.executable, "-c", "pass"],
                                                              name="b13-run"))
            deadline = time.monotonic() + 60
            while services.jobs.get(boss, job.id).state not in ("succeeded", "failed"):
                assert time.monotonic() < deadline
                services.engine.tick()
                time.sleep(0.05)
        lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("jupyter_sched audit: ")]
        assert all(r.levelno == logging.INFO for r in caplog.records if r.getMessage() in lines)
        actions = [line.split()[2] for line in lines]
        assert {"quotas_changed", "submit", "admit", "succeeded"} <= set(actions), lines
        mine = [line for line in lines if job.id in line]
        assert len(mine) >= 3 and all(f"(job {job.id}, user boss)" in line for line in mine), mine
        assert not any(line.split()[2] in ("eta_moved", "progress_ignored") for line in lines), lines
    finally:
        services.store.close()
