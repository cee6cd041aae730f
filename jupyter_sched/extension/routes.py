"""THE route table of ``{base_url}api/sched/``, put together in one place.

:data:`ROUTES` is the scheduler's routes (:data:`.handlers.HANDLERS`), those of job definitions and kept
notebooks (:data:`.definitions_web.DEFINITION_HANDLERS`), a running job's progress reports
(:data:`.progress_web.PROGRESS_HANDLERS`) and a lease's heartbeat (:data:`.heartbeat_web.HEARTBEAT_HANDLERS`), in
that order (the first match wins). The extension serves them (``SchedApp.routes``) and a hub user's server
forwards exactly them (:func:`jupyter_sched.hub.forward.route_patterns`).
"""

from __future__ import annotations

from .definitions_web import DEFINITION_HANDLERS
from .handlers import HANDLERS, UnknownRouteHandler
from .heartbeat_web import HEARTBEAT_HANDLERS
from .progress_web import PROGRESS_HANDLERS
from .web import SchedHandler

__all__ = ["ROUTES", "UnknownRouteHandler"]

ROUTES: tuple[tuple[str, type[SchedHandler]], ...] = (*HANDLERS, *DEFINITION_HANDLERS, *PROGRESS_HANDLERS,
                                                      *HEARTBEAT_HANDLERS)
"""Every route under ``api/sched/``, relative to it (openapi.yaml mirrors them; a test checks)."""
