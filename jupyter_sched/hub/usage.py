"""``GET usage/report``: the accounting report (allocated and utilized GPU-hours, cost, efficiency).

Query: ``by`` (comma list of user, team, gpu_model, job_id, kind, period; default ``user``),
``period`` (day/week/month/quarter, for ``by=period``; default month), ``since`` / ``until`` (ISO 8601
with offset; default: the 7 days up to now, the one usage period — each row says its ``since`` and
``until``), ``all=true`` (admins: everyone; others get their own usage only), ``format``
(``json`` default, or ``csv`` → ``text/csv`` with a header row). Rows are those of
:func:`jupyter_sched.accounting.usage_report` (with ``cost_unit``) plus ``gpu_seconds`` / ``gpu_hours`` (= allocated,
the shape of ``GET usage``). Cost uses ``c.HubSchedApp.gpu_prices`` (no prices → ``cost`` null).

Utilization comes from the store's one-minute telemetry rollups (``gpu_rollups``, written by
the engine's telemetry monitor): each job interval's GPU-seconds are weighted by the GPU's
per-minute mean utilization (:func:`~jupyter_sched.accounting.samples_from_rollups`). Minutes
without a rollup are a telemetry gap: "unknown", never idle — ``telemetry_coverage`` says how
much was covered, ``efficiency`` = utilized / covered allocated GPU-seconds, and a group with no
covered minute has ``utilized_*`` and ``efficiency`` null.

Served in both modes from the one route table (``jupyter_sched.extension.handlers.HANDLERS``);
this module keeps the names the hub code and its tests use: the handler lives with the other
REST handlers, the report functions in :mod:`jupyter_sched.accounting.store_report`.
"""

from __future__ import annotations

from ..accounting.store_report import rollups_for, usage_report_for
from ..extension.usage_web import UsageReportHandler

__all__ = ["UsageReportHandler", "rollups_for", "usage_report_for"]
