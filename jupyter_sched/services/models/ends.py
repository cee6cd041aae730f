"""Request and response models of finding and correcting ends jobs claimed while the service was down (red33 R3).

``GET usage/claimed-ends`` lists the settled jobs whose recorded end is suspect (their own ``exit.json``'s claim
with nothing bounding it, or a figure no real end has), each with why and the range the store allows; ``POST
jobs/{job_id}/end`` sets a corrected end in that range, with a reason (:mod:`jupyter_sched.store.claimed_ends`).
Admins only.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from .base import RequestModel, ResponseModel

__all__ = ["ClaimedEnd", "CorrectEndRequest", "CorrectEndResponse", "EndSuspicion", "ListClaimedEndsResponse"]


class EndSuspicion(ResponseModel):
    """One reason an end is suspect."""

    code: str = Field(description="claimed_unbounded, after_settled, in_future, ran_nothing, seen_after_end, "
                                  "reported_after_end or alive_after_end")
    text: str = Field(description="the reason in words")
    at: datetime | None = Field(default=None, description="the time it names (UTC)")


class ClaimedEnd(ResponseModel):
    """A settled job whose end is suspect, and the range a corrected end may take."""

    job_id: str
    user: str
    team: str
    state: str
    gpus: int = Field(description="GPUs it held (all workers)")
    started_at: datetime
    finished_at: datetime = Field(description="the end recorded now")
    settled_at: datetime | None = Field(default=None, description="when the service recorded its end")
    earliest: datetime = Field(description="no corrected end before this: its start and the last sign it ran")
    latest: datetime = Field(description="no corrected end after this: when its end was recorded (or now)")
    suggested: datetime = Field(description="the claimed end kept within earliest..latest")
    gpu_hours: float = Field(description="GPU-hours its usage charges now")
    why: list[EndSuspicion]


class ListClaimedEndsResponse(ResponseModel):
    """``GET usage/claimed-ends``: the suspect ends, newest first."""

    ends: list[ClaimedEnd]
    text: str = Field(description="a summary in words")


class CorrectEndRequest(RequestModel):
    """``POST jobs/{job_id}/end``: set a settled job's end (its usage follows); audited ``end_corrected``."""

    reason: str = Field(min_length=1, max_length=500, examples=["red33 R3: claimed while the service was down"],
                        description="why (kept in the audit record)")
    end: str | None = Field(default=None, max_length=64, examples=["2026-12-06T18:52:10Z"],
                                 description="the corrected end, ISO 8601 with its zone, within the range GET "
                                             "usage/claimed-ends gives; null: the suggested end")


class CorrectEndResponse(ResponseModel):
    """What the correction did."""

    job_id: str
    user: str
    before: datetime
    after: datetime
    gpu_hours_before: float
    gpu_hours_after: float
    usage_rows: int = Field(description="usage intervals closed at the new end")
    text: str
