"""red30 R8 (MEDIUM): ``GET usage/report?by=job_id`` answered every job of the period at once. A day of one user's
instant 1-GPU jobs (170k usage rows) made the user's own report 64 MiB in 34 s; eight at once took the service
386 → 1,430 MiB (kept). The report is now paged as ``GET jobs``: at most ``limit`` groups (default 1000) and at most
about ``PAGE_BYTES`` a page (at least one group), ``Link: rel=next`` with the cursor and ``X-Total-Count`` (the groups
in all); by job_id the database picks the page's jobs (ascending id) and only their usage rows are read.
``jupyter-sched usage --by job_id`` (and ``--csv``) follows every page (``SchedClient.pages``).

Real parts: the accounting service on SQLite and on the session's PostgreSQL (``db_url``), the REST handler's
headers, the CLI over the real ``SchedClient`` whose transport answers from the service's pages.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from jupyter_sched.cli.admin_views import usage
from jupyter_sched.client._wire import Req
from jupyter_sched.client.sync import SchedClient
from jupyter_sched.errors import ValidationError
from jupyter_sched.extension.usage_web import report_headers
from jupyter_sched.services import Services, build_services
from jupyter_sched.services.models import GetUsageReportRequest
from jupyter_sched.services.models.base import PAGE_BYTES
from jupyter_sched.store import schema
from jupyter_sched.store.codec import ts

JOBS = 12000
"""Jobs of mal in the period: ~10,000 report rows (about 420 bytes each) pass PAGE_BYTES (4 MiB), so limit=10000 pages end by bytes."""


def _services(url: str, tmp: Any) -> Services:
    return build_services({"db_url": url, "log_dir": str(tmp / "logs"), "inventory_source": "simulated",
                           "simulated_gpus": 2, "telemetry_source": "off"})


def _flood(services: Services, jobs: int = JOBS) -> datetime:
    """``jobs`` one-second 1-GPU jobs of mal (as red30's SQL copies), one of eve; the time they began."""
    start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=5)
    rows = [{"job_id": f"j-r8-{k:05d}", "attempt": 1, "user": "mal", "team": "vision", "kind": "training",
             "gpu_uuid": f"GPU-{k % 2}", "gpu_model": "A100", "share": 1.0,
             "started_at": ts(start + timedelta(seconds=k)), "ended_at": ts(start + timedelta(seconds=k + 1))}
            for k in range(jobs)]
    rows.append({**rows[0], "job_id": "j-r8-eve", "user": "eve", "team": "nlp", "gpu_uuid": "GPU-eve"})
    with services.store.transaction() as tx:
        for at in range(0, len(rows), 2000):
            tx.conn.execute(schema.usage.insert(), rows[at:at + 2000])
    return start


def test_red30_r8_a_usage_report_by_job_is_paged_and_bounded(db_url: str, tmp_path: Any) -> None:
    """Failed before: one answer of all 12,000 jobs (about 5 MiB here; 64 MiB at red30's 170k), no cursor."""
    services = _services(db_url, tmp_path)
    try:
        _flood(services)
        mal = services.caller("mal", admin=False)
        first = services.accounting.report_page(mal, GetUsageReportRequest(by="job_id"))  # type: ignore[call-arg]
        rows = first.rows.to_wire()
        assert len(rows) == 1000 and first.total == JOBS and first.next_cursor is not None  # the default limit
        assert [r["job_id"] for r in rows] == [f"j-r8-{k:05d}" for k in range(1000)]  # ascending job id
        seen: list[str] = []
        cursor, pages, seconds = None, 0, 0.0
        while True:  # the largest limit: the bytes end each page
            request = GetUsageReportRequest(by="job_id", limit=10_000, cursor=cursor)  # type: ignore[call-arg]
            page = services.accounting.report_page(mal, request)
            got = page.rows.to_wire()
            assert got and len(json.dumps(got).encode()) <= PAGE_BYTES + 2000, len(json.dumps(got))
            assert page.total == JOBS
            seen += [r["job_id"] for r in got]
            seconds += sum(r["allocated_gpu_seconds"] for r in got)
            pages += 1
            headers = dict(report_headers(page, request))
            cursor = page.next_cursor
            if cursor is None:
                assert headers == {}
                break
            link = parse_qs(urlsplit(headers["Link"].split(";")[0].strip("<>")).query)
            assert headers["Link"].startswith("<report?") and headers["X-Total-Count"] == str(JOBS)
            assert link["cursor"] == [cursor] and link["by"] == ["job_id"] and link["limit"] == ["10000"]
        assert pages >= 2 and seen == [f"j-r8-{k:05d}" for k in range(JOBS)]  # each job once, eve's never
        assert seconds == pytest.approx(JOBS * 1.0)
        # the admin's everyone's report: eve's job too, and the same cursor rules
        boss = services.caller("boss", admin=True)
        everyone = services.accounting.report_page(boss, GetUsageReportRequest(  # type: ignore[call-arg]
            by="user,job_id", all=True, limit=5000))
        assert everyone.total == JOBS + 1 and len(everyone.rows.to_wire()) == 5000
        # other groupings (bounded by people, models, teams) answer the same rows, paged by limit too
        (one,) = services.accounting.report(mal, GetUsageReportRequest(by="user")).to_wire()  # type: ignore[call-arg]
        assert (one["user"], one["jobs"], one["allocated_gpu_seconds"]) == ("mal", JOBS, pytest.approx(JOBS * 1.0))
        by_user = services.accounting.report_page(boss, GetUsageReportRequest(  # type: ignore[call-arg]
            by="user", all=True, limit=1))
        assert len(by_user.rows.to_wire()) == 1 and by_user.total == 2
        rest = services.accounting.report_page(boss, GetUsageReportRequest(  # type: ignore[call-arg]
            by="user", all=True, limit=1, cursor=by_user.next_cursor))
        users = [r["user"] for page in (by_user, rest) for r in page.rows.to_wire()]
        assert sorted(users) == ["eve", "mal"] and rest.next_cursor is None  # the report's order, each once
        # a forged cursor, or one of another grouping: 400 naming the field
        for bad in ("nonsense", by_user.next_cursor):
            with pytest.raises(ValidationError) as refused:
                services.accounting.report_page(mal, GetUsageReportRequest(by="job_id", cursor=bad))  # type: ignore[call-arg]
            assert refused.value.field == "cursor"
    finally:
        services.store.close()


class _PagedTransport:
    """The real ``SchedClient`` minus its socket: each ``GET usage/report`` is answered from the service's page
    (its body and its ``Link``), as the REST handler answers it."""

    def __init__(self, services: Services) -> None:
        self.services, self.asked = services, []  # type: list[dict[str, str]]

    def exchange(self, req: Req) -> Any:
        from jupyter_sched.client._http import HttpReply

        if req.path == "me":
            return HttpReply(200, "application/json", json.dumps({"user": "mal", "is_admin": False}).encode())
        self.asked.append(dict(req.params))
        request = GetUsageReportRequest(**req.params)
        page = self.services.accounting.report_page(self.services.caller("mal", admin=False), request)
        link = dict(report_headers(page, request)).get("Link", "")
        if request.format == "csv":
            return HttpReply(200, "text/csv", self.services.accounting.report_csv(page.rows, request).encode(), link)
        return HttpReply(200, "application/json", json.dumps(page.rows.to_wire()).encode(), link)


def test_red30_r8_cli_usage_by_job_reads_every_page(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: ``jupyter-sched usage --by job_id`` (and ``--csv``) printed the first page only."""
    services = _services(f"sqlite:///{tmp_path / 'sched.sqlite'}", tmp_path)
    try:
        _flood(services, jobs=2500)
        transport = _PagedTransport(services)
        client = SchedClient.__new__(SchedClient)
        monkeypatch.setattr(client, "_exchange", lambda req, timeout_s=None: transport.exchange(req), raising=False)
        monkeypatch.setattr(client, "call", lambda req, timeout_s=None: client._decode(transport.exchange(req)),
                            raising=False)
        for as_csv in (False, True):
            out = io.StringIO()
            args = argparse.Namespace(by="job_id", csv=as_csv, json=not as_csv, since=None, until=None, month=None)
            assert usage(client, args, SimpleNamespace(out=out, err=io.StringIO())) == 0
            if as_csv:
                ids = [row["job_id"] for row in csv.DictReader(io.StringIO(out.getvalue()))]
            else:
                ids = [row["job_id"] for row in json.loads(out.getvalue())["rows"]]
            assert ids == [f"j-r8-{k:05d}" for k in range(2500)]  # 3 pages of 1000, each job once, one header
        assert [a.get("cursor") is not None for a in transport.asked] == [False, True, True] * 2
    finally:
        services.store.close()
