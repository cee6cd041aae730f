"""s30 (closing note 29): ``GET jobs`` pages (session 28), and the jupyter-scheduler backend's job list read only the
first page, so a user with more jobs than a page saw the rest vanish from jupyter-scheduler's Jobs list (and its
counts). The backend reads every page now. The wire is the server's (``Link`` built by
``extension.polled.jobs_headers``), served by an httpx mock transport."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs

import httpx

from jupyter_sched.extension.polled import jobs_headers
from tests.definitions.test_s29_definitions_every_page import backend_on, every_page

TOTAL = 2300  # the client asks 1000 a page: three pages


def _job(i: int) -> dict[str, Any]:
    return {"id": f"j-{i:05d}", "user": "ana", "name": f"run{i}", "notebook": f"run{i}.ipynb", "state": "succeeded",
            "request": {"gpus": 1}, "submitted_at": "2026-12-06T05:00:00Z", "started_at": "2026-12-06T05:01:00Z",
            "finished_at": "2026-12-06T05:02:00Z", "parameters": {}}


def _pages(asked: list[str]) -> Any:
    """``GET jobs`` as the server pages it: ``limit`` a page (100 when not asked), ``Link`` to the next."""
    rows = [_job(i) for i in range(TOTAL)]

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/jobs"), request.url
        query = parse_qs(request.url.query.decode())
        asked.append(request.url.query.decode())
        start = int(query.get("cursor", ["0"])[0])
        limit = int(query.get("limit", ["100"])[0])
        page = SimpleNamespace(next_cursor=str(start + limit) if start + limit < TOTAL else None)
        ask = SimpleNamespace(state=None, kind=None, user=None, all=False, team=None, since=None, until=None,
                              limit=limit)
        return httpx.Response(200, json=rows[start:start + limit],
                              headers=dict(jobs_headers(page, ask, request.url.path)))
    return handler


def test_s30_jupyter_scheduler_backend_lists_every_page_of_jobs() -> None:
    from jupyter_scheduler.models import CountJobsQuery, ListJobsQuery

    asked: list[str] = []
    scheduler = backend_on(_pages(asked))
    names = every_page(scheduler.list_jobs, ListJobsQuery, "jobs", TOTAL)
    assert len(names) == TOTAL and sorted(names) == sorted(f"run{i}" for i in range(TOTAL)), names[-3:]
    assert any("cursor=2000" in q for q in asked), asked
    assert asyncio.run(scheduler.count_jobs(CountJobsQuery(status="COMPLETED"))) == TOTAL
