"""hubadmin26 B7 (second half): planning next quarter's lines had no "what if" beyond the running work (``PUT quotas
dry_run`` judges lines against now). ``GET quotas/what-if`` (``jupyter-sched quotas what-if``) replays a past
period's usage of a team against a proposed line and the line in force."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from jupyter_sched.accounting.usage import UsageInterval
from jupyter_sched.accounting.what_if import replay_line
from jupyter_sched.cli.admin_views import quotas as quotas_command
from jupyter_sched.errors import AuthorizationError, ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, parse
from jupyter_sched.services.models.quotas import GetQuotaWhatIfRequest
from tests.runtime.builders import T0

H = timedelta(hours=1)
Q4 = datetime(2026, 10, 1, tzinfo=timezone.utc)


def _iv(job: str, gpu: str, start: datetime, hours: float, team: str = "cv", model: str = "A100") -> UsageInterval:
    return UsageInterval(job_id=job, attempt=1, user="ana", team=team, kind="training", gpu_uuid=gpu, gpu_model=model,
                         share=1.0, started_at=start, ended_at=start + hours * H)


def test_hubadmin26_b7_replay_splits_usage_into_within_borrowed_and_over_limit() -> None:
    # 3 GPUs for 10 h, then 1 GPU for 10 h; another team's and another model's rows are not the line's
    rows = [_iv("a", "g0", Q4, 20), _iv("b", "g1", Q4, 10), _iv("c", "g2", Q4, 10),
            _iv("x", "g3", Q4, 20, team="nlp"), _iv("y", "h0", Q4, 20, model="H100")]
    line = replay_line(rows, team="cv", gpu_model="A100", guaranteed=1, borrowing_limit=1, since=Q4,
                       until=Q4 + 30 * H)
    assert (line.used_gpu_hours, line.within_guarantee_gpu_hours, line.borrowed_gpu_hours,
            line.over_limit_gpu_hours, line.hours_above_guarantee, line.hours_above_limit, line.peak_gpus) == (
        40.0, 20.0, 10.0, 10.0, 10.0, 10.0, 3.0)
    unlimited = replay_line(rows, team="cv", gpu_model=None, guaranteed=4, borrowing_limit=None, since=Q4 + 5 * H,
                            until=Q4 + 30 * H)  # every model, clipped to the window
    assert (unlimited.used_gpu_hours, unlimited.within_guarantee_gpu_hours, unlimited.borrowed_gpu_hours,
            unlimited.over_limit_gpu_hours) == (40.0, 40.0, 0.0, 0.0)


def test_hubadmin26_b7_what_if_replays_last_quarter_against_the_proposed_line_and_the_one_in_force(
        services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {"quotas": [{"team": "cv", "guaranteed": 2,
                                                                   "borrowing_limit": 2}]}))
    start = datetime(2026, 8, 3, tzinfo=timezone.utc)  # T0 is in Q4: the last full quarter is Q3
    with services.store.transaction() as tx:
        for i in range(4):  # 4 GPUs for 10 h
            tx.open_usage(job_id=f"j-{i}", attempt=1, user="ana", team="cv", kind="training",
                          gpus=[(f"GPU-{i}", "sim", 1.0)], started_at=start)
            tx.close_usage(f"j-{i}", start + 10 * H)
    answer = services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="cv", guaranteed=1, borrowing_limit=1))
    said = answer.model_dump(mode="json")
    assert (said["since"], said["until"]) == ("2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z"), said
    assert (said["proposed"]["within_guarantee_gpu_hours"], said["proposed"]["borrowed_gpu_hours"],
            said["proposed"]["over_limit_gpu_hours"]) == (10.0, 10.0, 20.0), said
    assert (said["in_force"]["within_guarantee_gpu_hours"], said["in_force"]["borrowed_gpu_hours"],
            said["in_force"]["over_limit_gpu_hours"]) == (20.0, 20.0, 0.0), said
    assert "20.0 over its limit (that work would have waited; above the limit for 10.0 h)" in said["text"], said
    with pytest.raises(AuthorizationError):
        services.accounting.what_if(services.caller("ana", admin=False), GetQuotaWhatIfRequest(team="cv", guaranteed=1))
    with pytest.raises(ValidationError) as later:
        services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="cv", guaranteed=1,
                                                               since=(T0 + 24 * H).isoformat()))
    assert later.value.field == "since"
    for bad, field in (({"team": "cv", "guaranteed": "inf"}, "guaranteed"), ({"team": "cv", "guaranteed": "1e400"},
                       "guaranteed"), ({"team": "cv", "guaranteed": 1, "borrowing_limit": -1}, "borrowing_limit")):
        with pytest.raises(ValidationError) as refused:
            parse(GetQuotaWhatIfRequest, bad)
        assert refused.value.field == field, (bad, refused.value)
    with pytest.raises(ValidationError) as hidden:
        services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="cv", guaranteed=1, gpu_model="A100\u202e"))
    assert hidden.value.field == "gpu_model"

    class Client:
        def call(self, req: object) -> object:
            params = dict(req.params)  # type: ignore[attr-defined]
            return services.accounting.what_if(boss, GetQuotaWhatIfRequest(**params)).model_dump(mode="json")

    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(action="what-if", team="cv", guaranteed=1.0, limit=1.0, model=None, since=None, until=None,
                           month=None, quarter=None, json=False)
    assert quotas_command(Client(), args, SimpleNamespace(out=out, err=err)) == 0, err.getvalue()
    table = out.getvalue().splitlines()
    assert table[1].split() == ["proposed", "1", "+1", "10.0", "10.0", "20.0", "10.0"], table
    args.action = None
    assert quotas_command(Client(), args, SimpleNamespace(out=out, err=err)) == 2
    assert "--team goes with what-if" in err.getvalue()


@pytest.mark.parametrize("field,value", [("guaranteed", float("inf")), ("guaranteed", 1e400),
                                         ("guaranteed", 99_999_999_999), ("borrowing_limit", float("inf"))])
def test_verify27_v10_what_if_bounds_a_proposed_line_as_put_quotas_does(field: str, value: float) -> None:
    """verify27 V10: guaranteed=inf / 1e400 was replayed (and shown as null), 99999999999 taken: lines PUT quotas
    refuses. The same bound (<= 1,000,000 GPUs, finite) now; the 400 names the field."""
    from pydantic import ValidationError as ModelError

    with pytest.raises(ModelError) as said:
        GetQuotaWhatIfRequest.model_validate({"team": "cv", "guaranteed": 1, field: value})
    assert said.value.errors()[0]["loc"] == (field,)


def test_verify27_v10_what_if_of_a_team_with_no_usage_and_no_line_says_so_and_names_close_teams(
        services: Services) -> None:
    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {"quotas": [{"team": "vision", "guaranteed": 2}]}))
    said = services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="visoin", guaranteed=1)).text
    assert said.endswith(" visoin used no GPU and has no line here: did you mean vision?"), said
    new = services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="robotics", guaranteed=1)).text
    assert new.endswith(" robotics used no GPU and has no line here: a team still to come?"), new


def test_verify28_v4_what_if_names_close_teams_from_memberships_and_jobs_on_a_quiet_install(
        services: Services) -> None:
    """verify28 V4: on a fresh install (no usage in the window, no quota lines) ``team=nlpp`` said "a team still to
    come?" though nlp had members (a hub group) and jobs: the close names came from the window's usage and the
    quota lines only. Now also from the memberships in force and the teams of the stored live jobs."""
    from jupyter_sched.model import Job, JobSpec
    from jupyter_sched.store import JobRecord

    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {"user_teams": {"eve": ["nlp"]}}))
    said = services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="nlpp", guaranteed=1)).text
    assert said.endswith(" nlpp used no GPU and has no line here: did you mean nlp?"), said
    services.store.insert_job(JobRecord(job=Job(id="j-rob", spec=JobSpec(name="r", user="ana", team="robotics",
                                                                       command=("true",)), submitted_at=T0)))
    said = services.accounting.what_if(boss, GetQuotaWhatIfRequest(team="robotic", guaranteed=1)).text
    assert said.endswith(" robotic used no GPU and has no line here: did you mean robotics?"), said
