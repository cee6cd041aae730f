"""The admission step through the real server: who is asking, what they may ask, and that every kind
of refusal lands in the audit log (issue 15, *Who is asking*).

ivan is in team ml (``user_teams``), judy in cv; nobody holds a grant for ``high``; boss is an admin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.extension.audit_names import request_name

from .conftest import BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN, server_config, wait_for

JOB = {"gpus": 1, "command": ["python", "-c", "pass"]}


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"ivan": "ml", "judy": "cv"},
                         quotas=[{"team": "ml", "guaranteed": 2, "borrowing_limit": 1},
                                 {"team": "cv", "guaranteed": 2, "borrowing_limit": 1}])


@dataclass(frozen=True)
class Refusal:
    id: str
    method: str
    path: str
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)
    want_status: int = 403
    want_field: str | None = None
    want_request: str = "submit job"


REFUSALS = [
    Refusal("charging another user's team is refused", "POST", "jobs", {**JOB, "team": "cv"}, want_field="team"),
    Refusal("charging a made-up team is refused", "POST", "jobs", {**JOB, "team": "zzz-free-for-all"},
            want_field="team"),
    Refusal("priority high without a grant is refused", "POST", "jobs", {**JOB, "priority": "high"},
            want_field="priority"),
    Refusal("a lease for another team is refused", "POST", "leases", {"gpus": 1, "kernel_id": "k", "team": "cv"},
            want_field="team", want_request="request lease"),
    Refusal("more GPUs than the team's ceiling is a 422", "POST", "jobs", {**JOB, "gpus": 4}, want_status=422,
            want_field="gpus"),
    Refusal("a bidirectional override in the name is refused", "POST", "jobs", {**JOB, "name": "a\u202eb"},
            want_status=400, want_field="name"),
    Refusal("an environment key that is not a variable name is refused", "POST", "jobs", {**JOB, "env": {"1X": "1"}},
            want_status=400, want_field="env", want_request="submit job"),  # with env's other problems (new user 12, N2)
    Refusal("a dry run for another team is refused", "POST", "dryrun", {**JOB, "team": "cv"}, want_field="team",
            want_request="dry run"),
    Refusal("changing quotas needs an admin", "PUT", "quotas", {"quotas": []}, want_request="changing quotas"),
    Refusal("changing the idle policy needs an admin", "PUT", "idle-policy", {"default": {"threshold_pct": 5}},
            want_request="changing the idle policy"),
    Refusal("everyone's jobs need an admin", "GET", "jobs", params={"all": "true"}, want_field="all",
            want_request="listing other users' jobs"),
    Refusal("the audit log needs an admin", "GET", "audit", want_request="reading the audit log"),
    Refusal("everyone's usage needs an admin", "GET", "usage", params={"all": "true"}, want_field="all",
            want_request="reading everyone's usage"),
]


async def test_every_kind_of_refusal_is_answered_and_audited(sched_app: Any, api: Any) -> None:
    wrong = []
    for case in REFUSALS:
        status, body = await api(case.method, case.path, case.body, params=case.params or None, token=IVAN_TOKEN)
        if status != case.want_status or body["error"]["field"] != case.want_field:
            wrong.append(f"{case.id}: want {case.want_status} {case.want_field}, got {status} {body}")
    status, judys = await api("POST", "jobs", JOB, token=JUDY_TOKEN)
    assert status == 201, judys
    status, body = await api("GET", f"jobs/{judys['id']}", token=IVAN_TOKEN)
    assert status == 403 and "judy" not in str(body), "another user's live job: refused, naming nobody (newuser29 n5)"
    _, audit = await api("GET", "audit", params={"action": "refused", "limit": "100"}, token=BOSS_TOKEN)
    records = [(r["actor"], r["details"]["request"], r["details"]["field"], r["details"]["status"]) for r in audit]
    for case in REFUSALS:
        if ("ivan", case.want_request, case.want_field, case.want_status) not in records:
            wrong.append(f"{case.id}: no audit record (have {records})")
    probe = [r for r in audit if r["details"]["request"] == "read job"]
    if not (len(probe) == 1 and probe[0]["job_id"] == judys["id"] and probe[0]["actor"] == "ivan"):
        wrong.append(f"reading another user's job is not audited once with its id: {probe}")
    assert not wrong, "\n".join(wrong)
    _, stored = await api("GET", "jobs", params={"all": "true"}, token=BOSS_TOKEN)
    assert [j["user"] for j in stored] == ["judy"], "no refused request stored anything"


HOSTILE_OR_CARELESS = [
    ("POST", "jobs", {**JOB, "gpus": "two"}, None, "gpus"),
    ("POST", "jobs", {**JOB, "user": "judy", "run_as": "root", "uid": 0}, None, "user"),
    ("POST", "jobs", {**JOB, "env": {"A=B": "1"}}, None, "env"),
    ("POST", "jobs", {**JOB, "profile": "../../etc"}, None, "profile"),
    ("POST", "jobs", {**JOB, "priority": "urgent"}, None, "priority"),  # "HIGH" is high (N27)
]
"""Refusals raised by request models or spec validation, not by the admission rules (red-team finding 4).
A read's malformed query (``GET jobs?limit=many``) is answered 400 the same way but is no refusal of a
rule, so it is not audited (new user 19, N11; tests/web/test_newuser19_n11.py)."""


async def test_refusals_of_request_validation_are_audited_too(sched_app: Any, api: Any) -> None:
    for method, path, body, params, fld in HOSTILE_OR_CARELESS:
        status, answer = await api(method, path, body, params=params)
        assert status == 400 and answer["error"]["field"] == fld, (method, path, body, params, answer)
    status, answer = await api("GET", "jobs", params={"limit": "many"})
    assert status == 400 and answer["error"]["field"] == "limit", answer

    async def records() -> list[tuple[str, str, str, int]]:
        _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        found = [(r["actor"], r["details"]["request"], r["details"]["field"], r["details"]["status"]) for r in audit]
        return found if len(found) >= len(HOSTILE_OR_CARELESS) else []

    found = await wait_for(records, timeout_s=10)  # written off the loop, just after the answer
    # named as the services name the request (new user 15, N8: "POST jobs" here, "submit job" there)
    assert sorted(found) == sorted(("ivan", request_name(m, p), f, 400) for m, p, _, _, f in HOSTILE_OR_CARELESS), found
    _, stored = await api("GET", "jobs", params={"all": "true"}, token=BOSS_TOKEN)
    assert stored == [], "no refused request stored anything"


async def test_an_anonymous_request_is_refused_without_an_audit_record(sched_app: Any, api: Any) -> None:
    status, _ = await api("POST", "jobs", {**JOB, "gpus": "two"}, token=None)
    assert status == 403
    status, _ = await api("POST", "jobs", {**JOB, "gpus": "two"}, token=JUDY_TOKEN)  # a caller: on the record
    assert status == 400

    async def judys() -> list[Any]:
        return list((await api("GET", "audit", params={"action": "refused"}, token=BOSS_TOKEN))[1])

    assert [r["actor"] for r in await wait_for(judys, timeout_s=10)] == ["judy"]


async def test_me_shows_the_callers_teams_and_granted_classes(sched_app: Any, api: Any) -> None:
    _, me = await api("GET", "me")
    assert (me["user"], me["team"], me["teams"], me["is_admin"]) == ("ivan", "ml", ["ml"], False)
    assert me["priorities"] == {"ml": ["normal", "low"]}
    assert [q["team"] for q in me["quotas"]] == ["ml"]
    status, job = await api("POST", "jobs", JOB)
    assert status == 201 and job["team"] == "ml", "a request naming no team is charged to the caller's team"


async def test_an_admin_grant_opens_high_for_that_user(sched_app: Any, api: Any) -> None:
    _, before = await api("POST", "jobs", {**JOB, "priority": "high"}, token=JUDY_TOKEN)
    assert before["error"]["field"] == "priority"
    status, _ = await api("PUT", "quotas", {"teams": [{"team": "cv", "allowed_priorities": ["high", "normal", "low"]}]},
                          token=BOSS_TOKEN)
    assert status == 200
    status, job = await api("POST", "jobs", {**JOB, "priority": "high"}, token=JUDY_TOKEN)
    assert status == 201 and job["priority"] == "high", job
    status, _ = await api("POST", "jobs", {**JOB, "priority": "high"}, token=IVAN_TOKEN)
    assert status == 403, "the grant is cv's, not ml's"
