"""The jupyter_server extension: ``SchedApp``, the REST route table under ``api/sched/``, push events."""

from __future__ import annotations

from .app import API_PREFIX, SchedApp

__all__ = ["API_PREFIX", "SchedApp"]
