"""Closing note 27: one user's job logs are bounded (``c.SchedApp.max_user_log_mib``, 4096 MiB), so twenty users may
keep 80 GiB — "README sizing advice, not a cap", and neither the README nor any check said it. Now the README
says it where the setting is, and ``jupyter-sched doctor`` on a hub's store says whether the disk of the service's
``log_dir`` can hold users x cap (free now + the logs there now), with the fix when it cannot."""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_sched.cli.log_disk import log_disk_text
from jupyter_sched.model import JobState
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.codec import JobRecord
from tests.reliability.test_newuser13_doctor import _doctor
from tests.runtime.builders import make_job

GIB = 1 << 30


def test_s28_closing27_log_sizing_words() -> None:
    fits, said = log_disk_text("/srv/logs", 20, 4096, 100 * GIB, 5 * GIB)
    assert fits and said == ("log disk: /srv/logs can hold 20 users x max_user_log_mib 4096 MiB = 80 GiB of job logs "
                             "at most (100 GiB free + 5 GiB of job logs now)"), said
    fits, said = log_disk_text("/srv/logs", 20, 4096, 30 * GIB, 10 * GIB, logs_at_least=True)
    assert not fits and said == (
        "log disk: /srv/logs cannot hold 20 users x max_user_log_mib 4096 MiB = 80 GiB of job logs at most: it has "
        "30 GiB free + at least 10 GiB of job logs now — give the log folder a disk of 80 GiB or more "
        "(c.SchedApp.log_dir), or lower c.SchedApp.max_user_log_mib to 2048 or less"), said
    fits, said = log_disk_text("/srv/logs", 3, 0, GIB, 0)
    assert not fits and "max_user_log_mib = 0, so one user's job logs have no total" in said, said


def test_s28_closing27_log_sizing_doctor_says_whether_the_log_disk_holds_users_times_the_cap(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite"
    store = Store(sqlite_url(db))
    for n, user in enumerate(("ann", "bob", "cy")):
        store.insert_job(JobRecord(job=make_job(f"j-{n}", user=user, gpus=1, state=JobState.SUCCEEDED),
                                   executor="local"))
    store.close()
    logs = tmp_path / "logs"
    (logs / "users" / "ann").mkdir(parents=True)
    (logs / "users" / "ann" / "output.log").write_bytes(b"x" * 4096)
    config = tmp_path / "config"
    config.mkdir()
    disk = os.statvfs(logs)
    room_mib = (disk.f_bavail * disk.f_frsize) >> 20
    for cap, fits in ((1, True), (room_mib + 1, False)):  # 3 users x (all of the free space + 1 MiB): no room
        (config / "jupyter_sched_serve_config.py").write_text(
            f"c.SchedApp.log_dir = {str(logs)!r}\nc.SchedApp.max_user_log_mib = {cap}\n")
        run = _doctor(tmp_path, "--db", sqlite_url(db), JUPYTER_CONFIG_DIR=str(config))
        said = [line for line in run.stdout.splitlines() if line.startswith("log disk: ")]
        assert len(said) == 1, run.stdout + run.stderr
        assert f"3 users x max_user_log_mib {cap} MiB" in said[0], said
        assert ((" can hold " in said[0]) if fits else (" cannot hold " in said[0] and
                                                        "lower c.SchedApp.max_user_log_mib to" in said[0])), said
