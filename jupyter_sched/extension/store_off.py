"""A store that fails at start leaves JupyterLab up with the scheduler OFF, and says so (newuser41 N3, n4).

A full disk, a read-only store folder or one this account cannot write stopped the whole ``jupyter lab`` (a
"bad configuration" line blaming ``c.SchedApp.db_url`` the user never set) or half-started the scheduler (three
tracebacks, then ``status`` said all is well and ``submit`` said "retry"). Now, embedded:

- one ERROR line names the cause (ENOSPC / EROFS / EACCES, the path, the free bytes) and the fix, no traceback;
- every ``api/sched/`` request is answered 503 ``scheduler_off`` with that cause and fix
  (:class:`~jupyter_sched.errors.SchedulerOffError`, raised by the handlers' first step,
  :func:`.stopping.refuse_if_stopping`): ``jupyter-sched status``/``submit``, the panel and the magics say the
  scheduler is not running and why, and retrying is not offered;
- ``jupyter-sched serve`` (the hub service: nothing to serve without its store) exits non-zero with the line.
"""

from __future__ import annotations

from typing import Any

from ..errors import SchedError, SchedulerOffError, StoreError
from ..store.start_failure import start_failure

__all__ = ["OFF_LINE", "go_off", "off_error_of", "start_or_go_off"]

OFF_LINE = "jupyter_sched: the scheduler is not running (JupyterLab runs on without it): %s"
"""The one ERROR line of a store that failed at start (``%s``: the cause and ``Fix: …``)."""


def off_error_of(app: Any, exc: BaseException, *, opened: bool) -> SchedulerOffError | None:
    """The :class:`SchedulerOffError` for ``exc``, the failure of ``app``'s store at start; None when its
    cause is not the store's folder or disk and the store never opened (``opened`` false: a bad URL or a
    server that does not answer stays a configuration error). Once the store opened, any store failure of
    the start is one: the engine cannot run on it."""
    found = start_failure(app.store_url, exc, url_set=bool(app.db_url))
    if found is not None:
        cause, fix = found
    elif opened and isinstance(exc, StoreError):
        cause, fix = f"its store failed at start: {exc.message}", "see the server log, then restart the server"
    else:
        return None
    return SchedulerOffError(f"the scheduler is not running: {cause}", hint=f"{fix}; then restart the server")


def go_off(app: Any, off: SchedulerOffError) -> None:
    """Say ``off`` once at ERROR (no traceback) and answer every request with it from now on. The hub's
    service (``jupyter-sched serve``: no JupyterLab to keep, nothing to serve without its store) ends instead.

    Raises:
        SystemExit: the hub's service (exit status 1)."""
    app.off_error = off
    said = f"{off.message.removeprefix('the scheduler is not running: ')}. Fix: {off.hint}"
    if not getattr(app, "owns_kernels", True):
        app.log.error("jupyter-sched serve: not starting, the scheduler cannot run: %s", said)
        raise SystemExit(1)
    app.log.error(OFF_LINE, said)


async def start_or_go_off(app: Any) -> bool:
    """Start ``app``'s services; True when they run. A store failure of the start (a full disk) turns the
    scheduler off instead (:func:`go_off`, its services stopped, no traceback) and answers False; any other
    failure is raised as before."""
    import contextlib

    try:
        await app.services.start()
    except SchedError as err:
        if (off := off_error_of(app, err, opened=True)) is None:
            raise
        go_off(app, off)
        with contextlib.suppress(Exception):  # what did start stops; the store is closed
            await app.services.stop()
        return False
    return True
