"""A polled query text is parsed once, then recognised; a refusal never is (issue 17).

Fifty panels send ``GET jobs?limit=50`` and ``GET queue?limit=50`` each second: the same text, each
poll checked and validated again on the event loop. :mod:`jupyter_sched.extension.query_once` keeps
the model a text was parsed into; what must never happen is a refused text answered from it, or an
argument the model does not name (a ``token``, a cache buster) keeping texts without bound.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from jupyter_sched.extension import query_once
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest


def test_issue17_a_parsed_query_text_is_recognised_and_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(query_once, "_parsed", type(query_once._parsed)())
    parsed = ListJobsRequest(limit=50)
    assert query_once.remember(ListJobsRequest, "limit=50", ["limit"], parsed) is parsed
    assert query_once.parsed_before(ListJobsRequest, "limit=50") is parsed
    assert query_once.parsed_before(GetQueueRequest, "limit=50") is None, "another model: parsed on its own"
    assert query_once.parsed_before(ListJobsRequest, "limit=51") is None
    # an argument the model does not name: a token, a cache buster (a new text each poll)
    query_once.remember(ListJobsRequest, "limit=50&token=abc", ["limit", "token"], parsed)
    query_once.remember(ListJobsRequest, "limit=50&1796197047291", ["limit", "1796197047291"], parsed)
    assert len(query_once._parsed) == 1

    class Mutable(BaseModel):
        limit: int = 0

    query_once.remember(Mutable, "limit=1", ["limit"], Mutable(limit=1))
    assert query_once.parsed_before(Mutable, "limit=1") is None, "only frozen models are shared between requests"
    long_text = "limit=5&x=" + "x" * query_once.LONGEST
    query_once.remember(ListJobsRequest, long_text, ["limit"], parsed)
    assert query_once.parsed_before(ListJobsRequest, long_text) is None, "a text longer than LONGEST: not kept"
    for n in range(query_once.KEPT + 10):
        query_once.remember(ListJobsRequest, f"limit={n}", ["limit"], ListJobsRequest(limit=n + 1))
    assert len(query_once._parsed) == query_once.KEPT
    assert query_once.parsed_before(ListJobsRequest, "limit=50") is None, "oldest dropped first"


async def test_issue17_a_refused_query_is_refused_after_the_same_route_parsed_others(api: Any) -> None:
    for _ in range(2):
        status, page = await api("GET", "jobs", params={"limit": "5"})
        assert status == 200 and page == []
        status, body = await api("GET", "jobs", params={"limit": "abc"})
        assert status == 400 and body["error"]["field"] == "limit"
        status, body = await api("GET", "jobs", params={"limit": "5", "sate": "running"})
        assert status == 400 and body["error"]["field"] == "sate"
        status, body = await api("GET", "me", params={"x": "1"})
        assert status == 400 and body["error"]["field"] == "x"
        assert (await api("GET", "me"))[0] == 200
