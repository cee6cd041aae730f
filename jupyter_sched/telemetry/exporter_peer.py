"""Who answers at a loopback telemetry address: the exporter, or another account (red31 R2).

``telemetry_source = "dcgm"`` scrapes dcgm-exporter (``http://127.0.0.1:9400/metrics``) and ``"prometheus"`` asks
Prometheus (``http://127.0.0.1:9090``): unprivileged ports any local account may bind while the exporter
restarts. What answers there is believed: an Xid it reports marks a GPU unhealthy for good (no new work is
placed on it), 0 % utilisation of another user's GPUs feeds the idle ladder, 100 % of one's own evades it.
So every connection to a loopback telemetry address is checked once connected, before the request is sent
(:func:`jupyter_sched.hub.peer.loopback_refusal`, over the guarded transport of :mod:`jupyter_sched.hub.guarded`):
it must have been accepted by root, this process's account, an exporter's own account (:data:`EXPORTER_ACCOUNTS`,
where it exists) or one of ``c.SchedApp.telemetry_uids``. A refused scrape is a failed collection (the last good
samples stay; nothing is believed), said in the service log. An answer is read up to :data:`MAX_SCRAPE_BYTES`.
"""

from __future__ import annotations

from collections.abc import Collection

import httpx

__all__ = ["EXPORTER_ACCOUNTS", "MAX_SCRAPE_BYTES", "exporter_client", "exporter_uids"]

EXPORTER_ACCOUNTS = ("prometheus", "nvidia-dcgm", "dcgm-exporter")
"""Accounts packages run the exporters as (Debian's prometheus; NVIDIA's DCGM packages): their uids may hold the
telemetry address."""

MAX_SCRAPE_BYTES = 32 * 1024 * 1024
"""The most of one scrape's answer read (bytes): dcgm-exporter's page for 8 GPUs is ~100 KB; an endless body from
whatever holds the port must not cost the service its memory."""


def exporter_uids(configured: Collection[int] = ()) -> frozenset[int]:
    """The uids that may accept a loopback telemetry connection: root, this process's, those of
    :data:`EXPORTER_ACCOUNTS` that exist here, and ``configured`` (``c.SchedApp.telemetry_uids``)."""
    from ..hub.peer import trusted_uids

    return trusted_uids(EXPORTER_ACCOUNTS, configured)


def exporter_client(configured_uids: Collection[int] = (), *, timeout_s: float = 5.0) -> httpx.Client:
    """An ``httpx.Client`` whose every new connection to a loopback address must have been accepted by one of
    :func:`exporter_uids`; another account's raises :class:`jupyter_sched.hub.guarded.ListenerRefused` (an
    ``httpx.ConnectError``: nothing sent, nothing read)."""
    from ..hub.guarded import guarded_sync_transport
    from ..hub.peer import loopback_refusal

    allowed = exporter_uids(configured_uids)

    def check(sock: object) -> str | None:
        return loopback_refusal(
            sock,  # type: ignore[arg-type]  # a connected socket (httpcore's stream's)
            allowed_uids=allowed, held=lambda where: f"the telemetry address {where}",
            doing="not reading its GPU telemetry", service="the exporter",
            gone_fix="restart the exporter, on a port below 1024",
            held_fix=lambda uid: ("stop that process and restart the exporter, on a port below 1024; if the exporter "
                                  f"really runs as uid {uid}, add it to c.SchedApp.telemetry_uids"))

    return httpx.Client(timeout=timeout_s, transport=guarded_sync_transport(check), trust_env=False)
