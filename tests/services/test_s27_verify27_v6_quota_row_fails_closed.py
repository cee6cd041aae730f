"""verify27 V6 (medium): a quarantined quota row failed OPEN (hubadmin26 B16's quarantine).

Found on the real hub: carol capped team nlp at 1 GPU (guaranteed 0, borrowing limit 1); the row was
corrupted (``UPDATE quotas SET guaranteed = -3``) and the service restarted: it logged the quarantine and
then "no quotas are configured: one user may hold every GPU"; GET quotas said ``quotas []`` and
``warnings []``; eve (nlp) ran 2 x 1-GPU jobs at once. Now a quota line, budget or team policy row that
does not read keeps its scope (team / user / GPU model, from the raw row's readable columns) capped:
its new GPU work waits with a reason naming the row and ``jupyter-sched doctor``; GET quotas' admin
warnings (and so ``jupyter-sched quotas``) name each such row; a PUT quotas leaving that part alone keeps
the row (and the hold); the repair lifts it.

Real parts: a real SQLite store written by the services, the engine's cycle, the reasons renderer, the
doctor's main, the CLI's quotas view.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
import types
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.cli import doctor
from jupyter_sched.cli.admin_views import quotas as quotas_view
from jupyter_sched.errors import ConflictError
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.services import Services, build_services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models.quotas import SetQuotasRequest
from jupyter_sched.wording.reasons import render_reason


def _services(tmp_path: Path) -> Services:
    return build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                           "simulated_gpus": 4, "telemetry_source": "off",
                           "user_teams": {"eve": ["nlp"], "amy": ["vision"]}})


def _state(services: Services, caller: Any, job_id: str) -> Any:
    return services.jobs.get(caller, job_id)


def _close(services: Services) -> None:
    """Cancel what is still live (no job outlives its test), then close the store."""
    boss = services.caller("boss", admin=True)
    for record in services.store.live_jobs():
        with contextlib.suppress(ConflictError):
            services.jobs.cancel(boss, record.job.id)
    for _ in range(50):  # the stops land within a few ticks
        services.engine.tick()
        if not services.store.live_jobs():
            break
        time.sleep(0.1)
    services.store.close()


def test_verify27_v6_a_quota_row_that_does_not_read_holds_its_team_and_is_said(tmp_path: Path) -> None:
    services = _services(tmp_path)
    carol = services.caller("carol", admin=True)
    services.quotas.set(carol, SetQuotasRequest.model_validate({
        "quotas": [{"team": "nlp", "guaranteed": 0, "borrowing_limit": 1},
                   {"team": "vision", "guaranteed": 2, "borrowing_limit": 0}]}))
    eve = services.caller("eve", admin=False)
    first = services.jobs.submit(eve, SubmitJobRequest(gpus=1, team="nlp", command=["sleep", "60"], name="first"))
    services.engine.tick()
    assert _state(services, eve, first.id).state in ("admitted", "running")
    services.engine.resign()  # the service stops (its running job is adopted by the next one)
    services.store.close()
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'sched.sqlite'}")
    with engine.begin() as conn:  # a hand fix (or a future bug), as the verifier's repro
        conn.execute(sa.text("UPDATE quotas SET guaranteed = -3 WHERE team = 'nlp'"))
    engine.dispose()

    services = _services(tmp_path)  # the restart
    try:
        carol = services.caller("carol", admin=True)
        eve = services.caller("eve", admin=False)
        second = services.jobs.submit(eve, SubmitJobRequest(gpus=1, team="nlp", command=["true"], name="second"))
        services.engine.tick()
        job = _state(services, eve, second.id)
        # before: running (the cap gone; eve held 2 GPUs under a 1-GPU cap)
        assert job.state == "pending", job
        reason = reason_to_dict(services.engine.reasons[second.id])
        assert reason["code"] == "QuotaRowUnreadable", reason
        assert "quota row 1 (team nlp, model *) does not read" in reason["message"], reason
        assert "new GPU work of team nlp waits" in reason["message"] and "jupyter-sched doctor" in reason["message"]
        text = render_reason(reason)
        assert "jupyter-sched doctor" in text.line and "ETA unknown" in text.eta, text
        # the first job runs on (nothing running is stopped); another team's work is not held
        assert _state(services, eve, first.id).state in ("admitted", "running")
        amy = services.caller("amy", admin=False)
        other = services.jobs.submit(amy, SubmitJobRequest(gpus=1, team="vision", command=["sleep", "60"], name="v"))
        services.engine.tick()
        assert _state(services, amy, other.id).state in ("admitted", "running", "succeeded")
        # 0-GPU work of nlp counts on no GPU quota: not held
        cpu = services.jobs.submit(eve, SubmitJobRequest(gpus=0, team="nlp", command=["true"], name="cpu"))
        services.engine.tick()
        assert _state(services, eve, cpu.id).state != "pending"

        # GET quotas (admin): the row named in the warnings, no line made up, nlp not "unlisted"
        got = services.quotas.get(carol).model_dump()
        assert [q["team"] for q in got["quotas"]] == ["vision"], got["quotas"]
        named = [w for w in got["warnings"] if "quota row 1 (team nlp, model *) does not read" in w]
        assert len(named) == 1 and "jupyter-sched doctor" in named[0], got["warnings"]
        assert not any("nlp has no share of the GPUs" in w for w in got["warnings"]), got["warnings"]
        # `jupyter-sched quotas` prints them (its view of that GET quotas answer)
        out = io.StringIO()
        client = types.SimpleNamespace(call=lambda req: got)
        assert quotas_view(client, argparse.Namespace(json=False), types.SimpleNamespace(out=out)) == 0
        assert "warning: quota row 1 (team nlp, model *) does not read" in out.getvalue(), out.getvalue()

        # a PUT quotas that leaves the lines alone keeps the row and the hold
        services.quotas.set(carol, SetQuotasRequest.model_validate({"budgets": [{"team": "vision", "gpu_hours": 9}]}))
        services.engine.tick()
        assert _state(services, eve, second.id).state == "pending"
        assert services.store.quota_set().unreadable, "the unreadable row was dropped by an unrelated PUT"

        # the repair lifts the hold
        (entry,) = services.store.quarantined(table="quotas")
        url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
        assert doctor.main(["--db", url, "repair", str(entry.id), "guaranteed=0"], out=io.StringIO(),
                           err=io.StringIO()) == doctor.EXIT_OK
        assert services.store.quota_set().unreadable == ()
    finally:
        _close(services)


def test_verify27_v6_a_budget_or_team_policy_row_that_does_not_read_holds_the_team(tmp_path: Path) -> None:
    services = _services(tmp_path)
    carol = services.caller("carol", admin=True)
    services.quotas.set(carol, SetQuotasRequest.model_validate({
        "quotas": [{"team": "nlp", "guaranteed": 2}, {"team": "vision", "guaranteed": 2}],
        "budgets": [{"team": "nlp", "gpu_hours": 100}], "teams": [{"team": "vision", "weight": 2}]}))
    with services.store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE budgets SET gpu_hours = 'lots' WHERE team = 'nlp'"))
        conn.execute(sa.text("UPDATE team_policies SET members = 'not json' WHERE team = 'vision'"))
        conn.execute(sa.text("UPDATE change_counters SET value = value + 1 WHERE name = 'quotas'"))
    try:
        eve, amy = services.caller("eve", admin=False), services.caller("amy", admin=False)
        e = services.jobs.submit(eve, SubmitJobRequest(gpus=1, team="nlp", command=["true"], name="e"))
        a = services.jobs.submit(amy, SubmitJobRequest(gpus=1, team="vision", command=["true"], name="a"))
        services.engine.tick()
        for caller, job_id, said in ((eve, e.id, "budget row 1 (team nlp"), (amy, a.id, "team policy row vision")):
            assert _state(services, caller, job_id).state == "pending"
            reason = services.engine.reasons[job_id]
            assert reason.code == "QuotaRowUnreadable", reason
            assert said in reason.message and "jupyter-sched doctor" in reason.message, reason
        warnings = services.quotas.get(carol).model_dump()["warnings"]
        assert any(w.startswith("budget row 1 (team nlp") for w in warnings), warnings
        assert any(w.startswith("team policy row vision") for w in warnings), warnings
    finally:
        _close(services)


@pytest.mark.parametrize("hours,period", [(-1, "month"), ("inf", "month"), (100, "fortnight")],
                         ids=["negative", "infinite", "unknown period"])
def test_s27_a_budget_row_out_of_bounds_does_not_read_and_holds_the_team(tmp_path: Path, hours: object,
                                                                        period: str) -> None:
    """Noticed by s27-trust: a budget row with gpu_hours -1 read as "0 of -1 GPU-hours" (no bound when decoded);
    out of bounds it now does not read, so it holds the team's GPU work as any unreadable row does."""
    services = _services(tmp_path)
    carol = services.caller("carol", admin=True)
    services.quotas.set(carol, SetQuotasRequest.model_validate({
        "quotas": [{"team": "nlp", "guaranteed": 2}], "budgets": [{"team": "nlp", "gpu_hours": 100}]}))
    with services.store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE budgets SET gpu_hours = :h, period = :p WHERE team = 'nlp'"),
                     {"h": float(hours), "p": period})  # type: ignore[arg-type]
        conn.execute(sa.text("UPDATE change_counters SET value = value + 1 WHERE name = 'quotas'"))
    try:
        eve = services.caller("eve", admin=False)
        job = services.jobs.submit(eve, SubmitJobRequest(gpus=1, team="nlp", command=["true"], name="e"))
        services.engine.tick()
        assert services.engine.reasons[job.id].code == "QuotaRowUnreadable", services.engine.reasons[job.id]
        assert services.store.quota_set().budgets == ()
    finally:
        _close(services)
