"""Where a time limit the job did not give comes from, by name (newuser28 N8) — its own module so the CLI's
words (:mod:`jupyter_sched.wording.time_limits`) read it without importing the queues package, whose import
the CLI's start-up cannot afford (tests/onboarding/test_slim_install.py)."""

from __future__ import annotations

__all__ = ["SOURCE_NAMES"]

SOURCE_NAMES = {"queue default; none given": "queue default", "queue max; none given": "queue max",
                "queue max; unlimited asked": "unlimited asked"}
"""Where a limit the job did not give comes from (:func:`~jupyter_sched.queues.limits.run_limit`'s source) → its
short name: a pending job's ``planned_time_limit.source``, and ``JobSpec.time_limit_source`` once admission wrote
the limit in (newuser28 N8). A limit the job gave, or none at all, has none."""
