"""Red team 16, R9: ``POST dryrun`` answered ``fits: true`` for a lease the real request refuses
(another user's ``parent_job_id``, a kernel that is not the caller's). The dry run runs the lease
request's own admission checks and answers the same 400, audited."""

from __future__ import annotations

from typing import Any

from .conftest import BOSS_TOKEN, JUDY_TOKEN, wait_for


async def _state(api: Any, job_id: str, token: str) -> str:
    _, job = await api("GET", f"jobs/{job_id}", token=token)
    return str(job.get("state"))


async def test_red16_r9_dryrun_of_a_lease_refuses_another_users_parent_job_as_the_request_does(
        sched_app: Any, api: Any) -> None:
    status, judys = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "60"], "name": "judy-run"},
                              token=JUDY_TOKEN)
    assert status == 201, judys

    async def running() -> bool:
        return await _state(api, judys["id"], JUDY_TOKEN) == "running"

    await wait_for(running)
    body = {"kind": "lease", "gpus": 1, "parent_job_id": judys["id"]}
    real_status, real = await api("POST", "leases", {k: v for k, v in body.items() if k != "kind"})
    dry_status, dry = await api("POST", "dryrun", body)
    assert real_status == 400 and dry_status == 400, (real, dry)
    assert dry["error"]["field"] == "parent_job_id" and dry["error"]["message"] == real["error"]["message"], dry
    assert dry["error"]["message"] == f"no job {judys['id']!r} of yours asks for this lease", dry
    _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
    assert any(r["details"].get("field") == "parent_job_id" and "dry run" in str(r) for r in audit), audit
    # the job's own lease still fits (judy asks for her own job's GPUs)
    status, own = await api("POST", "dryrun", body, token=JUDY_TOKEN)
    assert status == 200, own


async def test_red16_r9_dryrun_of_a_lease_refuses_a_kernel_this_server_does_not_run(
        sched_app: Any, api: Any) -> None:
    status, dry = await api("POST", "dryrun", {"kind": "lease", "gpus": 1, "kernel_id": "k-not-mine"})
    assert status == 400, dry
    assert dry["error"]["field"] == "kernel_id" and dry["error"]["message"].startswith(
        "kernel_id: no kernel 'k-not-mine' runs on this server"), dry
    status, loose = await api("POST", "dryrun", {"kind": "lease", "gpus": 1})  # bound to no kernel: asked
    assert status == 200 and loose["fits"] is True, loose
