"""The accounting report of a running service: its store's usage intervals and telemetry rollups.

What ``GET usage/report`` serves (both modes). Utilization comes from the store's one-minute
telemetry rollups (``gpu_rollups``, written by the engine's telemetry monitor): each job
interval's GPU-seconds are weighted by the GPU's per-minute mean utilization
(:func:`~.report.samples_from_rollups`) — by the job's own minute where the row has it
(``job_minutes``: the samples taken while it held the GPU), on a shared GPU by the job's part of
it from per-process data where the minute has it (``job_shares``), else by its allocation share.
Groups whose telemetry is not rolled up yet say so (``telemetry_pending``). Minutes without a rollup are a telemetry gap:
"unknown", never idle — ``telemetry_coverage`` says how much was covered, ``efficiency`` =
utilized / covered allocated GPU-seconds, and a group with no covered minute has ``utilized_*``
and ``efficiency`` null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..model.units import parse_window, to_iso
from .report import ROLLUP_SECONDS, samples_from_rollups, usage_report
from .runaway import with_runaways
from .usage import UsageInterval
from .waste import UnattributedRow, WasteReport, unattributed_usage, waste_report

__all__ = ["UNATTRIBUTED_DEFAULT_WINDOW", "held_after_reclaim", "held_spans", "rollups_for", "unattributed_for", "usage_report_for", "waste_report_for"]

UNATTRIBUTED_DEFAULT_WINDOW = timedelta(hours=24)
"""How far back :func:`unattributed_for` looks when no ``since`` is given (it reads every GPU's
rollups of the window, not only allocated ones)."""

_PAGE = 10_000
"""Rollup rows read per store query (paged until a GPU's window is exhausted)."""


def _minute(at: datetime) -> datetime:
    return at.replace(second=0, microsecond=0)


def rollups_for(store: Any, intervals: Sequence[UsageInterval], *, now: datetime, since: datetime | None = None,
                until: datetime | None = None) -> list[dict[str, Any]]:
    """Every rollup row of the GPUs in ``intervals`` over the minutes those intervals (clipped to
    ``[since, until)``, open ones ending at ``now``) touch — all of them, paged, never truncated."""
    spans: dict[str, tuple[datetime, datetime]] = {}
    for iv in intervals:
        start = iv.started_at if since is None else max(iv.started_at, since)
        end = iv.ended_at or now
        if until is not None:
            end = min(end, until)
        if end <= start:
            continue
        lo, hi = spans.get(iv.gpu_uuid, (start, end))
        spans[iv.gpu_uuid] = (min(lo, start), max(hi, end))
    rows: list[dict[str, Any]] = []
    for gpu, (lo, hi) in sorted(spans.items()):
        cursor = _minute(lo)
        while True:
            page = store.rollup_rows(since=cursor, until=hi, gpu_uuid=gpu, limit=_PAGE)
            rows.extend(page)
            if len(page) < _PAGE:
                break
            # the next page starts after the last minute read (a minute's duplicate rows may be
            # cut at the page edge; samples_from_rollups keeps one row per minute anyway)
            last = datetime.fromisoformat(str(page[-1]["minute"]).replace("Z", "+00:00"))
            cursor = last + timedelta(microseconds=1)
    return rows


def usage_report_for(service: Any, *, user: str | None, by: Sequence[str] = ("user",),
                     since: str | datetime | None = None, until: str | datetime | None = None, period: str = "month",
                     prices: Mapping[str, Any] | None = None, cost_unit: str | None = None,
                     telemetry_until: datetime | None = None, now: datetime | None = None,
                     job_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The report of ``user``'s usage (None = everyone) from the service's store and its telemetry
    rollups, at the service's clock; groups with allocated time after ``telemetry_until`` (the
    monitor's :meth:`~jupyter_sched.engine.telemetry.TelemetryMonitor.rolled_until`) are marked
    ``telemetry_pending``; ``cost_unit`` is the currency of ``prices`` (:func:`~.report.usage_report`);
    only the jobs ``job_ids`` when given (a page of the report by job_id: red30 R8).

    Raises:
        ValidationError: bad grouping, period, timestamp or a model without a price.
        AccountingError: inconsistent usage records.
    """
    start, end = parse_window(since, until)
    paged = {} if job_ids is None else {"job_ids": job_ids}
    intervals, runaways = service.store.billed_usage(since=start, until=end, user=user, **paged)  # B15
    now = now or service.clock.now()
    samples = samples_from_rollups(rollups_for(service.store, intervals, now=now, since=start, until=end))
    rows = usage_report(intervals, samples, now=now, by=tuple(by), since=start, until=end, period=period,
                        prices=prices, max_sample_gap_s=ROLLUP_SECONDS, telemetry_until=telemetry_until,
                        held_from=held_after_reclaim(service.store, intervals), cost_unit=cost_unit)
    window = {"since": to_iso(start), "until": to_iso(now if end is None or end > now else end)}
    rows = _with_skipped_rows(service.store, rows, intervals, by=tuple(by), user=user, window=window)
    rows = with_runaways(rows, runaways, tuple(by), _zero(window))
    return [{**row, "gpu_seconds": row["allocated_gpu_seconds"], "gpu_hours": row["allocated_gpu_hours"]}
            for row in rows]


def held_after_reclaim(store: Any, intervals: Sequence[UsageInterval]) -> dict[str, datetime]:
    """Per lease of ``intervals`` that idle reclaim revoked while its kernel still held the GPU, the
    reclaim's instant (its stop request, intent ``idle``; session 21's note: a hub user's server that
    never shuts the kernel down keeps the lease held, GPU to nobody). One read of those leases' rows
    (by id, 500 a query); leases released at once have no stop request and are not listed."""
    ids = sorted({iv.job_id for iv in intervals if iv.kind == "lease"})
    found: dict[str, datetime] = {}
    if not ids:
        return found
    with store.transaction(write=False) as tx:
        for at in range(0, len(ids), 500):
            for job_id, record in tx.get_jobs(ids[at:at + 500]).items():
                if record.stop_intent == "idle" and record.stop_requested_at is not None:
                    found[job_id] = record.stop_requested_at
    return found


def _with_skipped_rows(store: Any, rows: list[dict[str, Any]], intervals: Sequence[UsageInterval], *,
                       by: tuple[str, ...], user: str | None, window: Mapping[str, str | None]) -> list[dict[str, Any]]:
    """The report rows with a ``warnings`` list naming every usage row or telemetry rollup the
    store skipped as unreadable (quarantined, issue 17 / cases 009 and 011) on the groups they
    concern; a group reached only by skipped rows appears with zeros and its warnings."""
    quarantined = getattr(store, "quarantined", None)
    if quarantined is None:
        return rows
    entries = [*quarantined(table="usage"), *quarantined(table="gpu_rollups")]
    if not entries:
        return rows
    from ..store.quarantine import attach_warnings

    gpus_of: dict[tuple[str, ...], set[str]] = {}
    for iv in intervals:
        fields = {"user": iv.user, "team": iv.team, "gpu_model": iv.gpu_model, "job_id": iv.job_id, "kind": iv.kind}
        if "period" in by:  # a GPU's rollup warning goes to every period row of the group
            for row in rows:
                if all(str(row.get(k)) == str(fields[k]) for k in by if k != "period"):
                    gpus_of.setdefault(tuple(str(row.get(k, "")) for k in by), set()).add(iv.gpu_uuid)
        else:
            gpus_of.setdefault(tuple(str(fields[k]) for k in by), set()).add(iv.gpu_uuid)
    return attach_warnings(rows, entries, by, user=user, gpus_of=gpus_of, zero=_zero(window))


def _zero(window: Mapping[str, str | None]) -> dict[str, Any]:
    """The figures of a report row for a group reached only by rows left out (skipped, runaway)."""
    return {"allocated_gpu_seconds": 0.0, "allocated_gpu_hours": 0.0, "utilized_gpu_seconds": None,
            "utilized_gpu_hours": None, "telemetry_coverage": 0.0, "efficiency": None, "cost": None, "cost_unit": None,
            "jobs": 0, "telemetry_pending": False, **window}


def waste_report_for(store: Any, *, now: datetime, since: datetime | None = None, until: datetime | None = None,
                     threshold_pct: float = 5.0, max_gap_s: float = 120.0, user: str | None = None) -> WasteReport:
    """The admin waste report (:func:`~.waste.waste_report`) over a store: its allocation intervals
    and the rollups of their GPUs, jobs and users ranked by allocated-but-idle GPU-hours (case 025).

    Args:
        store: the service's store (``usage_rows``, ``rollup_rows``).
        now: end of open intervals (the service's clock).
        since / until: the window (aware; default everything up to ``now``).
        threshold_pct: idle below this, % (the idle policy's).
        max_gap_s: longest span one rollup row stands for, seconds (a missing minute beyond it is unknown).
        user: one user's work only (None = everyone).
    """
    intervals = store.usage_rows(since=since, until=until, user=user)
    rows = rollups_for(store, intervals, now=now, since=since, until=until)
    return waste_report(intervals, rows, now=now, threshold_pct=threshold_pct, max_gap_s=max_gap_s, since=since,
                        until=until)


def unattributed_for(store: Any, *, now: datetime, since: datetime | None = None, until: datetime | None = None,
                     threshold_pct: float = 5.0, max_gap_s: float = 120.0,
                     mig_uuids: Mapping[tuple[str, int], str] | None = None) -> tuple[UnattributedRow, ...]:
    """GPUs busy while nobody was allocated them (:func:`~.waste.unattributed_usage`, case 021) over
    ``[since, until)`` — default the last :data:`UNATTRIBUTED_DEFAULT_WINDOW` up to ``now`` — from
    the store's allocation intervals and every GPU's rollups of the window (paged); MIG slices
    where ``mig_uuids`` (:func:`~.waste.mig_uuids_of` the inventory) names them."""
    start = since if since is not None else now - UNATTRIBUTED_DEFAULT_WINDOW
    end = until if until is not None else now
    held = held_spans(store, since=start, until=end, now=min(now, end))
    rows: list[dict[str, Any]] = []
    seen: set[tuple[Any, Any, Any]] = set()
    cursor = _minute(start)
    while True:
        page = store.rollup_rows(since=cursor, until=end, limit=_PAGE)
        for row in page:
            key = (row.get("gpu_uuid"), row.get("mig_instance"), row.get("minute"))
            if key not in seen:  # a device-minute counts once (unattributed_usage keeps one too)
                seen.add(key)
                rows.append(row)
        if len(page) < _PAGE:
            break
        # pages are ordered by minute: the next one starts AT the last minute read (other GPUs'
        # rows of that minute may be past the page edge; device-minutes already read are
        # skipped), or after it when one minute alone fills a page
        last = datetime.fromisoformat(str(page[-1]["minute"]).replace("Z", "+00:00"))
        first = datetime.fromisoformat(str(page[0]["minute"]).replace("Z", "+00:00"))
        cursor = last if last > first else last + timedelta(microseconds=1)
    return unattributed_usage((), rows, now=min(now, end), threshold_pct=threshold_pct, max_gap_s=max_gap_s,
                              mig_uuids=mig_uuids, held=held)


def held_spans(store: Any, *, since: datetime, until: datetime, now: datetime) -> list[tuple[str, datetime, datetime]]:
    """``(GPU uuid, start, end)``: when some allocation held each GPU over ``[since, until)`` — the usage rows
    merged into disjoint spans per GPU by the database (``Store.usage_spans``, everyone's rows as "others"), open
    ones ending at ``now``. O(spans) leave the database, not O(rows) (s29: every row was decoded in Python)."""
    return [(gpu, lo, hi if hi is not None else now)
            for gpu, _own, lo, hi in store.usage_spans(since=since, until=until, user="")]
