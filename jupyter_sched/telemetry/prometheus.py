"""Prometheus HTTP API collector: read dcgm-exporter series a cluster's Prometheus already scrapes.

One instant query per collection (``GET /api/v1/query``) selects the DCGM gauges this package
uses; the result is turned into samples with the dcgm-exporter rules (MIG keyed by
``(UUID, GPU_I_ID)``, engine activity for MIG, blanks as missing; see :mod:`.dcgm`).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import httpx

from ..errors import TelemetryError
from ..model.samples import GpuSample
from .dcgm import samples_from_series

__all__ = ["DEFAULT_METRICS", "PrometheusCollector"]

DEFAULT_METRICS = (
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP",
)


def _float(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


class PrometheusCollector:
    """Collector over a Prometheus server's HTTP API.

    Args:
        base_url: e.g. ``http://prometheus:9090`` (no trailing ``/api``).
        selector: extra label matchers, e.g. ``'Hostname=~"gpu-node-.*"'`` (default: none).
        client: an ``httpx.Client`` (default: one with ``timeout_s``).
        timeout_s: request timeout in seconds (default 5).

    Attributes:
        last_good: samples of the last successful query (kept on failure).
    """

    def __init__(self, base_url: str, *, selector: str = "", client: httpx.Client | None = None,
                 timeout_s: float = 5.0) -> None:
        self._url = base_url.rstrip("/") + "/api/v1/query"
        names = "|".join(DEFAULT_METRICS)
        extra = f",{selector}" if selector else ""
        self.query = f'{{__name__=~"{names}"{extra}}}'
        if client is None:  # a loopback Prometheus must be Prometheus's, not another account's (red31 R2)
            from .exporter_peer import exporter_client

            client = exporter_client(timeout_s=timeout_s)
        self._client = client
        self.last_good: list[GpuSample] = []

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def collect(self, now: datetime) -> list[GpuSample]:
        """Run the instant query and build samples.

        Raises:
            TelemetryError: connection error, timeout, non-200 answer, ``status != "success"`` or an
                answer that is not a Prometheus vector; :attr:`last_good` is kept.
        """
        try:
            response = self._client.get(self._url, params={"query": self.query})
        except httpx.HTTPError as exc:
            raise TelemetryError(f"cannot query Prometheus at {self._url}: {exc}",
                                 hint="check the Prometheus URL and that it is reachable") from None
        try:
            body = response.json()
        except ValueError:
            raise TelemetryError(f"Prometheus at {self._url} answered HTTP {response.status_code} with non-JSON",
                                 hint="is this a Prometheus server?") from None
        if response.status_code != 200 or body.get("status") != "success":
            raise TelemetryError(f"Prometheus query failed (HTTP {response.status_code}): "
                                 f"{body.get('errorType', '')} {body.get('error', '')}".strip(),
                                 hint="check the selector syntax")
        data = body.get("data") or {}
        if data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
            raise TelemetryError("Prometheus answered something other than an instant vector",
                                 hint="the collector needs /api/v1/query (instant query)")
        series = []
        for item in data["result"]:
            labels = dict(item.get("metric", {}))
            ts, value = item.get("value", [None, "NaN"])
            series.append((labels.pop("__name__", ""), labels, _float(value), None if ts is None else float(ts)))
        self.last_good = samples_from_series(series, received_at=now)
        return list(self.last_good)
