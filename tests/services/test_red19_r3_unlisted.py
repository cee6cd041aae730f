"""Red team 19, R3: once any quota line exists, a team without a line of its own is guaranteed 0
with borrowing limit ``c.SchedApp.unlisted_team_borrowing_limit`` (default 0; None = no limit).

Real parts: a SQLite store, the local executor (real processes), the service's own cycle; the
store's ``unlisted_borrowing_limit`` is what ``build_services`` sets from the setting.
"""

from __future__ import annotations

import pytest

from jupyter_sched.errors import QuotaError, ValidationError
from jupyter_sched.quota.ceiling import unlisted_warning
from jupyter_sched.services import Services
from jupyter_sched.services.config import unlisted_limit
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest


def _quotas(services: Services, body: dict[str, object]) -> None:
    services.quotas.set(services.caller("root", admin=True), SetQuotasRequest.model_validate(body))


def _limit(services: Services, gpus: float | None) -> None:
    services.store.unlisted_borrowing_limit = gpus


def test_red19_r3_a_team_without_a_line_is_refused_naming_team_and_the_fix(services: Services) -> None:
    _limit(services, 0.0)
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}],
                       "user_teams": {"al": "vision"}})
    bo, al = services.caller("bo", admin=False), services.caller("al", admin=False)
    assert services.accounting.me(bo).team == "default"
    with pytest.raises(QuotaError) as refused:
        services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "5"]))
    err = refused.value
    assert err.field == "team"
    assert err.message.startswith("team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs"), err.message
    assert "ask an admin to add a quota line for team default (PUT quotas)" in (err.hint or "")
    assert "c.SchedApp.unlisted_team_borrowing_limit" in (err.hint or "")
    assert err.details["unlisted"] is True
    # a member of a listed team asking on it is not affected; GPU-less work on default still runs
    services.jobs.submit(al, SubmitJobRequest(gpus=1, command=["sleep", "5"]))
    services.jobs.submit(bo, SubmitJobRequest(gpus=0, command=["sleep", "5"]))


def test_red19_r3_the_fix_names_the_callers_teams_that_have_a_line(services: Services) -> None:
    _limit(services, 0.0)
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}]})
    # hub-style caller: in groups "ops" (no line) and "vision" (a line)
    cy = services.caller("cy", admin=False, groups=["ops", "vision"])
    with pytest.raises(QuotaError) as refused:
        services.jobs.submit(cy, SubmitJobRequest(gpus=1, team="ops", command=["sleep", "5"]))
    assert refused.value.field == "team"
    assert "submit with --team <one of yours with a line: vision>" in (refused.value.hint or ""), refused.value.hint


def test_red19_r3_a_limit_above_zero_bounds_the_whole_team_on_any_model(services: Services) -> None:
    _limit(services, 1.0)
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}]})
    bo, dee = services.caller("bo", admin=False), services.caller("dee", admin=False)
    first = services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "60"]))
    second = services.jobs.submit(dee, SubmitJobRequest(gpus=1, command=["sleep", "60"]))
    with pytest.raises(QuotaError):  # 2 GPUs can never fit the 1 of a team without a line
        services.jobs.submit(bo, SubmitJobRequest(gpus=2, command=["sleep", "5"]))
    for _ in range(2):
        services.engine.tick()
    seen = {j.user: j.model_dump(mode="json") for j in (services.jobs.get(bo, first.id), services.jobs.get(dee, second.id))}
    states = sorted(j["state"] for j in seen.values())
    assert states in (["admitted", "pending"], ["pending", "running"]), states  # 3 GPUs free, team default may hold 1
    waiting = next(j for j in seen.values() if j["state"] == "pending")
    assert waiting["reason"]["code"] == "ExceedsQuota" or waiting["reason"]["code"] == "BorrowingLimitReached"
    assert waiting["reason"]["details"].get("unlisted") is True, waiting["reason"]


def test_red19_r3_pending_jobs_of_a_team_left_without_a_line_say_never(services: Services) -> None:
    _limit(services, 0.0)
    bo, root = services.caller("bo", admin=False), services.caller("root", admin=True)
    services.jobs.submit(bo, SubmitJobRequest(gpus=4, command=["sleep", "60"]))
    services.engine.tick()
    queued = services.jobs.submit(bo, SubmitJobRequest(gpus=1, name="q1", command=["sleep", "5"]))
    services.engine.tick()
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}]})
    for _ in range(2):
        services.engine.tick()
    seen = services.jobs.get(bo, queued.id).model_dump(mode="json")
    assert seen["state"] == "pending"
    assert seen["reason"]["code"] == "Unschedulable"
    assert seen["reason"]["message"].startswith("team default has no share of the GPUs (no quota line)"), seen["reason"]
    rows = services.audit.list(root, GetAuditRequest(action="never_fits_quota")).root
    assert [r.job_id for r in rows] == [queued.id]


def test_red19_r3_no_quota_lines_at_all_or_no_limit_change_nothing(services: Services) -> None:
    _limit(services, 0.0)
    bo = services.caller("bo", admin=False)
    services.jobs.submit(bo, SubmitJobRequest(gpus=4, command=["sleep", "5"]))  # embedded single user: no lines
    _limit(services, None)  # the old behaviour, for admins who want work-conserving borrowing
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}]})
    services.jobs.submit(bo, SubmitJobRequest(gpus=4, command=["sleep", "5"]))


def test_red19_r3_get_quotas_warns_an_admin_of_teams_without_a_line(services: Services) -> None:
    _limit(services, 0.0)
    root = services.caller("root", admin=True)
    services.jobs.submit(services.caller("bo", admin=False), SubmitJobRequest(gpus=0, command=["sleep", "5"]))
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}],
                       "user_teams": {"al": "nlp"}})
    warnings = services.quotas.get(root).warnings or []
    said = [w for w in warnings if "no quota line" in w]
    assert said and "default, nlp" in said[0] and "0 GPUs" in said[0], warnings
    assert not services.quotas.get(services.caller("bo", admin=False)).warnings


@pytest.mark.parametrize("bad", [-1, "2", float("nan"), float("inf"), True])
def test_red19_r3_the_setting_refuses_a_bad_value_naming_it(bad: object) -> None:
    with pytest.raises(ValidationError) as refused:
        unlisted_limit({"unlisted_team_borrowing_limit": bad})
    assert refused.value.field == "unlisted_team_borrowing_limit"
    assert unlisted_limit({}) == 0.0 and unlisted_limit({"unlisted_team_borrowing_limit": None}) is None


def test_red19_r3_get_me_says_the_limit_a_team_without_a_line_gets(services: Services) -> None:
    _limit(services, 0.0)
    _quotas(services, {"quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 1}]})
    me = services.accounting.me(services.caller("bo", admin=False)).model_dump(mode="json")
    assert me["team"] == "default" and "no limit" not in me["quota_text"], me["quota_text"]
    # in the queue's words since new user 20, N2
    assert me["quota_text"].startswith("team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs"), me["quota_text"]
    _limit(services, None)
    me = services.accounting.me(services.caller("bo", admin=False)).model_dump(mode="json")
    assert me["quota_text"].startswith("team default has no GPUs set aside and no limit (no quota)"), me["quota_text"]


def test_red19_r3_the_warning_says_it_for_one_team_and_each_for_several() -> None:
    # verify19: one team was told "team default has no quota line: each may use 0 GPUs"
    assert "line): it may use 0 GPUs" in unlisted_warning(["default"], 0)[0]
    assert "have no share of the GPUs (no quota line): each may use 1 GPU" in unlisted_warning(["nlp", "default"], 1)[0]
    assert unlisted_warning([], 0) == []
