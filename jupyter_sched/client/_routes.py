"""The REST routes as :class:`Req` builders — one place, used by the sync and async clients.

Paths are relative to ``{base_url}api/sched/`` (TEAM contract / ``extension/openapi.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ._wire import Req

__all__ = ["routes"]


def _id(value: str, name: str = "id") -> str:
    """``value`` as a path segment. Checked at the call, nothing sent (newuser42 N1: ``cancel(None)`` asked the
    server for the job 'None', ``job(3)`` for '3').

    Raises:
        TypeError: not text, naming ``name``; ValidationError: empty text.
    """
    if not isinstance(value, str):
        what = "a job's id or name, e.g. 'j-7' or 'train'" if name == "job_id" else f"a {name.replace('_', ' ')}"
        raise TypeError(f"{name} must be {what}, as a str (got {type(value).__name__} {value!r})")
    if not value.strip():
        from ..errors import ValidationError

        raise ValidationError(f"{name} is empty", field=name, hint=f"give the {name.replace('_', ' ')}")
    return quote(value, safe="")


def _body(value: Mapping[str, Any], example: str = "") -> dict[str, Any]:
    """``value`` as a request body: a mapping of the wire's fields. Checked at the call, nothing sent (newuser42
    N1: ``submit("echo hi")`` said "dictionary update sequence element #0 has length 1; 2 is required").

    Raises:
        TypeError: not a mapping, saying the shape (``example``).
    """
    if not isinstance(value, Mapping):
        shape = f", e.g. {example}" if example else ""
        raise TypeError(f"body must be a dict of the request's fields{shape} (got {type(value).__name__} {value!r:.80})")
    return dict(value)


SUBMIT_EXAMPLE = '{"command": ["python", "train.py"], "gpus": 1}, or submit(command=["python", "train.py"], gpus=1)'
"""The shape of a submit's body, said when something else is given."""

LEASE_EXAMPLE = '{"gpus": 1, "kernel_id": sched.kernel_id}, or request_lease(gpus=1, kernel_id=sched.kernel_id)'
"""The shape of a lease request's body."""


def _params(**values: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


class routes:  # a namespace of builders, read as routes.jobs(...)
    """Builders for every route; each returns a :class:`Req`."""

    @staticmethod
    def config() -> Req:
        return Req("GET", "config")

    @staticmethod
    def me() -> Req:
        return Req("GET", "me")

    @staticmethod
    def inventory() -> Req:
        return Req("GET", "inventory")

    @staticmethod
    def submit(body: Mapping[str, Any], *, idempotency_key: str | None = None) -> Req:
        return Req("POST", "jobs", body=_body(body, SUBMIT_EXAMPLE), params=_params(idempotency_key=idempotency_key))

    @staticmethod
    def jobs(*, state: str | None = None, kind: str | None = None, user: str | None = None,
             all_users: bool = False, limit: int | None = None, cursor: str | None = None, team: str | None = None,
             since: str | None = None, until: str | None = None, name: str | None = None,
             purpose: str | None = None) -> Req:
        return Req("GET", "jobs", params=_params(state=state, kind=kind, user=user, all=all_users or None,
                                                 limit=limit, cursor=cursor, team=team, since=since, until=until,
                                                 name=name, purpose=purpose))

    @staticmethod
    def job(job_id: str) -> Req:
        return Req("GET", f"jobs/{_id(job_id, 'job_id')}")

    @staticmethod
    def cancel(job_id: str) -> Req:
        return Req("DELETE", f"jobs/{_id(job_id, 'job_id')}")

    @staticmethod
    def update_job(job_id: str, body: Mapping[str, Any]) -> Req:
        return Req("PATCH", f"jobs/{_id(job_id, 'job_id')}", body=_body(body))

    @staticmethod
    def cancel_jobs(body: Mapping[str, Any]) -> Req:
        return Req("POST", "jobs/cancel", body=_body(body))

    @staticmethod
    def logs(job_id: str, *, offset: int = 0, limit: int = 65536, follow: bool = False,
             notes_seen: int | None = None, tail: int | None = None) -> Req:
        return Req("GET", f"jobs/{_id(job_id, 'job_id')}/logs", params=_params(offset=offset, limit=limit, follow=follow,
                                                                     notes_seen=notes_seen, tail=tail))

    @staticmethod
    def report_progress(job_id: str, done: float, total: float) -> Req:
        return Req("POST", f"jobs/{_id(job_id, 'job_id')}/progress", body={"done": done, "total": total})

    @staticmethod
    def dryrun(body: Mapping[str, Any]) -> Req:
        return Req("POST", "dryrun", body=_body(body, SUBMIT_EXAMPLE))

    @staticmethod
    def leases(*, state: str | None = None) -> Req:
        return Req("GET", "leases", params=_params(state=state))

    @staticmethod
    def request_lease(body: Mapping[str, Any], *, wait_ms: int | None = None) -> Req:
        return Req("POST", "leases", body=_body(body, LEASE_EXAMPLE), params=_params(wait_ms=wait_ms))

    @staticmethod
    def lease(lease_id: str, *, wait_ms: int | None = None) -> Req:
        return Req("GET", f"leases/{_id(lease_id, 'lease_id')}", params=_params(wait_ms=wait_ms))

    @staticmethod
    def release_lease(lease_id: str, *, why: str | None = None, timeout_s: float | None = None) -> Req:
        return Req("DELETE", f"leases/{_id(lease_id, 'lease_id')}", params=_params(why=why, timeout_s=timeout_s))

    @staticmethod
    def keepalive(lease_id: str) -> Req:
        return Req("POST", f"leases/{_id(lease_id, 'lease_id')}/keepalive", body={})

    @staticmethod
    def lease_heartbeat(lease_id: str) -> Req:
        return Req("POST", f"leases/{_id(lease_id, 'lease_id')}/heartbeat")

    @staticmethod
    def queue(*, limit: int | None = None, cursor: str | None = None) -> Req:
        return Req("GET", "queue", params=_params(limit=limit, cursor=cursor))

    @staticmethod
    def quotas() -> Req:
        return Req("GET", "quotas")

    @staticmethod
    def set_quotas(body: Mapping[str, Any]) -> Req:
        return Req("PUT", "quotas", body=_body(body))

    @staticmethod
    def idle_policy() -> Req:
        return Req("GET", "idle-policy")

    @staticmethod
    def set_idle_policy(body: Mapping[str, Any]) -> Req:
        return Req("PUT", "idle-policy", body=_body(body))

    @staticmethod
    def profiles() -> Req:
        return Req("GET", "profiles")

    @staticmethod
    def telemetry(*, gpu: str | None = None, job: str | None = None) -> Req:
        return Req("GET", "telemetry", params=_params(gpu=gpu, job=job))

    @staticmethod
    def telemetry_history(*, job: str | None = None, lease: str | None = None, gpu: str | None = None,
                          since: str | None = None, until: str | None = None, step_s: int | None = None) -> Req:
        return Req("GET", "telemetry/history",
                   params=_params(job=job, lease=lease, gpu=gpu, since=since, until=until, step_s=step_s))

    @staticmethod
    def idle_candidates() -> Req:
        return Req("GET", "idle")

    @staticmethod
    def waste(**filters: Any) -> Req:
        return Req("GET", "usage/waste", params=_params(**filters))

    @staticmethod
    def audit(**filters: Any) -> Req:
        return Req("GET", "audit", params=_params(**filters))

    @staticmethod
    def usage(**filters: Any) -> Req:
        return Req("GET", "usage", params=_params(**filters))

    @staticmethod
    def events() -> Req:
        return Req("GET", "events")

    @staticmethod
    def metrics() -> Req:
        return Req("GET", "metrics")

    # -- job definitions (issue 19) ---------------------------------------------------------
    @staticmethod
    def definitions(*, all_users: bool = False, name: str | None = None, limit: int | None = None,
                    cursor: str | None = None) -> Req:
        return Req("GET", "definitions", params=_params(all=all_users or None, name=name, limit=limit, cursor=cursor))

    @staticmethod
    def create_definition(body: Mapping[str, Any]) -> Req:
        return Req("POST", "definitions", body=_body(body))

    @staticmethod
    def preview_schedule(body: Mapping[str, Any]) -> Req:
        return Req("POST", "definitions/preview", body=_body(body))

    @staticmethod
    def definition(definition_id: str, *, runs: int | None = None) -> Req:
        return Req("GET", f"definitions/{_id(definition_id, 'definition_id')}", params=_params(runs=runs))

    @staticmethod
    def update_definition(definition_id: str, body: Mapping[str, Any]) -> Req:
        return Req("PATCH", f"definitions/{_id(definition_id, 'definition_id')}", body=_body(body))

    @staticmethod
    def delete_definition(definition_id: str, *, cancel_runs: bool = False) -> Req:
        return Req("DELETE", f"definitions/{_id(definition_id, 'definition_id')}", params=_params(cancel_runs=cancel_runs or None))

    @staticmethod
    def pause_definition(definition_id: str) -> Req:
        return Req("POST", f"definitions/{_id(definition_id, 'definition_id')}/pause")

    @staticmethod
    def resume_definition(definition_id: str) -> Req:
        return Req("POST", f"definitions/{_id(definition_id, 'definition_id')}/resume")

    @staticmethod
    def definition_runs(definition_id: str, *, limit: int | None = None) -> Req:
        return Req("GET", f"definitions/{_id(definition_id, 'definition_id')}/runs", params=_params(limit=limit))

    @staticmethod
    def run_definition(definition_id: str, body: Mapping[str, Any] | None = None) -> Req:
        return Req("POST", f"definitions/{_id(definition_id, 'definition_id')}/runs", body=_body(body or {}))

    @staticmethod
    def executed_notebook(job_id: str) -> Req:
        return Req("GET", f"jobs/{_id(job_id, 'job_id')}/notebook")
