"""hubadmin23/24 A19: the job-token secret (what signs ``jsjob1.…`` tokens) lives in the store.

It was a file beside each server's data folder: servers sharing one PostgreSQL store on several hosts, a
redeploy onto a fresh folder or a restored backup each had another secret, and every running job's progress
reports were refused (401). Now ``job_token_secrets`` (schema version 19) holds it: made once, race-free
between two starting servers; an old file's secret moved in at the first start (running jobs' tokens keep
working) and the file not read again; rotated by ``jupyter-sched doctor rotate-job-secret`` (audited; running
jobs' tokens work until they end, or stop at once with ``--revoke-running --yes``); never in any API answer.

Real parts: the store on SQLite and on the session's PostgreSQL (``db_url``), the services and
``install_job_tokens`` as a start runs them, the doctor's command line.
"""

from __future__ import annotations

import io
import logging
import re
import threading
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import jupyter_sched
from jupyter_sched.cli.doctor import main as doctor
from jupyter_sched.errors import TokenRefusedError
from jupyter_sched.extension.job_tokens import install_job_tokens
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.job_tokens import JobTokens
from jupyter_sched.store import JobRecord, Store
from jupyter_sched.store.job_secrets import ROTATED_ACTION, ensure_job_secret, read_job_secrets
from tests.runtime.builders import T0, make_job

ROUTE = "POST jobs/{job_id}/progress"
OLD = b"an-old-file-secret-of-64-hex-chars-0123456789abcdef0123456789abc"


def _running(services: Services, job_id: str, admitted_minutes_ago: float, since: datetime = T0) -> None:
    job = make_job(job_id, user="ivan")
    at = since - timedelta(minutes=admitted_minutes_ago)
    services.store.insert_job(JobRecord(job=replace(job, state=JobState.RUNNING, admitted_at=at, started_at=at,
                                                    attempts=1)))


def _start(services: Services, tmp_path: Path, caplog: pytest.LogCaptureFixture | None = None) -> list[str]:
    """``install_job_tokens`` as a start runs it (data folder ``tmp_path/data``): the WARNINGs it logged."""
    app = SimpleNamespace(job_api_url="", job_token_secret_file="", sched_data_dir=tmp_path / "data",
                          serverapp=SimpleNamespace(connection_url="http://127.0.0.1:8888/"))
    if caplog is None:
        install_job_tokens(app, services)
        return []
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.extension.job_tokens"):
        install_job_tokens(app, services)
    return [r.getMessage() for r in caplog.records]


def _token_of(services: Services, job_id: str) -> str:
    """The token the executor gives the job's run now (as a job's environment gets it)."""
    job = services.store.get_job(job_id).job
    return str(services.executor.job_env(job)["JUPYTER_SCHED_JOB_TOKEN"])  # type: ignore[attr-defined]


def _accepted(services: Services, token: str, job_id: str) -> bool:
    try:
        services.job_tokens.caller(token, route=ROUTE, job_id=job_id, allowed=True)  # type: ignore[attr-defined]
    except TokenRefusedError:
        return False
    return True


def _secrets(services: Services) -> list[bytes]:
    with services.store.transaction(write=False) as tx:
        return [s.secret for s in read_job_secrets(tx.conn)]


def test_s24_a19_the_secret_is_made_once_race_free_and_every_server_of_the_store_reads_it(db_url: str) -> None:
    # fails before the fix: each server made its own file; there was no secret in the store
    stores = [Store(db_url), Store(db_url)]
    go = threading.Barrier(2)
    got: list[Any] = [None, None]

    def start(i: int) -> None:
        go.wait(30)
        got[i] = ensure_job_secret(stores[i], from_file=None, file_name="none")

    try:
        threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        (first, done_a), (second, done_b) = got
        assert sorted([done_a, done_b]) in (["kept", "made"], ["made", "made"]) or done_a == done_b == "made"
        assert [s.generation for s in first] == [s.generation for s in second] == [1]
        assert first[0].secret == second[0].secret and len(first[0].secret) == 64
        assert first[0].secret.decode() not in repr(first[0])  # never shown
        assert ensure_job_secret(stores[1], from_file=OLD, file_name="late")[1] == "kept"  # a later start keeps it
    finally:
        for store in stores:
            store.close()


def test_s24_a19_an_old_files_secret_moves_into_the_store_and_is_not_read_again(
        services: Services, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # fails before the fix: the file stayed the secret (a restored store on a new host refused every running job)
    _running(services, "j-a19-1", admitted_minutes_ago=30)
    path = tmp_path / "data" / "job_token_secret"
    path.parent.mkdir()
    path.write_bytes(OLD)
    path.chmod(0o600)
    before = JobTokens(OLD).mint("j-a19-1", 1)  # what the running job holds, minted from the file
    said = _start(services, tmp_path, caplog)
    assert _secrets(services) == [OLD], "the file's secret was not moved into the store"
    assert any("moved the job-token secret from" in s and "no longer read" in s for s in said), said
    assert _accepted(services, before, "j-a19-1")
    path.write_bytes(b"f" * 64)  # the file changes (or goes): nothing changes, it is not read
    said = _start(services, tmp_path, caplog)
    assert _secrets(services) == [OLD] and _accepted(services, before, "j-a19-1")
    assert any("is no longer read" in s and "another secret" in s for s in said), said
    path.unlink()
    assert _start(services, tmp_path, caplog) == [] and _accepted(services, before, "j-a19-1")


def test_s24_a19_rotation_is_audited_new_jobs_get_the_new_secret_and_running_ones_keep_theirs_until_revoked(
        services: Services, tmp_path: Path) -> None:
    _running(services, "j-before", admitted_minutes_ago=30)
    _start(services, tmp_path)
    held = _token_of(services, "j-before")
    url = str(services.store.engine.url.render_as_string(hide_password=False))
    out, err = io.StringIO(), io.StringIO()
    assert doctor(["--db", url, "rotate-job-secret"], out=out, err=err) == 0, err.getvalue()
    said = out.getvalue()
    assert "rotated the job-token secret to generation 2" in said and "keep working until those jobs end" in said, said
    # the running server (another process in life: it reads the store) mints the next job's token under the new one
    with services.store.transaction(write=False) as tx:  # the doctor's clock is the host's, the services' T0
        rotated_at = read_job_secrets(tx.conn)[1].retired_at
    assert rotated_at is not None
    _running(services, "j-after", admitted_minutes_ago=-1, since=rotated_at)  # admitted after the rotation
    assert _token_of(services, "j-before") != held, "still minting with the retired secret"
    assert _accepted(services, held, "j-before"), "a running job's token stopped working at a rotation"
    assert _accepted(services, _token_of(services, "j-after"), "j-after")
    retired_for_after = JobTokens(_secrets(services)[1]).mint("j-after", 1)
    assert not _accepted(services, retired_for_after, "j-after"), "a retired secret verified a run admitted after it"
    rows = services.store.list_events(action=ROTATED_ACTION)
    assert len(rows) == 1 and rows[0].actor.startswith("doctor:") and rows[0].details["generation"] == 2, rows
    shown = said + str(rows[0].message) + str(rows[0].details)
    assert not any(secret.decode() in shown for secret in _secrets(services)), "a secret was shown"
    # revoking needs --yes, then the running jobs' old tokens stop at once
    assert doctor(["--db", url, "rotate-job-secret", "--revoke-running"], out=io.StringIO(), err=err) == 2
    assert "add --yes" in err.getvalue()
    assert doctor(["--db", url, "rotate-job-secret", "--revoke-running", "--yes"], out=io.StringIO(),
                  err=io.StringIO()) == 0
    assert not _accepted(services, held, "j-before")
    assert len(_secrets(services)) == 1  # only the current generation is left


def test_s24_a19_no_module_but_the_store_s_and_the_token_s_own_reads_the_secret() -> None:
    """Never returned by any API: nothing outside the store's module, the tokens and the start reads the table."""
    package = Path(jupyter_sched.__file__).parent
    readers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                     if re.search(r"job_token_secrets|read_job_secrets|\.secret\b", p.read_text(encoding="utf-8")))
    assert readers == ["extension/job_tokens.py", "services/job_tokens.py", "store/job_secrets.py",
                       "store/migrations.py", "store/schema.py"], readers


def test_hubadmin26_b4_a_revoked_jobs_reports_are_audited_under_its_owner_and_logged_once(
        services: Services, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """hubadmin26 B4: after ``rotate-job-secret --revoke-running`` every report of a running job was one WARNING
    calling its token "forged or from another server's secret" (78,000 lines for a 3-day job reporting every 10 s)
    and no audit row — the signal an admin wants after a leak (who still uses the revoked secret?). Now: one
    WARNING per claimed run naming it as revoked or forged, and an audited refusal under the running job's owner
    (the refusal log's own limit sums repeats); a made-up token naming no running job is still audited nowhere."""
    _running(services, "j-leak", admitted_minutes_ago=30)
    _start(services, tmp_path)
    held = _token_of(services, "j-leak")
    url = str(services.store.engine.url.render_as_string(hide_password=False))
    assert doctor(["--db", url, "rotate-job-secret", "--revoke-running", "--yes"], out=io.StringIO(),
                  err=io.StringIO()) == 0
    assert _token_of(services, "j-leak") != held  # this server has read the store's secrets since (a mint)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.services.job_tokens"):
        for _ in range(20):  # the job goes on reporting every 10 s
            assert not _accepted(services, held, "j-leak")
        forged = "jsjob1.j-nobody.1." + "A" * 43
        for _ in range(5):
            assert not _accepted(services, forged, "j-nobody")
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2, said  # before: 25 lines, each "forged or from another server's secret"
    assert "a job token of running job j-leak (run 1) whose secret was revoked (rotate-job-secret --revoke-running) " \
           "after it started, or a forgery naming it" in said[0], said
    assert "forged, or from another store's secret" in said[1], said
    refused = [e for e in services.store.list_events(action="refused") if e.job_id == "j-leak"]
    assert refused and refused[0].user == "ivan" and "secrets were revoked" in refused[0].message, refused
    assert refused[0].actor == "unverified job token", refused  # verify26 V14: never the owner as the actor
    assert [e for e in services.store.list_events(action="refused") if e.job_id == "j-nobody"] == []
