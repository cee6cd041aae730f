"""``quotas what-if`` in words (hubadmin26 B7): a past period's usage of a team against a proposed line and the line in
force — the server's ``text`` (``GET quotas/what-if``) and the CLI's, which says the period in the reader's zone as
every other CLI time (newuser35 n3: ``from 2026-10-01T00:00:00Z to 2026-12-07T00:52:28.870475Z`` under
TZ=Europe/Berlin, beside ``usage``'s ``Nov 1 01:00 CET → Dec 1 01:00 CET``). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ..model.units import gpu_hours_phrase, gpus_phrase
from .usage import parsed_utc, period_text

__all__ = ["NOW_WITHIN", "no_line_note", "what_if_text"]

NOW_WITHIN = timedelta(seconds=60)
"""A period whose end lies this close to the reader's now ends "now": the server cuts a replay at its own clock."""


def what_if_text(answer: Mapping[str, Any], now: datetime) -> str:
    """The replay of ``answer`` (``GET quotas/what-if``'s shape: ``team``, ``gpu_model``, ``since``, ``until``,
    ``proposed``, ``in_force`` — each line's figures as :class:`~jupyter_sched.accounting.what_if.LineReplay`'s
    ``to_dict``) in sentences, its period as ``usage`` says one (``Oct 1 00:00 CET → now``: the reader's zone where
    :func:`~jupyter_sched.model.units.shown_in` set one, else UTC)."""
    team, model = str(answer.get("team") or ""), answer.get("gpu_model")
    on = f" on {model}" if model else ""
    since, until = str(answer.get("since") or ""), str(answer.get("until") or "")
    end = parsed_utc(until)
    period = period_text(since, None if end is not None and end >= now - NOW_WITHIN else until, now)
    proposed, in_force = answer.get("proposed") or {}, answer.get("in_force")
    used = float(proposed.get("used_gpu_hours") or 0.0)
    peak = float(proposed.get("peak_gpus") or 0.0)
    head = (f"Team {team}{on}, {period}: used {gpu_hours_phrase(used, f'{used:,.1f}')}, at most "
            f"{gpus_phrase(peak)} at once")
    asked_used, asked_peak = (float(proposed.get(k, v) or 0.0) for k, v in (("asked_gpu_hours", used),
                                                                             ("asked_peak_gpus", peak)))
    if round(asked_used, 1) != round(used, 1) or round(asked_peak, 3) != round(peak, 3):  # newuser40 n10
        head += (f", counted as its quota lines count them (a GPU only its GPU shares held counts whole; as asked: "
                 f"{gpu_hours_phrase(asked_used, f'{asked_used:,.1f}')}, at most {gpus_phrase(asked_peak)} at once)")
    parts = [head, _said("the proposed line", proposed)]
    parts.append(_said("the line in force", in_force) if isinstance(in_force, Mapping) else
                 f"Team {team} has no line{on} in force now")
    parts.append("when held-back work would have run instead is not said: the rest of the queue would have "
                 "moved too")
    return " ".join(_capital(p) + "." for p in parts)


def no_line_note(team: str, near: str) -> str:
    """The sentence added when ``team`` used nothing and has no line (a typo, or a team still to come): ``near``
    is the close names' hint."""
    return f"Team {team} used no GPU and has no line here: {near}"


def _said(name: str, line: Mapping[str, Any]) -> str:
    limit = line.get("borrowing_limit")
    said = (f"{name} (guaranteed {float(line['guaranteed']):g}, "
            f"{'no limit' if limit is None else f'borrowing limit {float(limit):g}'}): "
            f"{float(line['within_guarantee_gpu_hours']):,.1f} GPU-h within its guarantee, "
            f"{float(line['borrowed_gpu_hours']):,.1f} borrowed (another team's reclaim could have taken them; above "
            f"the guarantee for {float(line['hours_above_guarantee']):,.1f} h)")
    if limit is not None:
        said += (f", {float(line['over_limit_gpu_hours']):,.1f} over its limit (that work would have waited; above "
                 f"the limit for {float(line['hours_above_limit']):,.1f} h)")
    return said


def _capital(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]
