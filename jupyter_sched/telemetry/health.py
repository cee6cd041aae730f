"""GPU health from telemetry: Xid errors and other DCGM health fields, with time and evidence.

Sources of evidence (:class:`HealthEvent`):

- dcgm-exporter samples (``GpuSample.xid`` from ``DCGM_FI_DEV_XID_ERRORS``, ``health_flags`` from
  row-remap failures and double-bit ECC errors) — :class:`HealthTracker` keeps the first time each
  GPU showed each problem;
- the NVIDIA device plugin's log (:func:`parse_device_plugin_log`): ``XidCriticalError Xid=94 on
  Device=GPU-...`` and ``device marked unhealthy`` lines (case 018).

:func:`apply_health` marks the inventory with it (pure):

- a GPU the inventory knows by its UUID (NVML, static) turns unhealthy with ``health_reason``
  ``Xid 94``, ``health_since`` and ``health_hint`` — and stays so: a clean reading later does not
  heal it (the device plugin does not either; an admin restarts the plugin or resets the GPU);
- on Kubernetes GPUs have no UUID, and the node's ``allocatable`` is the truth (case 018): the
  evidence of a node explains the GPUs the device plugin withdrew (it never withdraws more), so
  ``device plugin withdrew it`` becomes ``Xid 94`` with its time and the hint to restart the
  device plugin on that node or drain it.

Which Xids count is the admin's call (case 018 notes): ``ignored_xids`` defaults to the device
plugin's own skip list (13, 31, 43, 45, 68, 109: application errors), so we agree with the GPUs it
withdraws; an admin who sets ``DP_DISABLE_HEALTHCHECKS=94`` adds 94 here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from ..model import GPU, Health, Inventory, Node, to_iso
from ..model.samples import GpuSample

__all__ = ["DEFAULT_IGNORED_XIDS", "HealthEvent", "HealthTracker", "apply_health", "health_summary",
           "parse_device_plugin_log"]

DEFAULT_IGNORED_XIDS = frozenset({13, 31, 43, 45, 68, 109})
"""Xids the NVIDIA device plugin does not treat as device failures by default (application
errors); see its ``DP_DISABLE_HEALTHCHECKS`` setting."""

_KLOG = re.compile(r"^[IWEF](?P<month>\d{2})(?P<day>\d{2}) (?P<time>\d{2}:\d{2}:\d{2})(?:\.\d+)?\s+(?:\d+\s+)?"
                   r"(?P<source>\S+)\]\s*(?P<message>.*)$")
_XID_EVENT = re.compile(r"Xid=(?P<xid>\d+)\b.*?Device=(?P<uuid>(?:GPU|MIG)-[^\s,]+)")
_MARKED = re.compile(r"device marked unhealthy:\s*(?P<uuid>(?:GPU|MIG)-[^\s,]+)")


@dataclass(frozen=True, slots=True)
class HealthEvent:
    """One piece of evidence that a GPU is unhealthy.

    Attributes:
        gpu_uuid: the GPU's ``GPU-...`` UUID as the source names it (may be shortened in logs).
        at: when the source saw it (aware UTC).
        problem: short, for the reason: ``Xid 94``, ``row remap failure``.
        evidence: the line or reading it came from.
        node: the node it was seen on ("" = unknown).
        xid: the Xid number, when it is one.
        source: ``dcgm`` | ``nvml`` | ``device-plugin``.
    """

    gpu_uuid: str
    at: datetime
    problem: str
    evidence: str
    node: str = ""
    xid: int | None = None
    source: str = "dcgm"


def parse_device_plugin_log(text: str, *, year: int, node: str = "",
                            ignored_xids: Iterable[int] = DEFAULT_IGNORED_XIDS) -> list[HealthEvent]:
    """Xid events and "marked unhealthy" lines from the NVIDIA device plugin's log (klog format
    ``I1025 02:19:08.123 12 health.go:123] ...``; klog has no year, so it is given).

    A "marked unhealthy" line without an Xid line before it for that GPU becomes an event with
    problem ``marked unhealthy by the device plugin``. Lines that are not klog are skipped.

    Returns:
        Events in log order, at most one per (GPU, problem).
    """
    ignored = frozenset(ignored_xids)
    out: list[HealthEvent] = []
    seen: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        match = _KLOG.match(raw.strip())
        if match is None:
            continue
        at = datetime.strptime(f"{year}-{match['month']}-{match['day']} {match['time']}",
                               "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
        message = match["message"]
        xid = _XID_EVENT.search(message)
        if xid is not None:
            number = int(xid["xid"])
            if number in ignored:
                continue
            event = HealthEvent(gpu_uuid=xid["uuid"], at=at, problem=f"Xid {number}", evidence=raw.strip(),
                                node=node, xid=number, source="device-plugin")
        else:
            marked = _MARKED.search(message)
            if marked is None:
                continue
            if any(e.gpu_uuid == marked["uuid"] for e in out):
                continue  # the Xid line before it already says why
            event = HealthEvent(gpu_uuid=marked["uuid"], at=at, problem="marked unhealthy by the device plugin",
                                evidence=raw.strip(), node=node, source="device-plugin")
        if (event.gpu_uuid, event.problem) not in seen:
            seen.add((event.gpu_uuid, event.problem))
            out.append(event)
    return out


class HealthTracker:
    """Keeps the first time each GPU showed each health problem in its samples (sticky).

    Args:
        ignored_xids: Xids that are not device failures (module docstring).

    Not thread-safe: feed it from the telemetry thread; read :meth:`events` under the same lock.
    """

    def __init__(self, *, ignored_xids: Iterable[int] = DEFAULT_IGNORED_XIDS) -> None:
        self.ignored_xids = frozenset(ignored_xids)
        self._events: dict[tuple[str, str], HealthEvent] = {}

    def observe(self, samples: Iterable[GpuSample]) -> list[HealthEvent]:
        """Record the problems these samples show; returns the events seen for the first time."""
        fresh: list[HealthEvent] = []
        for s in samples:
            problems: list[tuple[str, str, int | None]] = []
            if s.xid and s.xid not in self.ignored_xids:
                problems.append((f"Xid {s.xid}", f"DCGM_FI_DEV_XID_ERRORS={s.xid}", s.xid))
            problems.extend((flag, f"DCGM/NVML: {flag}", None) for flag in s.health_flags)
            for problem, evidence, xid in problems:
                key = (s.gpu_uuid, problem)
                if key not in self._events:
                    event = HealthEvent(gpu_uuid=s.gpu_uuid, at=s.timestamp, problem=problem,
                                        evidence=f"{evidence} at {to_iso(s.timestamp)}", node=s.node, xid=xid,
                                        source="nvml" if s.process_count is not None and not s.pod else "dcgm")
                    self._events[key] = event
                    fresh.append(event)
        return fresh

    def add(self, events: Iterable[HealthEvent]) -> None:
        """Add evidence from elsewhere (e.g. :func:`parse_device_plugin_log`); the earliest time wins."""
        for e in events:
            key = (e.gpu_uuid, e.problem)
            if key not in self._events or e.at < self._events[key].at:
                self._events[key] = e

    def clear(self, gpu_uuid: str) -> int:
        """Forget a GPU's evidence (an admin reset it); returns how many events were dropped."""
        keys = [k for k in self._events if k[0] == gpu_uuid]
        for k in keys:
            del self._events[k]
        return len(keys)

    def events(self) -> list[HealthEvent]:
        """All evidence, oldest first."""
        return sorted(self._events.values(), key=lambda e: (e.at, e.gpu_uuid, e.problem))


def _hint(node: Node, kubernetes: bool, problems: Sequence[str]) -> str:
    xids = [p for p in problems if p.startswith("Xid ")]
    if kubernetes:
        ignore = (f" If {', '.join(xids)} is an application error on this cluster, the plugin can be told to ignore it "
                  f"(DP_DISABLE_HEALTHCHECKS)." if xids else "")
        return (f"The NVIDIA device plugin keeps a GPU unhealthy until it restarts: once the GPU is checked, restart "
                f"the device plugin pod on {node.name} to re-probe it, or drain {node.name}.{ignore}")
    return (f"Check the GPU on {node.name} (nvidia-smi -q, kernel log); reset it or drain {node.name}, then clear "
            "its health record.")


def _mark(gpu: GPU, events: Sequence[HealthEvent], node: Node, kubernetes: bool) -> GPU:
    problems = list(dict.fromkeys(e.problem for e in events))
    since = min(e.at for e in events)
    return replace(gpu, health=Health.UNHEALTHY, health_reason=", ".join(problems), health_since=since,
                   health_hint=_hint(node, kubernetes, problems))


def apply_health(inventory: Inventory, events: Iterable[HealthEvent]) -> Inventory:
    """Mark GPUs unhealthy from health evidence (module docstring). Pure.

    Args:
        inventory: the current inventory.
        events: evidence (:meth:`HealthTracker.events`, device-plugin log events).

    Returns:
        The inventory with ``health``, ``health_reason`` (``Xid 94``), ``health_since`` and
        ``health_hint`` set on the GPUs the evidence names; Kubernetes nodes only on GPUs the
        device plugin withdrew (the node's allocatable stays the truth).
    """
    by_uuid: dict[str, list[HealthEvent]] = {}
    for e in events:
        by_uuid.setdefault(e.gpu_uuid, []).append(e)
    if not by_uuid:
        return inventory
    kubernetes = inventory.source == "kubernetes"
    nodes = []
    for node in inventory.nodes:
        gpus = list(node.gpus)
        if kubernetes:
            node_events = [e for es in by_uuid.values() for e in es if e.node == node.name]
            per_gpu: dict[str, list[HealthEvent]] = {}
            for e in sorted(node_events, key=lambda e: e.at):
                per_gpu.setdefault(e.gpu_uuid, []).append(e)
            withdrawn = [i for i, g in enumerate(gpus) if not g.healthy and g.health_reason.startswith("device plugin")]
            for slot, evidence in zip(withdrawn, per_gpu.values(), strict=False):
                gpus[slot] = _mark(gpus[slot], evidence, node, kubernetes=True)
        else:
            for i, g in enumerate(gpus):
                if g.uuid in by_uuid:
                    gpus[i] = _mark(g, by_uuid[g.uuid], node, kubernetes=False)
        nodes.append(replace(node, gpus=tuple(gpus)))
    return replace(inventory, nodes=tuple(nodes))


def health_summary(inventory: Inventory) -> Mapping[str, dict[str, int]]:
    """``{node: {"physical": n, "schedulable": m, "unhealthy": k}}`` (case 018: physical 8,
    schedulable 7 — schedulable counts healthy GPUs on a ready, uncordoned node)."""
    out: dict[str, dict[str, int]] = {}
    for node in inventory.nodes:
        healthy = sum(1 for g in node.gpus if g.healthy)
        out[node.name] = {"physical": len(node.gpus), "schedulable": healthy if node.schedulable else 0,
                          "unhealthy": len(node.gpus) - healthy}
    return out
