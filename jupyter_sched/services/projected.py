"""``projected_end`` on running work: when the scheduler projects it to end, as its waiters are told (new user 22, N10).

The leading engine keeps, beside the pending reasons, the running jobs the last full cycle projects to end
before their time limits — from their own progress reports or learnt runtimes, the ends the ETA pass reads
for the jobs waiting on them (:func:`~jupyter_sched.scheduling.ends.projected_ends`). The job answers carry
it with its words (:func:`~jupyter_sched.wording.projected.projected_end_text`), so the CLI, the magics and
the panel say, on the owner's own line, the time a waiter's ETA gives.

Who sees it: the job's owner and admins — in ``GET jobs`` (one's own, or everyone's for an admin),
``GET jobs/{id}`` (the same readers) and ``GET queue`` lines read by the owner or an admin (verify 23, V3). A projection from progress
is the job's progress figure in another form, which only they may see (red team 22, R2:
:mod:`.withheld`); another user's queue line keeps saying the time limit's end.

A server that does not lead has no projections (as it has no fresher reasons than the stored ones): its
answers leave the field out.
"""

from __future__ import annotations

from typing import Any

from ..model import Job
from ..model.units import to_iso
from ..queues.limits import TimeLimitRule, effective_limit
from ..scheduling.ends import as_of_report
from ..scheduling.snapshot import ProjectedEnd
from ..store.progress import StoredProgress
from ..wording.projected import projected_end_text
from .context import Context

__all__ = ["projection_of", "with_projection"]


def projection_of(ctx: Context, job: Job, report: StoredProgress | None = None,
                  limits: tuple[TimeLimitRule, ...] = ()) -> ProjectedEnd | None:
    """The leading engine's projected end of ``job`` while it holds GPUs; None otherwise. With ``report``, the
    job's latest progress report that its answer shows beside it (``limits``: the queues' time-limit rules), as
    that report reads it (:func:`~jupyter_sched.scheduling.ends.as_of_report`; newuser31 n3: the "% done" and the
    projection beside it came from two reports, or a learnt end the shown pace ruled out stayed until a cycle)."""
    engine = ctx.engine
    if not job.state.holds_gpus or not engine.is_leader:
        return None
    end = engine.applier.projected.get(job.id)
    start = job.started_at or job.admitted_at
    if end is None or report is None or start is None or report.run_started_at != start:
        return end
    limit, _ = effective_limit(job.spec, limits)
    return as_of_report(end, report.report, start=start, now=ctx.clock.now(), limit_s=limit)


def with_projection(data: dict[str, Any], end: ProjectedEnd | None, *, yours: bool) -> None:
    """Put ``end`` in the job dict ``data`` (REST shape) as ``projected_end``, with its words (``text``: the
    clock with its date, as a reason's ``text`` has it; ``yours``: read by the job's owner). Nothing when
    there is none or the job is stopping already (``stop_requested``: its stop is what its line says).
    The caller decides who reads it (the owner and admins only: module doc)."""
    if end is None or data.get("stop_requested"):
        return
    view: dict[str, Any] = {"at": to_iso(end.at), "source": end.source}
    if end.source == "progress":
        view |= {"report_at": to_iso(end.report_at), "fraction": end.fraction}
    else:
        view |= {"runs": end.runs or "same", "share": end.share}
    view["text"] = projected_end_text(view, None, yours=yours)
    data["projected_end"] = view
