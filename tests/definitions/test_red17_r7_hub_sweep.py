"""Red team 17, R7: in hub mode runs live in the account's own ``<root>/users/<account>/<job id>/``,
two levels below what the sweep globbed (``<root>/*/executed.ipynb``), so
``executed_notebook_retention_days`` did nothing for a hub. The sweep now reaches them — in folders
their users own (0700), so without following anything a user planted: a symlinked job folder, a
symlinked ``executed.ipynb`` pointing at a root-owned file, and a root-owned file dropped in a
user's folder all survive. Real OS accounts (useradd), the real store and local executor's layout.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from def_builders import Server

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.runas import RunAs
from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.store import sqlite_url
from jupyter_sched.store.codec import JobRecord
from tests.accounts import Account, os_accounts, skip_reason

NOW = datetime(2026, 12, 4, 12, tzinfo=timezone.utc)
OLD = (NOW - timedelta(days=45)).timestamp()

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))


def _hub_run(server: Server, account: Account, job_id: str, *, ended_days_ago: float) -> Path:
    """A finished hub run of ``account``: its record (run as the account) and its job folder, made
    as the wrapper makes it (owned by the account, 0700), with an executed notebook of its own."""
    run_as = RunAs(user=account.name, account=account.name, uid=account.uid, gid=account.gid)
    folder = server.services.executor.dirs.user_dir(run_as) / job_id
    folder.mkdir(mode=0o700)
    os.chown(folder, account.uid, account.gid)
    finished = NOW - timedelta(days=ended_days_ago)
    job = Job(id=job_id, spec=JobSpec(name=job_id, user=account.name, notebook="r.ipynb"), state=JobState.SUCCEEDED,
              submitted_at=finished - timedelta(hours=1), finished_at=finished)
    server.store.insert_job(JobRecord(job=job, executor="local",
                                      handle={"job_dir": str(folder), "run_as": run_as.to_dict()}))
    notebook = folder / "executed.ipynb"
    notebook.write_text("{}")
    os.chown(notebook, account.uid, account.gid)
    os.utime(notebook, (finished.timestamp(),) * 2)
    return notebook


def test_red17_r7_hub_runs_are_swept_and_planted_links_are_never_followed(tmp_path: Path) -> None:
    """Failed before the fix: 0 removed (the hub layout was never reached)."""
    server = Server(sqlite_url(tmp_path / "s.sqlite"), ManualClock(NOW), tmp_path / "jobs", retention_days=30)
    secret_dir = tmp_path / "root-only"
    secret_dir.mkdir(mode=0o700)
    secret = secret_dir / "shadow"
    secret.write_text("root's")
    victim = secret_dir / "j-victim"
    victim.mkdir()
    (victim / "executed.ipynb").write_text("root's notebook")
    os.utime(victim / "executed.ipynb", (OLD, OLD))
    with os_accounts(2) as (alice, mallory):
        old = _hub_run(server, alice, "j-old", ended_days_ago=45)
        recent = _hub_run(server, alice, "j-recent", ended_days_ago=3)
        # mallory's finished run plants: executed.ipynb -> a root-owned file
        linked = _hub_run(server, mallory, "j-link", ended_days_ago=45)
        linked.unlink()
        linked.symlink_to(secret)
        os.lchown(linked, mallory.uid, mallory.gid)
        os.utime(linked, (OLD, OLD), follow_symlinks=False)
        # a job folder that is a link to a root-owned folder holding an old "executed.ipynb"
        mallory_dir = linked.parent.parent
        (mallory_dir / "j-victim").symlink_to(victim)
        server.store.insert_job(JobRecord(job=Job(id="j-victim", spec=JobSpec(name="v", user="root", notebook="r"),
                                                  state=JobState.FAILED, submitted_at=NOW - timedelta(days=46),
                                                  finished_at=NOW - timedelta(days=45))))
        # a root-owned regular file in mallory's folder, as if it were her run's
        dropped = _hub_run(server, mallory, "j-dropped", ended_days_ago=45)
        os.chown(dropped, 0, 0)

        removed = server.definitions.sweep_executed_notebooks(now=NOW.timestamp())

        assert removed == 1, removed
        assert not old.exists() and recent.exists()
        assert secret.read_text() == "root's" and linked.is_symlink(), "the link is not followed, nor removed"
        assert (victim / "executed.ipynb").read_text() == "root's notebook", "a linked folder is not entered"
        assert dropped.exists(), "only a file of the folder's owner (the run's account) is removed"


def test_red17_r7_embedded_runs_are_still_swept(tmp_path: Path) -> None:
    server = Server(sqlite_url(tmp_path / "s.sqlite"), ManualClock(NOW), tmp_path / "jobs", retention_days=30)
    job = Job(id="j-emb", spec=JobSpec(name="e", user="fay", notebook="r.ipynb"), state=JobState.FAILED,
              submitted_at=NOW - timedelta(days=41), finished_at=NOW - timedelta(days=40))
    server.store.insert_job(JobRecord(job=job))
    path = server.services.executor.job_dir("j-emb") / "executed.ipynb"
    path.parent.mkdir()
    path.write_text("{}")
    os.utime(path, (OLD, OLD))
    (server.services.executor.dirs.root / "j-dangling").symlink_to(tmp_path / "nowhere")
    assert server.definitions.sweep_executed_notebooks(now=NOW.timestamp()) == 1 and not path.exists()
