"""A quota line set below what its running work holds (hubadmin24 B4): said to the admin who sets it.

``PUT quotas`` (and its ``dry_run``, the panel's "Save quotas") that lowered a listed team's limit
under its running work said nothing, while the same case for a team *without* a line had its
sentence (:func:`~.ceiling.unlisted_warning`). Nothing running is stopped by a lower limit: the work
runs on, and the team's pending work waits until its use is under the new limit. :func:`over_limit_warnings`
says that per line — per team, per GPU model where the lines are per model, per user for a user's
cap — from a :class:`~.ledger.QuotaLedger` of the *new* set charged with the running work (the
scheduling cycle's own charge: :class:`~jupyter_sched.scheduling.context.CycleContext`'s, a GPU only
a team's shares occupy counted whole), so the numbers are those admission then uses, the asked
figure said beside them where they differ. Work the same change preempts is said apart (its own
lines): the ledger is charged without it, and a line says what runs on *besides* it (newuser40 N4:
"preempts … half4 … half3" and "it runs on (nothing is stopped)" in one answer). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..model import ANY_MODEL, GPU_MILLI, JobSpec, QuotaSet
from ..model.units import gpus_phrase
from .ledger import Line, QuotaLedger, line_applies

__all__ = ["over_limit_warnings"]


def over_limit_warnings(ledger: QuotaLedger, old: QuotaSet, pending: Iterable[JobSpec], *,
                        preempted: Mapping[tuple[str, str | None, str], int] | None = None) -> list[str]:
    """One warning per quota line of ``ledger.quotas`` (the new set) whose running work — what
    ``ledger`` is charged with — holds more GPUs than the line's ceiling (guaranteed + borrowing
    limit), where ``old`` (the set in force before) had no such line or a higher (or no) ceiling
    for it: ``nlp: running work holds 3 GPUs, 2 GPUs over the new limit of 1 GPU — it runs on
    (nothing is stopped); its 9 pending jobs wait until it is under``. ``pending``: the specs of
    the pending jobs, counted on the lines that count their requests (a GPU-model line: those that
    ask only for models it covers; a user's line: that user's); those asking for more than the
    ceiling itself are said apart (``2 more ask for more than 1 GPU and can never start under
    it``). Held is what the line counts (:meth:`~.ledger.QuotaLedger.used`: a team line's shares
    alone on a GPU count it whole), the asked figure beside it where it differs (``holds 3 GPUs as the
    line counts them (2.1 GPUs asked: …)``). ``preempted``: per line key, how many running jobs the
    same change preempts (left out of ``ledger``, their specs among ``pending``): a line over its limit
    says ``besides the 3 preemptions above, the rest runs on``; one they bring within it says nothing.
    Lines in the new set's order; empty when no line is over."""
    before = {q.key: q for q in old.quotas}
    specs = [s for s in pending if s.resources.total_milli > 0]
    said: list[str] = []
    for q in ledger.quotas.quotas:
        line = ledger.lines.get(q.key)
        if line is None or line.ceiling is None:
            continue
        held, asked = ledger.used(line.key), ledger.usage.get(line.key, 0)
        if held <= line.ceiling:
            continue
        was = before.get(q.key)
        if was is not None and was.borrowing_limit is not None and \
                round((was.guaranteed + was.borrowing_limit) * GPU_MILLI) <= line.ceiling:
            continue  # not lowered now: already said when it was (GET quotas' status lines say the rest)
        counted = [s.resources.total_milli for s in specs if _counts(line, s)]
        waiting, never = sum(1 for m in counted if m <= line.ceiling), sum(1 for m in counted if m > line.ceiling)
        after = (f"its {waiting} pending job{'s' if waiting != 1 else ''} wait{'s' if waiting == 1 else ''} "
                 f"until it is under" if waiting else "new work waits until it is under")
        if never:  # above the ceiling itself: never, whatever ends (new user 18, N12)
            after += (f"; {never} more ask{'s' if never == 1 else ''} for more than "
                      f"{gpus_phrase(line.ceiling / GPU_MILLI)} and can never start under it")
        stopped = (preempted or {}).get(line.key, 0)
        besides = (f"besides the {stopped} preemption{'s' if stopped != 1 else ''} above, " if stopped else "")
        runs = ("the rest runs on (nothing else is stopped)" if stopped else "it runs on (nothing is stopped)")
        counted_as = ("" if asked == held else f" as the line counts them ({gpus_phrase(asked / GPU_MILLI)} asked: "
                      f"a GPU only its shares occupy counts whole)")
        said.append(f"{_scope(line)}: {besides}running work holds {gpus_phrase(held / GPU_MILLI)}{counted_as}, "
                    f"{gpus_phrase((held - line.ceiling) / GPU_MILLI)} over the new limit of "
                    f"{gpus_phrase(line.ceiling / GPU_MILLI)} — {runs}; {after}")
    return said


def _scope(line: Line) -> str:
    """``nlp``, ``nlp on A100-80GB``, ``user bo in nlp`` (``on H100`` where the cap is per model)."""
    where = "" if line.model == ANY_MODEL else f" on {line.model}"
    return f"{line.team}{where}" if line.user is None else f"user {line.user} in {line.team}{where}"


def _counts(line: Line, spec: JobSpec) -> bool:
    """Does ``line`` count ``spec``'s request (its team, its user for a user line, its models)?"""
    if spec.team != line.team or (line.user is not None and spec.user != line.user):
        return False
    if line.model == ANY_MODEL:
        return True
    models = spec.resources.gpu_models
    return bool(models) and all(line_applies(line.model, m) for m in models)
