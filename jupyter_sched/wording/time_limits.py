"""The time limit a job that gave none is planned with and stopped at, in words (newuser28 N8, verify28 V9).

A job that gives no time limit in a queue with a default (``c.SchedApp.time_limits``) is planned with it and
stopped there (:func:`~jupyter_sched.queues.limits.run_limit`); the engine writes it into the job only at its
admission. While it pends, its answers carry ``planned_time_limit`` (seconds, source, the queue's maximum and
``text``, from :func:`planned_limit_text`), the submit answer a note (:func:`planned_limit_note`), and every
surface says ``time limit 30m (queue default; none given)`` — the CLI's ``status``, ``queue`` and ``jobs``
lines, the magics' tables and the panel (the server's ``text``), as case 033 words it. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.limit_sources import SOURCE_NAMES
from ..model.units import format_duration

__all__ = ["PLANNED_SOURCES", "limit_source_words", "planned_limit_line", "planned_limit_note", "planned_limit_text",
           "stopped_limit_text"]

PLANNED_SOURCES = SOURCE_NAMES
"""Where a pending job's planned limit comes from (:func:`~jupyter_sched.queues.limits.run_limit`'s source) →
its name on the wire (``planned_time_limit.source``, ``time_limit_source``). A limit the job gave, or none at
all, is not planned here."""

_WORDS = {"queue default": "queue default; none given", "queue max": "queue maximum; none given",
          "unlimited asked": "queue maximum; 0 = unlimited asked"}


def limit_source_words(source: Any) -> str:
    """``queue default; none given`` for a ``source`` name (:data:`PLANNED_SOURCES`' keys or values); "" for
    none or one not known — what a running job's line says after its limit (``its 30m time limit (queue
    default; none given)``)."""
    if not isinstance(source, str):
        return ""
    return _WORDS.get(PLANNED_SOURCES.get(source, source), "")


def stopped_limit_text(seconds: float, source: Any) -> str:
    """The limit a job was stopped at, as its end message, log line and audit say it: ``30s (queue default;
    none given)`` for a limit its queue gave (``source``: ``JobSpec.time_limit_source``), ``4m`` for one the job
    gave (None) — s29-plan Left: "time limit of 30s exceeded" did not say the queue chose it."""
    words = limit_source_words(source)
    return f"{format_duration(seconds)} ({words})" if words else format_duration(seconds)


def planned_limit_text(seconds: float, source: str) -> str:
    """``time limit 30m (queue default; none given)`` — ``source`` as on the wire (:data:`PLANNED_SOURCES`'s
    values: ``queue default``, ``queue max``, ``unlimited asked``) or as the core says it."""
    source = PLANNED_SOURCES.get(source, source)
    return f"time limit {format_duration(seconds)} ({_WORDS.get(source, source)})"


def planned_limit_line(job: Mapping[str, Any]) -> str:
    """The ``planned_time_limit`` text of a job answer that waits with no limit of its own, "" otherwise (a job
    that gave one, or holds GPUs: its ``time_limit_s`` is what its line says)."""
    planned = job.get("planned_time_limit")
    if not isinstance(planned, Mapping) or job.get("time_limit_s") is not None or \
            job.get("state") not in ("pending", "preempted"):
        return ""
    text = planned.get("text")
    return text if isinstance(text, str) else ""


def planned_limit_note(seconds: float, source: str, whose: str, max_s: float | None) -> str | None:
    """The submit note of a job that gave no time limit and is planned with its queue's (``source`` as
    :data:`PLANNED_SOURCES` keys or values; ``whose``: ``team vision's queue``; ``max_s``: that queue's maximum,
    None for none): ``no time limit given: team vision's queue default 30m applies (it is stopped there); its
    maximum is 1h: give a time limit up to that for longer``. None for a source not planned here (``0`` =
    unlimited has its own note)."""
    source = PLANNED_SOURCES.get(source, source)
    said = format_duration(seconds)
    if source == "queue default":
        longer = "" if max_s is not None and max_s <= seconds else (
            f"; its maximum is {format_duration(max_s)}: give a time limit up to that for longer" if max_s is not None
            else "; give a time limit for longer")
        return f"no time limit given: {whose} default {said} applies (it is stopped there){longer}"
    if source == "queue max":
        return f"no time limit given: {whose} maximum {said} applies (it is stopped there)"
    return None
