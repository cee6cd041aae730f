"""Can this request ever run here? The core's answer on an empty cluster, memoised per request shape.

A request the core would reject even when nothing else runs (more GPUs per worker than any node
has, a GPU model that is not here, a host without GPUs, case 015) is refused at submit with the
core's reason and its numbers, instead of pending forever. Pure: the decision function is the
core's ``run_cycle`` (injected), the time is passed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..errors import QuotaError, UnschedulableError
from ..model import Inventory, Job, QuotaSet
from ..model.codec import reason_to_dict, spec_to_dict
from ..scheduling.snapshot import CycleResult, Snapshot
from ..wording import reason_in_words, refusal_text, render_reason
from ..wording.reasons import as_clause

__all__ = ["FitCheck"]

_QUOTA_CODES = frozenset({"ExceedsQuota", "BorrowingLimitReached", "BudgetExhausted"})
_IDENTITY_FIELDS = frozenset({"name", "command", "script", "notebook", "working_dir", "env", "kernel_id"})
"""Spec fields the answer does not depend on (left out of the memo key)."""
_MEMO_SIZE = 256


class FitCheck:
    """Raise when the core would reject a job even on an empty cluster.

    Args:
        decide: ``decide(snapshot) -> CycleResult``, the core's cycle with the engine's profile.

    The answer depends on the inventory, the quotas and the request's shape (not its name,
    command or environment), so it is memoised per shape until the inventory object or the quota
    set changes: a burst of identical submits runs the core once.
    """

    def __init__(self, decide: Callable[[Snapshot], CycleResult]) -> None:
        self._decide = decide
        self._memo: dict[str, Any] = {}
        self._basis: tuple[Inventory, QuotaSet] | None = None

    def check(self, job: Job, inventory: Inventory, quotas: QuotaSet, *, now: datetime) -> None:
        """Raise unless ``job`` could run on ``inventory`` under ``quotas`` with nothing else running.

        Raises:
            UnschedulableError: it never fits the inventory (field ``gpus``, ``cpu``, ``memory``
                or ``workers``; ``details.reason`` is the core's reason with numbers).
            QuotaError: the core's reason is a quota one.
        """
        wanted = job.spec.resources.total_gpus
        if wanted > 0 and inventory.gpu_count() == 0 and inventory.source == "kubernetes":
            # Case 027 Z: on a cluster without GPU nodes no pod is created; no executor advice (this is it).
            raise UnschedulableError(
                f"this cluster has no GPU nodes; this job asks for {wanted} GPU{'s' if wanted != 1 else ''}",
                field="gpus", hint="ask an admin to add a GPU node pool, or submit with gpus=0",
                details={"requested": wanted, "capacity": 0})
        if wanted > 0 and inventory.gpu_count() == 0:  # case 015: a host without GPUs refuses at once
            cause = f" ({inventory.nvml.error})" if inventory.nvml is not None and inventory.nvml.error else ""
            raise UnschedulableError(
                f"local executor has 0 GPUs{cause}; this job asks for {wanted}", field="gpus",
                hint="use the Kubernetes executor or a GPU node, or submit with gpus=0",
                details={"requested": wanted, "capacity": 0})
        basis = self._basis
        if basis is None or basis[0] is not inventory or basis[1] != quotas or len(self._memo) > _MEMO_SIZE:
            self._memo.clear()
            self._basis = (inventory, quotas)
        shape = {k: v for k, v in spec_to_dict(job.spec).items() if k not in _IDENTITY_FIELDS}
        key = json.dumps(shape, sort_keys=True, default=str)
        if key in self._memo:
            rejected = self._memo[key]
        else:
            alone = Snapshot(now=now, inventory=inventory, jobs=(job,), quotas=quotas)
            result = self._decide(alone)
            rejected = next((rej.reason for rej in result.rejects if rej.job_id == job.id), None)
            self._memo[key] = rejected
        if rejected is not None:
            cls = QuotaError if rejected.code in _QUOTA_CODES else UnschedulableError
            field = rejected.details.get("field", "gpus")  # cpu, memory or workers for host-size reasons
            reason = _with_words(reason_to_dict(rejected))
            # the words the magics and the CLI give for this reason, not the core's own (new user 13,
            # N6: "asks for 204800 MiB per GPU" here, "200 GiB" in the magic and in details.reason)
            message, hint = refusal_text(rejected.message, rejected.unblock or None, {"reason": reason})
            raise cls(as_clause(message), field=field, hint=as_clause(hint) if hint else None,
                      details={"reason": reason})


def _with_words(reason: dict[str, Any] | None) -> dict[str, Any] | None:
    """The refusal's reason with its sentences (``text``), as every reason the API answers has them;
    a refusal is never "queued" and has no ETA (issue 20)."""
    if reason is None:
        return None
    return reason_in_words(reason, render_reason(reason, never=True))
