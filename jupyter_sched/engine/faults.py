"""One WARNING per distinct fault of a housekeeping task, not one per pass (red team 25, R4).

A sweep or prune that meets the same fault on every pass (a name the database refuses, a folder
it cannot read, the database down) would log a traceback each time: once a second from an engine
hook is ~450 MB of log a day. :class:`FaultLog` says a fault the first time it is met (with its
traceback), then at most once per ``repeat_s`` with how many times it recurred meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..store.outage import unreachable

__all__ = ["FaultLog"]


class FaultLog:
    """Rate-limited warnings keyed by (what failed, exception type, message).

    Args:
        logger: where the warnings go.
        repeat_s: least seconds between two warnings of the same fault (default an hour).
        monotonic: the clock (tests pass their own).
        limit: distinct faults remembered (the oldest is forgotten past it).
    """

    def __init__(self, logger: logging.Logger, *, repeat_s: float = 3600.0,
                 monotonic: Callable[[], float] = time.monotonic, limit: int = 256) -> None:
        self.logger = logger
        self.repeat_s = repeat_s
        self._monotonic = monotonic
        self._limit = limit
        self._seen: dict[tuple[str, str, str], tuple[float, int]] = {}  # key -> (said at, repeats since)
        self._lock = threading.Lock()  # sweeps run in worker threads

    def warn(self, what: str, exc: BaseException) -> bool:
        """Say ``"<what>: <exc>"`` as a WARNING (traceback the first time) unless the same fault was
        said less than ``repeat_s`` ago, or it is the database not answering (:func:`~..store.outage.unreachable`:
        the store's outage line says that once; here at DEBUG); whether it was said."""
        if unreachable(exc):  # the store's outage line says it once, and when it ends (hubadmin25 B6)
            self.logger.debug("%s: %s", what, exc, exc_info=(type(exc), exc, exc.__traceback__))
            return False
        key = (what, type(exc).__name__, str(exc)[:300])
        now = self._monotonic()
        with self._lock:
            said = self._seen.get(key)
            if said is not None and now - said[0] < self.repeat_s:
                self._seen[key] = (said[0], said[1] + 1)
                return False
            self._seen.pop(key, None)
            if len(self._seen) >= self._limit:
                self._seen.pop(next(iter(self._seen)))
            self._seen[key] = (now, 0)
        if said is None:
            self.logger.warning("%s: %s", what, exc, exc_info=(type(exc), exc, exc.__traceback__))
        else:
            self.logger.warning("%s: %s (again; %d more time(s) since it was last said)", what, exc, said[1] + 1)
        return True
