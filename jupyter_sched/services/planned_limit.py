"""``planned_time_limit`` on a pending job that gave no time limit: what it is planned with and stopped at
(newuser28 N8, verify28 V9).

A job that gives no time limit in a queue with a default is planned with that default and stopped there
(case 033; :func:`~jupyter_sched.queues.limits.run_limit`), but its ``time_limit_s`` stays null until its
admission writes the limit in — so nothing said the 30 minutes while it pended. Its answers (submit,
``GET jobs``, ``GET jobs/{id}``, ``GET queue``, ``PATCH jobs/{id}``) now carry ``planned_time_limit``:
``{"seconds": 1800, "source": "queue default", "max_s": 3600, "text": "time limit 30m (queue default; none
given)"}`` (:func:`~jupyter_sched.wording.time_limits.planned_limit_text`), which the CLI, the magics and the
panel show on its line. A limit given, ``0`` in a queue without a maximum, a lease, and work holding GPUs or
ended have none. As public as ``time_limit_s`` (another user's queue line shows it too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Job, JobKind
from ..queues.limits import TimeLimitRule, queue_max, run_limit
from ..wording.time_limits import PLANNED_SOURCES, planned_limit_text

__all__ = ["planned_limit", "with_planned_limit"]


def planned_limit(job: Job, rules: Sequence[TimeLimitRule]) -> dict[str, Any] | None:
    """``planned_time_limit`` of ``job`` under ``rules`` (module doc), None when it has none to say."""
    spec = job.spec
    if spec.time_limit_s is not None or spec.kind is JobKind.LEASE or job.is_lease or job.state.terminal or \
            job.state.holds_gpus or not rules:
        return None
    seconds, source = run_limit(spec, rules)
    wire = PLANNED_SOURCES.get(source)
    if seconds is None or wire is None:
        return None
    return {"seconds": seconds, "source": wire, "max_s": queue_max(spec, rules),
            "text": planned_limit_text(seconds, wire)}


def with_planned_limit(data: dict[str, Any], job: Job, rules: Sequence[TimeLimitRule]) -> None:
    """Put :func:`planned_limit` of ``job`` in its answer dict ``data`` (REST shape); nothing when it has none."""
    planned = planned_limit(job, rules)
    if planned is not None:
        data["planned_time_limit"] = planned
