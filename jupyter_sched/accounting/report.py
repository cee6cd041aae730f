"""Accounting reports: GPU-seconds allocated and utilized, cost, efficiency, roll-ups, CSV.

Inputs are the store's allocation intervals (:class:`~.usage.UsageInterval`: ``share`` GPUs of
one GPU held by one job attempt from ``started_at`` to ``ended_at``) and GPU utilization
samples (:class:`UtilizationSample`, percent of the whole GPU, from telemetry).

Definitions (all times aware UTC; a window ``[since, until)`` clips every interval):

- **allocated GPU-seconds** of an interval = ``share * seconds held`` (what was allocated, never
  what was used — the basis of cost and budgets). Each interval is counted once; the store opens
  one interval per (job, attempt, GPU) and a restart never opens a second one, so nothing is
  double-counted across restarts. Records that would double count are counted once and said (see below).
- **utilized GPU-seconds** = ``share * utilization(t) / 100`` integrated over the time the
  interval is covered by telemetry. A sample holds its value from its timestamp until the next
  sample of that GPU, or for at most ``max_sample_gap_s`` seconds (default 120 s) — past that the
  GPU's utilization is unknown, not zero. On a shared (time-sliced) GPU a job is attributed its
  part of the GPU's utilization from per-process data where the sample has it
  (:attr:`UtilizationSample.job_shares`, the rollups' ``job_shares``: SM share of its processes,
  else their memory), else ``share`` of it (issue 18 item 2). A job that used more than its
  allocated share of a time-sliced GPU (the others idle) may show an efficiency above 1.
  Where a rollup minute carries each holder's own minute (``job_minutes``), a job's value for
  that minute is the mean over the samples taken while it held the GPU, and only its valid share
  of those seconds is covered — the same samples ``GET telemetry/history?job=`` draws, live and
  after roll-up (new user 14, N26).
- **telemetry coverage** = covered allocated GPU-seconds / allocated GPU-seconds (0..1).
- **telemetry pending**: some of the group's allocated time lies after the last minute the
  telemetry monitor has rolled up into the store (``telemetry_until``): its utilization is not
  in the report yet — it is not a gap.
- **efficiency** = utilized / covered allocated GPU-seconds (0..1, above 1 only as said above): idle
  time inside telemetry gaps is not counted as idle. None when nothing was covered.
- **cost** = allocated GPU-hours * price per GPU-hour of the GPU's model in force at the time
  (``prices``: a number, or ``[from, price]`` pairs — :mod:`.prices`; key ``"*"`` prices models
  without a price of their own in force): a later price change does not re-price the past
  (hubadmin26 B21). Usage with no price in force is never free nor a failure: its row's cost is
  unknown (None) and the row's ``warnings`` say which model and how many GPU-hours.
  Each row says the cost's unit (``cost_unit``: the currency the prices are in, e.g. ``"USD"``, or
  :data:`UNNAMED_COST_UNIT` when the admin named none; None with ``cost`` when nothing is priced).

Errors (never silently zero): :class:`AccountingError` for an interval that ends before it
starts or starts in the future, a share outside (0, 1], a naive timestamp, the same
(job, attempt, GPU) twice, or a utilization sample outside 0..100 %. Rows that overlap on one GPU
(more than a whole GPU allocated at one instant, or one job holding it twice) are counted once, for
the row that held it first, and the groups concerned carry a warning naming them
(:mod:`.overlaps`; hubadmin25 B7: one such pair used to fail the whole report); ``ValidationError`` for
bad arguments (unknown grouping, period, or malformed prices).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import StoreError, ValidationError
from ..model.periods import PERIODS, PERIODS_TEXT, next_period_start
from ..model.units import parse_utc, to_iso
from ..textsafe import csv_text
from .overlaps import UsageOverlap, resolve_overlaps
from .prices import PRICE_FIX, price_at, price_segments, price_table
from .usage import UsageInterval, gpu_figures, period_start
from .waste import JobMinute, job_minutes_of, job_shares_of

__all__ = [
    "ROLLUP_SECONDS", "REPORT_KEYS", "UNNAMED_COST_UNIT", "AccountingError", "UtilizationSample", "check_intervals",
    "price_for", "price_unit_from", "report_csv", "samples_from_rollups", "usage_report",
]

ROLLUP_SECONDS = 60.0
"""Span of one telemetry rollup row (seconds): pass it as ``max_sample_gap_s`` with
:func:`samples_from_rollups` so a missing minute is a gap (unknown), never idle."""

REPORT_KEYS = ("user", "team", "gpu_model", "job_id", "kind", "period")
"""Fields a report may group by (``period`` = start of the day/week/month/quarter, ISO 8601 UTC)."""

CSV_COLUMNS = ("allocated_gpu_seconds", "allocated_gpu_hours", "utilized_gpu_seconds", "utilized_gpu_hours",
               "telemetry_coverage", "efficiency", "cost", "cost_unit", "jobs", "telemetry_pending", "since", "until")
"""Value columns of a report row, after the grouping fields (``cost_unit`` beside ``cost``: a bare
number in a spreadsheet said nothing of its currency, hubadmin22 H10; ``since``/``until``: the
period every figure of the row covers)."""

_LATEST = datetime(9999, 1, 1, tzinfo=timezone.utc)

UNNAMED_COST_UNIT = "price units"
"""``cost_unit`` when prices are set but their currency is not named (``c.HubSchedApp.gpu_price_unit``
empty): the number is in whatever the admin priced GPU-hours in."""

_EPS_S = 1e-6
_SHARE_SLACK = 1e-9


class AccountingError(StoreError):
    """Usage or telemetry records are truncated or inconsistent: the report would be wrong."""

    code = "accounting_inconsistent"


@dataclass(frozen=True, slots=True)
class UtilizationSample:
    """Utilization of one GPU at one instant: ``utilization_percent`` (0..100) of ``gpu_uuid`` at ``at``."""

    gpu_uuid: str
    at: datetime
    utilization_percent: float
    job_shares: Mapping[str, float] | None = None
    """Each job's part of this GPU's utilization from per-process data (shared GPUs; sums to 1);
    None: split by allocation share."""
    jobs: Mapping[str, JobMinute] | None = None
    """Each holder's own minute (``job_minutes``: the samples taken while it held the GPU); None:
    the GPU's value stands for every holder (rows written before schema version 11)."""


def samples_from_rollups(rows: Iterable[Mapping[str, Any]]) -> list[UtilizationSample]:
    """Utilization samples from the store's one-minute telemetry rollups (``Store.rollup_rows`` shape).

    Each whole-GPU row (``mig_instance`` None) becomes one sample at its ``minute`` with value
    ``utilization_avg`` (percent, the minute's mean); with ``max_sample_gap_s=ROLLUP_SECONDS`` it
    holds for exactly that minute. Rows without a utilization value or without samples are left
    out (that minute is unknown, not idle); MIG-instance rows are left out (their utilization is
    not attributed to whole-GPU intervals). When one GPU-minute was written twice (two engines
    across a restart), the row with its holders' own minutes is kept, else the one with more
    samples — a minute is never counted twice.
    A row with ``job_minutes`` (schema version 11) carries each holder's own minute: a job that
    starts or ends inside the minute gets the mean of the samples taken while it held the GPU for
    the seconds it held it (new user 14, N26: not the whole minute's mean, which counts the
    seconds before it started as its own); older rows give the minute's mean.

    Raises:
        AccountingError: a ``minute`` that is not an aware ISO 8601 timestamp.
    """
    best: dict[tuple[str, datetime],
               tuple[tuple[bool, int], float, Mapping[str, float] | None, Mapping[str, JobMinute] | None]] = {}
    for row in rows:
        if row.get("mig_instance") is not None:
            continue
        value, count = row.get("utilization_avg"), int(row.get("samples") or 0)
        if value is None or count <= 0:
            continue
        try:
            minute = parse_utc(row["minute"], field="minute")
        except ValidationError as exc:
            raise AccountingError(f"telemetry rollup of GPU {row.get('gpu_uuid')} has an unreadable minute "
                                  f"{row.get('minute')!r} ({exc})", hint="drop the malformed rollup row") from None
        key = (str(row["gpu_uuid"]), minute)
        jobs = job_minutes_of(row)
        rank = (jobs is not None, count)  # a row that knows its holders' own minutes first
        if key not in best or rank > best[key][0]:
            best[key] = (rank, float(value), job_shares_of(row), jobs)
    return [UtilizationSample(gpu, minute, value, shares, jobs)
            for (gpu, minute), (_rank, value, shares, jobs) in sorted(best.items())]


# ---- validation -------------------------------------------------------------------------------


def _aware(value: datetime, what: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise AccountingError(f"{what} has no UTC offset ({value.isoformat()})",
                              hint="usage and telemetry timestamps must be aware UTC datetimes")


def check_intervals(intervals: Sequence[UsageInterval], *, now: datetime, rows_only: bool = False) -> None:
    """Refuse records that would make a report wrong (see module docstring); ``rows_only``: each
    row on its own only (times, share), not the rows of one GPU together.

    Raises:
        AccountingError: naming the job, GPU and the numbers.
    """
    seen: set[tuple[str, int, str, datetime]] = set()
    per_gpu: dict[str, list[UsageInterval]] = {}
    for iv in intervals:
        where = f"usage of job {iv.job_id} attempt {iv.attempt} on GPU {iv.gpu_uuid}"
        _aware(iv.started_at, f"{where}: start")
        if iv.ended_at is not None:
            _aware(iv.ended_at, f"{where}: end")
            if iv.ended_at < iv.started_at:
                raise AccountingError(f"{where} ends {iv.ended_at.isoformat()} before it starts "
                                      f"{iv.started_at.isoformat()}", hint="the usage record is corrupt; repair it")
        if iv.started_at > now:
            raise AccountingError(f"{where} starts in the future ({iv.started_at.isoformat()} > {now.isoformat()})",
                                  hint="check the clock of the engine that wrote it")
        if not 0 < iv.share <= 1:
            raise AccountingError(f"{where} has share {iv.share:g} GPUs (must be in (0, 1])",
                                  hint="the usage record is corrupt; repair it")
        key = (iv.job_id, iv.attempt, iv.gpu_uuid, iv.started_at)  # schema 30's key: a holding is cut where its
        if rows_only:                                              # charge changes (red40 R1); overlaps: _check_gpu
            continue
        if key in seen:
            raise AccountingError(f"{where} is recorded twice (would double count)",
                                  hint="delete the duplicate usage row")
        seen.add(key)
        per_gpu.setdefault(iv.gpu_uuid, []).append(iv)
    for gpu, rows in per_gpu.items():
        _check_gpu(gpu, rows, now)


def _check_gpu(gpu: str, rows: list[UsageInterval], now: datetime) -> None:
    """No job holds one GPU twice at once; shares held at one instant sum to at most 1 GPU."""
    points: list[tuple[datetime, int, float, str]] = []
    for iv in rows:
        end = iv.ended_at or now
        if end > iv.started_at:
            points.append((iv.started_at, 1, iv.share, iv.job_id))
            points.append((end, 0, iv.share, iv.job_id))
    points.sort(key=lambda p: (p[0], p[1]))  # ends before starts at the same instant
    held = 0.0
    holders: dict[str, int] = {}
    for at, is_start, share, job in points:
        if is_start:
            holders[job] = holders.get(job, 0) + 1
            held += share
            if holders[job] > 1:
                raise AccountingError(f"job {job} holds GPU {gpu} twice at {at.isoformat()} (would double count)",
                                      hint="two attempts of one job overlap; close the earlier interval")
            if held > 1 + _SHARE_SLACK:
                raise AccountingError(f"GPU {gpu} is allocated {held:g} times at {at.isoformat()} (more than one GPU)",
                                      hint="overlapping usage records: `jupyter-sched doctor` lists them and how to repair them")
        else:
            holders[job] -= 1
            held -= share


def _check_samples(samples: Iterable[UtilizationSample]) -> dict[str, list[UtilizationSample]]:
    by_gpu: dict[str, list[UtilizationSample]] = {}
    for s in samples:
        _aware(s.at, f"utilization sample of GPU {s.gpu_uuid}")
        if not 0 <= s.utilization_percent <= 100:
            raise AccountingError(f"utilization sample of GPU {s.gpu_uuid} at {s.at.isoformat()} is "
                                  f"{s.utilization_percent:g} % (must be 0..100)", hint="drop the malformed sample")
        by_gpu.setdefault(s.gpu_uuid, []).append(s)
    for rows in by_gpu.values():
        rows.sort(key=lambda s: s.at)
    return by_gpu


# ---- integrals --------------------------------------------------------------------------------


def _utilized(share: float, start: datetime, end: datetime, samples: Sequence[UtilizationSample],
              times: Sequence[datetime], max_gap: timedelta, job_id: str = "") -> tuple[float, float]:
    """``(covered seconds, utilized GPU-seconds)`` of ``share`` GPUs held over ``[start, end)`` by
    ``job_id`` (its part of a shared GPU's utilization where a sample has per-process data)."""
    covered = utilized = 0.0
    i = max(bisect_right(times, start) - 1, 0)
    while i < len(samples) and samples[i].at < end:
        s = samples[i]
        hold_end = s.at + max_gap
        if i + 1 < len(samples):
            hold_end = min(hold_end, samples[i + 1].at)
        lo, hi = max(s.at, start), min(hold_end, end)
        value: float | None = s.utilization_percent
        seconds = (hi - lo) / timedelta(seconds=1) if hi > lo else 0.0
        if s.jobs is not None and seconds > 0:  # the job's own samples of that minute (N26)
            own = s.jobs.get(job_id)
            value = None if own is None else own.utilization_avg
            seconds *= own.valid_share if own is not None else 0.0
        if seconds > 0 and value is not None:
            covered += seconds
            part = s.job_shares.get(job_id, share) if s.job_shares is not None else share
            utilized += part * value / 100.0 * seconds
        i += 1
    return covered, utilized


def _pieces(iv: UsageInterval, *, now: datetime, since: datetime | None, until: datetime | None,
            period: str | None) -> list[tuple[datetime, datetime, str | None]]:
    """The interval clipped to the window and, when ``period`` is given, split at period starts."""
    start = iv.started_at if since is None else max(iv.started_at, since)
    end = iv.ended_at or now
    if until is not None:
        end = min(end, until)
    if end <= start:
        return []
    if period is None:
        return [(start, end, None)]
    out: list[tuple[datetime, datetime, str | None]] = []
    cursor = start
    while cursor < end:
        begin = period_start(cursor, period)
        following = _next_period(begin, period)
        piece_end = min(end, following)
        out.append((cursor, piece_end, begin.isoformat()))
        cursor = piece_end
    return out


def _next_period(begin: datetime, period: str) -> datetime:
    return next_period_start(begin, period)


def price_for(model: str, prices: Mapping[str, Any], at: datetime | None = None) -> float:
    """Price per GPU-hour of ``model`` in force at ``at`` (None: the latest) — its own, else ``prices["*"]``
    (:mod:`.prices`).

    Raises:
        ValidationError: field ``prices`` when the model has no price in force and there is no ``"*"``.
    """
    price = price_at(price_table(prices, field="prices"), model, at or _LATEST)
    if price is not None:
        return price
    raise ValidationError(f"no price per GPU-hour for GPU model {model!r}", field="prices",
                          hint=f'add {{"{model}": <price>}} or a default {{"*": <price>}} to the prices')


PRICE_UNIT_MAX = 24
"""Characters a price unit may have (``USD``, ``EUR``, ``credits``, ``CHF (internal)``)."""


def price_unit_from(value: object) -> str | None:
    """``c.HubSchedApp.gpu_price_unit`` checked: the unit text, stripped (None when empty).

    Raises:
        ValidationError: field ``gpu_price_unit`` — not text, longer than :data:`PRICE_UNIT_MAX`
            characters, or with a control character (it is printed in tables and CSV cells).
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"gpu_price_unit must be text (got {type(value).__name__})", field="gpu_price_unit",
                              hint='name the currency of gpu_prices, e.g. "USD"')
    text = value.strip()
    if len(text) > PRICE_UNIT_MAX or any(not ch.isprintable() for ch in text):
        raise ValidationError(f"gpu_price_unit must be at most {PRICE_UNIT_MAX} printable characters "
                              f"(got {text[:PRICE_UNIT_MAX]!r}{'…' if len(text) > PRICE_UNIT_MAX else ''})",
                              field="gpu_price_unit", hint='name the currency of gpu_prices, e.g. "USD" or "credits"')
    return text or None


# ---- the report -------------------------------------------------------------------------------


def usage_report(
    intervals: Sequence[UsageInterval],
    samples: Iterable[UtilizationSample] = (),
    *,
    now: datetime,
    by: Sequence[str] = ("user",),
    since: datetime | None = None,
    until: datetime | None = None,
    period: str = "month",
    prices: Mapping[str, Any] | None = None,
    max_sample_gap_s: float = 120.0,
    telemetry_until: datetime | None = None,
    held_from: Mapping[str, datetime] | None = None,
    cost_unit: str | None = None,
) -> list[dict[str, Any]]:
    """Roll allocation intervals and utilization samples up ``by`` the given fields.

    Args:
        intervals: the store's usage intervals (all that touch the window).
        samples: GPU utilization samples (percent), any order.
        now: the report time (open intervals end here).
        by: grouping fields out of :data:`REPORT_KEYS`.
        since, until: the window ``[since, until)`` (None = unbounded).
        period: ``day``, ``week``, ``month`` or ``quarter`` when grouping by ``period``.
        prices: price per GPU-hour per GPU model, a number or ``[from, price]`` pairs (:func:`.prices.price_table`;
            None = no cost column values: ``cost`` None).
        max_sample_gap_s: seconds a sample's value holds at most (telemetry gap limit).
        telemetry_until: the end of the last minute the telemetry monitor rolled up (None:
            nothing is pending, e.g. telemetry off); a group with allocated time after it is
            ``telemetry_pending``.
        held_from: per lease id, when idle reclaim revoked it while its kernel's process still had a
            context on its GPU (its stop request, intent ``idle``): from then until the GPU was free
            the lease stayed held — given to nobody else, charged to its owner, whose kernel held it
            (:mod:`jupyter_sched.engine.idle_kernels`, audited ``idle_kernel_held``).
        cost_unit: the currency of ``prices`` (e.g. ``"USD"``; None or empty: :data:`UNNAMED_COST_UNIT`).

    Returns:
        Rows ``{<by fields>, "allocated_gpu_seconds", "allocated_gpu_hours", "utilized_gpu_seconds",
        "utilized_gpu_hours", "telemetry_coverage", "efficiency", "cost", "cost_unit", "jobs", "telemetry_pending",
        "since", "until"}`` (the window, ISO 8601 UTC; ``since`` None when unbounded, ``until`` the asked one, else ``now``),
        sorted by
        the grouping fields; a group with such held time also has ``held_after_reclaim_gpu_seconds`` and
        ``held_after_reclaim_gpu_hours``: the part of its allocated GPU-seconds after those reclaims. Seconds are rounded to 1 ms, hours to 1e-9, cost to 1e-6;
        ``utilized_*`` and ``efficiency`` are None for a group no telemetry covered.

    Raises:
        AccountingError: inconsistent records (see :func:`check_intervals`).
        ValidationError: unknown grouping field or period, bad window, malformed prices.
    """
    _aware(now, "report time")
    keys = tuple(by)
    bad = [k for k in keys if k not in REPORT_KEYS]
    if bad or not keys:
        raise ValidationError(f"cannot group usage by {bad[0] if bad else '(nothing)'!r}", field="by",
                              hint="use any of " + ", ".join(REPORT_KEYS))
    if period not in PERIODS:
        raise ValidationError(f"unknown period {period!r}", field="period", hint=f"use {PERIODS_TEXT}")
    if since is not None and until is not None and until < since:
        raise ValidationError("until is before since", field="until", hint="give until >= since")
    if max_sample_gap_s <= 0:
        raise ValidationError("max_sample_gap_s must be > 0", field="max_sample_gap_s", hint="e.g. 120")
    check_intervals(intervals, now=now, rows_only=True)
    intervals, overlaps = resolve_overlaps(intervals, now=now)  # counted once, said (hubadmin25 B7)
    check_intervals(intervals, now=now)
    unit = (cost_unit or UNNAMED_COST_UNIT) if prices is not None else None
    table = price_table(prices) if prices is not None else None
    unpriced: dict[tuple[str, ...], dict[str, float]] = {}  # GPU-seconds with no price in force, per model
    by_gpu = _check_samples(samples)
    times = {gpu: [s.at for s in rows] for gpu, rows in by_gpu.items()}
    gap = timedelta(seconds=max_sample_gap_s)
    totals: dict[tuple[str, ...], list[float]] = {}
    jobs: dict[tuple[str, ...], set[str]] = {}
    telemetry: dict[tuple[str, ...], bool] = {}
    pending: dict[tuple[str, ...], bool] = {}
    for iv in intervals:
        gpu_samples = by_gpu.get(iv.gpu_uuid, [])
        for start, end, period_label in _pieces(iv, now=now, since=since, until=until,
                                                period=period if "period" in keys else None):
            seconds = (end - start) / timedelta(seconds=1)
            if seconds <= _EPS_S:
                continue
            covered, utilized = _utilized(iv.charged, start, end, gpu_samples, times.get(iv.gpu_uuid, []), gap,
                                          iv.job_id)
            fields = {"user": iv.user, "team": iv.team, "gpu_model": iv.gpu_model, "job_id": iv.job_id,
                      "kind": iv.kind, "period": period_label}
            key = tuple(str(fields[k]) for k in keys)
            row = totals.setdefault(key, [0.0, 0.0, 0.0, 0.0, 0.0])
            charged = iv.charged  # what the holding keeps from others (red40 R1)
            row[0] += charged * seconds
            revoked = (held_from or {}).get(iv.job_id)
            if revoked is not None and end > revoked:
                row[4] += charged * (end - max(start, revoked)) / timedelta(seconds=1)
            row[1] += charged * covered
            row[2] += utilized
            for a, b, price in (price_segments(table, iv.gpu_model, start, end) if table is not None else ()):
                if price is None:
                    models = unpriced.setdefault(key, {})
                    models[iv.gpu_model] = models.get(iv.gpu_model, 0.0) + charged * ((b - a) / timedelta(seconds=1))
                else:
                    row[3] += charged * ((b - a) / timedelta(seconds=1)) / 3600.0 * price
            jobs.setdefault(key, set()).add(iv.job_id)
            telemetry[key] = telemetry.get(key, False) or covered > 0
            pending[key] = pending.get(key, False) or (telemetry_until is not None and end > telemetry_until)
    out: list[dict[str, Any]] = []
    for key in sorted(totals):
        allocated, covered_alloc, utilized, cost, held = totals[key]
        seen = telemetry[key]
        out.append({
            **dict(zip(keys, key, strict=True)),
            "allocated_gpu_seconds": gpu_figures(allocated)[0],
            "allocated_gpu_hours": gpu_figures(allocated)[1],  # from the rounded seconds (N13)
            "utilized_gpu_seconds": gpu_figures(utilized)[0] if seen else None,
            "utilized_gpu_hours": gpu_figures(utilized)[1] if seen else None,
            "telemetry_coverage": round(covered_alloc / allocated, 6) if allocated > 0 else 0.0,
            "efficiency": round(utilized / covered_alloc, 6) if seen and covered_alloc > 0 else None,
            "cost": round(cost, 6) if prices is not None and key not in unpriced else None,
            "cost_unit": unit,
            "jobs": len(jobs[key]),
            "telemetry_pending": pending[key],
            "since": to_iso(since), "until": to_iso(until or now),
            **({"held_after_reclaim_gpu_seconds": gpu_figures(held)[0],
                "held_after_reclaim_gpu_hours": gpu_figures(held)[1]} if held > _EPS_S else {}),
        })
    for said, key in zip(out, sorted(totals), strict=True):
        for model, seconds in sorted(unpriced.get(key, {}).items()):
            said.setdefault("warnings", []).append(unpriced_warning(model, seconds))
        if key in unpriced:  # the part that is priced, a lower bound of the unknown cost (the panel's "≥")
            said["unpriced_gpu_hours"] = round(sum(unpriced[key].values()) / 3600.0, 6)
            said["priced_cost"] = round(totals[key][3], 6)
    return _with_overlaps(out, overlaps, keys)


def unpriced_warning(model: str, gpu_seconds: float) -> str:
    """A row's note for usage with no price in force: its cost is unknown (hubadmin26 B21)."""
    return (f"no price per GPU-hour for GPU model {model!r} was in force for {gpu_seconds / 3600:.3f} of these "
            f"GPU-hours: cost unknown — {PRICE_FIX}")


def _with_overlaps(rows: list[dict[str, Any]], overlaps: Sequence[UsageOverlap],
                   keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """``rows`` with each overlap's warning on the rows of the two groups it concerns (every period)."""
    for overlap in overlaps:
        said = overlap.warning()
        for iv in (overlap.cut, overlap.held):
            fields = {"user": iv.user, "team": iv.team, "gpu_model": iv.gpu_model, "job_id": iv.job_id,
                      "kind": iv.kind}
            for row in rows:
                if all(str(row.get(k)) == str(fields[k]) for k in keys if k != "period") \
                        and said not in row.setdefault("warnings", []):
                    row["warnings"].append(said)
    for row in rows:
        if row.get("warnings") == []:
            del row["warnings"]
    return rows


def report_csv(rows: Sequence[Mapping[str, Any]], by: Sequence[str] = ("user",)) -> str:
    """The rows of :func:`usage_report` as CSV text (header: grouping fields, then :data:`CSV_COLUMNS`;
    None is written as an empty cell). The two last columns, ``since`` and ``until``, say the period
    on every row, so a saved export says which period it is and a spreadsheet still reads one header
    row (hubadmin23 A10: no comment line). Written by the one CSV writer (:func:`~jupyter_sched.textsafe.csv_text`):
    a user or team named ``=HYPERLINK(…)`` is a text cell ``'=HYPERLINK(…)``, never a formula (s30)."""
    columns = (*by, *CSV_COLUMNS)
    return csv_text(columns, ([row.get(c) for c in columns] for row in rows))
