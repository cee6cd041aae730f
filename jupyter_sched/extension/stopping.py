"""Requests that meet the server while it stops: 503 ``stopping`` with a Retry-After, never a 500; and what the
stop leaves running, said once in its log (:func:`say_what_stop_leaves`, newuser41 n3).

jupyter_server stops its extensions before its HTTP server stops taking requests, and ours shuts its
request, bulk and dry-run thread pools on the way out. A panel's poll that came in between reached a
pool that was gone: ``run_in_executor`` raised ``RuntimeError: cannot schedule new futures after
shutdown``, answered 500 with a traceback in the server log at every stop (new user 24, N7); a call
queued on a pool when it shut (``cancel_futures``) was cancelled under its handler. So every
handler asks :func:`refuse_if_stopping` first, and every hop onto a pool goes through
:func:`run_pooled`, which turns both into :class:`~jupyter_sched.errors.StoppingError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar, cast

from ..errors import SchedError, StoppingError, http_status_for

__all__ = ["RETRY_AFTER_S", "refuse_if_stopping", "run_pooled", "say_what_stop_leaves", "stop_leaves_text",
           "stopping_error"]

log = logging.getLogger(__name__)

R = TypeVar("R")

RETRY_AFTER_S = 5
"""Seconds a client is told to wait (``Retry-After``) before it asks a stopping server again."""


def stopping_error() -> StoppingError:
    """The answer to a request that came while the server stops (503 ``stopping``, Retry-After :data:`RETRY_AFTER_S` s)."""
    return StoppingError("the server is stopping (shutdown): this request was not carried out",
                         hint=f"retry in {RETRY_AFTER_S} s or so, once the server is back; nothing was changed",
                         details={"retry_after_s": RETRY_AFTER_S})


def refuse_if_stopping(sched: Any) -> None:
    """Raise :class:`StoppingError` when ``sched`` (the :class:`~.app.SchedApp`) has begun to stop.

    Raises:
        StoppingError: ``sched.stopping`` is true (503, Retry-After).
        SchedulerOffError: the scheduler never started: its store failed at start (503, :mod:`.store_off`)."""
    if getattr(sched, "stopping", False):
        raise stopping_error()
    if (off := getattr(sched, "off_error", None)) is not None:
        raise off


async def run_pooled(pool: Executor, fn: Callable[[], R], *, stopping: Callable[[], bool]) -> R:
    """Run ``fn()`` on ``pool`` and return its result; a pool shut by a stopping server answers
    :class:`StoppingError` instead of a ``RuntimeError`` or a cancellation of the caller.

    Args:
        pool: the thread pool (request, bulk or dry-run threads).
        fn: the work, no arguments (a ``functools.partial``).
        stopping: true once the server has begun to stop (read only when the pool refused).

    Raises:
        StoppingError: the pool was shut (or shut with ``fn`` still queued) by a stopping server.
        SchedError: a refusal ``fn`` raised (4xx), without the pool thread's frames (:func:`_refusal_returned`).
        Exception: whatever else ``fn`` raised, unchanged.
    """
    loop = asyncio.get_running_loop()
    try:
        future = loop.run_in_executor(pool, _refusal_returned(fn))
    except RuntimeError:  # "cannot schedule new futures after shutdown"
        if stopping():
            raise stopping_error() from None
        raise
    try:
        value, refused = await future
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if future.cancelled() and stopping() and (task is None or not task.cancelling()):
            raise stopping_error() from None  # the pool dropped fn, not our caller that was cancelled
        raise
    if refused is not None:
        del future  # its result holds the refusal, and this frame is in the refusal's traceback: a cycle again
        try:
            raise refused
        finally:  # ... as this name would be
            del refused
    return cast(R, value)


def _refusal_returned(fn: Callable[[], R]) -> Callable[[], tuple[R | None, SchedError | None]]:
    """``fn`` for a pool thread, a refusal (a 4xx :class:`SchedError`) it raises returned, not raised:
    ``(value, None)`` or ``(None, refusal)``, the refusal without its traceback and the exceptions it came from.

    A refusal raised there kept what the thread's frames held for good (run A of session 38: verify 24 V2's
    bound, ~4 MiB a refused 7.5 MB body once red38 R1, 25f72c9c, moved large bodies' decode and parse onto
    these threads): its traceback and the exceptions it came from (pydantic's, the decode's) hold the thread's
    frames — the handler, its request, the decoded body or a carried notebook — and those frames the pool's
    work item, whose future holds the refusal again: a reference cycle, freed only by a full garbage
    collection, which bytes never prompt. A refusal is said whole by its own fields; a fault (5xx, anything
    else) keeps its traceback for the log."""
    def caught() -> tuple[R | None, SchedError | None]:
        try:
            return fn(), None
        except SchedError as refused:
            if http_status_for(refused) >= 500:
                raise
            refused.__context__ = refused.__cause__ = None
            return None, refused.with_traceback(None)
    return caught


NAMED_AT_MOST = 5
"""Jobs named in :func:`stop_leaves_text` for each kind; the rest counted (``and 3 more``)."""


def _named(jobs: Sequence[dict[str, Any]]) -> str:
    names = [str(job.get("name") or job.get("id")) for job in jobs[:NAMED_AT_MOST]]
    more = len(jobs) - len(names)
    return ", ".join(names) + (f" and {more} more" if more else "")


def _jobs(count: int, what: str = "") -> str:
    return f"{count} {what}{'job' if count == 1 else 'jobs'}"


def stop_leaves_text(running: Sequence[dict[str, Any]], queued: Sequence[dict[str, Any]]) -> str:
    """What a stopping server leaves of its jobs, in one sentence ("" when nothing): ``running`` (admitted or
    running batch jobs and services) keep running — their wrappers (or pods) outlive the server — and are picked up
    (re-adopted) when it starts again; ``queued`` ones start only then. Names, else ids, :data:`NAMED_AT_MOST` of
    each. newuser41 n3: at Ctrl-C → y a newcomer could not tell whether it killed their training."""
    said: list[str] = []
    if running:
        keep = "keeps" if len(running) == 1 else "keep"
        said.append(f"{_jobs(len(running))} {keep} running ({_named(running)}) and "
                    f"{'is' if len(running) == 1 else 'are'} picked up when jupyter lab starts again")
    if queued:
        start = "starts" if len(queued) == 1 else "start"
        said.append(f"{_jobs(len(queued), 'queued ')} ({_named(queued)}) {start} only "
                    + ("then" if running else "when jupyter lab starts again"))
    return f"jupyter_sched: {'; '.join(said)}" if said else ""


def say_what_stop_leaves(sched: Any) -> str:
    """At the server's stop, before its engine stops: say :func:`stop_leaves_text` of its jobs at INFO on the app's
    log (and return it). Said only where this server's engine schedules them — it leads the store (another server's engine on the
    same store carries on), and is no hub server's client (the hub's service runs their jobs). Kernel leases are
    not said: they end with their kernels, which the server shuts down. Never stops the stop: a store that cannot
    answer now is logged, nothing said."""
    services = getattr(sched, "services", None)
    engine = getattr(services, "engine", None)
    if services is None or getattr(sched, "hub_service_url", None) or not getattr(engine, "is_leader", False):
        return ""
    try:
        live = [job for job in services.list_jobs(user=None, state="pending,admitted,running")
                if job.get("kind") != "lease"]
    except Exception as exc:  # the store may be gone already: the stop goes on
        log.warning("jupyter_sched: could not say which jobs keep running after this stop: %s", exc)
        return ""
    live.sort(key=lambda job: str(job.get("submitted_at") or ""))
    text = stop_leaves_text([job for job in live if job.get("state") != "pending"],
                            [job for job in live if job.get("state") == "pending"])
    if text:  # on the app's log: the package's module loggers say WARNINGs only (log_route)
        (getattr(sched, "log", None) or log).info("%s", text)
    return text
