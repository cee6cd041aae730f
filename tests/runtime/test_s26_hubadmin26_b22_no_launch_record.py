"""hubadmin26 B22: a restore without ``<log_dir>/.state`` — a running wrapper of this service that no record
names (not in the store, no launch record) was ignored and its GPU given to another job (double-booked).

Now the start-up scan finds this service's wrappers by their command line (``--job-dir`` under this log_dir,
a folder the service made, ``--launch``) and adopts one no record names as running on the GPUs its environment
names (``CUDA_VISIBLE_DEVICES``), their node from the inventory: one WARNING and one ``adopted`` audit record
naming pid, job id and account, its GPU held until it ends. Real subprocesses, real SQLite stores.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from tests.runtime.test_engine import gated, gone, make_service, state_of, wait_until
from tests.runtime.test_s23_hubadmin23_a13_restore import _wrappers_of


def test_s26_hubadmin26_b22_a_wrapper_no_record_names_is_adopted_on_the_gpus_its_environment_names(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first = make_service(f"sqlite:///{tmp_path / 'sched.sqlite'}", tmp_path, gpus=1)
    x = first.submit({"command": gated(tmp_path, "go"), "time_limit": "1h", "name": "h100-run"}, user="ana")["id"]
    wait_until(lambda: first.logs(x, user="ana")["text"], "X's first output", tick=first.tick)
    gpu = first.get_job(x, user="ana")["allocation"]["gpu_uuids"]
    pid = int((first.store.get_job(x).handle or {})["pid"])
    first.engine.resign()  # the service stops; X's wrapper runs on
    first.store.close()
    shutil.rmtree(tmp_path / "jobs" / ".state")  # a restore onto a log_dir without the old .state …
    svc = make_service(f"sqlite:///{tmp_path / 'restored.sqlite'}", tmp_path, gpus=1, owner="engine-restored")
    try:  # … and a store that never had X
        with caplog.at_level(logging.WARNING, logger="jupyter_sched.engine.restored"):
            wait_until(lambda: svc.engine.is_leader, "the restored service to lead", tick=svc.tick)
        job = svc.get_job(x, user="admin", is_admin=True)
        assert job["state"] == "running" and job["allocation"]["gpu_uuids"] == gpu, job
        assert job["resources"]["gpus"] == 1 and job["name"].startswith("(not in this store: no launch record"), job
        warned = [r.getMessage() for r in caplog.records if x in r.getMessage()]
        assert len(warned) == 1, warned
        assert f"a job wrapper of this service (pid {pid}, {x}, account " in warned[0], warned
        assert "no record in the store or in <log_dir>/.state" in warned[0] and gpu[0] in warned[0], warned
        (row,) = svc.audit(job_id=x, action="adopted")
        assert row["details"]["no_launch_record"] is True and row["details"]["handle"]["pid"] == pid, row
        # the B22 probe: a 1-GPU job is not put on X's GPU (the only one)
        probe = svc.submit({"command": gated(tmp_path, "go-probe"), "name": "probe"}, user="bo")["id"]
        for _ in range(4):
            svc.tick()
        assert state_of(svc, probe) == "pending"
        assert _wrappers_of(x, tmp_path) == [pid]  # one copy of X
        (tmp_path / "go").touch()  # X ends: its GPU goes to the probe
        wait_until(lambda: gone(pid), "X's wrapper to end", tick=svc.tick)
        wait_until(lambda: state_of(svc, probe) == "running", "the probe to get the GPU X held", tick=svc.tick)
    finally:
        (tmp_path / "go").touch()
        (tmp_path / "go-probe").touch()
        wait_until(lambda: gone(pid), "X's wrapper to end")
        svc.engine.resign()
        svc.store.close()


def test_s26_hubadmin26_b22_a_process_naming_a_folder_the_service_never_made_is_not_adopted(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Hostile: any process can put ``--job-dir … --launch`` on its command line and GPUs in its environment; a
    folder outside this log_dir, or a link planted in it, is not vouched for — nothing adopted, the GPU free."""
    import os
    import subprocess
    import sys

    svc = make_service(f"sqlite:///{tmp_path / 'sched.sqlite'}", tmp_path, gpus=1)
    fake_dir = tmp_path / "elsewhere" / "j-1m93zzzzz-fake01"
    fake_dir.mkdir(parents=True)
    linked = tmp_path / "jobs" / "j-1m93zzzzz-fake02"
    linked.symlink_to(fake_dir)
    gpu = next(iter(svc.services.ctx.inventory().gpus())).uuid
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--job-dir", str(where), "--launch"],
                              env={**os.environ, "CUDA_VISIBLE_DEVICES": gpu}) for where in (fake_dir, linked)]
    try:
        wait_until(lambda: svc.engine.is_leader, "the service to lead", tick=svc.tick)
        assert svc.audit(action="adopted") == [] and svc.audit(action="unknown_work") == []
        probe = svc.submit({"command": ["true"]}, user="bo")["id"]
        wait_until(lambda: state_of(svc, probe) in ("running", "succeeded"), "the probe to take the GPU", tick=svc.tick)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        svc.engine.resign()
        svc.store.close()
