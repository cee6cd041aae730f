"""Whether the hub gives users' servers and this service origins of their own, said at the service's start
(red38 R5).

Without ``c.JupyterHub.subdomain_host`` the hub, every user's server and this service share one browser origin
(``https://hub.example.org``). A page a user serves from their own server — a kernelspec's resource file, which
jupyter_server sends as ``text/html`` with no ``sandbox`` — then runs its script *as that origin* for whoever opens
it: it can frame ``/services/jupyter-sched/`` (the OAuth round trip is silent or one click away, and same-origin
script reads the frame's ``_xsrf`` cookie) and send cookie-authenticated requests with the opener's rights — an
admin who opens it cancels anyone's jobs or changes quotas. JupyterHub's own security overview says the same: for
users who do not trust each other, each server on its own subdomain.

The hub tells a service it starts where both are: ``JUPYTERHUB_HOST`` is the hub's public origin
(``c.JupyterHub.public_url``'s, else ``c.JupyterHub.subdomain_host``, else empty) and ``JUPYTERHUB_PUBLIC_URL`` the
service's own public URL (with subdomains ``https://jupyter-sched.hub.example.org/services/jupyter-sched/``; without,
the hub's origin or absent). The service has an origin of its own when that URL's host is not the hub's. An external
service (the ``"url"`` form, a Kubernetes Deployment) gets what its admin sets; where ``JUPYTERHUB_HOST`` is absent
the service cannot tell and says so, at INFO.

What it found is kept in its store too, one ``service_origins`` audit row per start (:func:`record_origins`), since
``jupyter-sched doctor`` runs in an admin's shell, which has not the service's environment: the doctor reads the
newest row (:func:`origins_said`) and says it with when, where and which process found it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ENV_HOST", "ENV_PUBLIC_URL", "ORIGINS_ACTION", "OriginsSaid", "origin_line", "origins_said", "record_origins"]

ORIGINS_ACTION = "service_origins"
"""The audit action of what a service found of the origins at its start (its message is the start-up line)."""

ENV_HOST = "JUPYTERHUB_HOST"
"""The hub's public origin as JupyterHub gives it to the services and servers it starts ("" when it has none)."""
ENV_PUBLIC_URL = "JUPYTERHUB_PUBLIC_URL"
"""The service's own public URL as the hub gives it (on a subdomain of its own with ``subdomain_host``)."""

_FIX = ('set c.JupyterHub.subdomain_host = "https://hub.example.org" in the hub\'s config (a wildcard DNS name '
        "*.hub.example.org and a TLS certificate for it: each user's server and each service then has its own "
        "origin; docs/admin.md, JupyterHub)")


def origin_line(env: Mapping[str, str]) -> tuple[bool, str]:
    """``(warn, line)`` for the service's start-up log, from its environment (module docstring)."""
    if ENV_HOST not in env:
        return False, (f"origins: not known to this service ({ENV_HOST} is not in its environment, as for a service "
                       "the hub does not start): where hub users do not trust each other, "
                       f"{_FIX}, and give this service {ENV_HOST} and {ENV_PUBLIC_URL} as the hub gives a service it "
                       "starts, to have it checked here")
    hub = urlsplit(env[ENV_HOST].strip()).hostname or ""
    public = env.get(ENV_PUBLIC_URL, "").strip()
    own = urlsplit(public).hostname or ""
    if own and hub and own != hub:
        return False, f"origins: this service has an origin of its own ({public}; the hub at {env[ENV_HOST].strip()})"
    return True, ("one origin for the hub, every user's server and this service (no c.JupyterHub.subdomain_host): "
                  "a page a user serves from their own server runs its script as the hub and as this service for "
                  "whoever opens it — an admin who opens one acts as a scheduler admin (cancels anyone's jobs, "
                  f"changes quotas) without knowing; {_FIX}; until then, admins should not open users' servers")


@dataclass(frozen=True, slots=True)
class OriginsSaid:
    """What a service found of the origins at its start, as its store keeps it (:func:`record_origins`)."""

    warn: bool
    line: str
    at: datetime
    host: str
    pid: int | None


def record_origins(store: Any, env: Mapping[str, str], *, host: str, pid: int) -> tuple[bool, str]:
    """Say :func:`origin_line` of ``env`` and keep it in ``store`` as one ``service_origins`` audit row (the host and
    process that found it, and the two values it read), for the doctor; returns ``(warn, line)``. A store that does not
    take the row is the caller's to say (it raises :class:`~jupyter_sched.errors.StoreError`)."""
    warn, line = origin_line(env)
    store.add_event(actor="scheduler", action=ORIGINS_ACTION, message=line, details={
        "warn": warn, "host": host, "pid": pid, ENV_HOST: env.get(ENV_HOST), ENV_PUBLIC_URL: env.get(ENV_PUBLIC_URL)})
    return warn, line


def origins_said(store: Any) -> OriginsSaid | None:
    """The newest ``service_origins`` row of ``store`` (what the last service started on it found), None when no
    service of this version has started on it."""
    rows = store.list_events(action=ORIGINS_ACTION, newest_first=True, limit=1)
    if not rows:
        return None
    row = rows[0]
    details = row.details if isinstance(row.details, Mapping) else {}
    pid = details.get("pid")
    return OriginsSaid(warn=details.get("warn") is True, line=str(row.message), at=row.at,
                       host=str(details.get("host") or "?"), pid=pid if isinstance(pid, int) else None)
