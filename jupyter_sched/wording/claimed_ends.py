"""How an end a job claimed while the service was down is said (red33 R3's old rows): why it is suspect, and its
correction — for ``jupyter-sched doctor ends`` / ``correct-end`` and ``GET usage/claimed-ends`` / ``POST
jobs/{job_id}/end`` (:mod:`jupyter_sched.store.claimed_ends` finds them and gives the codes and times). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

__all__ = ["end_corrected_sentence", "suspicion_sentence", "utc_time"]


def utc_time(value: datetime) -> str:
    """``2026-12-06 19:43:05 UTC``."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def suspicion_sentence(code: str, *, end: datetime, at: datetime | None = None, detail: str = "") -> str:
    """Why the recorded ``end`` is suspect, for the suspicion ``code`` (``at``: the time it names; ``detail``: the
    audit action of ``alive_after_end``)."""
    named = utc_time(at) if at is not None else "?"
    if code == "claimed_unbounded":
        return ("its end is what its own exit.json said while the service was down, settled before ends were bounded "
                "by when a service last saw it running: only its start bounded it")
    if code == "after_settled":
        return f"it ends at {utc_time(end)}, after the service recorded its end at {named}"
    if code == "in_future":
        return f"it ends at {utc_time(end)}, in the future"
    if code == "ran_nothing":
        return f"it ends at its start ({named}): it ran 0 s"
    if code == "seen_after_end":
        return f"a service saw it running at {named}, after its end"
    if code == "reported_after_end":
        return f"it reported progress at {named}, after its end"
    if code == "alive_after_end":
        return f"the audit log shows it alive at {named} ({detail}), after its end"
    return f"{code} at {named}"


def end_corrected_sentence(*, job_id: str, owner: str, actor: str, before: datetime, after: datetime,
                           gpu_hours_before: float, gpu_hours_after: float, reason: str,
                           beside: Sequence[tuple[str, float, float]] = ()) -> str:
    """The ``end_corrected`` audit record's message (and the answer's ``text``); ``beside``: ``(job id, GPU-hours
    before, after)`` of the shares beside it on its GPUs the correction charged anew (red42 R2)."""
    again = "; ".join(f"{other} {b:.4g} → {a:.4g}" for other, b, a in beside)
    return (f"end of job {job_id} of {owner} corrected by {actor}: {utc_time(before)} → {utc_time(after)} "
            f"({gpu_hours_before:.4g} → {gpu_hours_after:.4g} GPU-hours)"
            + (f"; the shares beside it on its GPUs charged anew over the moved stretch ({again} GPU-hours)"
               if beside else "") + f"; reason: {reason}")
