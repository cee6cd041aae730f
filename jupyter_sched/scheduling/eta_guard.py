"""The ETA pass never fails a cycle's decisions (red team 21, R5).

ETAs are shown, never decided on (:mod:`.eta`). They read inputs users control — progress reports,
learnt runtimes, time limits — and one bad value once made the pass raise (``OverflowError`` from a
line of ~zero slope), so every cycle failed and nothing started for anyone. :func:`estimate_guarded`
runs the pass; if it raises for any reason the cycle's admissions, preemptions and rejections stand,
every pending job keeps its reason and queue position with an "unknown" ETA
(``eta_code`` :data:`ESTIMATE_FAILED`), and the cause is handed back as one line for the engine to
log once (``CycleResult.eta_failure``).

Pure: no clock, no I/O.
"""

from __future__ import annotations

import traceback
from dataclasses import replace

from .context import CycleContext
from .ends import projected_ends
from .eta import estimate_all
from .snapshot import Pend, ProjectedEnd

__all__ = ["ESTIMATE_FAILED", "ETA_FAILED_REASON", "ends_guarded", "estimate_guarded"]

ESTIMATE_FAILED = "EstimateFailed"
"""``details["eta_code"]`` of a pending job whose ETA this cycle could not project."""

ETA_FAILED_REASON = ("ETA unknown this cycle: the projection of future capacity failed "
                     "(the scheduler's log names the cause; the queue is decided as usual)")
"""The ``eta_reason`` every pending job gets when the pass fails."""

_MAX_MESSAGE = 200
"""Characters of the error's own message kept in the cause (it may quote an input)."""


def estimate_guarded(ctx: CycleContext) -> str:
    """Run :func:`.eta.estimate_all` on ``ctx``; on any exception set every pending job's ETA to
    unknown (position kept) and drop the pass's audit records.

    Returns:
        "" when the pass ran; else one line naming the error type, its message (cut to 200
        characters), where it was raised and the running jobs whose progress reports fed the pass.
    """
    audited = len(ctx.audit)
    try:
        estimate_all(ctx)
    except Exception as exc:  # ETAs are display only: never the cycle's failure
        del ctx.audit[audited:]  # eta_moved records of a pass that did not finish
        _unknown(ctx)
        return _cause(ctx, exc)
    return ""


def ends_guarded(ctx: CycleContext) -> tuple[dict[str, ProjectedEnd], str]:
    """The running jobs' projected ends (:func:`.ends.projected_ends`, new user 22, N10), read from the same
    inputs as the ETA pass — shown, never decided on — so guarded alike: ``({}, cause)`` if it raises
    (every running line then says its time limit only), else ``(ends, "")``."""
    try:
        return projected_ends(ctx), ""
    except Exception as exc:  # display only: never the cycle's failure
        return {}, _cause(ctx, exc)


def _unknown(ctx: CycleContext) -> None:
    """Every pending decision with an unknown ETA, numbered as :func:`.eta.estimate_all` numbers them."""
    out: list[Pend] = []
    queued = 0
    for pend in ctx.pends:
        reason = pend.reason
        position = reason.position
        if reason.details.get("never") != "quota":  # a job above a quota ceiling holds no place
            queued += 1
            position = queued
        details = {**reason.details, "eta_code": ESTIMATE_FAILED}
        out.append(Pend(pend.job_id, replace(reason, eta=None, eta_reason=ETA_FAILED_REASON, position=position,
                                             details=details)))
    ctx.pends[:] = out


def _cause(ctx: CycleContext, exc: BaseException) -> str:
    """``"OverflowError: <message> (at eta.py:443 in order); progress reports of running jobs: a, b"``."""
    message = str(exc)
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "…"
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    reporting = sorted(ctx.snap.progress)
    fed = ""
    if reporting:
        fed = "; progress reports of running jobs: " + ", ".join(reporting[:10]) + (
            f" and {len(reporting) - 10} more" if len(reporting) > 10 else "")
    return f"{type(exc).__name__}: {message}{where}{fed}"
