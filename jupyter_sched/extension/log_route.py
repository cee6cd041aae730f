"""The package's module loggers write through the server's log (hubadmin23 A1).

Modules log with ``logging.getLogger(__name__)`` (``jupyter_sched.hub.membership``, …). Jupyter
configures only its applications' own loggers (``ServerApp``, ``SchedApp``/``HubSchedApp``: a
handler with the ``[W 2026-12-05 08:31:40.511 HubSchedApp]`` prefix, ``propagate`` off) and leaves the
root logger without a handler, so those modules' WARNINGs reached the service log through Python's
last-resort handler: bare lines with no level, no time and no app, missed by ``grep '\\[W'`` and by a
journald level filter (``team_left``, ``owner_removed``, the idle-policy and activity warnings, …).

:func:`route_package_log` puts one handler on the ``jupyter_sched`` logger that hands each record to
the app log's own handlers, named as the app, so every line has the same prefix. It is installed once
per process and follows the latest app (tests build many); levels are not changed (the ``jupyter_sched``
logger's effective level stays the root's, WARNING by default). Handlers already on the root logger
(an admin's own logging config, pytest's capture) still get the records as before.
"""

from __future__ import annotations

import logging

__all__ = ["PACKAGE_LOGGER", "route_package_log"]

PACKAGE_LOGGER = "jupyter_sched"
"""The logger every module logger of the package is a child of."""


class _ToAppLog(logging.Handler):
    """Hands records to the handlers of :attr:`target` (the app's logger), renamed as it."""

    def __init__(self) -> None:
        super().__init__()
        self.target: logging.Logger | None = None

    def emit(self, record: logging.LogRecord) -> None:
        target = self.target
        if target is None or not target.isEnabledFor(record.levelno):
            return
        copy = logging.makeLogRecord(record.__dict__)
        copy.name = target.name
        rooted = logging.getLogger().handlers  # the record reaches those by propagation already: never twice
        for handler in target.handlers:
            if copy.levelno >= handler.level and handler not in rooted:
                handler.handle(copy)


_ROUTE = _ToAppLog()


def route_package_log(app_log: logging.Logger | logging.LoggerAdapter[logging.Logger]) -> None:
    """Send the ``jupyter_sched.*`` module loggers' records to ``app_log``'s handlers from now on.

    Args:
        app_log: the extension app's ``log`` (a logger with its own handlers, or an adapter of one).
            A logger without handlers of its own (its records propagate elsewhere), or the root
            logger, is not a target: the module loggers propagate there already; a handler that is
            also the root logger's is skipped (no line twice).
    """
    target = app_log.logger if isinstance(app_log, logging.LoggerAdapter) else app_log
    if not target.handlers or target is logging.getLogger() or target.name == PACKAGE_LOGGER \
            or target.name.startswith(PACKAGE_LOGGER + "."):
        return
    from .request_log import escape_log_controls

    escape_log_controls(target)  # the app log's lines, as the server's: controls escaped, floods once a minute (red40 R2b)
    _ROUTE.target = target
    package = logging.getLogger(PACKAGE_LOGGER)
    if _ROUTE not in package.handlers:
        package.addHandler(_ROUTE)
