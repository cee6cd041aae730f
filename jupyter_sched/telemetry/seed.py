"""Seed a new sample store from the persisted one-minute rollups (hubadmin22 H11).

The idle tracker reads the monitor's in-memory :class:`~.ring.SampleStore`; a service restart
empties it, so before this every idle period started again at the restart (a service restarted
more often than the idle window never reclaimed anything). At start the runtime reads the minutes
it already stored (``Store.rollup_rows``) and preloads them: a device's minutes enter its ring when
that device is first sampled (a GPU that is gone is never seeded), and are marked rolled up so the
history never gets them written twice. The restart's own gap (shorter than ``max_gap_s``) then
reads as a gap in the evidence, not as a new start. Pure (no I/O).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ..errors import ValidationError
from ..model.samples import VALIDITY_RULES, GpuSample
from ..model.units import parse_utc

__all__ = ["samples_from_rollups"]

DeviceKey = tuple[str, int | None]


def _number(row: Mapping[str, Any], key: str) -> float | None:
    value = row.get(key)
    return None if value is None else float(value)


def samples_from_rollups(rows: Iterable[Mapping[str, Any]]) -> dict[DeviceKey, list[GpuSample]]:
    """One sample per stored device-minute, as :meth:`~.ring.SampleStore.minute_maxima` makes them.

    Args:
        rows: ``Store.rollup_rows`` dicts (``minute`` ISO text or aware datetime; ``activity_max`` %;
            ``memory_used_max_mib`` MiB; ``processes_max`` count or None; ``valid_samples``; ``rules``).

    Returns:
        ``{(gpu_uuid, mig_instance): samples}``, oldest first; each sample is at its minute's start and
        carries the minute's maximum valid activity as ``utilization_pct`` (a minute with no valid
        sample is ``suspect``/``util_latch`` when a latch was confirmed in it, else ``blank``: it
        pauses the idle clock as the live minute did). Rows without a readable minute are skipped.
    """
    out: dict[DeviceKey, list[GpuSample]] = {}
    for row in rows:
        try:
            minute: datetime = parse_utc(row["minute"], field="minute")
        except (KeyError, TypeError, ValueError, ValidationError):
            continue  # the store quarantines unreadable rows; a stray one decides nothing here
        mig = row.get("mig_instance")
        key: DeviceKey = (str(row.get("gpu_uuid") or ""), None if mig is None else int(mig))
        valid = int(row.get("valid_samples") or 0) > 0
        rules = [r for r in str(row.get("rules") or "").split(",") if r in VALIDITY_RULES and r] or ["no_signal"]
        rule = "" if valid else "util_latch" if "util_latch" in rules else rules[0]
        procs = row.get("processes_max")
        out.setdefault(key, []).append(GpuSample(
            gpu_uuid=key[0], mig_instance=key[1], timestamp=minute,
            utilization_pct=_number(row, "activity_max") if valid else None,
            memory_used_mib=_number(row, "memory_used_max_mib"), memory_total_mib=_number(row, "memory_total_mib"),
            validity=VALIDITY_RULES[rule][0],
            validity_rule=rule, process_count=None if procs is None else int(procs)))
    for samples in out.values():
        samples.sort(key=lambda s: s.timestamp)
    return out
