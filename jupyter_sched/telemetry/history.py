"""Utilization and memory over time from the stored one-minute rollups, with gaps where telemetry
was blank, suspect or missing (what charts draw; pure, no I/O).

Every minute of the requested range gets a point per device. A minute with at least one *valid*
sample carries its mean utilization (valid samples only) and peak memory; a minute whose samples
were all blank or suspect, or that has no row at all, is a *gap*: ``utilization_pct`` is None and
``validity`` / ``note`` say why (``blank`` — ``DCGM blank value (no data)``; ``suspect`` — ``no
process, 0 MiB`` for a latch; ``missing`` — ``no telemetry``). Consecutive gap minutes of one
device with the same reason form one :class:`GapSpan`, which charts shade and label (case 009:
a 101 % or a blank reading is never drawn as a number).

Rows come from ``Store.rollup_rows`` (persisted minutes) and, for the minutes not persisted yet,
:func:`jupyter_sched.telemetry.rollup_minutes` over the monitor's live samples; a minute present
in both keeps the row with more samples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..model import to_iso
from ..model.samples import VALIDITY_RULES, Validity
from ..model.units import parse_utc

__all__ = ["GapSpan", "HistoryPoint", "drawn_range", "history_from_rollups", "history_to_dict"]

DeviceKey = tuple[str, int | None]
MAX_MINUTES = 7 * 24 * 60
"""Most minutes one history answer spans (a week); longer ranges are cut to their newest week."""


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One device-minute.

    Attributes:
        t: minute start (aware UTC). gpu_uuid / mig_instance: the device.
        utilization_pct: mean valid utilization, % (None = gap). memory_used_mib: peak memory, MiB.
        validity: ``valid`` | ``blank`` | ``suspect`` | ``missing``. note: why a gap is one ("" when valid).
    """

    t: datetime
    gpu_uuid: str
    mig_instance: int | None
    utilization_pct: float | None
    memory_used_mib: float | None
    validity: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class GapSpan:
    """Consecutive gap minutes of one device with one reason: ``[start, end)``."""

    gpu_uuid: str
    mig_instance: int | None
    start: datetime
    end: datetime
    validity: str
    note: str

    def label(self) -> str:
        """``blank: DCGM blank value (no data)``, ``suspect: no process, 0 MiB``, ``missing: no telemetry``."""
        return f"{self.validity}: {self.note}"


def _bucket(value: Any, step_s: int) -> datetime:
    when = value if isinstance(value, datetime) else parse_utc(str(value), field="minute")
    epoch = int(when.timestamp()) // step_s * step_s
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


def drawn_range(since: datetime, until: datetime, step_s: int = 60) -> tuple[datetime, datetime]:
    """``(first step's start, last step's end)`` of the points a history of ``[since, until)`` draws
    at ``step_s``: steps aligned to the epoch, the current incomplete one included, cut to the newest
    :data:`MAX_MINUTES` steps (what is read for it need go no further back: verify27 V7)."""
    step = timedelta(seconds=step_s)
    start = _bucket(since, step_s)
    end = _bucket(until, step_s)
    if end < until:
        end += step  # the current, incomplete bucket is drawn too
    if (end - start) > step * MAX_MINUTES:
        start = end - step * MAX_MINUTES
    return start, end


def _gap_of(row: Mapping[str, Any]) -> tuple[str, str]:
    """``(validity, note)`` of a minute without valid samples."""
    rules = [r for r in str(row.get("rules") or "").split(",") if r]
    for wanted in (Validity.SUSPECT, Validity.BLANK):
        for rule in rules:
            validity, note = VALIDITY_RULES.get(rule, (Validity.BLANK, rule))
            if validity is wanted:
                return validity.value, note
    return Validity.BLANK.value, VALIDITY_RULES["no_signal"][1]


def history_from_rollups(rows: Iterable[Mapping[str, Any]], *, devices: Sequence[DeviceKey], since: datetime,
                         until: datetime, step_s: int = 60,
                         withheld: Callable[[DeviceKey, datetime, datetime], str | None] | None = None,
                         ) -> tuple[list[HistoryPoint], list[GapSpan]]:
    """Points for every minute of ``[since, until)`` and device, and the gap spans (module docstring).
    With ``step_s`` other than 60 the rows are ``step_s`` buckets (``rollup_minutes(..., bucket_s=)``
    over the monitor's live samples: a live chart at seconds' resolution).

    Args:
        rows: rollup rows (``gpu_uuid``, ``mig_instance``, ``minute``, ``samples``,
            ``utilization_avg``, ``memory_used_max_mib``, ``valid_samples``, ``rules``); rows of
            other devices or minutes are ignored; rows written before validity was stored (no
            ``valid_samples``) count as valid when they carry a utilization.
        devices: the devices to draw, in order.
        since / until: the range (aware); cut to its newest :data:`MAX_MINUTES` points.
        withheld: ``(device, step start, step end)`` → why the caller may not read that step
            (another user's work held the GPU), or None: such a step is a ``missing`` gap with
            that note, whatever the rows say.

    Raises:
        TimestampError: a row's ``minute`` that is not aware ISO 8601.
    """
    step = timedelta(seconds=step_s)
    start, end = drawn_range(since, until, step_s)
    wanted = set(devices)
    best: dict[tuple[DeviceKey, datetime], Mapping[str, Any]] = {}
    for row in rows:
        key = (str(row["gpu_uuid"]), row.get("mig_instance"))
        if key not in wanted:
            continue
        minute = _bucket(row["minute"], step_s)
        if not start <= minute < end:
            continue
        seen = best.get((key, minute))
        if seen is None or int(row.get("samples") or 0) > int(seen.get("samples") or 0):
            best[(key, minute)] = row
    points: list[HistoryPoint] = []
    gaps: list[GapSpan] = []
    for key in devices:
        open_gap: list[Any] | None = None  # [start, validity, note]
        t = start
        while t < end:
            found = best.get((key, t))
            hidden = withheld(key, t, t + step) if withheld is not None else None
            if hidden is not None:
                validity, note, util, memory = "missing", hidden, None, None
            elif found is None:
                validity, note, util, memory = "missing", "no telemetry", None, None
            else:
                valid = found.get("valid_samples")
                util = found.get("utilization_avg")
                if valid is None:
                    valid = int(found.get("samples") or 0) if util is not None else 0
                memory = found.get("memory_used_max_mib")
                if valid and util is not None:
                    validity, note = "valid", ""
                else:
                    (validity, note), util = _gap_of(found), None
            points.append(HistoryPoint(t=t, gpu_uuid=key[0], mig_instance=key[1],
                                       utilization_pct=None if util is None else float(util),
                                       memory_used_mib=None if memory is None else float(memory),
                                       validity=validity, note=note))
            if open_gap is not None and (validity == "valid" or (open_gap[1], open_gap[2]) != (validity, note)):
                gaps.append(GapSpan(key[0], key[1], open_gap[0], t, open_gap[1], open_gap[2]))
                open_gap = None
            if validity != "valid" and open_gap is None:
                open_gap = [t, validity, note]
            t += step
        if open_gap is not None:
            gaps.append(GapSpan(key[0], key[1], open_gap[0], end, open_gap[1], open_gap[2]))
    return points, gaps


def _rounded(value: float | None) -> float | None:
    """To 0.01 (% and MiB): samples are stored as float32, whose extra digits are noise (N26)."""
    return None if value is None else round(value, 2)


def history_to_dict(points: Sequence[HistoryPoint], gaps: Sequence[GapSpan]) -> dict[str, Any]:
    """JSON shape of ``GET telemetry/history``: ``{"points": [...], "gaps": [...]}`` (times ISO 8601
    UTC; utilization and memory to 0.01)."""
    return {
        "points": [{"t": to_iso(p.t), "gpu_uuid": p.gpu_uuid, "mig_instance": p.mig_instance,
                    "utilization_pct": _rounded(p.utilization_pct), "memory_used_mib": _rounded(p.memory_used_mib),
                    "validity": p.validity, "note": p.note} for p in points],
        "gaps": [{"gpu_uuid": g.gpu_uuid, "mig_instance": g.mig_instance, "start": to_iso(g.start),
                  "end": to_iso(g.end), "validity": g.validity, "note": g.note, "label": g.label()} for g in gaps],
    }
