"""Case 030: a per-user GPU limit holds on every entry point, not only where a form hides the choice.

Through the real server (pytest-jupyter) as eve, a student whose per-user line allows 1 GPU:
the REST submit, the lease request, the dry run and a profile that asks for more all get the same
422 naming ``gpus`` and the numbers; the in-process services decide the same; nothing is stored;
every refusal is in the audit log with the user, the entry point and the field (the dry run's answer
is not a refused request: new user 18, N11). Extra keys and
an injected profile name are 400s, never merged. A second 1-GPU job waits (``ExceedsQuota``):
eve never holds two GPUs at once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import QuotaError
from jupyter_sched.services.models import SubmitJobRequest

from .conftest import BOSS_TOKEN, EVE_TOKEN, server_config, wait_for

PROFILES = {"cpu": {"description": "no GPU", "gpus": 0}, "gpu-small": {"description": "one GPU", "gpus": 1},
            "gpu-large": {"description": "four GPUs", "gpus": 4}}
QUOTAS = [{"team": "students", "guaranteed": 2, "borrowing_limit": 0},
          {"team": "students", "user": "eve", "guaranteed": 1, "borrowing_limit": 0},
          {"team": "staff", "guaranteed": 2, "borrowing_limit": 2}]
SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, quotas=QUOTAS, profiles=PROFILES, user_teams={"eve": "students"})


def _decision(status: int, body: Any) -> tuple[int, str | None, str]:
    error = body["error"]
    return status, error["field"], error["message"]


async def test_case_030_the_per_user_limit_is_the_same_422_on_every_entry_point(sched_app: Any, api: Any) -> None:
    entry_points = {
        "submit job": ("POST", "jobs", {"gpus": 4, "command": SLEEP}),
        "request lease": ("POST", "leases", {"gpus": 4, "kernel_id": "k-eve"}),
        "dry run": ("POST", "dryrun", {"gpus": 4, "command": SLEEP}),
        "profile gpu-large": ("POST", "jobs", {"profile": "gpu-large", "command": SLEEP}),
    }
    decisions = {}
    for name, (method, path, body) in entry_points.items():
        status, answer = await api(method, path, body, token=EVE_TOKEN)
        decisions[name] = _decision(status, answer)
        assert answer["error"]["details"]["requested"] == 4 and answer["error"]["details"]["ceiling"] == 1, answer
        assert answer["error"]["hint"] == "ask for at most 1 GPU, or ask an admin to raise the quota"
    eve = sched_app.resolve_caller(_User("eve"))
    with pytest.raises(QuotaError) as inproc:
        sched_app.services.jobs.submit(eve, SubmitJobRequest(gpus=4, command=SLEEP))
    decisions["in-process services"] = (422, inproc.value.field, inproc.value.message)
    assert set(decisions.values()) == {
        (422, "gpus", "4 GPUs can never fit the per-user limit of eve in team students: 1 GPU "
                      "(guaranteed 1 + borrowing limit 0)")}, decisions

    # extra keys are refused, not merged; an injected profile name is an unknown profile
    status, answer = await api("POST", "jobs", {"profile": "gpu-small", "gpuz": 4, "command": SLEEP}, token=EVE_TOKEN)
    assert (status, answer["error"]["field"]) == (400, "gpuz")
    status, answer = await api("POST", "jobs", {"profile": 'gpu-small" ; gpus=4', "command": SLEEP}, token=EVE_TOKEN)
    assert (status, answer["error"]["field"]) == (400, "profile") and "unknown profile" in answer["error"]["message"]

    _, stored = await api("GET", "jobs", token=EVE_TOKEN)
    assert stored == [], "a refused request stores nothing"
    # request validation: audited too, as the action (N8); the dry run answers the same 422 but only asked
    # "would this be accepted?" — an answer, not a refused request (new user 18, N11)
    want = sorted([("submit job", "gpus", 422), ("request lease", "gpus", 422),
                   ("submit job", "gpus", 422), ("submit job", "gpus", 422),
                   ("submit job", "gpuz", 400), ("submit job", "profile", 400)])

    async def audited() -> list[Any]:
        _, records = await api("GET", "audit", params={"action": "refused", "user": "eve"}, token=BOSS_TOKEN)
        return list(records) if len(records) >= len(want) else []

    refusals = await wait_for(audited, timeout_s=10)  # the web layer writes its records just after answering
    seen = sorted((r["details"]["request"], r["details"]["field"], r["details"]["status"]) for r in refusals)
    assert seen == want, seen
    assert all(r["actor"] == "eve" for r in refusals)
    assert all("per-user limit of eve" in r["message"] for r in refusals if r["details"]["status"] == 422)


async def test_case_030_a_second_gpu_waits_so_eve_never_holds_two(sched_app: Any, api: Any) -> None:
    status, first = await api("POST", "jobs", {"profile": "gpu-small", "command": SLEEP}, token=EVE_TOKEN)
    assert status == 201, first

    async def running() -> bool:
        return bool((await api("GET", f"jobs/{first['id']}", token=EVE_TOKEN))[1]["state"] == "running")

    await wait_for(running)
    status, second = await api("POST", "jobs", {"profile": "gpu-small", "command": SLEEP}, token=EVE_TOKEN)
    assert status == 201, second

    async def waiting() -> dict[str, Any] | None:
        job = (await api("GET", f"jobs/{second['id']}", token=EVE_TOKEN))[1]
        return job if job["state"] == "pending" and job.get("reason") else None

    pending = await wait_for(waiting)
    assert pending["reason"]["code"] == "ExceedsQuota", pending["reason"]
    _, me = await api("GET", "me", token=EVE_TOKEN)
    assert me["in_use"]["gpus"] == 1 and me["team"] == "students"


class _User:
    """What jupyter_server's identity provider hands the app as ``current_user``."""

    def __init__(self, name: str) -> None:
        self.username = self.name = name
