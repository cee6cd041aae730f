"""The jupyter_server extension: ``SchedApp``, the REST route table under ``api/sched/``, push events.

``SchedApp`` and ``API_PREFIX`` load on first use (PEP 562): the package's lean modules (the host's
scheduler registry, :mod:`.host_schedulers`, which ``jupyter-sched doctor`` reads) import without
jupyter_server — newuser26 N6: ``doctor`` spent 2.7 s of CPU importing it to look for a hub service.
"""

from __future__ import annotations

from typing import Any

__all__ = ["API_PREFIX", "SchedApp"]


def __getattr__(name: str) -> Any:
    """``SchedApp`` / ``API_PREFIX`` from :mod:`.app` (jupyter_server), imported when first asked for.

    Raises:
        AttributeError: another name.
    """
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
