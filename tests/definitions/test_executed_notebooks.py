"""A run's executed notebook is read only as the run's own regular file (red-team finding 0).

The service may run as root (hub mode) and the job directory belongs to the run's owner, who can
plant anything there: a symlink to ``/etc/shadow`` or to the service's ``/proc/<pid>/environ``, a
FIFO, a file of someone else's. Reading and "open" must refuse all of them (404, nothing read,
nothing copied), and a run under another account is never copied into the service's own folder.
Real parts: the definitions service over SQLite, files in a temporary job directory.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from def_builders import Server

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import NotFoundError, ValidationError
from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.store import sqlite_url
from jupyter_sched.store.codec import JobRecord

NOW = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
SECRET = "root:$6$not-for-you:20228:0:99999:7:::\n"


@pytest.fixture
def svc(tmp_path: Path) -> Server:
    return Server(sqlite_url(tmp_path / "s.sqlite"), ManualClock(NOW), tmp_path / "jobs")


def finished_run(svc: Server, job_id: str, *, run_as_uid: int | None = None) -> Path:
    """A finished notebook run of mallory's; its job directory (the executor's layout, or — for a
    run under her own account — the directory its handle names)."""
    job = Job(id=job_id, spec=JobSpec(name=job_id, user="mallory", notebook="steal.ipynb"),
              state=JobState.SUCCEEDED, submitted_at=NOW, finished_at=NOW)
    job_dir = svc.services.executor.job_dir(job_id)
    handle = None
    if run_as_uid is not None:
        handle = {"job_dir": str(job_dir), "run_as": {"user": "mallory", "account": "mallory", "uid": run_as_uid,
                                                      "gid": run_as_uid, "groups": [], "home": "/home/mallory"}}
    svc.store.insert_job(JobRecord(job=job, handle=handle))
    job_dir.mkdir(parents=True)
    return job_dir


@pytest.mark.parametrize("plant", ["symlink to a secret", "symlinked job directory", "fifo"])
def test_anything_but_the_runs_own_regular_file_is_a_404_and_nothing_is_read_or_copied(
        svc: Server, tmp_path: Path, plant: str) -> None:
    secret = tmp_path / "shadow"
    secret.write_text(SECRET)
    job_dir = finished_run(svc, "j-steal")
    if plant == "symlink to a secret":
        (job_dir / "executed.ipynb").symlink_to(secret)
    elif plant == "symlinked job directory":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "executed.ipynb").symlink_to(secret)
        job_dir.rmdir()
        job_dir.symlink_to(elsewhere)
    else:
        os.mkfifo(job_dir / "executed.ipynb")  # would hang a reader that opened it blocking
    mallory = svc.caller("mallory")
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(NotFoundError):
        svc.definitions.executed_notebook(mallory, "j-steal")
    with pytest.raises(NotFoundError):
        svc.definitions.open_executed_notebook(mallory, "j-steal", str(root))
    assert list(root.rglob("*")) == []  # nothing copied
    refused = [(e.actor, e.job_id, e.details["request"]) for e in svc.store.list_events(action="refused")]
    assert refused == [("mallory", "j-steal", "read executed notebook")] * 2  # both attempts audited


def test_a_run_under_another_account_is_read_only_when_that_account_owns_the_file_and_never_copied(
        svc: Server, tmp_path: Path) -> None:
    mine = os.geteuid()
    job_dir = finished_run(svc, "j-hub", run_as_uid=mine + 4242)  # ran as another OS account
    (job_dir / "executed.ipynb").write_text('{"cells": []}')  # but the file is not that account's
    mallory = svc.caller("mallory")
    with pytest.raises(NotFoundError):
        svc.definitions.executed_notebook(mallory, "j-hub")

    owned = finished_run(svc, "j-hub-ok", run_as_uid=mine)  # the account's own file: served
    (owned / "executed.ipynb").write_text('{"cells": []}')
    assert b"".join(svc.definitions.executed_notebook(mallory, "j-hub-ok").chunks()) == b'{"cells": []}'
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(ValidationError) as refused:
        svc.definitions.open_executed_notebook(mallory, "j-hub-ok", str(root))
    assert refused.value.field == "job_id" and "download" in (refused.value.hint or "")
    assert list(root.rglob("*")) == []


def test_the_runs_own_notebook_is_served_and_opened_in_embedded_mode(svc: Server, tmp_path: Path) -> None:
    job_dir = finished_run(svc, "j-ok")
    (job_dir / "executed.ipynb").write_text('{"cells": []}')
    mallory = svc.caller("mallory")
    served = svc.definitions.executed_notebook(mallory, "j-ok")
    served.file.close()
    assert served.filename == "steal (executed j-ok).ipynb"
    root = tmp_path / "root"
    root.mkdir()
    opened = svc.definitions.open_executed_notebook(mallory, "j-ok", str(root))
    assert (root / opened.path).read_text() == '{"cells": []}'


def test_a_run_without_an_executed_notebook_is_a_plain_404_not_an_audited_refusal(svc: Server) -> None:
    finished_run(svc, "j-none")
    with pytest.raises(NotFoundError, match="no executed notebook"):
        svc.definitions.executed_notebook(svc.caller("mallory"), "j-none")
    assert svc.store.list_events(action="refused") == []
