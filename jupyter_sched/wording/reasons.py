"""A pending reason as sentences: what blocks the job, when it is expected to start, what would help.

Input is a reason as the REST API carries it (:func:`jupyter_sched.model.codec.reason_to_dict`):
``{"code", "message", "details", "unblock", "position", "eta", "eta_reason", "per_flavor"}``.
Output is :class:`ReasonText`, four strings that every surface shows as they are:

* ``summary``: the block, one sentence with its numbers (the core's ``message``; it already names
  teams, models and GPU counts) — ``team ml has 2 of 8 A100 GPUs free (6 in use), job needs 4.``
* ``eta``: ``ETA 19:42 UTC`` (``ETA Mar 3 19:42 UTC`` on another day; `` (in 5m)`` added when the
  caller asks for relative times) or ``ETA unknown: <why>`` — never brackets inside brackets.
* ``unblock``: what would let it start, one sentence; written here where the numbers decide the
  advice (quota: whose cap or which team rule binds; GPU memory per GPU; which models exist), empty
  when it would only repeat the ETA (capacity waits: "it starts when running jobs end" *is* the
  ETA; backoff), else the core's own sentence (e.g. an unhealthy GPU's admin steps).
* ``line``: ``queued #2 · <summary> · <eta> · <unblock>`` for one-line surfaces.

Why the unblock sentence is written here and not taken from the core's ``unblock`` string: the
same block needs different advice depending on its numbers (a user's own cap vs the team's quota,
GPU memory per GPU vs GPU count), and the core's strings were written for one case each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple

from ..model.names import LEASE_NAMES
from ..model.periods import said_to_reader, this_period_text
from ..model.units import clock_text, clocks_said, format_duration, gpus_phrase, relative_text
from .cordons import cordon_wait_sentence
from .estimates import (
    FAIR_LISTED,
    OTHER_RUNS,
    POPULATION_GPU_RUNS,
    POPULATION_RUNS,
    SAME_RUNS,
    WITHHELD_RUNS,
    learnt_condition,
    min_runtime_clause,
    progress_clause,
    progress_lapse_clause,
    progress_limit_clause,
    share_text,
)
from .quota import UNLISTED_SETTING

__all__ = ["clock_times", "held_by_admin_unblock", "held_for_others_wait", "CAPACITY_CODES", "JUST_STARTED", "NOT_AN_ATTEMPT", "QUOTA_CODES", "ReasonText", "ELECTED_NOTE", "as_clause", "code_words", "elected_behind_clause", "elected_clause", "departed_lease_notice", "departed_text",
           "departed_victim_text",
           "eta_sentence", "figure", "held_by_text", "memory_text", "memory_texts", "one_gpu", "owner_holds_text", "own_leases",
           "preempted_how",
           "reason_in_words", "refusal_line", "refusal_text", "unnested",
           "quoted_name", "render_reason", "summary_sentence", "unblock_sentence", "wire_time", "work_named"]

HELD_FOR_OTHERS_WAIT = "it waits until its owner or an admin acts"
"""Why a job held for its owner's standing has no ETA, as any reader but its owner and admins reads it
(:func:`jupyter_sched.services.withheld.held_for_others`): its owner may still act (rejoin the team, cancel)."""
HELD_OWNER_GONE_WAIT = "it waits for an admin"
"""The same where its owner is no longer a hub user (``OwnerRemoved``): the owner cannot act any more, only an
admin can (re-add the user, or cancel the job) — new user 38, n17."""


def held_for_others_wait(code: object) -> str:
    """The ``eta_reason`` ("ETA unknown: <this>") of a hold of ``code`` (``OwnerRemoved``, ``TeamMembership``)
    as a reader other than its owner and admins reads it: who can end the wait — never why it is held."""
    return HELD_OWNER_GONE_WAIT if code == "OwnerRemoved" else HELD_FOR_OTHERS_WAIT


CAPACITY_CODES = frozenset({"WaitingForCapacity", "Priority"})
"""Waits for GPUs held by running work: the ETA (when those jobs end) is the whole answer."""

QUOTA_CODES = frozenset({"ExceedsQuota", "BorrowingLimitReached", "InsufficientQuota", "NoQuota"})


class ReasonText(NamedTuple):
    """A pending reason rendered for people (see the module docstring for each field). A
    NamedTuple, not a dataclass: the CLI imports this on every call (see :class:`.WaitProgress`)."""

    summary: str
    eta: str
    unblock: str
    line: str

    def to_dict(self) -> dict[str, str]:
        """``{"summary", "eta", "unblock", "line"}``: the ``reason.text`` object of the REST API."""
        return {"summary": self.summary, "eta": self.eta, "unblock": self.unblock, "line": self.line}


ELECTED_NOTE = "goes first because it waited past the wait promised when it was queued (elected)"
"""What a job's reason says of the job whose reservation it would delay when that job was elected (issue 16), in
plain words first (newuser30 N4: "(elected: it waited past its promised wait)")."""


def elected_clause(waited_s: float, promised_s: float, factor: float, promised_start: str,
                   floor_s: float = 0.0) -> str:
    """The clause a job elected first in its class says (issue 16: :func:`~jupyter_sched.queues.order.
    elect_overdue`), plain words first and the trade word last (new user 30, N4), e.g. "it goes first: it has
    waited 2h10m, past 0.75 x the 2h50m wait promised when it was queued (start by 2026-12-04T05:50:54Z); jobs
    queued later start ahead of it only if they end before its planned start (elected)". ``promised_s``: the
    wait promised (seconds from queued to ``promised_start``); ``floor_s``: the least wait an election counts
    (:data:`~jupyter_sched.queues.order.OVERDUE_FLOOR_S`) — a shorter promise is said as what it was, and
    the floor as what the wait passed ("past 0.75 x 10m, the least wait that counts; it was promised a start
    by 05:40 UTC, 1m33s after it was queued": new user 29, N2 — "past 0.75 x the 10m wait promised …
    (start by 05:40 UTC)" for a job queued at 05:38:27). ``promised_start``:
    :func:`~jupyter_sched.model.units.said_time` (renderers say it as a clock time)."""
    if promised_s < floor_s:
        past = (f"past {factor:g} x {format_duration(floor_s)}, the least wait that counts; it was promised "
                f"a start by {promised_start}, {format_duration(max(promised_s, 0.0))} after it was queued")
    else:
        past = (f"past {factor:g} x the {format_duration(promised_s)} wait promised when it was queued "
                f"(start by {promised_start})")
    return (f"it goes first: it has waited {format_duration(waited_s)}, {past}; jobs queued later start ahead of "
            "it only if they end before its planned start (elected)")


def barred_clause(user: str, held: float, share: float, total: float, factor: float) -> str:
    """The clause an overdue job says when no election moves it first because its user holds more than an
    equal share of the GPUs while another user's job waits (:func:`~jupyter_sched.queues.order.election_barred`;
    s30-fair2: its line said nothing of why it kept waiting past its promised wait), in plain words and
    without the trade word (the panel's glossary reads "elected" as going first), e.g. "it has waited past
    0.75 x its promised wait but does not go first: ana holds 3 of 4 GPUs, more than an equal share (2),
    while another user's job waits; it keeps its place in the queue's order". GPUs as the core counts
    them (:class:`~jupyter_sched.queues.order.Holdings`)."""
    return (f"it has waited past {factor:g} x its promised wait but does not go first: {user} holds "
            f"{round(held, 3):g} of {gpus_phrase(total)}, more "
            f"than an equal share ({round(share, 2):g}), while another user's job waits; it keeps its place in the "
            "queue's order")


def headroom_clause(team: str, user: str | None, limit_gpus: float, start: str, *, gpus_kept: bool = False) -> str:
    """What a job that its quota line keeps waiting says when the line's room is held for it (newuser36 N1:
    a teammate's later 1-GPU jobs took the team's room one by one as it freed, and the line said only "vision
    would use 5 GPUs"), e.g. "the room under vision's limit of 4 GPUs is kept for it: vision's jobs queued
    after it start first only where they end by 12:07 UTC, when it can start even if the work ahead of it runs to
    its time limits (reservation)" — the basis said, as the ETA beside it may be earlier, from estimates (new user
    38, n14: "… when it can start (reservation) · ETA 10:50 UTC" read as two start times). ``user``: the
    line is that user's cap in ``team``; ``start``: the reservation's time as said; ``gpus_kept``: the GPUs it
    starts on are reserved for it too (s37-eta), "…, when it can start …; so are the GPUs it will start on, from
    every team's jobs queued after it (reservation)"."""
    whose, of = (f"{user}'s cap", f"{user}'s") if user else (f"{team}'s limit", f"{team}'s")
    return (f"the room under {whose} of {gpus_phrase(limit_gpus)} is kept for it: {of} jobs queued after it start "
            f"first only where they end by {start}, when it can start even if the work ahead of it runs to its time "
            "limits"
            + ("; so are the GPUs it will start on, from every team's jobs queued after it" if gpus_kept else "")
            + " (reservation)")


def elected_behind_clause(ahead: str) -> str:
    """What an elected job says when it goes after ``ahead`` (a job id), elected too, which an elected job of
    its own user already passed (:func:`~jupyter_sched.queues.order.elected_order`; new user 29, N2: each of
    one user's flood of sweeps, elected in turn, went ahead of a lighter user's elected job), e.g. "it goes
    after j-2 all the same: an elected job of the same user already started ahead of that one, and an
    elected job is passed by at most one elected job of each other user"."""
    return (f"it goes after {ahead} all the same: an elected job of the same user already started ahead of that "
            "one, and an elected job is passed by at most one elected job of each other user")




def fair_ahead_clause(reason: Mapping[str, Any], now: datetime | None = None) -> str:
    """What a job says when jobs of its team submitted after it go first by the fair order
    (``details.eta_fair_ahead``: :func:`jupyter_sched.scheduling.eta._fair_ahead`; newuser37 N3: an older job
    waited behind three later jobs of its team and its line never said so), e.g. "vision's jobs queued after it
    go first: c-small2, c-small3 (n37c) — within a team the member with less recent GPU use goes first (fair
    order)"; where its ETA moved when they came (``eta_before``), "…; its ETA was 12:04 UTC before they were
    submitted". Names and owners are public (every queue line shows them). "" when there are none."""
    details = reason.get("details")
    fair = details.get("eta_fair_ahead") if isinstance(details, Mapping) else None
    jobs = fair.get("jobs") if isinstance(fair, Mapping) else None
    if not isinstance(fair, Mapping) or not isinstance(jobs, Sequence) or isinstance(jobs, str) or not jobs:
        return ""
    names = fair.get("names") if isinstance(fair.get("names"), Mapping) else {}
    owners = fair.get("owners") if isinstance(fair.get("owners"), Mapping) else {}
    assert isinstance(names, Mapping) and isinstance(owners, Mapping)
    shown = [str(j) for j in jobs[:FAIR_LISTED]]
    by_owner: dict[str, list[str]] = {}
    for j in shown:  # grouped by owner, in queue order of each owner's first job
        by_owner.setdefault(str(owners.get(j) or ""), []).append(str(names.get(j) or j))
    listed = "; ".join(f"{', '.join(these)}{f' ({owner})' if owner else ''}" for owner, these in by_owner.items())
    # "more": how many others (the reason lists FAIR_LISTED since session 38; one stored before lists them all)
    counted = fair.get("more")
    more = len(jobs) - len(shown) + (counted if isinstance(counted, int) else 0)
    if more > 0:
        listed += f" and {more} more"
    team = str(fair.get("team") or "")
    whose = f"{team}'s jobs" if team else "jobs of its team"
    text = (f"{whose} queued after it go first: {listed} — within a team the member with less recent GPU use "
            "goes first (fair order)")
    before, eta = wire_time(fair.get("eta_before")), wire_time(reason.get("eta"))
    if before is not None and (eta is None or eta > before):  # as the audit's eta_moved says it (N3 addendum)
        text += f"; its ETA was {_clock(before, now)} before they were submitted"
    return text


def render_reason(reason: Mapping[str, Any], *, now: datetime | None = None, relative: bool = False,
                  kind: str | None = None, never: bool = False, mine: bool = False) -> ReasonText:
    """Render ``reason`` (REST shape) as :class:`ReasonText`.

    Args:
        reason: the reason object of a job or lease.
        now: the caller's current time (UTC); decides whether the ETA needs its date, and is the
            origin of ``relative`` times. None: the ETA always carries its date.
        relative: add `` (in 5m)`` after the ETA (CLI and magics; the server sends absolute times,
            which stay true while the panel shows them).
        kind: the job's kind (``lease``, ``training``...), when known: a kernel's lease has no time
            limit and cannot be given one, so its backfill clause says what it waits for instead of
            pointing at a time limit (issue 20).
        never: the reason is why it can never run here (a refused submission, a dry run answered
            ``never``): no ETA and no "queued" — it would not be queued.
        mine: the reader owns the job: what blocks it that is their own (``details.eta_waits_on_own``,
            e.g. a kernel lease of theirs) is named as theirs, with what frees it. Never set for
            another reader — one user's leases are not described to another (issue 20).
    """
    eta = "" if never else eta_sentence(reason, now=now, relative=relative, mine=mine)
    # the owner's own leases the ETA already names with what frees them are not named twice (newuser33 n6)
    told = frozenset(i for o in own_leases(reason) if (i := str(o.get("id"))) in eta) if mine and eta else frozenset()
    summary = summary_sentence(reason, now=now, kind=kind, mine=mine, told=told)
    if not never and (fair := fair_ahead_clause(reason, now)):  # later teammates go first, and why (newuser37 N3)
        summary = f"{summary.rstrip('.')}; {fair}"
    if mine:
        summary = _held_by_you(reason, summary)
    unblock = one_gpu(unblock_sentence(reason, mine=mine))
    position = reason.get("position")
    head = "" if never else f"queued #{position}" if isinstance(position, int) and position > 0 else "queued"
    # the unblock sentence as a clause of the line, as the panel's queue line has it (new user 20, N22:
    # "· It starts when …", a sentence with its capital inside a "·" list)
    line = " · ".join(part for part in (head, summary.rstrip("."), eta, as_clause(unblock) if unblock else "") if part)
    return ReasonText(summary=summary, eta=eta, unblock=unblock, line=line)


def _held_by_you(reason: Mapping[str, Any], summary: str) -> str:
    """``held by you at 12:05 UTC`` for the owner's own hold of their job (newuser30 n19: root read "held by root"
    of the job root had held in their own lab; the panel said "held by you"). Only a hold that is not an admin's
    (``details.admin`` false: the owner's, :func:`~jupyter_sched.scheduling.gates.held_reason`) is the reader's
    — an admin's hold names the admin."""
    details = reason.get("details")
    if reason.get("code") != "Held" or not isinstance(details, Mapping) or details.get("admin") \
            or not details.get("by"):
        return summary
    said = f"held by {details['by']} "
    return "held by you " + summary[len(said):] if summary.startswith(said) else summary


def reason_in_words(reason: Mapping[str, Any], text: ReasonText) -> dict[str, Any]:
    """``reason`` (REST shape) with its sentences (``text``) and its documented ``unblock`` and
    ``eta_reason`` taken from them, so every field says the same (new user 8, N2: ``unblock`` kept
    the core's "starts when default releases GPUs or an admin raises its quota" for a user's own
    cap while ``text.unblock`` named that cap; ``eta_reason`` listed bare job ids). Where the words
    leave ``unblock`` out because the ETA says it (capacity waits), or say no ETA (work that ended, a
    refusal), ``unblock`` / ``eta_reason`` are empty too: new user 14, N14 — the core's "starts when
    running jobs finish (see ETA)" and "it fits only after jobs without a time limit end (j-…)" stood
    beside ``text.unblock: ""`` and the ETA sentence, two answers a client could not choose between."""
    out = {**reason, "text": text.to_dict(), "unblock": text.unblock}
    if text.eta.startswith("ETA unknown: "):
        out["eta_reason"] = text.eta.removeprefix("ETA unknown: ")
    elif text.eta.startswith("ETA never"):  # not the projection's "waits on something other than GPUs"
        out["eta_reason"] = text.eta.removeprefix("ETA ")
    elif not text.eta:
        out["eta_reason"] = ""
    if out.get("predicted_start") is not None and wire_time(out.get("eta")) is None \
            and str(out.get("eta_reason") or "").startswith("never"):
        # no start time beside "ETA never" (new user 23, N6: a client showed the first prediction, long past):
        # null with the reason why in eta_reason; the accuracy log keeps the first prediction (engine records)
        out["predicted_start"] = None
    return out


def summary_sentence(reason: Mapping[str, Any], *, now: datetime | None = None, kind: str | None = None,
                     mine: bool = False, told: frozenset[str] = frozenset()) -> str:
    """What blocks the job, one sentence (see :func:`_summary`), with no brackets inside brackets
    (:func:`unnested`)."""
    return unnested(_summary(reason, now=now, kind=kind, mine=mine, told=told))


def _summary(reason: Mapping[str, Any], *, now: datetime | None = None, kind: str | None = None,
             mine: bool = False, told: frozenset[str] = frozenset()) -> str:
    """What blocks the job, one sentence: the core's message, except where the numbers read better
    in human units (GPU memory in GiB rather than MiB; a time limit in hours and a reservation's
    time as a clock time — ``now`` decides whether it needs its date — rather than seconds and an
    ISO timestamp); who holds the GPUs it waits for, its owner's own leases among them
    (:func:`owner_holds_text`: ``mine`` and ``told`` as there)."""
    details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    if details.get("field") == "mem_per_gpu" and details.get("requested_mib") and details.get("max_mib") is not None:
        # lowercase like every other summary ("needs 2 GPUs…"): it follows "--mem-per-gpu: " or
        # "Would never start here: " (issue 20: "…: The job asks")
        asked, most = memory_texts(details["requested_mib"], details["max_mib"])
        return f"asks for {asked} of memory per GPU; the most any GPU here has is {most}."
    message = str(reason.get("message") or "").strip()
    rule = details.get("preemption_rule")
    refused = details.get("preemption_refused")
    if isinstance(rule, Mapping) and isinstance(refused, str) and refused and (
            (rule.get("rule") == "guarantee" and rule.get("guaranteed") == 0)
            or (rule.get("rule") == "min_runtime" and details.get("eta_code") == "MinRuntime")):
        # (the ETA says when its victims pass the minimum runtime: said once, there; new user 20, N18)
        # a team guaranteed nothing never reclaims: explaining that on every ordinary "all GPUs busy"
        # wait buried "0 free · ETA …" under quota jargon (new user 4); it stays in message/details
        message = message.replace(f"; no preemption: {refused}", "")
    message = _requeued_first(message, details, now)
    if str(reason.get("code") or "") == "NodeCordoned" and details.get("cordons"):
        # the cordon's time with the reader's clock ("at 15:40 UTC" today), as the core said it without one
        said = cordon_wait_sentence(details)
        if said in message:  # (a job asking no GPU: after "no node takes new work now: ")
            message = message.replace(said, cordon_wait_sentence(details, now=now), 1)
    model = details.get("model")
    if isinstance(model, str) and "GPU" in model.split():
        # "needs 1 Simulated GPU 80GB GPU": the core adds "GPU(s)" after the model's name, which
        # for simulated GPUs (what a first try on a machine without GPUs shows) already says it
        message = message.replace(f"{model} GPUs", model).replace(f"{model} GPU", model)
    reserved = details.get("reserved_for")
    if str(reason.get("code") or "") == "Priority" and isinstance(reserved, str) and reserved:
        # "fits now but would delay j-…": the reserved job by the name its owner gave, as the ETA beside it
        # names it (new user 6, F2 remainder: a 0.5-GPU job that fits on a shared GPU read "would delay
        # j-1m8w539dr-87hbre" next to "ETA …, when all2 (j-1m8w539dr-87hbre) ends")
        named = _named([reserved], details.get("eta_waits_on_names"), details.get("eta_waits_on_owners"))[0]
        message = message.replace(f"would delay {reserved},", f"would delay {named},")
    backfill = details.get("backfill")
    if isinstance(backfill, Mapping):
        names, owners = details.get("eta_waits_on_names"), details.get("eta_waits_on_owners")
        job = str(backfill.get("reserved_for") or "")
        if job and isinstance(backfill.get("reserved_for_name"), str):  # the core's name of the reserved job (N8)
            names = {**(names if isinstance(names, Mapping) else {}), job: backfill["reserved_for_name"]}
        if job and isinstance(backfill.get("reserved_for_owner"), str):
            owners = {**(owners if isinstance(owners, Mapping) else {}), job: backfill["reserved_for_owner"]}
        message = _backfill_clause(message, backfill, now, lease=kind == "lease", free=details.get("free"),
                                   names=names, eta_names=_eta_names(details), owners=owners)
    # any other machine timestamp in the core's words as a clock time, as every ETA is said (issue 20:
    # "retries from 2026-12-02T06:53:28.388077+00:00"), its UTC clocks in a known reader's zone (newuser38 n30), and
    # "this UTC day" is "today" to a reader on UTC (newuser30 n11)
    message = said_to_reader(message, now)
    if kind == "lease":  # a kernel's request is not a "job" (issue 20: "…, job needs 1")
        message = message.replace(", job needs ", ", this kernel needs ")
    holder = held_by_text(details.get("held_by_one_user"))
    if holder and message:  # who holds the GPUs, when one user holds most of them (red team 15, R4)
        message = message.rstrip(".") + f"; {holder}"
    own = owner_holds_text(details, mine=mine, now=now, told=told)
    if own and message:  # and what the job's owner's own leases hold of them (newuser33 n6)
        message = message.rstrip(".") + f"; {own}"
    message = one_gpu(message)
    return _sentence(message) or _sentence(_words(str(reason.get("code") or "")))


_REQUEUED = "; requeued after preemption by "
"""How the core's requeue clause joins a pending reason (:meth:`~jupyter_sched.scheduling.context.CycleContext.preempted_clause`)."""


def _requeued_first(message: str, details: Mapping[str, Any], now: datetime | None) -> str:
    """A job requeued by a preemption leads with what happened to it, and when: ``requeued at 05:21
    UTC after preemption by cvtake (j-…), to return borrowed quota to cv; needs 4 GPUs, 2 free; it
    can start when cv's jobs free 2 GPUs (…)``. Its ``no preemption: <why>`` clause goes (new user
    22, N8: a reason about a job *just preempted* opened with "no preemption: ml is guaranteed 2 GPUs
    but this job needs 4 …", five clauses before the ETA); what it says of when the GPUs come back
    (``it can start when …``) stays. Other reasons are returned as they are."""
    if not details.get("preempted_by"):
        return message
    refused = details.get("preemption_refused")
    if isinstance(refused, str) and refused and f"; no preemption: {refused}" in message:
        start = refused.partition("; it can start when ")[2]
        message = message.replace(f"; no preemption: {refused}", f"; it can start when {start}" if start else "")
    at = message.find(_REQUEUED)
    if at < 0:
        return message
    end = message.find("; ", at + 2)
    clause = (message[at + 2:] if end < 0 else message[at + 2:end]).rstrip(". ")
    rest = message[:at] + ("" if end < 0 else message[end:])
    when = wire_time(details.get("preempted_at"))
    if when is not None:
        clause = clause.replace("requeued after", f"requeued at {_clock(when, now)} after", 1)
    return f"{clause}; {rest.rstrip('. ')}." if rest.strip(". ") else f"{clause}."


_NESTED = re.compile(r"\([^()]*\(")
"""A ``(`` opened before the one before it closed: the only shape :func:`unnested` changes (quotes
only ever take nesting away), found by the regex engine rather than a Python loop over every
character of every reason of every cycle (the loop cost the 5,000-node cycle ~40 %: session 22)."""


def unnested(text: str) -> str:
    """``text`` with brackets inside brackets said with commas: ``(cv uses its whole guarantee (2
    GPUs))`` → ``(cv uses its whole guarantee, 2 GPUs)``, ``(when cvtake (j-…) ends)`` → ``(when
    cvtake, j-…, ends)`` (new user 22, N8). Quoted names (``bob's job "a (1)"``) are left as they
    are; an unbalanced ``)`` is kept."""
    if _NESTED.search(text) is None:  # no "(" opened inside another: nothing to do (the cycle's common case)
        return text
    out: list[str] = []
    depth = 0
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
            if depth > 1:
                out.append(", ")
                continue
        elif not quoted and ch == ")" and depth:
            depth -= 1
            if depth:
                out.append(",")
                continue
        out.append(ch)
    said = "".join(out)
    if said == text:
        return text
    said = re.sub(r"\s+,", ",", said)
    said = re.sub(r",(\s*,)+", ",", said)
    said = re.sub(r"\(\s*,\s*", "(", said)
    return re.sub(r",\s*(?=[).;:]|$)", "", said)


def held_by_admin_unblock(by: str, job_id: str) -> str:
    """To the owner of a job an admin (``by``) held: ``ask root to release it, or cancel it: jupyter-sched
    cancel j-…`` — only what the reader may run (newuser28 N5: "release with: jupyter-sched release j-…",
    refused 403 when pasted). The owner's status/queue line and the refusal of their release alike."""
    return f"ask {by} to release it, or cancel it: jupyter-sched cancel {job_id}"


def held_by_text(holder: Any) -> str:
    """``red15b holds 4 of 4 GPUs (4 jobs, no time limit)`` from a reason's ``details.held_by_one_user``
    (the core's: with no quota configured, one user holds more than half of the GPUs of the job's
    models); ``eve holds 2 of 2 A100-80GB GPUs (1 job)`` when it counts some of the inventory's models
    only (its ``models``: verify 22, V1); ``ana holds 2 of 2 GPUs (2 jobs, 1 of them starting)`` while
    some of those jobs are given their GPUs and being launched (its ``starting``: new user 30, n14 — the
    job being started read as one more held, as the panel's and ``jobs``' state word says it); "" without it."""
    if not isinstance(holder, Mapping) or not holder.get("user"):
        return ""
    jobs, leases, unlimited = (int(holder.get(k) or 0) for k in ("jobs", "leases", "without_limit"))
    starting = min(int(holder.get("starting") or 0), jobs)
    held = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((jobs, "job"), (leases, "lease")) if n]
    if starting:  # said beside the jobs it counts: "2 jobs, 1 of them starting" / "1 job, starting"
        held[0] += ", starting" if jobs == 1 else f", {'all' if starting == jobs else starting} of them starting"
    limit = "no time limit" if unlimited and unlimited == jobs + leases \
        else f"{unlimited} without a time limit" if unlimited else ""
    inside = ", ".join(part for part in (" and ".join(held), limit) if part)
    gpus, total = holder.get("gpus"), holder.get("total")
    return (f"{holder['user']} holds {_number(gpus)} of {_number(total)} {_held_models(holder)}GPUs"
            + (f" ({inside})" if inside else ""))


def owner_holds_text(details: Mapping[str, Any], *, mine: bool = False, now: datetime | None = None,
                     told: frozenset[str] = frozenset()) -> str:
    """What the waiting job's owner's own leases hold of the GPUs it may use, as a clause of its summary
    (newuser33 n6: "n33a holds 3 of 4 GPUs (1 job)" said nothing of the reader's own idle kernel lease
    holding the 4th), from the core's ``details.held_by_owner`` (numbers) and ``details.held_by_owner_leases``
    (each lease; the API keeps it for the owner alone).

    To the owner (``mine``): ``your own kernel lease l-1 (notebook work/nb.ipynb) holds 1 of 4 GPUs, its
    kernel idle since 19:11 UTC: run %gpu release in that notebook to free it`` — what frees it, as
    :func:`_release_with` says it (``jupyter-sched cancel l-…`` for one bound to no kernel); leases whose
    ids are in ``told`` (the ETA sentence names them and what frees them) left out. To anyone else:
    ``ann holds 1 of 4 GPUs (1 lease)`` — no notebook, kernel or idle time. "" when its owner's leases
    hold none of them."""
    holder = details.get("held_by_owner")
    if not isinstance(holder, Mapping) or not holder.get("user"):
        return ""
    if not mine:
        return held_by_text({"user": holder["user"], "gpus": holder.get("gpus"), "total": holder.get("total"),
                             "leases": holder.get("leases"), "models": holder.get("models")})
    raw = details.get("held_by_owner_leases")
    if not isinstance(raw, Sequence) or isinstance(raw, str):  # the numbers only: said as the reader's
        return held_by_text({**holder, "user": "you"}).replace("you holds ", "you hold ", 1)
    leases = [o for o in raw if isinstance(o, Mapping) and str(o.get("id")) not in told]
    if not leases:
        return ""
    one = len(leases) == 1
    gpus = sum(float(o.get("gpus") or 0) for o in leases)
    total = holder.get("total")
    models = _held_models(holder)
    counted = isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0
    of = f" of {_number(total)} {models}GPUs" if counted else f" {models}GPU{'s' if gpus != 1 else ''}"
    held = f"{'holds' if one else 'hold'} {_number(gpus)}{of}"
    idle = [(str(o.get("id")), when) for o in leases if (when := wire_time(o.get("idle_since"))) is not None]
    if one and idle:
        held += f", its kernel idle since {_clock(idle[0][1], now)}"
    elif idle:
        held += ", " + ", ".join(f"{lease}'s kernel idle since {_clock(when, now)}" for lease, when in idle)
    release = "%gpu release in each notebook" if not one and _kernel_leases(leases) else _release_with(leases)
    return f"{_own_leases_text(leases)[0]} {held}: run {release} to free {'it' if one else 'them'}"


def _held_models(holder: Mapping[str, Any]) -> str:
    """``"A100-80GB "`` / ``"A100-80GB or H100-80GB "`` for a holding counted over those models only; ""."""
    models = holder.get("models")
    if not isinstance(models, Sequence) or isinstance(models, str):
        return ""
    said = [str(m) for m in models if str(m).strip()]
    return f"{' or '.join(said)} " if said else ""


def _held_by_unblock(holder: Any) -> str:
    """What a user waiting behind one user's GPUs can do (red team 15, R4): ask that user, or an admin
    for quotas (and a default time limit where the holder's work has none) so no one user can hold
    every GPU (of the job's models) — or "most of the GPUs" when the holder does not hold every one
    (verify 22, V1: "so no one user can hold every GPU" was said of 4 of 6)."""
    if not isinstance(holder, Mapping) or not holder.get("user"):
        return ""
    limit = " or a default time limit (c.SchedApp.default_time_limit_s)" if holder.get("without_limit") else ""
    gpus, total, models = holder.get("gpus"), holder.get("total"), _held_models(holder)
    every = isinstance(gpus, (int, float)) and isinstance(total, (int, float)) and gpus >= total
    hold = f"every {models}GPU" if every else f"most of the {models}GPUs"
    # a batch job is cancelled, a lease released (newuser31 n5: "release" of jobs with time limits read as a lease's)
    jobs, leases = (int(holder.get(k) or 0) for k in ("jobs", "leases"))
    verb = "cancel" if jobs and not leases else "release or cancel" if jobs and leases else "release"
    return (f"Ask {holder['user']} to {verb} some of them, or ask an admin to set quotas (c.SchedApp.quotas, "
            f"or PUT api/sched/quotas){limit} so no one user can hold {hold}.")


_PROVISIONAL = "estimated within seconds"
"""How :data:`jupyter_sched.scheduling.live.PROVISIONAL_ETA` begins: the reason of work submitted
since the last cycle (not imported: the CLI's path stays free of the scheduling core)."""

_BACKFILL_CLAUSES = ("; with a limit of ", "; it has no time limit (")
"""How the core's backfill clause begins (:func:`jupyter_sched.scheduling.pending._cannot_backfill`
appends it last, and its numbers are in ``details.backfill``)."""


def _eta_names(details: Mapping[str, Any]) -> frozenset[str]:
    """The jobs the ETA sentence beside the summary names (:func:`eta_sentence`: every one it waits
    on, for a projected ETA or one unknown for lack of time limits)."""
    waits = details.get("eta_waits_on")
    if details.get("eta_code") not in ("Projected", "NoTimeLimit") or not isinstance(waits, Sequence) \
            or isinstance(waits, str):
        return frozenset()
    return frozenset(str(w) for w in waits)


def clock_times(text: str, now: datetime | None, *, ref: datetime | None = None) -> str:
    """``text`` with each ISO 8601 time in it (a server sentence's ``2026-12-05T22:14:15Z``) said as a clock
    time (``22:14 UTC``, :func:`~..model.units.clock_text`), as a reason's message is (newuser27 n3: ``release``
    said "held by root since 2026-12-05T22:14:15Z"), and — where the reader is known (the CLI, the magics) — each
    of the server's UTC clocks in the reader's zone (newuser38 n30; :func:`~..model.units.clocks_said`, ``ref``:
    when it was written)."""
    return clocks_said(text, now, ref=ref)


def _backfill_clause(message: str, backfill: Mapping[str, Any], now: datetime | None, *, lease: bool = False,
                     free: Any = None, names: Any = None, eta_names: frozenset[str] = frozenset(),
                     owners: Any = None) -> str:
    """Rewrite the core's last clause "with a limit of 3600 s (given) it cannot finish before j-9,
    reserved from 2026-12-02T03:44:37.065813+00:00" from ``details.backfill`` (``limit_s``,
    ``limit_source``, ``reserved_for``, ``reservation``) as "its 1h time limit would run into the
    GPUs reserved for j-9 from 03:44 UTC"; the message is returned unchanged when it does not end
    with such a clause or the data is incomplete. A ``lease`` (a kernel's GPUs, which last until
    released and take no time limit) is told what it waits for, not to give a time limit.

    With no GPU free (``free`` 0) a job's clause is left out: nothing could start ahead of the
    reservation whatever the time limit, and the clause read as if a shorter limit would help
    (new user 6, F2); the ETA says when GPUs come. The reserved job is named as the ETA names
    jobs (``big3 (j-…)``) where ``names`` knows it — and not at all when the ETA beside it names it
    (``eta_names``), nor is what the ETA says of it said here: new user 13, N8 read "…cannot start
    ahead of big (j-…), whose GPUs are reserved from 20:22 UTC; it waits until big (j-…) has started
    · ETA unknown: it can start only after big (j-…) ends, which has no time limit" (big three
    times, and "has started" against "ends"). The summary says what blocks it; the ETA, when."""
    cut = max(message.rfind(start) for start in _BACKFILL_CLAUSES)
    when, job = wire_time(backfill.get("reservation")), backfill.get("reserved_for")
    if cut < 0 or when is None or not job:
        return message
    if not lease and isinstance(free, (int, float)) and not isinstance(free, bool) and free <= 0:
        return message[:cut] + "."  # (a lease's clause says what it waits for, not a limit to change: kept)
    at = _clock(when, now)
    # the one the ETA names is "the job" here (N8); another is named as the ETA would name it
    ahead = f"the {'lease' if str(job).startswith('l-') else 'job'} whose GPUs are reserved from {at}" \
        if str(job) in eta_names else f"{_named([job], names, owners)[0]}, whose GPUs are reserved from {at}"
    limit, source = backfill.get("limit_s"), str(backfill.get("limit_source") or "")
    own = backfill.get("own_team")
    if isinstance(own, str) and own:  # within its guarantee once its team's own work frees GPUs (newuser34 N4)
        return message[:cut] + (f"; on GPUs other teams free it cannot start ahead of {ahead}, but the GPUs {own}'s "
                                f"own running work frees go to it first (within {own}'s guarantee)")
    if lease:
        clause = f"a kernel holds its GPUs until it releases them, so it cannot start ahead of {ahead}"
    elif isinstance(limit, (int, float)) and limit > 0:
        duration = format_duration(float(limit))
        limit_text = {"queue default; none given": f"the queue's default time limit ({duration}; it gave none)",
                      "queue max; none given": f"the queue's maximum time limit ({duration}; it gave none)",
                      }.get(source, f"its {duration} time limit")
        reserved = "" if str(job) in eta_names else f" for {_named([job], names, owners)[0]}"
        clause = f"{limit_text} would run into the GPUs reserved{reserved} from {at}"
    else:
        # one clause, not two saying the same ("…; it can start only when nothing is reserved", F2);
        # "of its own": the ETA beside it may say the reserved job has none (N8)
        clause = f"without a time limit of its own it cannot start ahead of {ahead}"
    return message[:cut] + "; " + clause


_ONE_GPUS = re.compile(r"(?<![\d.])1 ((?:[A-Za-z][\w.-]* )*?)GPUs\b")


def one_gpu(text: str) -> str:
    """``1 GPUs`` → ``1 GPU`` (also ``1 A100 GPUs`` → ``1 A100 GPU``): the core and the quota
    checks write counts into fixed plurals (issue 20: "1 GPUs", three times in one refusal)."""
    return _ONE_GPUS.sub(lambda m: f"1 {m.group(1)}GPU", text)


_clock = clock_text
"""``19:42 UTC`` on ``now``'s day, else ``Mar 3 19:42 UTC`` (the year when far off): the one formatter."""


AT_EXIT_HELD = "held by a kernel this server did not start, released when it exits"
"""A lease its asking process releases at exit (``released_at_exit``; new user 16, N1: an
nbconvert kernel's live lease read "held for no kernel")."""


def _held_for(lease: Mapping[str, Any]) -> str:
    """``held for job j-… and released with it`` (a lease a job asked for: ``parent_job_id``; red
    team 15, R15 read "held for no kernel"), :data:`AT_EXIT_HELD` (``released_at_exit``), else
    ``held for no kernel``."""
    parent = lease.get("parent_job_id")
    if parent:
        return f"held for job {parent} and released with it"
    return AT_EXIT_HELD if lease.get("released_at_exit") else "held for no kernel"


def own_leases(reason: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The kernel leases of the job's own owner that are ALL it waits for (``details.eta_waits_on``
    against ``details.eta_waits_on_own``, which the core fills), else ``[]``."""
    details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    waits, own = details.get("eta_waits_on"), details.get("eta_waits_on_own")
    if not (isinstance(waits, Sequence) and isinstance(own, Sequence)) or isinstance(waits, str) or not waits:
        return []
    mine = [o for o in own if isinstance(o, Mapping) and o.get("kind") == "lease"]
    return mine if {str(o.get("id")) for o in mine} == {str(w) for w in waits} else []


def _own_leases_text(leases: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """``("your own kernel lease l-1 (kernel-13cfa9a0, notebook nb/explore.ipynb)", "holds 1 GPU")``
    / ``("your own kernel leases l-1 (notebook a.ipynb) and l-2 (notebook b.ipynb)", "hold 3 GPUs")``:
    the notebook where ``%gpu release`` frees each, when the lease carries it (``notebook``: its
    ``kernel_notebook``, in the owner's own reason only); ``your own leases l-1 and l-2 (held for no
    kernel)`` when one is bound to no kernel (``kernel: False``, new user 13, N9)."""
    gpus = sum(float(o.get("gpus") or 0) for o in leases)
    held = f"{gpus:g} GPU{'s' if gpus != 1 else ''}"
    word = "kernel lease" if _kernel_leases(leases) else "lease"
    if len(leases) == 1:
        name = str(leases[0].get("name") or "")
        about = ["" if name in LEASE_NAMES else name, _notebook(leases[0]),  # "notebook lease" says nothing more
                 "" if word == "kernel lease" and not leases[0].get("released_at_exit") else _held_for(leases[0])]
        said = ", ".join(part for part in about if part)
        return f"your own {word} {leases[0].get('id')}{f' ({said})' if said else ''}", f"holds {held}"
    if word == "lease":
        loose = [o.get("id") for o in leases if o.get("kernel") is False and not o.get("parent_job_id")]
        for_jobs = [f"{o.get('id')} for job {o.get('parent_job_id')}" for o in leases if o.get("parent_job_id")]
        which = "" if len(loose) == len(leases) else f": {_ids(loose)}"
        said = "; ".join(([f"held for no kernel{which}"] if loose else [])
                         + (["held " + ", ".join(for_jobs) + (", released with it" if len(for_jobs) == 1
                                                                else ", each released with its job")]
                            if for_jobs else []))
        return f"your own leases {_ids([o.get('id') for o in leases])} ({said})", f"hold {held}"
    if len(leases) <= 3 and any(_notebook(o) for o in leases):
        each = [f"{o.get('id')}{f' ({_notebook(o)})' if _notebook(o) else ''}" for o in leases]
        return f"your own kernel leases {', '.join(each[:-1])} and {each[-1]}", f"hold {held}"
    return f"your own kernel leases {_ids([o.get('id') for o in leases])}", f"hold {held}"


_NO_LIMIT = {True: "a kernel's GPUs have no time limit", False: "a lease has no time limit"}
"""Why a wait on leases has no ETA, by whether they are all kernels' leases."""


def _idle_release(details: Mapping[str, Any], waits: Sequence[Any], now: datetime | None) -> tuple[str, str]:
    """What idle reclamation does to the leases ``waits``: ``(" or reclaimed after 2h00m idle", "")``,
    with ``"; l-1 is idle now: released 14:05 UTC if it stays idle"`` second when one is idle now
    (said after the sentence's parenthesis), from the engine's
    ``details.eta_idle_release`` (:mod:`jupyter_sched.engine.lease_horizon`); ``("", ", and this
    server does not reclaim idle leases")`` when it releases none of them so (new user 18, N10: every
    lease wait said "or reclaimed when idle" on a server that reclaims nothing, and never when).
    A reason without that key (written by the core alone) keeps ``" or reclaimed when idle"``."""
    horizons = details.get("eta_idle_release")
    if not isinstance(horizons, Mapping):
        return " or reclaimed when idle", ""
    held = {str(w): h for w in waits if isinstance(h := horizons.get(str(w)), Mapping)}
    afters = sorted({float(a) for h in held.values() if isinstance(a := h.get("after_s"), (int, float))})
    if not afters:
        return "", ", and this server does not reclaim idle leases"
    text = f" or reclaimed after {format_duration(afters[0])} idle" if len(afters) == 1 else \
        f" or reclaimed after {format_duration(afters[0])} to {format_duration(afters[-1])} idle"
    due = sorted((t, w) for w, h in held.items() if (t := wire_time(h.get("at"))) is not None)
    if due:  # the soonest: an ETA only if nobody touches it, so said after, not as the ETA
        when, lease = due[0]
        # of several, the ones in use are what leaves the ETA unknown (session 20's closing note)
        busy = [w for w in held if wire_time(held[w].get("at")) is None and w not in _withheld(details)]
        said = f"; {_ids(busy)} {'is' if len(busy) == 1 else 'are'} in use, not idle" if busy else ""
        return text, f"; {lease} is idle now: released {_clock(when, now)} if it stays idle{said}"
    return text, ""


def _idle_eta(details: Mapping[str, Any], waits: Sequence[Any], now: datetime | None,
              relative: bool) -> tuple[str, list[str]]:
    """``("ETA 14:05 UTC (in 5m)", [lease ids])`` when idle reclamation frees the wait's leases then
    if they stay idle: one lease idle now (``details.eta_idle_release[id].at``, :func:`_idle_release`'s
    data), or several of which enough are (``details.eta_idle_at``: when, and which of them;
    :func:`jupyter_sched.engine.lease_horizon.idle_start`); else ``("", [])``."""
    horizons = details.get("eta_idle_release")
    if len(waits) > 1:
        start = details.get("eta_idle_at")
        by = start.get("leases") if isinstance(start, Mapping) else None
        when = wire_time(start.get("at")) if isinstance(start, Mapping) else None
        ids = [str(w) for w in by] if isinstance(by, Sequence) and not isinstance(by, str) else []
        if when is None or not ids:
            return "", []
    else:
        held = horizons.get(str(waits[0])) if isinstance(horizons, Mapping) and waits else None
        when = wire_time(held.get("at")) if isinstance(held, Mapping) else None
        if when is None:
            return "", []
        ids = [str(waits[0])]
    rel = f" ({relative_text((when - now).total_seconds())})" if relative and now is not None else ""
    return f"ETA {_clock(when, now)}{rel}", ids


def _singular(whose: str) -> str:
    """``other users' kernel leases`` -> ``another user's kernel lease``; ``bob's leases`` -> ``bob's lease``."""
    whose = whose.replace("other users' ", "another user's ", 1)
    return whose[:-1] if whose.endswith("s") else whose


def _off(said: str) -> str:
    """The part of :func:`_idle_release`'s second text that goes inside the parenthesis."""
    return said if said.startswith(", ") else ""


def _now(said: str) -> str:
    """The part of :func:`_idle_release`'s second text that follows the parenthesis."""
    return said if said.startswith("; ") else ""


def _ends_clause(named: Sequence[str], details: Mapping[str, Any]) -> str:
    """``j-1 ends``, ``j-1 and j-2 end``; where they end at the same projected second and fewer free the
    GPUs it needs (``details.eta_needs_of``, newuser26 n5): ``the first of hist-114, hist-113 and
    hist-112 ends (they are projected to end at the same time)``, ``2 of … end (…)``."""
    needs = details.get("eta_needs_of")
    if len(named) < 2 or not isinstance(needs, int) or isinstance(needs, bool) or not 0 < needs < len(named):
        return f"{_ids(named)} {'ends' if len(named) == 1 else 'end'}"
    same = "they are projected to end at the same time"
    if needs == 1:
        return f"the first of {_ids(named)} ends ({same})"
    return f"{needs} of {_ids(named)} end ({same})"


def _backfill_words(details: Mapping[str, Any], waits: Sequence[Any], now: datetime | None = None) -> str:
    """Why the ETA waits on a job queued behind it that the plan starts first (``details.eta_waits_on_backfilled``;
    newuser27 n12: a #1 job's ETA named the #2 job with no word why), from ``details.eta_backfill_basis``
    (:func:`jupyter_sched.scheduling.eta._backfill_basis`): ``; j-2 is queued behind this job but starts first:
    even run to its time limit it cannot delay this job past 12:08 UTC, the latest this job can start (every
    running job run to its limit), so it is let run (backfill)``; ``…: no start can be kept for this job while
    l-1, which has no time limit, holds GPUs it needs, so work behind it that fits the free GPUs runs meanwhile
    (backfill)``; ``…: only j-0, first in the queue for these GPUs, has its start kept, so work behind it that fits
    the free GPUs runs meanwhile (backfill)``; ``j-2 is queued behind …`` where it waits on others too; where the
    queue's order put them first (``{"ahead": […]}``): ``…: when the GPUs free, the queue's order puts them
    ahead of this job (fair share or class, not backfill), so the ETA may move; this job goes first from 12:07 UTC,
    once it has waited past its promised wait (elected)`` — never "cannot delay this job past" (newuser35 N7).

    Never "ends before this job's planned start": the ETA is that job's end (newuser31 N6: "ETA 13:00, when
    fl2-12 ends; … ends before this job's planned start, so it runs first"). Plain words first, the trade word
    last, said after the ETA's other parts (new user 30, N4: two parentheses in a row)."""
    behind = details.get("eta_waits_on_backfilled")
    if not isinstance(behind, Sequence) or isinstance(behind, str) or not behind:
        return ""
    one = len(behind) == 1
    # named, never "it is queued behind this job": "it" read as this job (newuser38 N2)
    names = details.get("eta_waits_on_names")
    names = names if isinstance(names, Mapping) else {}
    who = f"{_ids([str(names.get(str(b)) or b) for b in behind])} {'is' if one else 'are'}"
    they = "it" if one else "they"
    head = f"; {who} queued behind this job but {'starts' if one else 'start'} first"
    basis = details.get("eta_backfill_basis")
    basis = basis if isinstance(basis, Mapping) else {}
    latest = wire_time(basis.get("latest"))
    unbounded = basis.get("unbounded")
    kept = basis.get("kept_for")
    meanwhile = "so work behind it that fits the free GPUs runs meanwhile (backfill)"
    ahead = basis.get("ahead")
    if isinstance(ahead, Sequence) and not isinstance(ahead, str) and ahead:
        # the queue's order put them first where they start: not backfill, and nothing keeps this job's start
        # (newuser35 N7: "… cannot delay this job past 01:28 …, so they are let run (backfill)" under "ETA 01:54")
        elected = wire_time(basis.get("elected_from"))
        bound = (f"; this job goes first from {_clock(elected, now)}, once it has waited past its promised wait "
                 "(elected)"
                 if elected is not None else "")
        beside = basis.get("beside")
        beside = [str(b) for b in beside] if isinstance(beside, Sequence) and not isinstance(beside, str) else []
        if not beside:
            return (f"{head}: when the GPUs free, the queue's order puts {'it' if one else 'them'} ahead of this job "
                    f"(fair share or class, not backfill), so the ETA may move{bound}")
        few = len(ahead) == 1
        return (f"{head}: when the GPUs free, the queue's order puts {_ids([str(a) for a in ahead])} ahead of this "
                f"job (fair share or class, not backfill) and {_ids(beside)} "
                f"{'fits' if len(beside) == 1 else 'fit'} beside {'it' if few else 'them'}, ending by then "
                f"(backfill), so the ETA may move{bound}")
    if latest is not None:
        return (f"{head}: even run to {'its time limit' if one else 'their time limits'} {they} cannot delay this "
                f"job past {_clock(latest, now)}, the latest it can start (every running job run to its limit), so "
                f"{they} {'is' if one else 'are'} let run (backfill)")
    if isinstance(unbounded, Sequence) and not isinstance(unbounded, str) and unbounded:
        many = len(unbounded) > 1
        return (f"{head}: no start can be kept for this job while {_ids([str(u) for u in unbounded])}, which "
                f"{'have' if many else 'has'} no time limit, {'hold' if many else 'holds'} GPUs it needs, {meanwhile}")
    if isinstance(kept, str) and kept:
        return f"{head}: only {kept}, first in the queue for these GPUs, has its start kept, {meanwhile}"
    return f"{head}: {they} {'fits' if one else 'fit'} the GPUs that free first, before this job has all it needs (backfill)"


def _queued(details: Mapping[str, Any], waits: Sequence[Any]) -> str:
    """`` (queued ahead of it, holding no GPU yet)`` when what it waits for has not started
    (``details.eta_waits_on_queued``): a lease queued ahead is not "released" from the GPUs now
    (new user 18, N10); ``" (l-2 is queued ahead of it)"`` for one of several."""
    queued = details.get("eta_waits_on_queued")
    if not isinstance(queued, Sequence) or isinstance(queued, str) or not queued:
        return ""
    if len(waits) == 1:
        return " (queued ahead of it, holding no GPU yet)"
    return f" ({_ids([str(q) for q in queued])} {'is' if len(queued) == 1 else 'are'} queued ahead of it)"


def _kernel_leases(leases: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every one of the owner's ``leases`` (``details.eta_waits_on_own``) is bound to a kernel."""
    return not any(o.get("kernel") is False for o in leases)


def _named_kernel_leases(waits: Sequence[Any], names: Any) -> bool:
    """Whether the public names of the leases ``waits`` say each is a kernel's (``kernel lease``,
    ``notebook lease``); another user's kernel is private, and a name chosen by its owner says nothing."""
    known = names if isinstance(names, Mapping) else {}
    return bool(waits) and all(known.get(str(w)) in LEASE_NAMES[:2] for w in waits)


def _release_with(leases: Sequence[Mapping[str, Any]]) -> str:
    """How the owner releases their own ``leases``: in the notebook, or from a terminal when one is
    bound to no kernel (no notebook can %gpu release it: new user 13, N9)."""
    if _kernel_leases(leases):
        return "%gpu release in that notebook"
    return f"`jupyter-sched cancel {' '.join(str(o.get('id')) for o in leases)}`"


def _how_many(reason: Mapping[str, Any], own: Sequence[Mapping[str, Any]]) -> str:
    """``one or more of `` before several of the owner's leases that a start waits on, unless the
    numbers say every one must go: a quota wait whose team is short by more than all of them but the
    smallest hold (new user 13, N9: a team 1 GPU over its lowered quota, two 1-GPU leases, a 1-GPU
    job — "one or more of" read as if one would do)."""
    if len(own) <= 1:
        return ""
    details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    numbers = [details.get(k) for k in ("used", "requested", "quota")]
    if str(reason.get("code") or "") in QUOTA_CODES and all(
            isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
        used, requested, quota = (float(n) for n in numbers)  # type: ignore[arg-type]
        held = sorted(float(o.get("gpus") or 0) for o in own)
        if sum(held) - held[0] < used + requested - quota:
            return ""
    return "one or more of "


def _some_of(must: Any, named: int) -> str:
    """What comes before ``named`` (>1) holders a start waits on: ``""`` when all must go, ``at least
    2 of `` when some, ``one or more of `` when one may do or the core did not count
    (``details.eta_must_release``: :func:`~jupyter_sched.scheduling.eta._must_release`)."""
    if not isinstance(must, int) or isinstance(must, bool) or must <= 1:
        return "one or more of "
    return "" if must >= named else f"at least {must} of "


def _after_release(details: Mapping[str, Any], own: Sequence[Mapping[str, Any]]) -> str:
    """What releasing the reader's own idle leases ``own`` does for a job whose projected ETA is their reclaim:
    ``it starts at once`` only when the GPUs free now and theirs cover what it requests (``details.free`` /
    ``requested``, a capacity wait's); else ``it can start sooner`` — the ETA is their reclaim because the other
    holders end before it, and until they do a release alone does not start it (newuser31 N5: "it starts at once"
    while another user's jobs held 3 of the 4 GPUs it needed)."""
    need, free = details.get("requested"), details.get("free")
    theirs = sum(float(o.get("gpus") or 0) for o in own)
    if isinstance(need, int | float) and isinstance(free, int | float) and not isinstance(need, bool) \
            and free + theirs >= need:
        return "it starts at once"
    return "it can start sooner (it still needs GPUs other work holds now)"


def _notebook(lease: Mapping[str, Any]) -> str:
    """``notebook nb/explore.ipynb`` for an own lease whose notebook is known, else ""."""
    path = lease.get("notebook")
    return f"notebook {str(path)[:200]}" if isinstance(path, str) and path.strip() else ""


def _on_idle_leases(reason: Mapping[str, Any]) -> bool:
    """True for a projected ETA that waits only on leases idle now, ended at their reclaim deadline
    (``details.eta_code == "Projected"`` with ``details.eta_idle_at``:
    :mod:`jupyter_sched.engine.lease_horizon`): :func:`eta_sentence` words it "if they stay idle"."""
    details = reason.get("details")
    start = details.get("eta_idle_at") if isinstance(details, Mapping) else None
    return isinstance(details, Mapping) and details.get("eta_code") == "Projected" and isinstance(start, Mapping) \
        and wire_time(start.get("at")) is not None and isinstance(details.get("eta_waits_on"), Sequence)


def eta_sentence(reason: Mapping[str, Any], *, now: datetime | None = None, relative: bool = False,
                 mine: bool = False) -> str:
    """When it is expected to start (see :func:`_eta`), with no brackets inside brackets (:func:`unnested`)."""
    return unnested(_eta(reason, now=now, relative=relative, mine=mine))


def _eta(reason: Mapping[str, Any], *, now: datetime | None = None, relative: bool = False,
         mine: bool = False) -> str:
    """``ETA 19:42 UTC`` / ``ETA Mar 3 19:42 UTC`` (+ `` (in 5m)`` when ``relative``), then
    ``, when j-1 ends`` when the core names the jobs it waits for, then `` (by its 3m time limit)``
    when one of them was re-estimated (it ran past what was expected: ``details.eta_bounds``; an
    older reason's ``; <eta_note>``); or ``ETA unknown: <why>`` where the
    core said why, else ``ETA unknown``."""
    when = wire_time(reason.get("eta"))
    if when is None or _on_idle_leases(reason):  # a projected ETA on idle leases: worded as theirs (session 21)
        details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
        assert isinstance(details, Mapping)
        waits = details.get("eta_waits_on")
        if details.get("never") == "quota":  # above a ceiling lowered under it: no end of anything helps (new user 18, N12)
            return "ETA never, under the quota now in force"
        if details.get("eta_code") in ("NoTimeLimit", "Projected") and isinstance(waits, Sequence) \
                and not isinstance(waits, str) and waits:  # the core's data: which running jobs it waits for, none with a time limit
            one = len(waits) == 1  # "which": the blocking jobs lack the limit, not the waiting one (issue 20)
            # of several, one may free enough (new user 7, F1: "after hogA and hogB end" for 1 GPU while
            # each held 2 read as if both had to); on a quota wait the core counts how many must go (N9)
            some = "" if one else _some_of(details.get("eta_must_release"), len(waits))
            own = own_leases(reason) if mine else []
            if own:  # the reader's own leases hold them: the one thing to do is theirs (issue 20)
                leases, holds = _own_leases_text(own)
                # a quota wait's unblock sentence says how to release them: not said twice (new user 20, N29)
                told = str(reason.get("code") or "") in QUOTA_CODES
                due, reclaimed = _idle_eta(details, waits, now, relative)
                if due:  # idle leases: when enough are reclaimed is the ETA, if nobody touches them (N29)
                    freed = [o for o in own if str(o.get("id")) in reclaimed] or own
                    lone = len(freed) == 1
                    return (f"{due} if {_own_leases_text(freed)[0]} {'stays' if lone else 'stay'} idle "
                            f"({'it is' if lone else 'they are'} then reclaimed)") + (
                        "" if told else f"; released with {_release_with(own)}, {_after_release(details, own)}")
                idle, none = _idle_release(details, waits, now)
                release = "" if told else f" with {_release_with(own)}"
                return (f"ETA unknown: it can start only after {_how_many(reason, own)}{leases}, which {holds}, "
                        f"{'is' if len(own) == 1 else 'are'} released{release}{idle} "
                        f"({_NO_LIMIT[_kernel_leases(own)]}{_off(none)}){_now(none)}")
            if all(str(w).startswith("l-") for w in waits):  # leases: released, not ended (issue 20)
                # "%gpu release in that notebook" is an action only the lease's owner can take (new user
                # 6, F9: bob was told to release alice's lease): to the job's owner, leases the core did
                # not list as theirs are another user's; to anyone else, their owner's. "kernel lease"
                # only where their public names say so: a lease may be bound to no kernel (new user 13, N9)
                kernel = _named_kernel_leases(waits, details.get("eta_waits_on_names"))
                lease = "kernel lease" if kernel else "lease"
                others = mine and not any(isinstance(o, Mapping) for o in (details.get("eta_waits_on_own") or ()))
                whose = (f"another user's {lease}" if one else f"other users' {lease}s") if others else \
                    f"{lease}{'' if one else 's'}"
                owners = details.get("eta_waits_on_owners")
                held = {owners.get(str(w)) for w in waits} if isinstance(owners, Mapping) else set()
                if len(held) == 1 and isinstance(owner := next(iter(held)), str) and owner:
                    whose = f"{owner}'s {lease}{'' if one else 's'}"  # by name (red team 15, R8)
                by = "" if others else (" by its owner" if one else " by their owners")
                due, reclaimed = _idle_eta(details, waits, now, relative)
                if due:  # idle leases: their reclaim is the ETA (new user 20, N29: "unknown" beside it)
                    if len(reclaimed) == 1:
                        return (f"{due} if {_singular(whose) if not one else whose} {_ids(reclaimed)} stays idle (it is "
                                f"then reclaimed; sooner if {'it is released' if others else 'its owner releases it'})")
                    return (f"{due} if {whose} {_ids(reclaimed)} stay idle (they are then reclaimed; sooner if "
                            f"{'they are released' if others else 'their owners release them'})")
                idle, none = _idle_release(details, waits, now)
                return (f"ETA unknown: it can start only after {some}{whose} {_ids(waits)}{_queued(details, waits)} "
                        f"{'is' if one else 'are'} released{by}{idle} ({_NO_LIMIT[kernel]}{_off(none)}){_now(none)}")
            rule = details.get("preemption_rule")
            if isinstance(rule, Mapping) and rule.get("start_when"):
                # the summary said what lets it start ("it can start when team-b's jobs free 1 GPU"): the ETA
                # adds only why it has no time (new user 14, N12: the same event said twice in other words)
                return ("ETA unknown: the running work it waits for has no time limit" if one else
                        "ETA unknown: none of the running work it waits for has a time limit")
            named = _named(waits, details.get("eta_waits_on_names"), details.get("eta_waits_on_owners"))
            return (f"ETA unknown: it can start only after {some}{_ids(named)}{_queued(details, waits)} "
                    f"{'ends' if one else 'end'}, "
                    f"{'which has no time limit' if one else 'none of which has a time limit'}")
        why = str(reason.get("eta_reason") or "").strip().rstrip(".")
        if str(reason.get("code") or "") in ("CpuJobLimit", "PortLimit"):
            # its owner's own CPU-only jobs free the place, not GPUs: no projection, and not "unknown"
            # either — it starts when one of them ends (red-team 15 R2)
            return why.removeprefix("it ") or "starts when one of them ends"
        if why.startswith(_PROVISIONAL):
            # not unknown, just not worked out yet (new user 6, F19: "ETA unknown: estimated within seconds")
            return "ETA not estimated yet (at the next scheduling cycle, within seconds)"
        return f"ETA unknown: {why}" if why else "ETA unknown"
    text = f"ETA {_clock(when, now)}"
    if relative and now is not None:
        wait = (when - now).total_seconds()
        text += f" ({relative_text(wait)})"
    details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    waits = details.get("eta_waits_on")
    rule = details.get("preemption_rule")
    if details.get("eta_code") == "MinRuntime" and isinstance(rule, Mapping) and isinstance(waits, Sequence) \
            and not isinstance(waits, str) and waits:  # its victims' minimum runtime ends (new user 20, N18)
        named = _named(waits, details.get("eta_waits_on_names"), details.get("eta_waits_on_owners"))
        return f"{text}: {min_runtime_clause(rule, named)}"
    if details.get("eta_code") == "Projected" and isinstance(waits, Sequence) and not isinstance(waits, str) and waits:
        # the core's data: the jobs whose end makes room for it (running, or queued ahead of it)
        named = _named(waits, details.get("eta_waits_on_names"), details.get("eta_waits_on_owners"))
        capped = _capped(details, waits, now)
        first = ""  # why a job queued behind it comes first: said last, after the ETA's conditions (N4)
        if len(waits) == 1 and capped:  # its limit, not its progress, sets the time (new user 21, N7)
            text += f", when {_ids(named)} {capped[0][1]}"
        elif _withheld(details) and all(str(w).startswith("l-") for w in waits):
            # another user's leases whose idle state is not the reader's: when, not why (red team 22, R2)
            one = len(waits) == 1
            some = "" if one else _some_of(details.get("eta_must_release"), len(waits))
            text += f", when {some}{_leases_of(details, waits)} {_ids(waits)} {'is' if one else 'are'} released"
        else:
            text += f", when {_ends_clause(named, details)}"
            first = _backfill_words(details, waits, now)
            text += "".join(f"; {name} {clause}" for name, clause in capped[:3])
        text += _progress_words(details, waits, now)
        lapse = _lapse_words(details, waits, now)  # progress that no longer sets the time (new user 21, N4)
        lapse += first  # new user 30, N4: no "(… backfill) (if it ends as estimated …)"
        bounds = details.get("eta_bounds")
        if isinstance(bounds, Mapping) and bounds:  # what bounds a re-estimated end, in the owner's terms
            if len(waits) == 1 and waits[0] in bounds:
                return f"{text} ({bounds[waits[0]]}){lapse}"
            return f"{text} ({'; '.join(f'{job} {bound}' for job, bound in bounds.items())}){lapse}"
        learned = details.get("eta_learned")
        if isinstance(learned, Sequence) and not isinstance(learned, str) and learned:
            # the running job's own line says "ends by <its limit>": say why this time is earlier,
            # from what it was learnt: similar past runs, or its owner's other programs (new user 11, N15)
            text += f" ({_learnt_conditions(learned, details, waits=waits, mine=mine)})"
        text += lapse
    note = str(details.get("eta_note") or "").strip().rstrip(".")
    if details.get("eta_code") == "BudgetReset":  # "…, when the month's budget resets" (hubadmin24 B8)
        # a later reset than the next one: the jobs ahead spend the ones before (newuser35 N6)
        spent = _spent_first(details, now)
        return f"{text}, {note}{f' ({spent})' if spent else ''}" if note else text
    text += _after_reset(details, reason.get("position"), now) + _budget_assumed(details)
    return f"{text}; {note}" if note else text


def _after_reset(details: Mapping[str, Any], position: Any, now: datetime | None) -> str:
    """``; not before Dec 7 00:00 UTC (when the day's budget resets), then behind 163 jobs queued ahead of
    it``: a job a spent budget holds whose projected start is later than the reset (``details.
    eta_budget_reset``, newuser34 N3: every held job said the reset, #1 and #164 alike); "" otherwise."""
    reset = details.get("eta_budget_reset")
    at = wire_time(reset.get("at")) if isinstance(reset, Mapping) else None
    if at is None or not isinstance(reset, Mapping):
        return ""
    period = str(reset.get("period") or "month")
    spent = _spent_first(details, now)
    text = f"; not before {_clock(at, now)} (when the {period}'s budget resets{f': {spent}' if spent else ''})"
    ahead = position - 1 if isinstance(position, int) and not isinstance(position, bool) else 0
    if ahead > 0:
        text += f", then behind {ahead} job{'' if ahead == 1 else 's'} queued ahead of it"
    return text


def _spent_first(details: Mapping[str, Any], now: datetime | None) -> str:
    """``the jobs ahead are expected to spend the one from Apr 1 00:00 UTC first, by their planned run times``: why
    a job's ETA is a later budget reset than the next one — the projection charged the budget with the work it
    starts before it (``details.eta_budget_reset.spent_from``, newuser35 N6; None: the current period's); ``the work
    running now is expected to spend …`` where no job of its team is queued ahead of it (``by_running``: its running
    work, leases included, spends it; newuser36 N5); "" when the projection did not move it."""
    reset = details.get("eta_budget_reset")
    if not isinstance(reset, Mapping) or "spent_from" not in reset:
        return ""
    since = wire_time(reset.get("spent_from"))
    period = str(reset.get("period") or "month")
    what = f"the one from {_clock(since, now)}" if since is not None else f"what is left {this_period_text(period)}"
    if reset.get("by_running"):  # no job of its team queued ahead: what runs now spends it (newuser36 N5)
        return f"the work running now is expected to spend {what} first, by its planned run times"
    return f"the jobs ahead are expected to spend {what} first, by their planned run times"


def _budget_assumed(details: Mapping[str, Any]) -> str:
    """``; if the month's budget lasts until then (by the planned run times it does)``: a projected start under a
    GPU-hour budget rests on the budget not being spent first (``details.eta_budget_assumed``, newuser35 N6): new
    work or runs longer than planned can spend it sooner; the parenthesis where the projection checked it."""
    assumed = details.get("eta_budget_assumed")
    if not isinstance(assumed, Mapping) or "eta_budget_reset" in details:
        return ""
    checked = " (by the planned run times it does)" if assumed.get("checked") else ""
    return f"; if the {assumed.get('period') or 'month'}'s budget lasts until then{checked}"


def _leases_of(details: Mapping[str, Any], waits: Sequence[Any]) -> str:
    """``ann's lease`` / ``ann's kernel leases`` / ``leases``: the leases ``waits`` by their owner when one
    user holds them all (``details.eta_waits_on_owners``), "kernel" where their public names say it."""
    lease = "kernel lease" if _named_kernel_leases(waits, details.get("eta_waits_on_names")) else "lease"
    lease += "" if len(waits) == 1 else "s"
    owners = details.get("eta_waits_on_owners")
    held = {owners.get(str(w)) for w in waits} if isinstance(owners, Mapping) else set()
    owner = next(iter(held)) if len(held) == 1 else None
    return f"{owner}'s {lease}" if isinstance(owner, str) and owner else lease


def _withheld(details: Mapping[str, Any]) -> frozenset[str]:
    """The work whose private state (progress, idle) this reason leaves out for its reader
    (``details.eta_withheld``: :func:`jupyter_sched.services.withheld.reason_for`, red team 22, R2)."""
    ids = details.get("eta_withheld")
    return frozenset(str(i) for i in ids) if isinstance(ids, Sequence) and not isinstance(ids, str) else frozenset()


def _public(details: Mapping[str, Any], job: Any) -> str:
    names = details.get("eta_waits_on_names")
    return (str(names.get(str(job)) or "").strip() if isinstance(names, Mapping) else "") or str(job)


def _capped(details: Mapping[str, Any], waits: Sequence[Any], now: datetime | None) -> list[tuple[str, str]]:
    """``[(name, "reaches its 2m time limit (its progress, …)")]`` of the jobs the ETA waits on whose limit
    stops them before their progress ends them (``details.eta_progress_capped``, new user 21, N7)."""
    capped = details.get("eta_progress_capped")
    if not isinstance(capped, Mapping):
        return []
    out = []
    for w in waits:
        row = capped.get(str(w))
        if isinstance(row, Mapping) and all(isinstance(row.get(k), (int, float)) and not isinstance(row.get(k), bool)
                                            for k in ("fraction", "needs_s", "limit_s")):
            out.append((_public(details, w),
                        progress_limit_clause(float(row["fraction"]), float(row["needs_s"]), float(row["limit_s"]),
                                              at=_report_clock(row.get("at"), now))))
    return out


def _report_clock(at: Any, now: datetime | None) -> str:
    """The time of a progress report an ETA read, with its seconds (a report every few seconds:
    the blocker's own line may show a newer one of the same minute, new user 22, N10); "" if none."""
    when = wire_time(at)
    return clock_text(when, now, seconds=True) if when is not None else ""


def _lapse_words(details: Mapping[str, Any], waits: Sequence[Any], now: datetime | None) -> str:
    """``; stuck's progress (90 % done at 01:59 UTC) said it would end at 01:59 UTC: it is late, so this ETA
    no longer reads it``: the jobs the ETA waits on whose progress report projects no end now
    (``details.eta_progress_lapsed``, new user 21, N4); "" if none."""
    lapsed = details.get("eta_progress_lapsed")
    if not isinstance(lapsed, Mapping):
        return ""
    out = []
    for w in waits:
        row = lapsed.get(str(w))
        fraction = row.get("fraction") if isinstance(row, Mapping) else None
        if not isinstance(row, Mapping) or isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            continue
        said, at = wire_time(row.get("said")), wire_time(row.get("at"))
        out.append(progress_lapse_clause(_public(details, w), float(fraction), str(row.get("lapse") or ""),
                                         _clock(said, now) if said else "the time it said",
                                         _clock(at, now) if at else ""))
    return "".join(f"; {clause}" for clause in out[:3])


def _progress_words(details: Mapping[str, Any], waits: Sequence[Any], now: datetime | None) -> str:
    """``, from its progress (40 % done, reported 05:08:30 UTC)``: the jobs the ETA waits on whose ends
    came from their own progress reports (``details.eta_progress``, issue 16 item 4), by their public
    names, with the time of the report read (``details.eta_progress_at``: the blocker's own line shows
    its latest, which may be newer; new user 22, N10); "" if none. Another user's job whose figure the
    reader may not see (``details.eta_withheld``) is said ``from its reported progress`` (red team 22, R2)."""
    progress = details.get("eta_progress")
    if not isinstance(progress, Mapping) or not progress:
        return ""
    names = details.get("eta_waits_on_names") if isinstance(details.get("eta_waits_on_names"), Mapping) else {}
    assert isinstance(names, Mapping)
    times = details.get("eta_progress_at") if isinstance(details.get("eta_progress_at"), Mapping) else {}
    assert isinstance(times, Mapping)
    hidden = _withheld(details)  # another user's figure: "from its reported progress" (red team 22, R2)
    reported: list[tuple[str, float | None, str]] = []
    for w in (str(w) for w in waits):
        f = progress.get(w)
        if w in hidden and w in progress:
            reported.append((str(names.get(w) or "").strip() or w, None, ""))
        elif isinstance(f, (int, float)) and not isinstance(f, bool):
            reported.append((str(names.get(w) or "").strip() or w, float(f), _report_clock(times.get(w), now)))
    clause = progress_clause(reported[:3], every=len(reported) == len(waits))
    return f", {clause}" if clause else ""


def _learnt_conditions(learned: Sequence[Any], details: Mapping[str, Any], *, waits: Sequence[Any],
                       mine: bool) -> str:
    """``if it runs as long as similar past runs did`` / ``if j-2 ends at ~12 % of its time limit,
    as its owner's other runs did`` (``details.eta_learned_other``: the learnt ends that came from
    their owner's runs of other programs, with the share of the limit; :mod:`.estimates`). Ends
    learnt the same way are said once — ``if they end at ~25 % of their time limits, as your other
    runs did`` — and by the names the ETA just gave them, not their ids (new user 18, N5: one clause
    per job, each by its bare id)."""
    other = details.get("eta_learned_other")
    other = other if isinstance(other, Mapping) else {}
    listed = details.get("eta_learned_population")  # of those, the ones from everybody's runs of their size
    population = {str(w) for w in listed} if isinstance(listed, Sequence) and not isinstance(listed, str) else set()
    listed = details.get("eta_learned_gpu_runs")  # and from everybody's GPU runs under like limits (hubadmin25 B11)
    gpu_runs = {str(w) for w in listed} if isinstance(listed, Sequence) and not isinstance(listed, str) else set()
    own = {str(o.get("id")) for o in (details.get("eta_waits_on_own") or ()) if isinstance(o, Mapping)} if mine else set()
    names = details.get("eta_waits_on_names") if isinstance(details.get("eta_waits_on_names"), Mapping) else {}
    assert isinstance(names, Mapping)
    waited = {str(w) for w in waits}
    hidden = _withheld(details)  # another user's history: "as estimated from past runs" (red team 22, R2)

    def subject(group: Sequence[str]) -> str:
        if set(group) == waited:  # every job the ETA waits on: the sentence just named them
            return "it" if len(group) == 1 else "they"
        return _ids([public or w for w in group for public in [str(names.get(w) or "").strip()]])

    groups: dict[tuple[str, str, bool], list[str]] = {}
    for w in (str(w) for w in learned):
        if w not in other:
            groups.setdefault((SAME_RUNS, "", False), []).append(w)
            continue
        share = other[w]
        source = WITHHELD_RUNS if share is None and w in hidden else POPULATION_RUNS if w in population \
            else POPULATION_GPU_RUNS if w in gpu_runs else OTHER_RUNS
        groups.setdefault((source, share_text(float(share) if isinstance(share, (int, float)) else None), w in own),
                          []).append(w)
    parts = []
    for (source, _, yours), group in groups.items():
        share = other.get(group[0])
        parts.append("if " + learnt_condition(subject(group), source, plural=len(group) > 1, yours=yours,
                                              share=float(share) if isinstance(share, (int, float)) else None))
    return "; ".join(parts)


def unblock_sentence(reason: Mapping[str, Any], *, mine: bool = False) -> str:
    """What would let it start (see :func:`_unblock`), with no brackets inside brackets (:func:`unnested`)."""
    return unnested(_unblock(reason, mine=mine))


def _unblock(reason: Mapping[str, Any], *, mine: bool = False) -> str:
    """What would let the job start, one sentence, or "" when the ETA already says it. ``mine``:
    the reader owns the job (see :func:`render_reason`)."""
    code = str(reason.get("code") or "")
    details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    own = own_leases(reason) if mine else []
    if own and code in QUOTA_CODES:
        leases, holds = _own_leases_text(own)
        ids = " ".join(str(o.get("id")) for o in own)
        run = f"%gpu release in that notebook (or `jupyter-sched cancel {ids}`)" if _kernel_leases(own) else \
            _release_with(own)  # no notebook holds a lease bound to no kernel (new user 13, N9)
        return (f"{leases[:1].upper()}{leases[1:]} {holds} of {details.get('team') or 'the team'}'s quota: run "
                f"{run} and this one can start.")
    if code == "Held" and mine and details.get("admin") and details.get("by") and details.get("job"):
        said = held_by_admin_unblock(str(details["by"]), str(details["job"]))
        return _sentence(said[:1].upper() + said[1:])
    if code in QUOTA_CODES:
        return _quota_unblock(code, details, said=str(reason.get("message") or ""), unlined=_unlined(reason))
    if code in CAPACITY_CODES or code == "Fragmented":
        held = _held_by_unblock(details.get("held_by_one_user"))
        if held:  # one user holds most GPUs and no quota applies: the ETA is not all there is to do
            return held
    part = details.get("host_share")
    if (code in CAPACITY_CODES or code == "Fragmented") and isinstance(part, Mapping) and isinstance(
            part.get("ask"), str) and part["ask"]:
        # asking more CPU or memory than a GPU node's part: what to ask to start there now (session 40); when
        # it starts otherwise is the ETA's to say
        return _sentence(part["ask"][:1].upper() + part["ask"][1:])
    if code in CAPACITY_CODES or code in ("Backoff", "CpuJobLimit", "PortLimit"):
        return ""  # the ETA is when running jobs end / the backoff ends / one of its CPU-only jobs ends
    if code == "WaitingForPreemption":
        return "It starts once the preempted jobs have stopped."
    if code == "NodeCordoned" and isinstance(details.get("cordons"), Sequence) and details["cordons"]:
        return _cordon_unblock(details)
    if code == "NoMatchingGpuModel":
        models = _names(details.get("models"))
        return f"Ask for one of the models here: {models}." if models else "This cluster has no GPUs; ask for 0 GPUs."
    if details.get("field") == "mem_per_gpu" and details.get("max_mib"):
        return f"Ask for at most {memory_texts(details['max_mib'])[0]} per GPU."
    most = details.get("max_per_node")
    if code == "Unschedulable" and isinstance(most, int) and most > 0 and details.get("requested"):
        # the core's advice named "another GPU model" also when the job named none (issue 20)
        model = str(details.get("model") or "any model")
        gpus = f"{most} GPU{'s' if most != 1 else ''}"
        # "per worker" only for a gang: a user who never asked for workers read it as jargon, and
        # "no node here has more" repeated the summary (new user 4)
        workers = details.get("workers")
        per = " per worker" if isinstance(workers, int) and workers > 1 else ""
        if model == "any model":  # a node mixing models: at most so many of one model (verify21 V11)
            return f"Ask for at most {gpus}{per}{' (of one model)' if details.get('one_model') else ''}."
        return f"Ask for at most {gpus}{per}, or for another model: no node here has more than {most} {model} GPU{'s' if most != 1 else ''}."
    lined = details.get("owner_teams_with_lines")
    if details.get("never") == "quota" and isinstance(lined, Sequence) and not isinstance(lined, str):
        return _unlined_team_unblock(details, [str(t) for t in lined])
    fallback = str(reason.get("unblock") or "").strip()
    return _sentence(fallback[:1].upper() + fallback[1:]) if fallback else ""


def _cordon_unblock(details: Mapping[str, Any]) -> str:
    """A job a cordoned node would hold: how the cordon ends, said once — when only that node can hold it the ETA
    says "it waits until an admin uncordons vm", and this only how an admin does it (newuser35 n11: "waits until an
    admin uncordons vm · starts when an admin uncordons vm (jupyter-sched nodes uncordon vm)") —, its command
    marked as an admin's (a user reading it cannot run it)."""
    first = details["cordons"][0]
    node = str(first.get("node") if isinstance(first, Mapping) and first.get("node") else "the node")
    command = f"jupyter-sched nodes uncordon {node}"
    if details.get("eta_code") == "NodeCordoned":
        return f"An admin ends the cordon with {command}."
    other = "" if details.get("no_other_nodes") or "requested" not in details else \
        ", or when GPUs free up on the other nodes"
    return f"It starts when an admin uncordons {node} (admins: {command}){other}."


def _unlined_team_unblock(details: Mapping[str, Any], lined: Sequence[str]) -> str:
    """To its owner, a job charged to a team without a quota line (it can never start there): the owner's
    teams that have one (``details.owner_teams_with_lines``, which the service adds to its owner's reads
    only: :func:`jupyter_sched.services.owner_teams.with_owner_teams`) named, and the admin's fix — made by
    the owner themselves when ``details.owner_is_admin`` (new user 23, N6: "resubmit with a team of yours
    that has a quota line" named none of ml and cv)."""
    team = str(details.get("team") or "its team")
    fix = (f"add a quota line for team {team} with PUT quotas (or raise {UNLISTED_SETTING})"
           if details.get("owner_is_admin") else
           f"ask an admin to add a quota line for team {team} (or to raise {UNLISTED_SETTING})")
    if not lined:
        return f"None of your teams has a quota line: {fix}; until then it cannot start."
    teams = lined[0] if len(lined) == 1 else f"{', '.join(lined[:-1])} or {lined[-1]}"
    whose = "your team with a quota line" if len(lined) == 1 else "your teams with a quota line"
    return f"Cancel it and resubmit it to team {teams} ({whose}), or {fix}."


def _unlined(reason: Mapping[str, Any]) -> list[str]:
    """The GPU models the job may use where its scope has no quota line (``per_flavor`` entries
    marked ``unlisted``), in the job's order."""
    entries = reason.get("per_flavor")
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        return []
    return list(dict.fromkeys(str(e.get("flavor")) for e in entries
                              if isinstance(e, Mapping) and e.get("unlisted") and e.get("flavor")))


def _quota_unblock(code: str, d: Mapping[str, Any], *, said: str = "", unlined: Sequence[str] = ()) -> str:
    """By the rule that binds (``details.rule`` from the quota ledger: ``user cap``, ``team quota``
    or ``team borrowing limit``; older reasons: ``user`` set means a user cap). ``said``: the summary
    beside it, whose numbers are not said again (new user 10, N16: "above its guarantee 1 + borrowing
    limit 1 · … · It starts when nlp uses fewer GPUs than its guarantee plus borrowing limit (1 + 1)").
    ``unlined``: the GPU models the job may use where its scope has no quota line — the line an
    admin could add there (verify20 V3: a job full on its team's A100 line and without one on H100
    was told "vision has no GPU quota: an admin must give it one")."""
    team = str(d.get("team") or "the team")
    user = d.get("user")
    model = "" if d.get("model") in (None, "", "*") else f" {d.get('model')}"
    whom = f"user {d.get('asker')} in {team}" if d.get("own_models") and d.get("asker") else team
    on = f" for {', '.join(unlined)}" if unlined else ""
    if d.get("unlisted"):  # the binding line is that of a scope without one (red team 19 R3, 20 R2)
        fix = f"gives {whom} a quota line{on} (PUT quotas) or raises {UNLISTED_SETTING}"
        if d.get("quota") == 0:
            return f"It starts when an admin {fix}."
        return f"It starts when {team}'s work without a quota line releases GPUs, or when an admin {fix}."
    more = f" or gives {whom} a quota line{on}" if unlined else ""
    rule = str(d.get("rule") or ("user cap" if user else "team borrowing limit" if code == "BorrowingLimitReached"
                                 else "team quota"))
    if rule == "user cap" and user:  # only the user's own work (or an admin) frees it
        cap = d.get("quota")
        cap_text = f" of {_number(cap)}{model} GPUs" if cap is not None else ""
        sentence = (f"It starts when {user}'s own running work leaves room under {user}'s cap{cap_text} in {team}, "
                    f"or when an admin raises that cap{more}.")
    elif code == "NoQuota" or d.get("quota") == 0:
        return f"{team} has no{model} GPU quota: an admin must give it one."
    elif rule == "team borrowing limit" and "borrowing limit" in said:
        sentence = (f"It starts when {team}'s running jobs or kernel leases release{model} GPUs, or when an admin "
                    f"raises {team}'s borrowing limit{more}.")
    elif rule == "team borrowing limit":
        limit = d.get("borrowing_limit")
        numbers = (f" ({_number(d.get('guaranteed'))} + {_number(limit)})"
                   if d.get("guaranteed") is not None and limit is not None else "")
        sentence = (f"It starts when {team} uses fewer{model} GPUs than its guarantee plus borrowing limit{numbers}, "
                    f"or when an admin raises them{more}.")
    else:
        # "jobs or kernel leases": a team's quota is often held by a notebook's %gpu lease (issue 20)
        sentence = (f"It starts when {team}'s running jobs or kernel leases release{model} GPUs, or when an admin "
                    f"raises {team}'s quota{more}.")
    also = d.get("also_exceeds")
    if isinstance(also, Sequence) and not isinstance(also, str) and also:
        # each line with its GPU model, as the summary says its own (verify20 V3's kind)
        names = [f"{o.get('user')}'s{_on_model(o)} cap" if o.get("user") else f"{o.get('team')}'s{_on_model(o)} quota"
                 for o in also if isinstance(o, Mapping)]
        if names:
            sentence += f" Also full: {' and '.join(names)}."  # names are identifiers: never capitalised
    return sentence


def _on_model(line: Mapping[str, Any]) -> str:
    """`` A100-80GB`` for a line of one GPU model, "" for one of every model (``*``)."""
    model = line.get("model")
    return f" {model}" if isinstance(model, str) and model not in ("", "*") else ""


def figure(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, never in exponent notation (red30 R9: a 2 TiB file read
    "2.05e+03 GiB"): ``3.5``, ``1,000``, ``12,345``."""
    text = f"{value:.{digits}g}"
    return f"{value:,.0f}" if "e" in text else text


def memory_text(mib: Any) -> str:
    """``81920`` → ``80 GiB``; ``1536`` → ``1.5 GiB``; ``512`` → ``512 MiB`` (binary units)."""
    value = float(mib)
    for unit, size in (("TiB", 1024.0**2), ("GiB", 1024.0)):
        if value >= size:
            return f"{figure(value / size, 4)} {unit}"
    return f"{figure(value, 4)} MiB"


def memory_texts(*mibs: Any) -> tuple[str, ...]:
    """Amounts of memory said side by side, each as :func:`memory_text` — unless that rounds: then
    all in MiB, exact (new user 14, N16: 81921 MiB asked of GPUs of 81920 read "asks for 80 GiB …;
    the most any GPU here has is 80 GiB", two equal figures the user could not act on; and a limit
    rounded up, "at most 79.1 GiB" of 81000 MiB, would itself be refused)."""
    texts = tuple(memory_text(mib) for mib in mibs)
    if any(not _reads_exactly(text, mib) for text, mib in zip(texts, mibs, strict=True)):
        return tuple(f"{round(float(mib))} MiB" for mib in mibs)
    return texts


def _reads_exactly(text: str, mib: Any) -> bool:
    """Whether ``text`` (``80 GiB``) read back is ``mib`` MiB to the MiB."""
    number, unit = text.split()
    return round(float(number) * {"TiB": 1024.0**2, "GiB": 1024.0, "MiB": 1.0}[unit]) == round(float(mib))


def wire_time(value: Any) -> datetime | None:
    """An ISO 8601 time from the wire, in UTC; None when absent, unparseable or without an offset."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(timezone.utc) if when.tzinfo else None


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


def _words(code: str) -> str:
    """``WaitingForCapacity`` → ``waiting for capacity`` (a reason the core sent without a message)."""
    out = "".join(f" {c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(code))
    return out.strip()


code_words = _words
"""A reason's code in words, for a table's reason column (new user 10, N15: ``%schedule queue`` showed
``BorrowingLimitReached`` where the CLI never shows a code)."""


def _named(ids: Sequence[Any], names: Any, owners: Any = None) -> list[str]:
    """``["long-a (j-1)", "j-2", "bob's job \"x\" (j-3)"]``: each job by the name its owner gave, with
    its id (the core's ``eta_waits_on_names``; new user 5: "when j-1m8vbassf-j9njh9 ends" — nobody
    knows their ids), and another user's work with its owner (``eta_waits_on_owners``), by
    :func:`work_named`."""
    known = names if isinstance(names, Mapping) else {}
    whose = owners if isinstance(owners, Mapping) else {}
    return [work_named(str(i), known.get(str(i)), whose.get(str(i))) for i in ids]


JUST_STARTED = "stopped just after it started"
"""How a run stopped before or just after it started opens (new user 24, N1): the engine's requeue reason
and the log's last line (:func:`jupyter_sched.engine.transitions.just_started`)."""
NOT_AN_ATTEMPT = "it is back in the queue, this does not count as an attempt"
"""What such a run's requeue says after why it was stopped; the core's later reasons say it too
(:meth:`~jupyter_sched.scheduling.context.CycleContext.preempted_clause`)."""


def preempted_how(said: str) -> str:
    """Why a preemption happened, as the clause after its preemptor's name: ``, a higher-priority
    normal job of team ml`` / ``, to return borrowed quota to ml`` / ``, as its team was borrowing``,
    from the preemption's own sentence (the core's ``Preempt.reason``, with or without the requeue's
    ``preempted: ``); "" when it says none of these. One wording for the queue's "requeued after
    preemption by …" and the panel's Preempted toast (new user 20, N20: the toast said "preempted:
    preempted by higher-priority normal job j-… of team ml" after naming the preemptor)."""
    said = said.removeprefix(f"{JUST_STARTED}: ").removeprefix("preempted: ")
    if said.startswith("preempted to "):  # a reclaim: "to return borrowed quota to eveteam"
        return ", " + said.removeprefix("preempted ")
    if said.startswith("preempted (its team borrows)"):
        return ", as its team was borrowing"
    higher = re.match(r"preempted by higher-priority (\w+) (job|lease|service) \S+ of (?:team )?([^\s;,]+)", said)
    if higher is not None:  # the preemptor by its kind (new user 16, N12)
        return f", a higher-priority {higher.group(1)} {higher.group(2)} of team {higher.group(3)}"
    return ""


def departed_text(work: str, owner: str, team: str, since: str, *, reclaimable: bool = True) -> str:
    """Why work still charged to ``team`` may be taken back by its members, the one wording of the
    waiting member's reason, the ``team_left`` record and the lease owner's keepalive notice (red
    team 24, R6): ``GPUs held by alice's kernel lease (l-1); alice left team ml (found 15:02 UTC):
    outside ml's guarantee, reclaimable by its members``.

    Args:
        work: the work as :func:`work_named` names it (``alice's kernel lease (l-1)``; ``your lease
            l-1`` to its owner).
        owner: who left; ``team``: the team it is still charged to; ``since``: when the change was
            found, as the caller says times (a reason's ISO time, which the renderer turns into a
            clock time; a clock time in an audit record or an answer).
        reclaimable: False where the team's reclaim rule keeps it (the clause then ends at the guarantee).
    """
    return (f"GPUs held by {work}; {owner} left team {team} (found {since}): outside {team}'s guarantee"
            + (", reclaimable by its members" if reclaimable else ""))


def departed_lease_notice(lease_id: str, team: str, since: str, *, gpus: float, teams: Sequence[str],
                          kept_until: str | None = None) -> str:
    """What a keepalive of a lease whose owner left its team answers (200, nothing extended; red team
    24, R6), to its owner: the lease is outside the team's guarantee (:func:`departed_text`), is not
    renewed, and how to ask again under a team they are in now::

        GPUs held by your lease l-1; you left team ml (found 15:02 UTC): outside ml's guarantee, reclaimable
        by its members; it is not renewed: this keepalive did not extend it, and it ends when ml's members
        take its GPUs back or it is released as idle — request GPUs again under your current team:
        %gpu request 1 --team cv

    Args:
        lease_id / team / since: the lease, the team it is charged to, when the change was found (a clock time).
        gpus: the GPUs it holds (the request to repeat); ``teams``: the owner's teams now (their default first).
        kept_until: the end of an earlier keepalive still running, as a clock time (it stays as it was).
    """
    ask = f"%gpu request {gpus:g}" + (f" --team {teams[0]}" if teams else "")
    where = "under your current team" if teams else "once an admin adds you to a team"
    kept = f"; its earlier keepalive still runs until {kept_until} and is not extended" if kept_until else ""
    return (f"{departed_text(f'your lease {lease_id}', 'you', team, since)}; it is not renewed: this keepalive did "
            f"not extend it{kept}, and it ends when {team}'s members take its GPUs back or it is released as idle — "
            f"request GPUs again {where}: {ask}")


def departed_victim_text(owner: str, team: str, since: str, work: str, for_job: str) -> str:
    """The preemption's sentence for work whose owner left its team, as its owner and the audit read
    it: ``preempted to return team ml's guaranteed GPUs to its members: alice left team ml (found …),
    so this lease was outside ml's guarantee; taken back for j-1`` (a reclaim: :func:`preempted_how`)."""
    return (f"preempted to return team {team}'s guaranteed GPUs to its members: {owner} left team {team} "
            f"(found {since}), so this {work} was outside {team}'s guarantee; taken back for {for_job}")


QUOTED_NAME_MAX = 40
"""Characters of another user's job name quoted in a reason; longer names end with "…"."""


def work_named(job_id: str, name: Any, owner: Any = None) -> str:
    """How a reason names a job or lease — the one place (red team 15, R8).

    The owner's own work (``owner`` None): ``long-a (j-1)``, or the bare id when it has no name
    that says more. Another user's: the scheduler's words around the name they chose, with whose
    it is, the name quoted and cut to :data:`QUOTED_NAME_MAX` characters — ``red15b's job "your own
    job a-train, cancel it with jup"… (j-…)`` — so a name cannot pass for the scheduler's words
    (:func:`quoted_name`);
    a lease's default name is not quoted (``bob's kernel lease (l-…)``)."""
    text = name.strip() if isinstance(name, str) else ""
    if text == job_id:
        text = ""
    if not isinstance(owner, str) or not owner:
        return f"{text} ({job_id})" if text else job_id
    kind = "lease" if job_id.startswith("l-") else "job"
    if text in LEASE_NAMES:
        return f"{owner}'s {text} ({job_id})"
    if not text:
        return f"{owner}'s {kind} {job_id}"
    return f"{owner}'s {kind} {quoted_name(text)} ({job_id})"


def quoted_name(text: str, limit: int = QUOTED_NAME_MAX) -> str:
    """Another user's name in a line others read, quoted so it cannot forge the line around it
    (red team 18, R5: ``x" (j-fake) ends at 16:40 UTC`` read as a job, an id and an end time):
    JSON string quoting (``"x\\" (j-fake) ends at 16:40 UTC"``: a quote mark or backslash of the
    name is escaped), cut to ``limit`` characters with the "…" outside the quotes, so the name never
    decides where the quoted text ends."""
    cut = len(text) > limit
    shown = text[:limit - 1].rstrip() if cut else text
    return json.dumps(shown, ensure_ascii=False) + ("…" if cut else "")


def _ids(values: Sequence[Any], shown: int = 3) -> str:
    """``j-1``, ``j-1 and j-2``, ``j-1, j-2, j-3 and 2 more``."""
    ids = [str(v) for v in values]
    if len(ids) == 1:
        return ids[0]
    if len(ids) <= shown:
        return ", ".join(ids[:-1]) + f" and {ids[-1]}"
    return ", ".join(ids[:shown]) + f" and {len(ids) - shown} more"


def _names(values: Any) -> str:
    if isinstance(values, Sequence) and not isinstance(values, str):
        return ", ".join(str(v) for v in values)
    return ""


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def as_clause(text: str) -> str:
    """A sentence as a clause of a one-line message: first letter lower-case (unless it starts a
    name in capitals, such as GPU or JSON) and no final period, so the parts join with ``: `` and
    `` — `` without ``. —`` (the CLI's error line; a REST refusal's message and hint)."""
    text = text.strip()
    if text[:1].isupper() and not text[1:2].isupper():
        text = text[0].lower() + text[1:]
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


def refusal_line(message: str, hint: str | None) -> str:
    """A refusal (or a dry run's "never") as one sentence of clauses, what blocks it then its fix after a dash:
    ``needs 99 GPUs of any model on one node but the largest node has 4 — ask for at most 4 GPUs`` (no final
    stop: each surface ends it its own way — the CLI with ``[code]``, the magics with a full stop). The one
    shape of that sentence on the CLI's refusal and dry-run lines and the magics' (newuser32 n1: "— Ask for at
    most 4 GPUs." with a capital after the dash in the panel, "has 4. Ask for …" in the magics, the fix left
    out of the panel's Check fit); the panel joins its text with the same rule (``format.ts`` ``refusalLine``).
    ``message``/``hint``: :func:`refusal_text`'s (a reason's summary and unblock sentences, or the server's)."""
    said = as_clause(message)
    return f"{said} — {as_clause(hint)}" if hint and hint.strip() else said


def refusal_text(message: str, hint: str | None, details: Mapping[str, Any] | None,
                 field: str | None = None) -> tuple[str, str | None]:
    """``(message, hint)`` for a refused submission: when the server attached the reason (422: it
    can never run here), its rendered summary and unblock sentence, so a refusal reads like the
    same reason in the queue; otherwise the server's own message and hint, without a leading
    ``time_limit: `` when the message starts with the ``field`` the caller names in its own
    syntax anyway (``--time-limit: cannot parse duration 'forever'``)."""
    reason = (details or {}).get("reason")
    if not isinstance(reason, Mapping):
        if field and message.startswith(f"{field}: "):
            message = message[len(field) + 2:]
        # its clocks ("reclaims wait until Dec 7 11:00 UTC") in a known reader's zone, with their date (newuser38 n30)
        # (an ISO time in it is left: `e.g. 2025-03-30T06:30:00Z` is what to type)
        return (one_gpu(clocks_said(message, None, iso=False)),
                one_gpu(clocks_said(hint, None, iso=False)) if hint else hint)
    text = render_reason(reason, never=True)
    if isinstance(said := (details or {}).get("from_profile"), str):  # a profile's value (newuser38 n28)
        return f"{said}: {text.summary}", hint or text.unblock
    return text.summary, text.unblock or hint
