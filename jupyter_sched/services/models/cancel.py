"""Request and response models of the bulk cancel (``POST jobs/cancel``).

One request cancels named jobs (``ids``), all of the caller's (``mine``) or everyone's (``all``,
admins only), each optionally narrowed to some ``states``; the answer says what happened to each
job and counts the outcomes. ``jupyter-sched cancel --mine`` sent one ``DELETE jobs/{id}`` per
job (~20 ms of server time each: clearing 1,000 pending jobs took about 20 s, issue 20 F2).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from ...textsafe import CONTROL_CHARACTER
from .base import RequestModel, ResponseModel, dump_set
from .jobs import JobStateName, ReclaimCooldown

__all__ = ["CANCEL_OUTCOMES", "MAX_CANCEL_IDS", "CancelJobsRequest", "CancelJobsResponse", "CancelOutcome",
           "CancelledJob", "LiveStateName"]

MAX_CANCEL_IDS = 10_000
"""Most ids one ``POST jobs/cancel`` names (``mine`` / ``all`` have no bound: they select on the server)."""

LiveStateName = Literal["pending", "preempted", "admitted", "running"]
"""States of work that can be cancelled (``pending``/``preempted`` wait; ``admitted``/``running`` hold GPUs)."""

CancelOutcome = Literal["removed", "released", "stopping", "ended", "skipped", "refused", "not_found"]
CANCEL_OUTCOMES: tuple[str, ...] = ("removed", "released", "stopping", "ended", "skipped", "refused", "not_found")
"""What a bulk cancel did to one job: ``removed`` (it waited; taken off the queue, now cancelled),
``released`` (a lease; its GPUs are free), ``stopping`` (it held GPUs; stopped after the grace,
then cancelled — also when a stop was already requested), ``ended`` (it had ended already:
nothing to do), ``skipped`` (its state is not one of ``states``: left alone), ``refused`` (another
user's live job or lease — the shared queue shows it — which only its owner or an admin may
cancel; audited, and said in ``message`` as ``DELETE jobs/{id}`` says it: new user 14, N7),
``not_found`` (no such job, or another user's that has ended — audited too)."""

def _no_control(value: str) -> str:
    """An id holds no control character (red team 20, R3: ``"j-a\\u0000b"`` reached PostgreSQL, which
    cannot store NUL, and the bulk cancel was answered 503 as if the database were down)."""
    if CONTROL_CHARACTER.search(value):
        raise ValueError("must not contain control characters (NUL, newline, …): an id looks like j-01hf3k2m9-x7q4za")
    return value

JobId = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(_no_control)]


class CancelJobsRequest(RequestModel):
    """``POST jobs/cancel``: exactly one of ``ids``, ``mine`` or ``all``."""

    ids: list[JobId] | None = Field(
        default=None, min_length=1, max_length=MAX_CANCEL_IDS, examples=[["j-01hf3k2m9-x7q4za"]],
        description=f"these jobs or leases (at most {MAX_CANCEL_IDS}); another user's is answered refused "
                    "(live) or not_found (ended) unless the caller is an admin")
    mine: bool = Field(default=False, description="every job of the caller in one of states (kernel leases are "
                                                  "left alone: a notebook releases its GPUs with %gpu release)")
    all: bool = Field(default=False, description="admins only: every user's jobs in one of states (leases left alone)")
    states: list[LiveStateName] | None = Field(
        default=None, min_length=1, examples=[["pending", "preempted"]],
        description="only jobs in one of these states (default: all four); a named job in another is skipped")


class CancelledJob(ResponseModel):
    """What the bulk cancel did to one job."""

    id: str
    outcome: CancelOutcome
    was: JobStateName | None = Field(description="its state before (null when not_found)")
    state: JobStateName | None = Field(description="its state now (stopping jobs still read admitted or running "
                                                   "until they stop)")
    message: str | None = Field(default=None, description=(
        "refused and not_found: why, in the words of DELETE jobs/{id}'s refusal (its 403 for refused, e.g. 'j-… is "
        "another user's job: you may cancel only your own'; its 404 for not_found); null otherwise"))
    reclaim_cooldown: ReclaimCooldown | None = Field(default=None, description=(
        "as DELETE jobs/{id}'s answer says it: this work, ended by this request, took GPUs back from other teams by "
        "reclaim and ended before the reclaim cool-down, so its team's reclaims of other teams' borrowed GPUs wait "
        "until 'until' (c.SchedApp.reclaim_cooldown_s); absent otherwise (s38)"))


class CancelJobsResponse(ResponseModel):
    """Every selected job's outcome, in the order named (``ids``) or submitted (``mine``/``all``)."""

    cancelled: int = Field(description="jobs cancelled by this request: removed + released + stopping")
    counts: dict[CancelOutcome, int] = Field(description="jobs by outcome (every outcome, 0 included)")
    jobs: list[CancelledJob]
    grace_s: float = Field(description="seconds a stopping job gets between SIGTERM and SIGKILL")

    to_wire = dump_set
    """Every field it was built with: a job's ``reclaim_cooldown`` only where it has one."""
