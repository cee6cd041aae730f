"""``Snapshot.reclaims``: the preemptors that took GPUs back by reclaim lately, from the store (red32 R5).

The reclaim cool-down (:mod:`jupyter_sched.scheduling.preempt.cooldown`) is decided by the core from what
the store already holds, so every way a preemptor ends counts the same and a restart reads the same:
the audit's ``reclaim`` records of the last :data:`LOOKBACK_S` (one per victim, ``for_job`` the preemptor;
a departed member's work, taken back by its own team, is no other team's), the preemptor's own row —
its start, its end and how it ended (:func:`end_cause`) — and whether a ``reclaim_dropped`` record names it
already. The engine's end paths write nothing for it: they write the row's end as they always did.

Cost per full snapshot (:class:`ReclaimHistory`): the audit is read by action past the last record id seen
(the ``(action, id)`` index: new rows only; the first read after a start reads the last hour), and, while
reclaims of the last hour exist, the rows of their preemptors that are not live and not known ended yet.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import datetime, timedelta

from ..errors import StoreError
from ..model import JobState
from ..model.job import public_name
from ..scheduling.snapshot import ReclaimTaken
from ..store import JobRecord, Store, StoreTx
from ..store.outage import unreachable

__all__ = ["LOOKBACK_S", "ReclaimHistory", "end_cause"]

log = logging.getLogger(__name__)

LOOKBACK_S = 3600.0
"""How far back reclaims are kept: the longest cool-down the profile allows (``reclaim_cooldown_s`` <= 3600)."""
PAGE = 5000
"""Audit records read per query (more are read page by page)."""
_BY_INTENT = {"timeout": "time_limit", "idle": "idle_reclaim", "budget": "budget", "preempt": "preempted"}


def end_cause(record: JobRecord) -> tuple[str, str]:
    """``(cause, actor)`` of a preemptor's end (``ReclaimTaken.cause``): ``("", "")`` while it runs or waits."""
    job = record.job
    if not job.state.terminal or job.finished_at is None:
        return "", ""
    intent = record.stop_intent
    if job.state is JobState.LOST:
        return "lost", ""
    if intent in _BY_INTENT:
        return _BY_INTENT[intent], ""
    if job.state is JobState.SUCCEEDED:
        return "exit", ""
    if job.state is JobState.CANCELLED:
        return ("release" if job.is_lease else "cancel"), (record.stop_actor or "") if intent == "cancel" else ""
    return "failure", ""


class ReclaimHistory:
    """``now, live rows -> Snapshot.reclaims`` (see module docstring); safe to call from several threads
    (the engine's cycles and dry runs).

    Args:
        store: the store the audit and the rows are read from.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._after: dict[str, int | None] = {"reclaim": None, "reclaim_dropped": None}  # None: not read yet
        self._took: dict[str, tuple[datetime, list[tuple[str, str]]]] = {}  # preemptor -> (first at, victims)
        self._recorded: dict[str, datetime] = {}  # preemptor -> when ``reclaim_dropped`` named it
        self._ended: dict[str, JobRecord] = {}  # preemptors known ended (a terminal row changes no more)

    def __call__(self, now: datetime, live: Mapping[str, JobRecord]) -> tuple[ReclaimTaken, ...]:
        """The preemptors of other teams' running work of the last :data:`LOOKBACK_S`, each with its end.

        ``live``: the snapshot's rows by id (a preemptor among them has not ended: its row is not read).
        A store that cannot answer leaves them out this cycle, said at WARNING (the cycle runs on).
        """
        since = now - timedelta(seconds=LOOKBACK_S)
        with self._lock:
            try:
                with self.store.transaction(write=False) as tx:
                    self._read(tx, since)
                    for job_id, (at, _) in list(self._took.items()):
                        if at < since:
                            self._took.pop(job_id)
                            self._ended.pop(job_id, None)
                    for job_id in [i for i in self._recorded if i not in self._took]:
                        self._recorded.pop(job_id)
                    if not self._took:
                        return ()
                    wanted = [i for i in self._took if i not in live and i not in self._ended]
                    for job_id, record in tx.get_jobs(wanted).items():
                        if end_cause(record)[0]:
                            self._ended[job_id] = record
                    rows = {i: r for i in self._took if (r := live.get(i) or self._ended.get(i)) is not None}
                    if len(rows) < len(self._took):  # neither live nor ended: requeued, or read as it ended
                        rows.update(tx.get_jobs([i for i in self._took if i not in rows]))
            except StoreError as exc:
                # a database that does not answer is said once by the store's outage line, not once a cycle
                log.log(logging.DEBUG if unreachable(exc) else logging.WARNING,
                        "reclaims of the last hour unreadable this cycle (%s); no reclaim cool-down this cycle", exc)
                return ()
            return tuple(_taken(job_id, at, victims, rows[job_id], job_id in self._recorded)
                         for job_id, (at, victims) in self._took.items() if job_id in rows)

    def _read(self, tx: StoreTx, since: datetime) -> None:
        """New ``reclaim`` and ``reclaim_dropped`` records into the memo. The first read reads the last hour's
        (one pass over the action's rows) and goes on from the log's newest record id; later ones read the
        action's rows past the last id seen (the ``(action, id)`` index: new rows only)."""
        top = None
        if None in self._after.values():
            newest = tx.list_events(newest_first=True, limit=1)
            top = newest[0].id if newest else 0
        for action in ("reclaim", "reclaim_dropped"):
            first = self._after[action] is None
            while True:
                page = tx.list_events(action=action, after_id=self._after[action], since=since if first else None,
                                      limit=PAGE)
                for event in page:
                    self._after[action] = max(self._after[action] or 0, event.id)
                    if action == "reclaim_dropped":
                        if event.job_id:
                            self._recorded[event.job_id] = event.at
                    else:
                        self._note(event.job_id, event.user, event.at, event.details)
                if len(page) < PAGE:
                    break
            if first:
                self._after[action] = max(self._after[action] or 0, top or 0)

    def _note(self, victim: str | None, owner: str | None, at: datetime, details: object) -> None:
        """One ``reclaim`` record: its victim joins what its preemptor took (other teams' work only)."""
        info = details if isinstance(details, Mapping) else {}
        for_job = info.get("for_job")
        if not isinstance(for_job, str) or not for_job or not victim or info.get("departed"):
            return
        if info.get("victim_team") is not None and info.get("victim_team") == info.get("for_team"):
            return  # its own team's work: no other team's loss
        first, victims = self._took.setdefault(for_job, (at, []))
        victims.append((victim, owner or ""))
        if at < first:
            self._took[for_job] = (at, victims)


def _taken(job_id: str, at: datetime, victims: list[tuple[str, str]], record: JobRecord,
           recorded: bool) -> ReclaimTaken:
    """The core's view of one preemptor."""
    job = record.job
    cause, actor = end_cause(record)
    return ReclaimTaken(job_id=job_id, team=job.spec.team, user=job.spec.user, took_at=at, name=public_name(job.spec),
                        lease=job.is_lease, victims=tuple(dict.fromkeys(victims)), started_at=job.started_at,
                        ended_at=job.finished_at if cause else None, cause=cause, actor=actor,
                        exit_code=job.exit_code if cause in ("exit", "failure") else None, recorded=recorded)
