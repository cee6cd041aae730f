"""Request and response models of cordoning a node for maintenance (``POST nodes/{node}/cordon``,
``POST nodes/{node}/uncordon``; hubadmin24).

A cordoned node gets no new work (jobs, leases, backfill); what runs there runs on to its own end,
or — a *drain*, ``evict_after_s`` — until that many seconds from now, when it is stopped with the
normal grace and checkpoint signal and requeued (a lease ends). Slurm's ``scontrol update
nodename=X state=drain reason=…``, ``kubectl cordon`` / ``kubectl drain``
(:mod:`jupyter_sched.services.nodes`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import RequestModel, ResponseModel

__all__ = ["CordonNodeRequest", "CordonNodeResponse", "NodeCordon", "NodeWork", "UncordonNodeRequest"]

MAX_REASON_CHARS = 300
"""Longest cordon reason (it is said in every waiting job's reason and the inventory)."""
MAX_EVICT_AFTER_S = 30 * 86400
"""Longest ``evict_after_s``: 30 days."""


class CordonNodeRequest(RequestModel):
    """``POST nodes/{node}/cordon``: place no new work on the node; with ``evict_after_s``, drain it."""

    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS, examples=["PSU swap, back by 18:00"],
                        description="why, said to users whose jobs wait for the node and in the inventory")
    evict_after_s: float | None = Field(
        default=None, ge=0, le=MAX_EVICT_AFTER_S, examples=[7200],
        description="drain: the work still on the node is stopped this many seconds from now (normal grace and "
                    "checkpoint signal; jobs are requeued, leases end); null: it runs to its own end or time limit")
    dry_run: bool = Field(default=False, description="answer what would happen to the work on the node; change and "
                                                     "audit nothing")


class UncordonNodeRequest(RequestModel):
    """``POST nodes/{node}/uncordon``: new work may be placed on the node again."""

    dry_run: bool = Field(default=False, description="answer what would change; change and audit nothing")


class NodeCordon(ResponseModel):
    """A node's maintenance cordon."""

    reason: str
    by: str = Field(description="the admin who cordoned it")
    at: str = Field(description="when (UTC, ISO 8601)")
    evict_at: str | None = Field(description="when the work still on it is stopped (a drain); null: it runs to its end")
    text: str = Field(description="the same in one sentence, as pending reasons and the inventory say it")


class NodeWork(ResponseModel):
    """A job or lease holding GPUs on the node, and what the cordon does to it."""

    id: str
    kind: Literal["job", "lease"]
    user: str
    state: str
    gpus: float = Field(description="GPUs it holds on the node")
    fate: str = Field(description="what happens to it, e.g. 'runs on to its end (time limit 18:00 UTC)' or "
                                  "'stopped at 17:40 UTC (grace 60s, checkpoint signal), then requeued'")


class CordonNodeResponse(ResponseModel):
    """The node's cordon after the request (or, ``dry_run``, as it would be) and the work on it."""

    node: str
    cordoned: bool = Field(description="new work is kept off the node")
    cordon: NodeCordon | None = Field(description="the cordon in force (null: none)")
    previous: NodeCordon | None = Field(default=None, description="the cordon this request replaced or lifted")
    dry_run: bool
    changed: bool = Field(description="false: the node was already in this state (nothing written nor audited)")
    work: list[NodeWork] = Field(description="running work on the node")
    text: str = Field(description="what was done (or would be), one sentence or two")
