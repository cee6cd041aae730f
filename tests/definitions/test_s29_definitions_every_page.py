"""s29 (red28 R6 left): ``GET definitions`` answers 100 a page, the next behind ``Link: rel=next``; the
magics' ``%schedule define list`` and the jupyter-scheduler backend's list read the first page only (the
CLI and the panel follow pages). Both read every page now. The wire is the server's (``Link`` built by
``extension.polled.definitions_headers``), served by an httpx mock transport."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs

import httpx

from jupyter_sched.client import AsyncSchedClient, Connection, SchedClient
from jupyter_sched.extension.polled import definitions_headers
from jupyter_sched.magics.core import SchedMagics

TOTAL = 230


def _definition(i: int) -> dict[str, Any]:
    return {"id": f"d-{i:04d}", "user": "ana", "name": f"report{i}", "notebook": f"report{i}.ipynb", "script": None,
            "schedule": "0 6 * * *", "timezone": "UTC", "schedule_description": "at 06:00", "paused": False,
            "next_run_at": "2026-12-07T06:00:00Z", "parameters": {}, "job": {"gpus": 1}, "last_run": None,
            "created_at": "2026-12-06T05:00:00Z", "updated_at": "2026-12-06T05:00:00Z"}


def _pages(asked: list[str]) -> Any:
    """``GET definitions`` as the server pages it: 100 a page, ``Link`` to the next (its cursor: the offset)."""
    rows = [_definition(i) for i in range(TOTAL)]

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/definitions"), request.url
        query = parse_qs(request.url.query.decode())
        asked.append(request.url.query.decode())
        start = int(query.get("cursor", ["0"])[0])
        limit = int(query.get("limit", ["100"])[0])
        page = SimpleNamespace(next_cursor=str(start + limit) if start + limit < TOTAL else None)
        ask = SimpleNamespace(user=None, all=bool(query.get("all")), name=None, limit=limit)
        return httpx.Response(200, json=rows[start:start + limit], headers=dict(definitions_headers(page, ask)))
    return handler


def test_s29_magics_schedule_define_list_reads_every_page() -> None:
    asked: list[str] = []
    client = SchedClient(Connection("http://sched.test/"), transport=httpx.MockTransport(_pages(asked)))
    magics = SchedMagics(None, client_factory=lambda: client)
    frame = magics.schedule("define list")
    assert len(frame) == TOTAL, asked  # 100 before: the first page
    assert len(asked) == 3 and "cursor=200" in asked[-1], asked


def backend_on(handler: Any) -> Any:
    """The jupyter-scheduler backend (``GpuScheduler``) on a ``SelfApi`` whose client speaks to ``handler``."""
    from jupyter_sched.jupyter_scheduler_backend.api import SelfApi
    from jupyter_sched.jupyter_scheduler_backend.scheduler import GpuEnvironmentManager, GpuScheduler

    api = SelfApi(Connection("http://sched.test/"))
    api._client = AsyncSchedClient(api.connection, transport=httpx.MockTransport(handler))
    return GpuScheduler(root_dir="/tmp", environments_manager=GpuEnvironmentManager(api), api=api)


def every_page(list_page: Any, query: Any, items: str, total: int) -> list[str]:
    """The names jupyter-scheduler's own paging (``next_token``) reads over the whole list, each answer's
    ``total_count`` checked against ``total``."""
    async def listed() -> list[str]:
        names: list[str] = []
        token: str | None = None
        while True:
            answer = await list_page(query(next_token=token, max_items=1000))
            names += [row.name for row in getattr(answer, items)]
            assert answer.total_count == total, answer.total_count  # 100 before: the first page
            if not (token := answer.next_token):
                return names

    return asyncio.run(listed())


def test_s29_jupyter_scheduler_backend_lists_every_page() -> None:
    from jupyter_scheduler.models import ListJobDefinitionsQuery

    asked: list[str] = []
    scheduler = backend_on(_pages(asked))
    names = every_page(scheduler.list_job_definitions, ListJobDefinitionsQuery, "job_definitions", TOTAL)
    assert len(names) == TOTAL and names[-1] == f"report{TOTAL - 1}", names[-3:]
