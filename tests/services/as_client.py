"""The CLI's client as one caller of in-process :class:`~jupyter_sched.services.Services`: each method
answers what the REST route answers that caller (the service's own ``to_wire()``), so a CLI command
renders the real answers without an HTTP server (``jupyter-sched queue``, ``jobs``, ``status``)."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

from jupyter_sched.cli.main import Streams, build_parser
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest


class AsClient:
    """``SchedClient``'s reads, answered by ``services`` for ``user`` (``admin``: an admin's)."""

    def __init__(self, services: Services, user: str, *, admin: bool = False) -> None:
        self.services = services
        self.caller = services.caller(user, admin=admin)
        self.connection = SimpleNamespace(url="http://127.0.0.1:1/")

    def config(self) -> dict[str, Any]:
        return {"version": "test", "stop_grace_s": 0}

    def me(self) -> dict[str, Any]:
        return dict(self.services.accounting.me(self.caller).to_wire())

    def inventory(self) -> dict[str, Any]:
        return dict(self.services.system.inventory(self.caller).to_wire())

    def idle_candidates(self) -> list[dict[str, Any]]:
        return list(self.services.telemetry.idle(self.caller).to_wire())

    def queue(self, limit: int | None = None) -> list[dict[str, Any]]:
        return list(self.services.jobs.queue(self.caller, GetQueueRequest(limit=limit)).to_wire())

    def queue_head(self, limit: int) -> tuple[list[dict[str, Any]], int | None]:
        return self.queue(limit), None

    def queue_all(self, **_: Any) -> list[dict[str, Any]]:
        return self.queue()

    def jobs(self, *, state: str | None = None, kind: str | None = None, all_users: bool = False,
             limit: int | None = None, **_: Any) -> list[dict[str, Any]]:
        request = ListJobsRequest(state=state, kind=kind, all=all_users, limit=limit or 500)
        return list(self.services.jobs.list(self.caller, request).jobs.to_wire())

    def jobs_upto(self, most: int, *, keep: Any = lambda job: True, state: str | None = None, user: str | None = None,
                  all_users: bool = False, team: str | None = None, since: str | None = None,
                  until: str | None = None) -> tuple[list[dict[str, Any]], bool]:
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            request = ListJobsRequest(state=state, user=user, all=all_users, team=team, since=since, until=until,
                                      limit=min(most + 1 - len(out), 1000), cursor=cursor)
            page = self.services.jobs.list(self.caller, request)
            out += [job for job in page.jobs.to_wire() if keep(job)]
            cursor = page.next_cursor
            if len(out) > most or cursor is None:
                return out[:most], len(out) > most

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.services.jobs.get(self.caller, job_id).to_wire())


def said(command: Any, client: AsClient, *argv: str) -> str:
    """What ``jupyter-sched <argv>`` prints on stdout for ``client``'s caller, one space between words."""
    out = io.StringIO()
    args = build_parser().parse_args(list(argv))
    assert command(client, args, Streams(out=out, err=io.StringIO(), stdin=io.StringIO())) == 0
    return " ".join(out.getvalue().split())
