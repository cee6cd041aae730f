"""A job definition's schedule in words, as the CLI and the magics both say it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["schedule_text"]


def schedule_text(definition: Mapping[str, Any], *, run: str) -> str:
    """``At 12:00 on Monday through Friday (Europe/Berlin)``; for a definition with no schedule,
    ``no schedule: runs only with RUN`` (``run``: how this surface starts a run of it, e.g.
    ``jupyter-sched definitions run d2``) — no time zone and no next firing for something that
    never fires (new user 13, N20: ``no schedule (run now only) (UTC)  next -``)."""
    when = definition.get("schedule_description") or definition.get("schedule")
    if not when:
        return f"no schedule: runs only with {run}"
    return f"{when} ({definition.get('timezone') or 'UTC'})"
