"""``SchedulerService``: the scheduler as one in-process object, for scripts, the simulator's
equivalence check, benchmarks and tests that drive an engine without a web server.

It is a thin façade over :class:`~.root.Services`: every method builds the request model, asks
the admission step for the :class:`~jupyter_sched.admission.Caller` of ``user`` (so the same
rules apply as through the REST API) and makes one service call, answering the response model's
wire dict. The REST layer does not use it; new code should call ``services.<resource>`` directly.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..admission import AdmissionPolicy, Caller
from ..model import JobKind
from .config import build_services
from .jobs import parse_states
from .models import (
    GetAuditRequest,
    GetJobLogsRequest,
    GetTelemetryRequest,
    GetUsageRequest,
    KeepaliveLeaseRequest,
    SetIdlePolicyRequest,
    SetQuotasRequest,
    SubmitJobRequest,
    parse,
)
from .root import Services

__all__ = ["SchedulerService"]


def _iso(value: str | datetime | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


class SchedulerService:
    """One scheduler in process (see module docstring).

    Takes :class:`~.root.Services`'s keywords, plus ``default_team``, ``user_teams`` ({user:
    team | [team, ...]}, put in the store as a server's config is: :mod:`.members_config`) and ``priority_grants`` ({"users": {...}, "teams": {...}}) for the admission policy,
    and ``admins`` (user names treated as admins when a method is called with their name).
    """

    def __init__(self, *, default_team: str = "default", user_teams: Mapping[str, Any] | None = None,
                 priority_grants: Mapping[str, Any] | None = None, admins: Iterable[str] = (),
                 services: Services | None = None, **kwargs: Any) -> None:
        policy = AdmissionPolicy.from_settings({"default_team": default_team, "user_teams": user_teams or {},
                                                "priority_grants": priority_grants or {}})
        self.services = services if services is not None else Services(policy=policy, **kwargs)
        self.admins = frozenset(admins)

    @classmethod
    def from_config(cls, settings: Mapping[str, Any], *, log: logging.Logger | None = None,
                    nvml: Any = None) -> SchedulerService:
        """Build from the extension's plain settings (:func:`~.config.build_services`)."""
        return cls(services=build_services(settings, log=log, nvml=nvml))

    # ---- the parts scripts and tests reach into ------------------------------------------------
    @property
    def store(self) -> Any:
        return self.services.store

    @property
    def clock(self) -> Any:
        return self.services.clock

    @property
    def engine(self) -> Any:
        return self.services.engine

    @property
    def bus(self) -> Any:
        return self.services.bus

    @property
    def monitor(self) -> Any:
        return self.services.monitor

    @property
    def executor(self) -> Any:
        return self.services.executor

    @property
    def inventory_source(self) -> Any:
        """Where the services read the inventory (replaceable: a test swaps it to grow the cluster)."""
        return self.services.ctx.inventory_source

    @inventory_source.setter
    def inventory_source(self, source: Any) -> None:
        self.services.ctx.inventory_source = source

    @property
    def idle_policies(self) -> Any:
        """The idle policy in force."""
        return self.services.idle.policies

    def _caller(self, user: str, is_admin: bool = False) -> Caller:
        return self.services.caller(user, admin=is_admin or user in self.admins)

    # ---- lifetime ------------------------------------------------------------------------------
    async def start(self) -> None:
        await self.services.start()

    async def stop(self) -> None:
        await self.services.stop()

    def tick(self) -> Any:
        return self.services.tick()

    def kick(self) -> None:
        self.services.kick()

    def set_kernel_source(self, kernels: Any) -> None:
        self.services.set_kernel_source(kernels)

    def subscribe(self) -> Any:
        return self.services.subscribe()

    def release_kernel(self, kernel_id: str, *, reason: str) -> list[dict[str, Any]]:
        return self.services.release_kernel(kernel_id, reason=reason)

    def status(self) -> dict[str, Any]:
        return dict(self.services.system.status().to_wire())

    def inventory(self) -> dict[str, Any]:
        return dict(self.services.system.inventory().to_wire())

    # ---- jobs and leases -----------------------------------------------------------------------
    def submit(self, body: Mapping[str, Any], *, user: str, kind: str | JobKind | None = None) -> dict[str, Any]:
        request = parse(SubmitJobRequest, dict(body))
        job = self.services.jobs.submit(self._caller(user), request, kind=JobKind(kind) if kind else None)
        return dict(job.to_wire())

    def dryrun(self, body: Mapping[str, Any], *, user: str) -> dict[str, Any]:
        return dict(self.services.jobs.dryrun(self._caller(user), parse(SubmitJobRequest, dict(body))).to_wire())

    def list_jobs(self, *, user: str | None, state: str | Iterable[str] | None = None,
                  kind: str | JobKind | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        return self.services.jobs.work(user=user, states=parse_states(state), kind=JobKind(kind) if kind else None,
                                       limit=limit)

    def get_job(self, job_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        return dict(self.services.jobs.get(self._caller(user, is_admin), job_id).to_wire())

    def cancel(self, job_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        return dict(self.services.jobs.cancel(self._caller(user, is_admin), job_id).to_wire())

    def logs(self, job_id: str, *, user: str, is_admin: bool = False, offset: int = 0,
             limit: int = 65536) -> dict[str, Any]:
        request = parse(GetJobLogsRequest, {"offset": offset, "limit": limit})
        return dict(self.services.jobs.logs(self._caller(user, is_admin), job_id, request).to_wire())

    def keepalive(self, lease_id: str, *, user: str, seconds: float | None = None) -> dict[str, Any]:
        request = KeepaliveLeaseRequest(seconds=seconds)
        return dict(self.services.leases.keepalive(self._caller(user), lease_id, request).to_wire())

    def queue(self, *, user: str) -> list[dict[str, Any]]:
        return list(self.services.jobs.queue(self._caller(user)).to_wire())

    # ---- quotas, policy, identity --------------------------------------------------------------
    def quotas(self) -> dict[str, Any]:
        return dict(self.services.quotas.get().to_wire())

    def set_quotas(self, body: Any, *, actor: str) -> dict[str, Any]:
        request = parse(SetQuotasRequest, {"quotas": body} if isinstance(body, list) else body)
        return dict(self.services.quotas.set(self._caller(actor, True), request).to_wire())

    def profiles(self) -> list[dict[str, Any]]:
        return list(self.services.quotas.profiles().to_wire())

    def idle_policy(self) -> dict[str, Any]:
        return dict(self.services.idle.get().to_wire())

    def set_idle_policy(self, body: Any, *, actor: str) -> dict[str, Any]:
        request = parse(SetIdlePolicyRequest, body)
        return dict(self.services.idle.set(self._caller(actor, True), request).to_wire())

    def load_idle_policy(self) -> bool:
        return self.services.idle.load()

    def me(self, user: str) -> dict[str, Any]:
        return dict(self.services.accounting.me(self._caller(user)).to_wire())

    # ---- audit, usage, telemetry ---------------------------------------------------------------
    def audit(self, *, limit: int = 100, since: str | datetime | None = None, until: str | datetime | None = None,
              user: str | None = None, job_id: str | None = None, action: str | None = None) -> list[dict[str, Any]]:
        request = parse(GetAuditRequest, {"limit": limit, "since": _iso(since), "until": _iso(until), "user": user,
                                          "job_id": job_id, "action": action})
        return list(self.services.audit.list(self._caller("audit", True), request).to_wire())

    def usage(self, *, user: str | None = None, by: str | Sequence[str] = "user",
              since: str | datetime | None = None, until: str | datetime | None = None) -> list[dict[str, Any]]:
        request = parse(GetUsageRequest, {"by": by if isinstance(by, str) else ",".join(by), "since": _iso(since),
                                          "until": _iso(until), "all": user is None})
        caller = self._caller(user or "usage", user is None)
        return list(self.services.accounting.usage(caller, request).to_wire())

    def telemetry(self, *, user: str, is_admin: bool = False, gpu: str | None = None, job: str | None = None,
                  lease: str | None = None, since: str | datetime | None = None, limit: int = 600) -> dict[str, Any]:
        request = parse(GetTelemetryRequest, {"gpu": gpu, "job": job, "lease": lease, "since": _iso(since),
                                              "limit": limit})
        return dict(self.services.telemetry.telemetry(self._caller(user, is_admin), request).to_wire())

    def idle_stats(self) -> dict[str, Any]:
        return self.services.telemetry.idle_stats()

