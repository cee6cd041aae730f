"""verify26 V15: red26 R7's OOM order (jobs at oom_score_adj 500) does not hold where the service lacks CAP_SYS_RESOURCE.

The kernel keeps the value root writes to a job's ``oom_score_adj`` as the job's floor (``oom_score_adj_min``)
only when the writer holds ``CAP_SYS_RESOURCE``; a service in a container's default capability set (this VM, as
Docker's) has it dropped, so a job writes 0 back (tests/runtime/test_s26_red26_r7_oom_score.py shows it with a
real job as its owner) and, out of memory, is no likelier a victim than the service or PostgreSQL. Nothing said
so: the start-up line and doctor said "oom_score_adj 500 (out of memory, the kernel kills a job before this
service)". There is no way to set the floor without the capability (the writer's capability is what the kernel
checks), so the service now says it as it is, at start as a WARNING when it runs other accounts' jobs (root), and
doctor's "isolation:" line, with the fix: grant the capability, or cap every job's memory.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jupyter_sched.cli import doctor
from jupyter_sched.executors import limits
from jupyter_sched.executors.limits import LocalLimits, holds_cap_sys_resource, oom_floor_problem
from jupyter_sched.services.config import build_services

NO_FLOOR = ("oom_score_adj 500, no floor (this service lacks CAP_SYS_RESOURCE: a job may set its own back to 0; fix: "
            "grant this service CAP_SYS_RESOURCE (systemd: AmbientCapabilities=CAP_SYS_RESOURCE; docker: --cap-add "
            "SYS_RESOURCE), or cap every job's memory (c.SchedApp.job_memory_mib) so none can take this host's memory)")


def _started(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    settings = {"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "jobs"),
                "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"}
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        services = build_services(settings)
    services.store.close()
    return [r for r in caplog.records if "local jobs: GPUs fenced by" in r.getMessage()]


def test_verify26_v15_without_cap_sys_resource_start_up_and_doctor_say_the_oom_score_is_no_floor_and_the_fix(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "holds_cap_sys_resource", lambda: False)  # this VM's (and Docker's default) set
    summary = LocalLimits(root=tmp_path / "cg", make=False).summary()
    assert summary.endswith("; " + NO_FLOOR), summary
    assert "kills a job before this service" not in summary
    assert NO_FLOOR in doctor._isolation()
    monkeypatch.setattr(limits.os, "geteuid", lambda: 0)  # root, as the hub's service running other accounts' jobs
    said = _started(tmp_path, caplog)
    # said in the isolation line at every start; the WARNING is the hub's, where it runs other accounts' jobs
    # (newuser28 n11: a personal lab's first WARNING was this multi-user concern)
    assert len(said) == 1 and NO_FLOOR in said[0].getMessage(), said
    assert limits.oom_floor_warning() == (
        "jobs start with oom_score_adj 500 but this service lacks CAP_SYS_RESOURCE, so it is no floor: a job may set "
        "its own back to 0 and, out of memory, be no likelier a victim than this service or PostgreSQL; fix: "
        + limits.OOM_FLOOR_FIX)


def test_verify26_v15_with_cap_sys_resource_the_oom_score_is_a_floor_and_said_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "holds_cap_sys_resource", lambda: True)
    summary = LocalLimits(root=tmp_path / "cg", make=False).summary()
    assert summary.endswith("; oom_score_adj 500 (out of memory, the kernel kills a job before this service)"), summary
    assert oom_floor_problem() is None and oom_floor_problem(held=None) is None


def test_verify26_v15_the_capability_is_read_from_the_effective_set(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text("Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n")  # this VM: bit 24 clear
    assert holds_cap_sys_resource(status) is False
    status.write_text("CapEff:\t000001ffffffffff\n")  # root on a host
    assert holds_cap_sys_resource(status) is True
    assert holds_cap_sys_resource(tmp_path / "none") is None  # no /proc: nothing said
    assert oom_floor_problem(held=False) is not None and oom_floor_problem(held=True) is None
