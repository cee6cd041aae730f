"""red33 R3's old rows: jobs settled from their own exit.json before ends were bounded keep the forged end — a 92-s
2-GPU run charged 1 s, an end claimed half a year ahead charging its team thousands of GPU-hours. An admin finds them
(``jupyter-sched doctor ends``: each with why and the range the store allows) and corrects one (``doctor correct-end``:
the job's end and its usage, audited ``end_corrected`` with who and before → after); GPU-hours, budget standing and the
engine's running fair-share/budget sums follow.

Real parts: a SQLite store with the services over it (no server: the rows are written as the pre-fix engine left
them — a settle "(while the server was down)" with no last-seen time), the doctor's own ``main``.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.cli import doctor
from jupyter_sched.errors import AuthorizationError, NotFoundError, ValidationError
from jupyter_sched.model import Budget, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest, parse
from jupyter_sched.services.models.ends import CorrectEndRequest
from jupyter_sched.store import Store


def _settled(services: Services, name: str, *, start: datetime, claimed: datetime, settled: datetime,
             alive: datetime | None = None, message: str = "exited with code 0 (while the server was down)") -> str:
    """A 2-GPU job of r33b's as the pre-fix engine settled it: ended at ``claimed``, its end recorded at ``settled``."""
    job_id = services.jobs.submit(services.caller("r33b", admin=False),
                                  SubmitJobRequest(gpus=2, name=name, command=["true"])).id
    store = services.store
    with store.transaction() as tx:
        record = tx.get_job(job_id)
        tx.update_job(replace(record, job=replace(record.job, state=JobState.SUCCEEDED, started_at=start,
                                                  finished_at=max(claimed, start), message=message, attempts=1)))
        team = record.job.spec.team
        tx.open_usage(job_id=job_id, attempt=1, user="r33b", team=team, kind="training",
                      gpus=[(f"GPU-{name}-0", "sim", 1.0), (f"GPU-{name}-1", "sim", 1.0)], started_at=start)
        tx.close_usage(job_id, max(claimed, start))
        if alive is not None:
            tx.add_event(actor="scheduler", action="adopted", job_id=job_id, user="r33b", message="re-adopted",
                         at=alive)
        tx.add_event(actor="scheduler", action="succeeded", job_id=job_id, user="r33b", message=message, at=settled)
    return job_id


def _doctor(store: Store, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = doctor.main(["--db", store.url, *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_red33_r3_old_rows_are_listed_with_why_and_an_admin_corrects_one_with_usage_and_budget_following(
        services: Services) -> None:
    now = datetime.now(timezone.utc)
    start = now - timedelta(hours=3)
    cheap = _settled(services, "cheap", start=start, claimed=start + timedelta(seconds=1),
                     settled=start + timedelta(seconds=92), alive=start + timedelta(seconds=60))
    future = _settled(services, "future", start=start, claimed=now + timedelta(days=180),
                      settled=start + timedelta(seconds=6))
    honest = _settled(services, "honest", start=start, claimed=start + timedelta(minutes=5),
                      settled=start + timedelta(minutes=5, seconds=1), message="exited with code 0")
    skewed = _settled(services, "pod", start=start, claimed=start + timedelta(minutes=5, seconds=5),  # a node's clock
                      settled=start + timedelta(minutes=5), message="succeeded (pod exited with code 0)")
    store = services.store
    ledger = services.engine.decider.usage
    budgets = [Budget(team=store.get_job(cheap).job.spec.team, user=None, gpu_hours=100)]
    _, spent = ledger.read(now, budgets)
    assert spent[(budgets[0].team, None)] > 8000  # the claim to next half-year: "8457.87 of 100 spent"

    code, out, _ = _doctor(store, "--json", "ends")
    assert code == doctor.EXIT_FOUND
    listed = {s["job_id"]: s for s in json.loads(out)}
    assert honest not in listed and skewed not in listed
    assert set(listed) == {cheap, future}, listed  # the honest ends are not suspect, one a few seconds ahead neither
    assert {w["code"] for w in listed[cheap]["why"]} == {"claimed_unbounded", "alive_after_end"}
    assert listed[cheap]["earliest"] == (start + timedelta(seconds=60)).isoformat()  # re-adopted running then
    assert listed[cheap]["latest"] == (start + timedelta(seconds=92)).isoformat()  # when its end was recorded
    assert {"claimed_unbounded", "after_settled", "in_future"} <= {w["code"] for w in listed[future]["why"]}
    assert listed[future]["suggested"] == (start + timedelta(seconds=6)).isoformat()
    code, text, _ = _doctor(store, "ends")
    assert code == doctor.EXIT_FOUND and "the audit log shows it alive at" in text and "in the future" in text, text
    _, scanned, _ = _doctor(store)  # the admin's first look says so
    assert "ends: 2 finished job(s) whose end is suspect" in scanned and "jupyter-sched doctor ends" in scanned

    # bad input: the field named, nothing changed
    bad_end = (start + timedelta(hours=1)).isoformat()
    code, _, err = _doctor(store, "correct-end", cheap, "--end", bad_end, "--reason", "red33 R3", "--yes")
    assert code == doctor.EXIT_FOUND and "end " in err and "outside what the store knows" in err, err
    code, _, err = _doctor(store, "correct-end", cheap, "--reason", " ", "--yes")
    assert code == doctor.EXIT_FOUND and "reason is empty" in err, err
    code, _, err = _doctor(store, "correct-end", honest, "--reason", "x")  # newuser35 N4: nothing to correct
    assert code == doctor.EXIT_FOUND and "nothing to correct" in err and "its end is not suspect" in err, err
    code, _, err = _doctor(store, "correct-end", cheap, "--reason", "red33 R3")  # no --yes: what it would do
    assert code == doctor.EXIT_USAGE and "add --yes" in err, err
    assert store.get_job(cheap).job.finished_at == start + timedelta(seconds=1)

    for job_id, end in ((cheap, start + timedelta(seconds=92)), (future, None)):
        argv = ["--json", "correct-end", job_id, "--reason", "red33 R3: claimed while the service was down", "--yes"]
        code, out, err = _doctor(store, *argv[:3], *(["--end", end.isoformat()] if end else []), *argv[3:])
        assert code == doctor.EXIT_OK, err
        done = json.loads(out)
        assert done["usage_rows"] == 2
    assert store.get_job(cheap).job.finished_at == start + timedelta(seconds=92)
    assert store.get_job(future).job.finished_at == start + timedelta(seconds=6)
    rows = store.usage_rows(job_ids=[cheap])
    assert [iv.ended_at for iv in rows] == [start + timedelta(seconds=92)] * 2
    [record] = store.list_events(job_id=cheap, action="end_corrected")
    assert record.actor.startswith("doctor:") and record.user == "r33b"
    assert record.details["before"] == (start + timedelta(seconds=1)).isoformat()
    assert record.details["after"] == (start + timedelta(seconds=92)).isoformat()
    assert abs(record.details["gpu_hours_after"] - 2 * 92 / 3600) < 1e-6
    assert "→" in record.message and "red33 R3" in record.message

    # the engine's running sums notice the rewritten rows at their next count, without a restart
    _, spent = ledger.read(now + timedelta(minutes=2), budgets)
    assert abs(spent[(budgets[0].team, None)] - (2 * 92 + 2 * 6 + 2 * 300 + 2 * 305) / 3600) < 1e-6, spent
    code, out, _ = _doctor(store, "--json", "ends")
    assert code == doctor.EXIT_OK and json.loads(out) == []


def test_red33_r3_old_rows_over_rest_refuse_non_admins_with_the_rule_and_bad_input_naming_the_field(
        services: Services) -> None:
    now = services.ctx.clock.now()  # the service's clock
    start = now - timedelta(hours=1)
    cheap = _settled(services, "cheap", start=start, claimed=start + timedelta(seconds=1),
                     settled=start + timedelta(seconds=92))
    judy, boss = services.caller("judy", admin=False), services.caller("boss", admin=True)
    with pytest.raises(AuthorizationError, match="needs admin rights"):
        services.ends.list(judy)
    with pytest.raises(AuthorizationError, match="needs admin rights") as refused:
        services.ends.correct(judy, cheap, CorrectEndRequest(reason="mine"))
    assert refused.value.field == "job_id"
    assert {e.user for e in services.store.list_events(action="refused")} == {"judy"}
    for body, field in (({"reason": "x", "end": "yesterday"}, "end"), ({"reason": "x", "end": "2026-12-06T10:00"}, "end"),
                        ({"reason": "x", "end": (start + timedelta(hours=2)).isoformat()}, "end"),
                        ({"reason": "two\nlines"}, "reason"), ({}, "reason"), ({"reason": "x", "at": "now"}, "at")):
        with pytest.raises(ValidationError) as bad:
            services.ends.correct(boss, cheap, parse(CorrectEndRequest, body))
        assert bad.value.field == field and bad.value.hint, (body, bad.value)
    with pytest.raises(NotFoundError):
        services.ends.correct(boss, "j-none", CorrectEndRequest(reason="x"))
    assert services.store.get_job(cheap).job.finished_at == start + timedelta(seconds=1)

    [listed] = services.ends.list(boss).ends
    assert listed.job_id == cheap and [w.code for w in listed.why] == ["claimed_unbounded"]
    done = services.ends.correct(boss, cheap, CorrectEndRequest(reason="red33 R3"))  # the suggested end
    assert done.after == start + timedelta(seconds=1) == listed.suggested  # nothing saw it later: its claim stands
    [record] = services.store.list_events(job_id=cheap, action="end_corrected")
    assert record.actor == "boss"
    assert services.ends.list(boss).ends == []
