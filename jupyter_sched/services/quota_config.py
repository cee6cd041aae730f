"""The config file's quota lines (``c.SchedApp.quotas``) at a start, against a set PUT at run time.

The rule (new user 20, N26: a restart silently put the config's lines back over an admin's PUT
quotas — a per-user line vanished and a job over it started):

1. the config's lines are applied at a start only when they **changed** since they were last applied
   (their digest is kept in the store, :mod:`~jupyter_sched.store.quota_source`); unchanged lines
   leave the set in force — an admin's PUT quotas outlives restarts, as the idle policy does;
2. changed lines replace the set in force; when that set differs, the start-up log says so at
   WARNING, naming the lines removed, added and changed and who set the replaced ones, and the
   audit row (``quotas_changed``, actor ``config``) says the same;
3. a store that never recorded a config digest (written before schema version 14) whose last quota
   change was an admin's PUT keeps that set and says so at WARNING (the config is remembered from
   then on: change it to replace the set).

No config lines (``quotas`` empty or unset): the config does not manage quotas; nothing changes.
``GET quotas`` says who set the set in force (``source``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..admission import system_caller
from ..model.quota import ANY_MODEL, Quota
from ..model.units import clock_text
from ..quota.changes import quota_line_changes
from ..store.quota_source import CONFIG_ACTOR, QuotaSource, config_digest
from ..wording.quota import quota_source_text
from .models import QuotaLine, SetQuotasRequest
from .quotas import QuotasService

__all__ = ["apply_config_quotas", "line_changes", "source_text"]


def source_text(source: QuotaSource | None, setting: str = "c.SchedApp.quotas") -> str:
    """Who set the set in force, in words (:func:`~..wording.quota.quota_source_text`): ``the config file
    (c.SchedApp.quotas) at Dec 4 23:15 UTC`` or ``root with PUT quotas at Dec 4 23:14 UTC``; "" when unknown.
    ``setting``: the config file's setting named (``c.SchedApp.user_teams`` for memberships)."""
    if source is None:
        return ""
    return quota_source_text(source.set_by, source.set_at, config=source.set_by == CONFIG_ACTOR, setting=setting)


def line_changes(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[str]:
    """What replacing the quota lines ``old`` by ``new`` (dicts of :class:`QuotaLine`) does, one
    phrase per line: ``removed ml/root (guaranteed 1, borrowing limit 0.5)``, ``added vision
    (guaranteed 1, borrowing limit 0)``, ``changed ml: guaranteed 2 → 3`` (only what differs);
    removed first, then added, then changed (:func:`~..quota.changes.quota_line_changes`). Empty: same lines."""
    return quota_line_changes([_quota(q) for q in old], [_quota(q) for q in new])


def _quota(line: Mapping[str, Any]) -> Quota:
    return Quota(team=str(line["team"]), user=line.get("user"), gpu_model=str(line.get("gpu_model") or ANY_MODEL),
                 guaranteed=float(line.get("guaranteed") or 0), borrowing_limit=line.get("borrowing_limit"))


def apply_config_quotas(quotas: QuotasService, lines: Sequence[QuotaLine], logger: logging.Logger) -> None:
    """Apply the config file's quota ``lines`` at a start by the rule of the module docstring.

    Raises:
        ValidationError: a line promises more GPUs than exist (as PUT quotas; field ``quotas``).
    """
    if not lines:
        return
    store = quotas.ctx.store
    wanted = [line.model_dump() for line in lines]
    digest = config_digest(wanted)
    source = store.quota_source()
    if source is not None and source.config_digest == digest:
        return  # the config is as last applied: the set in force (maybe an admin's PUT) stays (N26)
    fields = list(QuotaLine.model_fields)
    stored = [{k: getattr(q, k) for k in fields} for q in quotas.get().quotas]
    changes = line_changes(stored, wanted)
    if not changes:  # already in force: remember the config, keep who set the lines
        with store.transaction() as tx:
            tx.note_quota_source(source.set_by if source is not None else CONFIG_ACTOR, digest=digest,
                                 at=source.set_at if source is not None else None)
        return
    if source is None:  # a store from before version 14: an admin's PUT since the last config is kept
        last = store.list_events(action="quotas_changed", newest_first=True, limit=1)
        if last and last[0].actor != CONFIG_ACTOR:
            kept = QuotaSource(set_by=last[0].actor, set_at=last[0].at)
            logger.warning("jupyter_sched: quotas: the config's %d lines (c.SchedApp.quotas) differ from the %d "
                           "lines set by %s; those stay in force (%s) — from now on the config's lines replace "
                           "them only when c.SchedApp.quotas changes", len(wanted), len(stored),
                           source_text(kept), "; ".join(changes))
            with store.transaction() as tx:
                tx.note_quota_source(kept.set_by, digest=digest, at=kept.set_at)
            return
    replaced = f"the {len(stored)} lines set by {source_text(source)}" if source is not None and stored \
        else f"the {len(stored)} lines in force"
    why = (f"quotas: c.SchedApp.quotas changed since it was last applied"
           f"{' at ' + clock_text(source.config_at, None) if source is not None and source.config_at else ''}: "
           f"the config's {len(wanted)} lines replace {replaced} ({'; '.join(changes)})")
    if stored:
        logger.warning("jupyter_sched: %s", why)
    quotas.set(system_caller(CONFIG_ACTOR), SetQuotasRequest(quotas=list(lines)), config_digest=digest,
               message=why if stored else None)
