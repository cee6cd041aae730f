"""``POST jobs/cancel``: one request cancels many jobs (issue 20 F2: ``cancel --mine`` sent one
``DELETE`` per job, ~20 ms of server time each), and never touches another user's.

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan, judy, eve; boss is an
admin), real job processes (``sleep``) on simulated GPUs.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN, EVE_TOKEN, IVAN_TOKEN, JUDY_TOKEN, wait_for
from .test_cli import cli  # noqa: F401  (the fixture: the CLI as a subprocess against this server)

SLEEP = {"command": ["sleep", "300"], "time_limit": "10m"}


async def _submit(api: Any, n: int, *, gpus: int = 4, token: str | None = None) -> list[str]:
    ids = []
    for _ in range(n):
        status, job = await api("POST", "jobs", {**SLEEP, "gpus": gpus},
                                **({"token": token} if token else {}))
        assert status == 201, job
        ids.append(job["id"])
    return ids


async def _state(api: Any, job_id: str, token: str = BOSS_TOKEN) -> str:
    status, job = await api("GET", f"jobs/{job_id}", token=token)
    assert status == 200, job
    return str(job["state"])


async def test_mine_cancels_every_job_of_mine_in_one_request_and_counts_them(sched_app: Any, api: Any) -> None:
    running, *waiting = await _submit(api, 4)  # 4 GPUs each of 4: the first runs, three wait
    await wait_for(lambda: _running(api, running))
    judys = await _submit(api, 2, token=JUDY_TOKEN, gpus=0)
    status, answer = await api("POST", "jobs/cancel", {"mine": True})
    assert status == 200, answer
    assert answer["cancelled"] == 4 and answer["counts"]["removed"] == 3 and answer["counts"]["stopping"] == 1
    assert answer["grace_s"] > 0
    by_id = {j["id"]: j for j in answer["jobs"]}
    assert set(by_id) == {running, *waiting}  # in submit order, only ivan's
    assert [j["id"] for j in answer["jobs"]] == [running, *waiting]
    assert by_id[running] == {"id": running, "outcome": "stopping", "was": "running", "state": "running",
                               "message": None}
    assert all(by_id[j]["outcome"] == "removed" and by_id[j]["state"] == "cancelled" for j in waiting)
    await wait_for(lambda: _is(api, running, "cancelled"))
    for job_id in judys:  # judy's untouched
        assert await _state(api, job_id) in ("pending", "admitted", "running")
    again = (await api("POST", "jobs/cancel", {"mine": True}))[1]
    assert again["cancelled"] == 0 and again["jobs"] == []


async def test_a_state_filter_leaves_running_work_alone_and_named_jobs_out_of_it_are_skipped(
        sched_app: Any, api: Any) -> None:
    running, waiting = await _submit(api, 2)
    await wait_for(lambda: _running(api, running))
    status, answer = await api("POST", "jobs/cancel", {"ids": [running, waiting, waiting], "states": ["pending"]})
    assert status == 200, answer
    assert answer["jobs"] == [{"id": running, "outcome": "skipped", "was": "running", "state": "running", "message": None},
                              {"id": waiting, "outcome": "removed", "was": "pending", "state": "cancelled", "message": None}]
    assert answer["cancelled"] == 1 and answer["counts"]["skipped"] == 1
    assert await _state(api, running) == "running"
    ended = (await api("POST", "jobs/cancel", {"ids": [waiting]}))[1]
    assert ended["jobs"][0]["outcome"] == "ended" and ended["cancelled"] == 0


async def test_a_hostile_user_cannot_cancel_or_learn_of_others_jobs(sched_app: Any, api: Any) -> None:
    """eve names ivan's jobs, asks for everyone's and sends malformed selections: nothing of
    ivan's changes, the named live ones read refused and the unknown id not_found, each with the
    message DELETE jobs/{id} answers (new user 14, N7: a bare not_found for both could not tell a
    typo from another's job), and the attempts are audited."""
    ivans = await _submit(api, 3, gpus=0)
    status, answer = await api("POST", "jobs/cancel", {"ids": [*ivans, "j-no-such"]}, token=EVE_TOKEN)
    assert status == 200, answer
    assert [j["outcome"] for j in answer["jobs"]] == ["refused"] * 3 + ["not_found"] and answer["cancelled"] == 0
    assert all(j["was"] is None and j["state"] is None for j in answer["jobs"])  # nothing about them leaks
    assert [j["message"] for j in answer["jobs"]] == [
        *(f"{job_id} is another user's job: you may cancel only your own" for job_id in ivans),
        "no job 'j-no-such' visible to you"]
    status, error = await api("POST", "jobs/cancel", {"all": True}, token=EVE_TOKEN)
    assert status == 403 and error["error"]["field"] == "all" and "mine" in error["error"]["hint"]
    status, mine = await api("POST", "jobs/cancel", {"mine": True}, token=EVE_TOKEN)
    assert status == 200 and mine["jobs"] == []
    for job_id in ivans:
        assert await _state(api, job_id) != "cancelled"
    _, audit = await api("GET", "audit", params={"action": "refused", "user": "eve"}, token=BOSS_TOKEN)
    refused = {(r.get("job_id"), r["details"].get("request")) for r in audit}
    assert {(job_id, "cancel job") for job_id in ivans} <= refused
    assert any(r["details"].get("field") == "all" for r in audit)


@pytest.mark.parametrize("body, field", [
    ({}, "ids"),
    ({"mine": True, "all": True}, "all"),
    ({"ids": ["j-1"], "mine": True}, "mine"),
    ({"ids": []}, "ids"),
    ({"ids": "j-1"}, "ids"),
    ({"ids": [""]}, "ids"),
    ({"ids": ["x" * 201]}, "ids"),
    ({"ids": ["j-1"] * 10_001}, "ids"),
    ({"mine": "yes"}, "mine"),
    ({"mine": True, "states": ["succeeded"]}, "states"),
    ({"mine": True, "states": []}, "states"),
    ({"mine": True, "everyone": True}, "everyone"),
], ids=["nothing selected", "mine and all", "ids and mine", "no ids", "ids not a list", "an empty id",
        "an id too long", "too many ids", "mine not a boolean", "an ended state", "no states", "an unknown field"])
async def test_a_malformed_selection_is_a_400_naming_the_field(sched_app: Any, api: Any, body: dict[str, Any],
                                                              field: str) -> None:
    status, error = await api("POST", "jobs/cancel", body, token=EVE_TOKEN)
    assert status == 400, error
    assert error["error"]["field"].split(".")[0].split("[")[0] == field and error["error"]["hint"]


async def test_an_admin_cancels_everyones_jobs_and_a_lease_named_is_released(sched_app: Any, api: Any,
                                                                            kernel: Any) -> None:
    ivans = await _submit(api, 2, gpus=0)
    judys = await _submit(api, 1, gpus=0, token=JUDY_TOKEN)
    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()})
    assert status == 201, lease
    status, answer = await api("POST", "jobs/cancel", {"all": True}, token=BOSS_TOKEN)
    assert status == 200, answer
    assert {j["id"] for j in answer["jobs"]} == {*ivans, *judys}  # leases are left alone
    assert answer["cancelled"] == 3
    status, named = await api("POST", "jobs/cancel", {"ids": [lease["id"]]})
    assert status == 200 and named["jobs"][0]["outcome"] in ("released", "removed"), named
    assert await _state(api, lease["id"]) == "cancelled"


async def test_get_and_delete_of_the_route_are_not_a_job_named_cancel(sched_app: Any, api: Any) -> None:
    status, error = await api("GET", "jobs/cancel")
    assert status == 405 and "error" in error


async def _running(api: Any, job_id: str) -> bool:
    return await _state(api, job_id) == "running"


async def _is(api: Any, job_id: str, state: str) -> bool:
    return await _state(api, job_id) == state


async def _requests(jp_fetch: Any, handler: str, method: str) -> float:
    """Requests ``handler`` answered for ``method`` so far (the server's Prometheus counter)."""
    text = (await jp_fetch("metrics", headers={"Authorization": f"token {IVAN_TOKEN}"})).body.decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("http_request_duration_seconds_count{") and f'handler="{handler}"' in line
               and f'method="{method}"' in line)


async def test_cli_cancel_mine_is_one_request_and_keeps_its_count(cli: Any, api: Any, jp_fetch: Any) -> None:  # noqa: F811
    ids = await _submit(api, 30, gpus=0)
    judys = await _submit(api, 1, gpus=0, token=JUDY_TOKEN)
    deletes = await _requests(jp_fetch, "jupyter_sched.extension.handlers.JobHandler", "DELETE")
    bulk = await _requests(jp_fetch, "jupyter_sched.extension.cancel_web.CancelJobsHandler", "POST")
    run = await cli("cancel", "--mine", "--yes")
    assert run.code == EXIT_OK, run.err
    assert run.out.startswith("cancelled 30 jobs: "), run.out
    assert await _requests(jp_fetch, "jupyter_sched.extension.handlers.JobHandler", "DELETE") == deletes
    assert await _requests(jp_fetch, "jupyter_sched.extension.cancel_web.CancelJobsHandler", "POST") == bulk + 1
    for job_id in ids:  # the CPU-only ones that started stop within the grace
        await wait_for(lambda job_id=job_id: _is(api, job_id, "cancelled"))
    assert await _state(api, judys[0]) != "cancelled"
    asked = await cli("cancel", "--mine")  # nothing left: said, and nothing asked
    assert asked.code == EXIT_OK and asked.out.strip() == "nothing to cancel: no pending or running jobs of ivan"
