"""New user 8 (session 8) findings on the REST service: inputs sibling fields refuse (N10), ..."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from .conftest import BOSS_TOKEN, wait_for


async def test_newuser8_n10_team_names_in_put_quotas_follow_the_job_team_rules(sched_app: Any, api: Any) -> None:
    """``PUT quotas`` stored a team with U+202E and a 5,000-character team; a job's team refuses both."""
    cases = [
        ({"quotas": [{"team": "a\u202e", "guaranteed": 1}]}, "quotas[0].team", "U+202E"),
        ({"quotas": [{"team": "ok", "guaranteed": 0}, {"team": "x" * 5000, "guaranteed": 0}]},
         "quotas[1].team", "too long"),
        ({"budgets": [{"team": "b\u0007", "gpu_hours": 1}]}, "budgets[0].team", "U+0007"),
        ({"teams": [{"team": "t\u2066x"}]}, "teams[0].team", "U+2066"),
        ({"user_teams": {"ana": " "}}, "user_teams.ana", "empty"),
    ]
    for body, field, said in cases:
        status, answer = await api("PUT", "quotas", body, token=BOSS_TOKEN)
        assert status == 400, (body, answer)
        error = answer["error"]
        assert error["field"] == field and said in error["message"] and error["hint"], error
    status, answer = await api("GET", "quotas", token=BOSS_TOKEN)
    assert status == 200 and all(len(q["team"]) < 100 and "\u202e" not in q["team"] for q in answer["quotas"]), answer
    status, answer = await api("PUT", "quotas", {"quotas": [{"team": "ml-research 2", "guaranteed": 0}]},
                               token=BOSS_TOKEN)
    assert status == 200 and answer["quotas"][0]["team"] == "ml-research 2", answer


async def test_newuser8_n10_kernel_id_on_a_job_is_refused_as_for_leases_only(sched_app: Any, api: Any) -> None:
    status, answer = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "kernel_id": "../../x"})
    assert status == 400, answer
    error = answer["error"]
    assert error["field"] == "kernel_id" and "is for leases" in error["message"] and error["hint"], error
    status, answer = await api("POST", "dryrun", {"gpus": 0, "command": ["true"], "kernel_id": "k"})
    assert status == 400 and answer["error"]["field"] == "kernel_id", answer


async def test_newuser8_n10_image_on_the_local_executor_is_accepted_with_a_warning(sched_app: Any, api: Any) -> None:
    status, answer = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "image": "evil/img"})
    assert status == 201, answer
    assert any("image 'evil/img' is not used" in w and "local executor" in w for w in answer.get("warnings", [])), \
        answer
    status, answer = await api("POST", "jobs", {"gpus": 0, "command": ["true"]})
    assert status == 201 and not any("image" in w for w in answer.get("warnings", [])), answer


async def test_newuser8_n4_a_lease_granted_before_its_timeout_is_recorded_as_a_plain_release(
        sched_app: Any, api: Any) -> None:
    """A lease granted at once and released 13 s later with ``why=timeout&timeout_s=30`` was recorded
    "released by …: granted only after its 30s timeout had passed" — both halves false."""
    status, lease = await api("POST", "leases", {"gpus": 1})
    assert status == 201, lease
    granted = await wait_for(lambda: _state(api, lease["id"], "running", "admitted"))
    assert granted["admitted_at"] is not None, granted
    status, gone = await api("DELETE", f"leases/{lease['id']}", params={"why": "timeout", "timeout_s": "30"})
    assert status == 200 and gone["message"] == "released by ivan", gone
    status, audit = await api("GET", "audit", params={"action": "cancel"}, token=BOSS_TOKEN)
    said = [e["message"] for e in (audit if isinstance(audit, list) else audit.get("events", []))
            if e.get("job_id") == lease["id"]]
    assert said == ["released by ivan"], audit
    # a grant that came only after the timeout keeps the client's cause (the lease's own times say so)
    status, late = await api("POST", "leases", {"gpus": 1})
    await wait_for(lambda: _state(api, late["id"], "running", "admitted"))
    with sched_app.services.ctx.store.transaction() as tx:
        record = tx.get_job(late["id"])
        job = record.job
        tx.update_job(replace(record, job=replace(job, submitted_at=job.admitted_at - timedelta(seconds=31))))
    status, gone = await api("DELETE", f"leases/{late['id']}", params={"why": "timeout", "timeout_s": "30"})
    assert status == 200 and gone["message"] == "released by ivan: granted only after its 30s timeout had passed", gone


async def _state(api: Any, job_id: str, *states: str) -> Any:
    status, job = await api("GET", f"leases/{job_id}")
    return job if status == 200 and job["state"] in states else None
