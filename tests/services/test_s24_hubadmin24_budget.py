"""hubadmin24 B8: a GPU-hour budget set below what its team already used this period is said where the
admin sets it (PUT quotas' answer, its dry run, GET quotas) and kept in the audit; ``status`` says the
caller's budget (used / limit GPU-hours, period, reset) from ``GET me``'s ``resets_at``; a GPU submit into
a spent budget is told so in its answer's warnings (it said only "waiting for the next scheduling cycle").
B9: the current month's usage report ends now.

Real parts: ``build_services`` on a SQLite store (wall clock), its quotas and accounting services (the
REST handlers' one call), the status wording.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.services import build_services
from jupyter_sched.services.budget_standing import period_reset
from jupyter_sched.services.models import SetQuotasRequest
from jupyter_sched.wording.status import status_lines

_BODY = {"quotas": [{"team": "nlp", "guaranteed": 1, "borrowing_limit": 0}],
         "budgets": [{"team": "nlp", "gpu_hours": 0.3}, {"team": "research", "gpu_hours": 0.12}]}


def test_hubadmin24_b8_a_spent_budget_is_said_in_put_quotas_its_audit_status_and_submit(tmp_path: Path) -> None:
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"})
    try:
        now = datetime.now(timezone.utc)
        started = max(now - timedelta(minutes=29), now.replace(day=1, hour=0, minute=0, second=0, microsecond=0))
        with services.store.transaction(now=now) as tx:  # 0.48 GPU-hours this month (at least 1 GPU for 29 min)
            tx.open_usage(job_id="j-1", attempt=1, user="ha24k", team="nlp", kind="training",
                          gpus=[("GPU-0", "A100", 1.0)], started_at=started)
            tx.close_usage("j-1", started + timedelta(minutes=29))
        boss = services.caller("boss", admin=True)
        reset = period_reset(now, "month")
        for dry in (True, False):
            answer = services.quotas.set(boss, SetQuotasRequest.model_validate({**_BODY, "dry_run": dry})).to_wire()
            said = [w for w in answer["warnings"] if w.startswith("budgets:")]
            assert len(said) == 1, answer["warnings"]  # research used nothing: only nlp's
            assert said[0].startswith("budgets: nlp has already spent its GPU-hour budget (0.48 of 0.3 GPU-hours "
                                      "this month): new GPU jobs wait until "), said
            assert "when the month's budget resets) or until an admin raises it; running work runs on" in said[0]
            assert reset.strftime("%b %-d 00:00 UTC") in said[0], said
        (event,) = services.store.list_events(action="quotas_changed", limit=10)
        assert event.details["warnings"] == said and said[0] in event.message, event
        assert any(w.startswith("budgets: nlp") for w in services.quotas.get(boss).to_wire()["warnings"])

        me = services.accounting.me(services.caller("ha24k", admin=False, groups=["nlp"])).to_wire()
        (budget,) = me["budgets"]
        assert budget["resets_at"] is not None and budget["used_gpu_hours"] > 0.3, budget
        lines = status_lines("http://x/", {"version": "1"}, me, {"gpus": []}, now=now)
        line = next((x for x in lines if x.startswith("budget")), "")
        assert line.startswith("budget     team nlp: 0.48 of 0.3 GPU-hours used this month — spent: new GPU jobs "
                               "wait until "), lines
        assert line.endswith("(or until an admin raises it); CPU-only jobs run"), line

        # a GPU submit into the spent budget is told so at once; a CPU-only one is not held, nor told
        from jupyter_sched.services.models import SubmitJobRequest

        ha24k = services.caller("ha24k", admin=False, groups=["nlp"])
        gpu = services.jobs.submit(ha24k, SubmitJobRequest(gpus=1, team="nlp", command=["true"])).to_wire()  # type: ignore[call-arg]
        told = [w for w in gpu.get("warnings") or [] if "budget" in w]
        assert told and told[0].startswith("team nlp has spent its GPU-hour budget (0.48 of 0.3 GPU-hours this "
                                           "month): this job waits until "), gpu.get("warnings")
        cpu = services.jobs.submit(ha24k, SubmitJobRequest(gpus=0, team="nlp", command=["true"])).to_wire()  # type: ignore[call-arg]
        assert not [w for w in cpu.get("warnings") or [] if "budget" in w], cpu.get("warnings")
    finally:
        services.store.close()


def test_hubadmin24_b9_the_current_months_report_ends_now_not_at_the_months_end(tmp_path: Path) -> None:
    """Failed before: ``usage --month <this month> --csv`` rows said until = the 1st of next month (future)."""
    import argparse

    from jupyter_sched.cli.admin_views import _month, period_text, usage_window
    from jupyter_sched.model import parse_utc
    from jupyter_sched.services.models import GetUsageReportRequest

    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"})
    try:
        now = datetime.now(timezone.utc)
        with services.store.transaction(now=now) as tx:
            tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training",
                          gpus=[("GPU-0", "A100", 1.0)], started_at=now - timedelta(minutes=1))
            tx.close_usage("j-1", now)
        month = _month(f"{now:%Y-%m}")
        asked = GetUsageReportRequest(since=month[0], until=month[1], all=True)  # type: ignore[call-arg]
        answer = services.accounting.report(services.caller("boss", admin=True), asked)
        (row,) = answer.to_wire()
        until = parse_utc(row["until"], field="until")
        assert abs(until - now) < timedelta(minutes=1), row  # the report time (to the second), not the month end
        csv = services.accounting.report_csv(answer, asked)  # what `usage --csv` prints
        assert month[1].removesuffix("Z") not in csv and row["until"] in csv, csv
    finally:
        services.store.close()
    args = argparse.Namespace(since=None, until=None, month=_month(f"{now:%Y-%m}"))
    since, said_until = usage_window(args, now)
    assert (since, said_until) == (month[0], None)
    assert period_text(since, said_until, now).endswith("→ now")
    last = argparse.Namespace(since=None, until=None, month=_month("2026-11"))
    assert usage_window(last, datetime(2026, 12, 5, tzinfo=timezone.utc)) == ("2026-11-01T00:00:00Z",
                                                                               "2026-12-01T00:00:00Z")


def test_hubadmin24_b8_the_readme_documents_budgets() -> None:
    """Failed before: ``grep -i budget README.md`` found nothing — an admin learnt of budgets only from the API."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "admin.md").read_text(encoding="utf-8")
    start = readme.index("**GPU-hour budgets**")
    said = readme[start:readme.index("\n#", start)]  # its section in docs/admin.md (newuser31 n17)
    for words in ('"budgets": [{"team": "nlp", "gpu_hours": 300', "`week`", "00:00 UTC", "running work runs on",
                  "CPU-only (0-GPU) jobs are never held", "`definition_skipped`", "`quotas_changed` audit row",
                  "jupyter-sched status", "resets_at"):
        assert words in said, words


def test_newuser36_n9nit_a_spent_budgets_submit_note_names_another_of_her_teams_with_room(tmp_path: Path) -> None:
    """newuser36 n9: a member of nlp and vision whose nlp budget is spent was told only to wait for its reset;
    the note names ``--team vision`` (no spent budget holds her work there, and it has a line), as the refusal
    of a class names a team allowing it. A member of nlp alone is told as before."""
    from jupyter_sched.services.models import SubmitJobRequest

    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"})
    try:
        now = datetime.now(timezone.utc)
        started = max(now - timedelta(minutes=29), now.replace(day=1, hour=0, minute=0, second=0, microsecond=0))
        with services.store.transaction(now=now) as tx:
            tx.open_usage(job_id="j-1", attempt=1, user="n36c", team="nlp", kind="training",
                          gpus=[("GPU-0", "A100", 1.0)], started_at=started)
            tx.close_usage("j-1", started + timedelta(minutes=29))
        body = {"quotas": [{"team": "nlp", "guaranteed": 1, "borrowing_limit": 0},
                           {"team": "vision", "guaranteed": 1, "borrowing_limit": 1}],
                "budgets": [{"team": "nlp", "gpu_hours": 0.2}]}
        services.quotas.set(services.caller("boss", admin=True), SetQuotasRequest.model_validate(body))
        both = services.caller("n36c", admin=False, groups=["nlp", "vision", "lab"])  # lab: no line, not named
        said = services.jobs.submit(both, SubmitJobRequest(gpus=1, team="nlp", command=["true"])).to_wire()  # type: ignore[call-arg]
        (told,) = [w for w in said.get("warnings") or [] if "budget" in w]
        assert told.startswith("team nlp has spent its GPU-hour budget") and told.endswith(
            "or until an admin raises it, or submit it with --team vision, which no spent budget holds"), told
        one = services.caller("n36d", admin=False, groups=["nlp"])
        said = services.jobs.submit(one, SubmitJobRequest(gpus=1, team="nlp", command=["true"])).to_wire()  # type: ignore[call-arg]
        (told,) = [w for w in said.get("warnings") or [] if "budget" in w]
        assert told.endswith("or until an admin raises it"), told
        # status and %gpu (budget_lines of GET me) and the panel's Quota (GET me's budgets): each of her teams'
        services.quotas.set(services.caller("boss", admin=True), SetQuotasRequest.model_validate(
            {"budgets": [{"team": "nlp", "gpu_hours": 0.2}, {"team": "vision", "gpu_hours": 5}]}))
        me = services.accounting.me(both).to_wire()
        assert [b["team"] for b in me["budgets"]] == ["nlp", "vision"], me["budgets"]
        lines = status_lines("http://x/", {"version": "1"}, me, {"gpus": []}, now=now)
        said_budgets = [x for x in lines if "GPU-hours used" in x]
        assert len(said_budgets) == 2 and "team vision: 0 of 5 GPU-hours" in said_budgets[1], lines
        # and each of her teams' quota lines (lab has none: it takes no GPU work of hers, so it is not said)
        assert [t["team"] for t in me["by_team"]] == ["nlp", "vision"], me["by_team"]
        said_quota = [x for x in lines if x.startswith("quota") or (x.startswith(" ") and "team " in x)]
        assert any("team vision" in x for x in said_quota) and not any("team lab" in x for x in lines), lines
    finally:
        services.store.close()
