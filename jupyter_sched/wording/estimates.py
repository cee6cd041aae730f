"""Where a learnt runtime came from, in words — the one place for them (new user 11, N15).

A running job's expected end comes from its time limit, or is learnt
(:class:`~jupyter_sched.backfill.history.RuntimeHistory`) from one of three sources, and the words
of an ETA that rests on it say which:

* ``"same"``: past runs of the same user, program and request — "as long as similar past runs did";
* ``"other"``: its user's runs of *other* programs, read as fractions of their time limits (a first
  run of new work) — "at ~12 % of its time limit, as its owner's other runs did". Saying "similar
  past runs" there was untrue: eve's ``sleep 200`` was predicted from her 1-second ``echo`` jobs;
* ``"population"``: everybody's runs of the same size (a running job of a user with no finished
  run, session 14) — "at ~45 % of its time limit, as other users' runs of its size did";
* ``"population_gpus"``: everybody's GPU runs of any size under time limits like its own (where no run of
  its size is known) — "at ~45 % of its time limit, as other users' GPU runs under similar time limits
  did". Until session 25 that last class held every run, 0-GPU sleeps included, and still said "of its
  size" (hubadmin25 B11).

The core keeps the source with each estimate (``Snapshot.runtime_sources``, the reason's
``details.eta_learned_other``, ``eta_learned_population`` and ``eta_learned_gpu_runs``); the clauses below are written here for the ETA line the panel,
the magics and the CLI show (:func:`~jupyter_sched.wording.reasons.eta_sentence`) and for the
re-estimate notes the core keeps with an ETA's move records. Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..model.units import format_duration

FAIR_LISTED = 3  # a line names three: more would crowd it
"""At most this many of the later teammates' jobs that go first by the fair order are named on a job's line
(``details.eta_fair_ahead.jobs``: :func:`jupyter_sched.scheduling.eta._fair_ahead`); the rest are counted."""

__all__ = ["FAIR_LISTED", "OTHER_RUNS", "POPULATION_GPU_RUNS", "POPULATION_RUNS", "SAME_RUNS", "WITHHELD_RUNS", "done_text", "learnt_condition",
           "min_runtime_clause",
           "progress_clause", "progress_lapse_clause", "progress_limit_clause",
           "ran_past_note", "share_text"]

SAME_RUNS = "same"
"""A learnt end's source: similar past runs (the wire's value, as ``backfill.history.SAME_RUNS``)."""
OTHER_RUNS = "other"
"""A learnt end's source: its user's runs of other programs (``backfill.history.OTHER_RUNS``)."""
POPULATION_RUNS = "population"
"""A learnt end's source: everybody's runs of its size (``backfill.history.POPULATION_RUNS``)."""
POPULATION_GPU_RUNS = "population_gpus"
"""A learnt end's source: everybody's GPU runs of any size under time limits like its own
(``backfill.history.POPULATION_GPU_RUNS``)."""
_POPULATION_WHOSE = {POPULATION_RUNS: "other users' runs of {its} size",
                     POPULATION_GPU_RUNS: "other users' GPU runs under similar time limits"}
WITHHELD_RUNS = "withheld"
"""Not a source but how one is said to a reader who may not see it: another user's job's end learnt
from its owner's past runs is that user's history (red team 22, R2 caveat: "at ~12 % of its time
limit, as its owner's other runs did" told every reader of the queue how ann's other jobs ran), so
it is said "as estimated from past runs", with no figure and no whose
(:func:`jupyter_sched.services.withheld.reason_for`)."""


def share_text(share: float | None) -> str:
    """``~12 %`` of a time limit (``share`` 0-1); ``under 1 %``; "" when not known."""
    if share is None or not math.isfinite(share) or share < 0:
        return ""
    pct = share * 100
    return "under 1 %" if pct < 1 else f"~{min(round(pct), 100)} %"


def done_text(fraction: float) -> str:
    """``40 % done`` (``fraction`` 0-1, rounded down: a job never reads as done before it is);
    ``under 1 % done``."""
    pct = max(0.0, min(fraction, 1.0)) * 100 if math.isfinite(fraction) else 0.0
    return "under 1 % done" if pct < 1 else f"{math.floor(pct)} % done"


def progress_clause(reported: Sequence[tuple[str, float | None] | tuple[str, float | None, str]], *,
                    every: bool) -> str:
    """The words of an ETA whose running jobs' ends came from their own progress reports (issue 16
    item 4; ``details.eta_progress``): ``from its progress (40 % done, reported 05:08:30 UTC)`` when
    ``every`` job the ETA named reported and there is one; ``from their progress (a 40 % done, reported
    05:08:30 UTC; b 70 % done, reported 05:08:12 UTC)`` for several; ``a from its progress (…)`` / ``a and
    b from their progress (...)`` when only some did (``reported``: ``(name, fraction[, clock of the
    report])`` in the ETA's order). The report's clock says which report the ETA read: the blocker's
    own line shows its latest, which may be newer (new user 22, N10: "30 % done" beside "40 % done").
    A fraction None is another user's the reader may not see (red team 22, R2): ``from its reported
    progress``; of several, those are named after the others: ``a from its progress (40 % done, …), b
    from its reported progress``."""
    if not reported:
        return ""
    shown = [row for row in reported if row[1] is not None]
    if len(shown) < len(reported):
        hidden = [row[0] for row in reported if row[1] is None]
        said_hidden = (f"{'' if every and not shown else _and(hidden) + ' '}from "
                       f"{'its' if len(hidden) == 1 else 'their'} reported progress")
        return ", ".join(part for part in (progress_clause(shown, every=False), said_hidden) if part)

    def said(row: tuple[str, float | None] | tuple[str, float | None, str]) -> str:
        at = row[2] if len(row) > 2 else ""
        return f"{done_text(row[1] or 0.0)}{f', reported {at}' if at else ''}"

    if len(reported) == 1:
        return f"{'' if every else reported[0][0] + ' '}from its progress ({said(reported[0])})"
    names = [row[0] for row in reported]
    who = "" if every else (", ".join(names[:-1]) + f" and {names[-1]} ")
    sep = "; " if any(len(row) > 2 and row[2] for row in reported) else ", "
    return f"{who}from their progress ({sep.join(f'{row[0]} {said(row)}' for row in reported)})"


def _and(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def progress_limit_clause(fraction: float, needs_s: float, limit_s: float, *, at: str = "") -> str:
    """The words of an ETA whose running job's time limit stops it before its progress ends it (new user
    21, N7; ``details.eta_progress_capped``), after the job's name: ``reaches its 2m time limit (its
    progress, 10 % done, says it needs ~6m40s in all)`` (``needs_s``, ``limit_s``: seconds); with ``at``,
    the clock of the report read: ``(its progress report of 05:19:20 UTC, 10 % done, says …)`` (new user
    22, N10). The ETA is the limit's: the progress is said as why the job will not finish, never as
    where the time came from."""
    said = f"its progress report of {at}" if at else "its progress"
    return (f"reaches its {format_duration(limit_s)} time limit ({said}, {done_text(fraction)}, "
            f"says it needs ~{format_duration(needs_s)} in all)")


def progress_lapse_clause(name: str, fraction: float, lapse: str, said: str, at: str) -> str:
    """Why an ETA no longer reads a running job's progress report (new user 21, N4;
    ``details.eta_progress_lapsed``): ``"late"``: ``name's progress (90 % done at 01:59 UTC) said it
    would end at 01:59 UTC: it is late, so this ETA no longer reads it``; ``"stale"``: ``name has not
    reported its progress since 01:59 UTC (90 % done), so this ETA no longer reads it`` (``said``, ``at``:
    the clock texts of the end it said and of its last report)."""
    if lapse == "late":
        return (f"{name}'s progress ({done_text(fraction)}{' at ' + at if at else ''}) said it would end at {said}: "
                "it is late, so this ETA no longer reads it")
    return (f"{name} has not reported its progress since {at or 'its last report'} ({done_text(fraction)}), "
            "so this ETA no longer reads it")


def _owner(yours: bool) -> str:
    return "your" if yours else "its owner's"


def learnt_condition(subject: str, source: str, *, share: float | None = None, plural: bool = False,
                     yours: bool = False) -> str:
    """The condition an ETA from a learnt end holds on, after "if": ``it runs as long as similar
    past runs did`` (``source`` ``"same"``; ``j-1 and j-2 run …`` with ``plural``) or ``it ends at
    ~12 % of its time limit, as its owner's other runs did`` (``"other"``; ``your other runs`` when
    ``yours``: the reader owns that job); ``it ends as estimated from past runs`` (:data:`WITHHELD_RUNS`:
    another user's history the reader may not see)."""
    ends, limit, its = ("end", "their time limits", "their") if plural else ("ends", "its time limit", "its")
    if source == WITHHELD_RUNS:
        return f"{subject} {ends} as estimated from past runs"
    if source in _POPULATION_WHOSE:
        at, whose = share_text(share), _POPULATION_WHOSE[source].format(its=its)
        if not at:
            return f"{subject} {ends} as early as {whose} suggest"
        return f"{subject} {ends} at {at} of {limit}, as {whose} did"
    if source == OTHER_RUNS:
        at = share_text(share)
        owner = _owner(yours) if not plural or yours else "their owners'"
        if not at:
            return f"{subject} {ends} as early as {owner} other runs suggest"
        return f"{subject} {ends} at {at} of {limit}, as {owner} other runs did"
    return f"{subject} {'run' if plural else 'runs'} as long as similar past runs did"


def ran_past_note(job_id: str, guess_s: float, source: str, *, limit_s: float | None = None,
                  then_limit: bool = False, unbounded: bool = False) -> str:
    """The note of a running job that outran its learnt end: ``j-1 ran longer than the ~20s that
    similar past runs took`` / ``j-1 ran longer than ~20s (its owner's other runs ended at ~12 % of
    their time limits)``; ``then_limit``: it is past the guess itself, so it is now expected to run
    to its limit (``, so it is now expected to run to its 3m time limit``), else it ran past the
    typical run and its end moves on (``has run longer``); ``unbounded``: it is past the guess and has no
    time limit, so nothing says when it ends (``, and it has no time limit, so its end is unknown``: verify
    30, V6 — it was said to stop "within the 1m grace period: it ran past its 5s time limit", a limit it never
    had). ``source`` :data:`WITHHELD_RUNS`: the same
    note with no learnt figure and no whose runs (``j-1 ran longer than its estimate from past runs``),
    for a reader who may not see its owner's history (red team 22, R2 caveat)."""
    verb = "ran" if then_limit or unbounded else "has run"
    if source == WITHHELD_RUNS:
        text = f"{job_id} {verb} longer than its estimate from past runs"
    elif source == OTHER_RUNS or source in _POPULATION_WHOSE:
        whose = "its owner's other runs" if source == OTHER_RUNS else _POPULATION_WHOSE[source].format(its="its")
        at = share_text(guess_s / limit_s if limit_s else None)
        told = f" ({whose} ended at {at} of their time limits)" if at else f" (what {whose} suggested)"
        text = f"{job_id} {verb} longer than ~{format_duration(guess_s)}{told}"
    else:
        text = f"{job_id} {verb} longer than the ~{format_duration(guess_s)} that similar past runs took"
    if then_limit and limit_s is not None:
        text += f", so it is now expected to run to its {format_duration(limit_s)} time limit"
    elif unbounded:
        text += ", and it has no time limit, so its end is unknown"
    return text


def min_runtime_clause(rule: Mapping[str, Any], named: Sequence[str]) -> str:
    """``then lowml (j-1), low priority of the same team, has run 5 min (the minimum runtime) and is
    preempted for it`` — what an ETA that is the end of its victims' minimum runtime waits for
    (``details.eta_code == "MinRuntime"``; ``rule``: the reason's ``details.preemption_rule``,
    ``named``: the protected jobs as the reason names them); new user 20, N18: "ETA 23:06, when lowml
    ends" for a job that preempted lowml at 23:01. "" when ``named`` is empty."""
    if not named:
        return ""
    one = len(named) == 1
    who = named[0] if one else (", ".join(named[:2]) + f" and {len(named) - 2} more" if len(named) > 3
                                else ", ".join(named[:-1]) + f" and {named[-1]}")
    classes = [str(c) for c in rule.get("priorities") or () if isinstance(c, str)]
    whose = "of the same team" if rule.get("same_team") else "of another team"
    desc = f"{' or '.join(classes)} priority {whose}" if classes else whose
    limit = rule.get("min_runtime_s")
    span = "" if not isinstance(limit, (int, float)) or isinstance(limit, bool) or not math.isfinite(limit) \
        or limit <= 0 else f"{limit / 60:g} min" if limit >= 60 else f"{limit:g} s"  # as the core's refusal says it
    verb = "reclaimed" if rule.get("evicted_as") == "reclaimed" else "preempted"
    ran = f"run {span} (the minimum runtime)" if span else "run the minimum runtime"
    return (f"then {who}, {desc}, {'has' if one else 'have'} {ran} and "
            f"{'is' if one else 'are'} {verb} for it")
