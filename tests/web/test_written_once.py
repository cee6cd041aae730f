"""A page kept by the services while its jobs are unchanged is serialised once for every poller
(issue 17: fifty panels' identical pages were each written to JSON on the event loop)."""

from __future__ import annotations

from typing import Any

from jupyter_sched.extension import web
from jupyter_sched.services import models


async def test_each_page_object_is_written_once_however_many_pollers_get_it(sched_app: Any, api: Any,
                                                                           monkeypatch: Any) -> None:
    written: list[int] = []
    pages: list[Any] = []
    real_wire, real_page = models.wire_json, sched_app.services.jobs.queue_page

    def counting(answer: Any) -> bytes:
        if isinstance(answer, models.GetQueueResponse):
            written.append(id(answer))
        return real_wire(answer)

    def page(*args: Any, **kwargs: Any) -> Any:
        pages.append(real_page(*args, **kwargs))
        return pages[-1]

    monkeypatch.setattr(web, "wire_json", counting)
    monkeypatch.setattr(sched_app.services.jobs, "queue_page", page)
    for i in range(6):
        if i == 3:
            status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "changes-it"})
            assert status == 201
        status, _ = await api("GET", "queue", params={"limit": "5"})
        assert status == 200
    distinct = {id(p.entries) for p in pages}
    assert 2 <= len(distinct) < 6, "kept pages are the same object; the submit made a new one"
    assert sorted(written) == sorted(distinct), "each distinct page written once, the same page never twice"
