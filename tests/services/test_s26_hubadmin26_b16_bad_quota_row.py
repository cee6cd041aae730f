"""hubadmin26 B16 (high for operations): one bad quota row in the store stopped the service at its start.

Found: ``UPDATE quotas SET guaranteed = -3`` (a hand fix, a future bug) and the service's restart said
"bad configuration, not starting: guaranteed: quota.guaranteed must be >= 0 (got -3.0)" and exited —
no team, model or table named, a fix (PUT quotas) impossible while it is down — and ``jupyter-sched
doctor`` said every row read (it scanned jobs, usage, rollups and the audit only). Now each quota line,
budget and team policy row is decoded alone: a bad one is quarantined with one WARNING naming it (the
other lines are in force), doctor scans those tables too and repairs or removes the row; a repair is
read by every process (the quota change counter moves).

Real parts: a real SQLite store written by the services, the doctor's main on it, the engine's cycle.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from jupyter_sched.cli import doctor
from jupyter_sched.errors import ConflictError
from jupyter_sched.services import Services, build_services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models.quotas import SetQuotasRequest


def _services(tmp_path: Path) -> Services:
    return build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                           "simulated_gpus": 4, "telemetry_source": "off"})


@pytest.fixture
def store_with_a_bad_line(tmp_path: Path) -> Iterator[str]:
    services = _services(tmp_path)
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, SetQuotasRequest.model_validate({
        "quotas": [{"team": "nlp", "guaranteed": 2, "borrowing_limit": 2},
                   {"team": "cv", "guaranteed": 2, "borrowing_limit": 0}],
        "budgets": [{"team": "cv", "gpu_hours": 100, "period": "month"}]}))
    services.store.close()
    url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # the admin's hand fix
        conn.execute(sa.text("UPDATE quotas SET guaranteed = -3 WHERE team = 'nlp'"))
    engine.dispose()
    yield url


def test_hubadmin26_b16_a_bad_quota_row_is_quarantined_the_rest_in_force_and_doctor_repairs_it(
        tmp_path: Path, store_with_a_bad_line: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    services = _services(tmp_path)  # before: ValidationError "quota.guaranteed must be >= 0" (the start refused)
    try:
        quotas = services.store.quota_set()
        assert [(q.team, q.guaranteed) for q in quotas.quotas] == [("cv", 2.0)], quotas.quotas
        assert [b.team for b in quotas.budgets] == ["cv"]
        warned = [r.getMessage() for r in caplog.records if "quarantined" in r.getMessage()]
        assert len(warned) == 1 and "quota row 1 (team nlp, model" in warned[0] and "must be >= 0" in warned[0], warned
        (entry,) = services.store.quarantined(table="quotas")
        assert entry.attributes["team"] == "nlp", entry
        boss = services.caller("boss", admin=True)
        job = services.jobs.submit(boss, SubmitJobRequest(gpus=1, team="cv", command=["true"], name="still-runs"))
        services.engine.tick()  # the engine schedules on the lines that read
        assert services.jobs.get(boss, job.id).state in ("admitted", "running", "succeeded")
        with contextlib.suppress(ConflictError):  # (ended already)
            services.jobs.cancel(boss, job.id)

        out, err = io.StringIO(), io.StringIO()
        assert doctor.main(["--db", store_with_a_bad_line], out=out, err=err) == doctor.EXIT_FOUND, err.getvalue()
        assert f"[{entry.id}] quotas row 1: quota row 1 (team nlp, model" in out.getvalue(), out.getvalue()
        assert "0 of budgets" not in out.getvalue()  # scanned: the summary line is not the "no rows" one
        out = io.StringIO()
        assert doctor.main(["--db", store_with_a_bad_line, "repair", str(entry.id), "guaranteed=2"], out=out,
                           err=err) == doctor.EXIT_OK, err.getvalue()
        again = services.store.quota_set()  # this process reads it again: the counter moved
        assert sorted((q.team, q.guaranteed) for q in again.quotas) == [("cv", 2.0), ("nlp", 2.0)], again.quotas
    finally:
        services.store.close()


def test_hubadmin26_b16_a_bad_team_policy_row_is_keyed_by_its_team(tmp_path: Path) -> None:
    services = _services(tmp_path)
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, SetQuotasRequest.model_validate({
        "quotas": [{"team": "nlp", "guaranteed": 2}], "teams": [{"team": "nlp", "weight": 2}]}))
    with services.store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE team_policies SET members = 'not json' WHERE team = 'nlp'"))
    with services.store.transaction() as tx:
        tx.conn.execute(sa.text("UPDATE change_counters SET value = value + 1 WHERE name = 'quotas'"))
    try:
        assert services.store.quota_set().teams == ()
        (entry,) = services.store.quarantined(table="team_policies")
        assert entry.key == "nlp" and entry.error.startswith("team policy row nlp does not read"), entry
        out, err = io.StringIO(), io.StringIO()
        url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
        assert doctor.main(["--db", url, "remove", str(entry.id), "--yes"], out=out, err=err) == doctor.EXIT_OK, err
        assert services.store.quarantined(table="team_policies") == []
    finally:
        services.store.close()
