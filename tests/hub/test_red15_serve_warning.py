"""Red team 15, R4: a hub started with the shipped defaults (no quota, no default time limit) let one
user hold every GPU for ever, and nothing said so. ``jupyter-sched serve`` now warns at start-up,
naming the settings; ``jupyter-sched doctor`` says the same of a shared store without quotas. Real
parts: the ``serve`` subprocess of tests/hub/test_hub_refusals.py (stopped by a refused setting after
its start-up checks), the installed doctor on real SQLite stores."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.model import Job, JobSpec, Quota, QuotaSet
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.codec import JobRecord
from tests.accounts import shared_dir
from tests.reliability.test_newuser13_doctor import _doctor

from .test_hub_refusals import serve

WARNING = "no quotas are configured: one user may hold every GPU"


def serve_to_its_warnings(tmp_path: Path, *options: str, settings: tuple[str, ...] = (),
                          allow_port: bool = True) -> str:
    """Run ``jupyter-sched serve`` (``options``; config lines ``settings``; ``allow_port``: with
    ``--allow-unprivileged-port``) with a job interpreter it refuses after its start-up warnings, so that it
    stops there; its log."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    with shared_dir() as folder:
        (folder / "config").mkdir()
        lines = [f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}",
                 f"c.HubSchedApp.job_python = {str(private / 'python')!r}", *settings]
        (folder / "config" / "jupyter_sched_serve_config.py").write_text("\n".join(lines) + "\n")
        code, log = serve(folder, *options, allow_port=allow_port)
    assert code != 0 and "c.HubSchedApp.job_python" in log, log[-2000:]
    return log


@pytest.mark.skipif(os.geteuid() != 0, reason="hub mode with the local executor runs as root")
@pytest.mark.parametrize("quotas", [False, True], ids=["no quota: warned", "quotas: not warned"])
def test_red15_r4_serve_warns_at_start_up_when_no_quota_is_configured(tmp_path: Path, quotas: bool) -> None:
    log = serve_to_its_warnings(
        tmp_path, settings=("c.SchedApp.quotas = [{'team': 'default', 'guaranteed': 1}]",) if quotas else ())
    # and who can read its jobs' command lines here, /proc's option named (new user 17, N13)
    from jupyter_sched.executors.proc_mount import command_line_visibility

    assert f"jupyter_sched: {command_line_visibility().text}" in log, log[-2000:]
    if quotas:
        assert WARNING not in log, log[-2000:]
    else:
        said = next(line for line in log.splitlines() if WARNING in line)
        assert "c.SchedApp.quotas" in said and "c.SchedApp.default_time_limit_s" in said, said


def _job(job_id: str, user: str) -> JobRecord:
    spec = JobSpec(name=job_id, user=user, team="default", command=("true",))
    return JobRecord(job=Job(id=job_id, spec=spec, submitted_at=datetime(2026, 12, 4, tzinfo=timezone.utc)))


@pytest.mark.parametrize("users, quota, warned", [
    (("a", "b"), False, True), (("a",), False, False), (("a", "b"), True, False)],
    ids=["a shared store without quotas", "one user's store", "a shared store with quotas"])
def test_red15_r4_doctor_says_a_shared_store_has_no_quotas(tmp_path: Path, users: tuple[str, ...], quota: bool,
                                                           warned: bool) -> None:
    path = tmp_path / "store.sqlite"
    store = Store(sqlite_url(path))
    with store.transaction() as tx:
        for n, user in enumerate(users):
            tx.insert_job(_job(f"j-{n}", user))
        if quota:
            tx.replace_quota_set(QuotaSet(quotas=(Quota(team="default", guaranteed=1),)))
    store.close()
    done = _doctor(tmp_path, "--db", sqlite_url(path))
    assert done.returncode == 0, done.stderr
    assert (WARNING in done.stdout) is warned, done.stdout
