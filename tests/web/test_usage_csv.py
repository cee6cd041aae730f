"""``GET usage/report?format=csv`` answers ``text/csv`` as documented (the fuzz suite found it
answered ``application/json``: jupyter_server's ``APIHandler.finish`` sets its own media type
unless told another, and a header set before it was overwritten)."""

from __future__ import annotations

from typing import Any

from .conftest import API, IVAN_TOKEN


async def test_the_csv_report_is_text_csv_with_its_header_row(sched_app: Any, jp_fetch: Any) -> None:
    answer = await jp_fetch(*API.split("/"), "usage", "report", params={"format": "csv"},
                            headers={"Authorization": f"token {IVAN_TOKEN}"})
    assert answer.code == 200
    assert answer.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert answer.body.decode().splitlines()[0].startswith("user,allocated_gpu_seconds,")
