"""The drain of the node a job runs on, on the job's own answer (hubadmin26 B1).

``jupyter-sched nodes drain NODE --evict-after 1m``: the owner of work on NODE read "ends by 21:36 UTC (in
2h59m)" on its line until it was stopped a minute later — only the general ``status`` named the node. Every
answer of work that holds GPUs on a node drained with a deadline now carries ``drain``: ``{node, by, reason,
evict_at, text}`` (:func:`~jupyter_sched.wording.cordons.drain_dict`), which the CLI (``jobs``, ``status
JOB``), the magics and the panel show in one wording, in place of "ends by" when the stop comes first.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..model import Job
from ..model.job import work_noun
from ..model.resources import Cordon
from ..wording.cordons import drain_dict

__all__ = ["drain_under", "with_drain"]


def drain_under(job: Job, drained: Mapping[str, Cordon] | None) -> tuple[str, Cordon] | None:
    """``(node, cordon)`` of the first drained node ``job``'s work holds GPUs on, None when none (or
    ``drained`` is None: the inventory could not be read now)."""
    if not drained or not job.state.holds_gpus or job.allocation is None:
        return None
    for node, _ in job.allocation.per_worker():
        if node in drained:
            return node, drained[node]
    return None


def with_drain(data: dict[str, Any], job: Job, found: tuple[str, Cordon] | None, now: datetime) -> None:
    """``drain`` on a job answer ``data`` whose work runs on a drained node (module doc); left out when none."""
    if found is not None:
        data["drain"] = drain_dict(found[0], found[1], work_noun(job.spec), now=now)
