"""List routes page and filter in the store: ``GET jobs?limit=3`` answers 3 jobs and a ``Link:
rel="next"`` header whose cursor continues exactly after them (issue 15: it answered all 220)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlparse

from .conftest import IVAN_TOKEN, wait_for

JOB = {"gpus": 0, "command": ["python", "-c", "pass"]}


async def _page(jp_fetch: Any, params: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, str] | None]:
    response = await jp_fetch("api", "sched", "jobs", params=params, headers={"Authorization": f"token {IVAN_TOKEN}"})
    link = response.headers.get("Link")
    following = None
    if link:
        match = re.fullmatch(r'<([^>]+)>; rel="next"', link)
        assert match, link
        following = {k: v[0] for k, v in parse_qs(urlparse(match.group(1)).query).items()}
    return json.loads(response.body), following


async def test_a_limit_pages_newest_first_and_the_link_header_continues(sched_app: Any, api: Any,
                                                                       jp_fetch: Any) -> None:
    submitted = []
    for i in range(7):
        status, job = await api("POST", "jobs", {**JOB, "name": f"p{i}"})
        assert status == 201, job
        submitted.append(job["id"])
    seen: list[str] = []
    params: dict[str, str] | None = {"limit": "3", "kind": "training"}
    pages = 0
    while params is not None:
        jobs, params = await _page(jp_fetch, params)
        assert len(jobs) <= 3 and all(j["kind"] == "training" for j in jobs)
        seen += [j["id"] for j in jobs]
        pages += 1
    assert seen == list(reversed(submitted)) and pages == 3


async def test_a_cursor_this_server_did_not_write_is_a_400_naming_cursor(sched_app: Any, api: Any) -> None:
    status, body = await api("GET", "jobs", params={"cursor": "not-a-cursor"})
    assert status == 400 and body["error"]["field"] == "cursor"
    status, body = await api("GET", "jobs", params={"limit": "0"})
    assert status == 400 and body["error"]["field"] == "limit"


async def test_the_queue_pages_with_a_link_header_in_queue_order(sched_app: Any, api: Any, jp_fetch: Any) -> None:
    waiting = []
    for i in range(5):  # 4 GPUs each: the first starts (4 simulated GPUs), the others wait behind it
        status, job = await api("POST", "jobs", {"gpus": 4, "command": ["sleep", "60"], "name": f"q{i}"})
        assert status == 201, job
        waiting.append(job["id"])

    async def settled() -> bool:
        """q0 runs and the engine has numbered every job behind it: q0 starting between two pages
        renumbers the rest, and a job submitted after the cycle that started q0 has no position
        until the next cycle (CI on 6517ce77: q4 was left off the pages under load)."""
        _, job = await api("GET", f"jobs/{waiting[0]}")
        _, queue = await api("GET", "queue")
        numbered = {e["id"] for e in queue if e["position"] is not None}
        return job["state"] == "running" and numbered == set(waiting[1:])

    await wait_for(settled, timeout_s=30)
    seen: list[tuple[str, int]] = []
    params: dict[str, str] | None = {"limit": "2"}
    while params is not None:
        response = await jp_fetch("api", "sched", "queue", params=params, headers={"Authorization": f"token {IVAN_TOKEN}"})
        seen += [(e["id"], e["position"]) for e in json.loads(response.body) if e["position"] is not None]
        link = response.headers.get("Link")
        match = re.fullmatch(r'<queue\?([^>]+)>; rel="next"', link) if link else None
        assert link is None or match, link
        params = {k: v[0] for k, v in parse_qs(match.group(1)).items()} if match else None
    ids = [job_id for job_id, _ in seen]
    assert ids == waiting[1:], "queue order, each waiting job once"
    assert [p for _, p in seen] == list(range(1, len(seen) + 1)), "positions continue across pages"
    status, body = await api("GET", "queue", params={"cursor": "nope"})
    assert status == 400 and body["error"]["field"] == "cursor"
