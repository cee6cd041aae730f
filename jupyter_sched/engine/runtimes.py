"""Runtime estimates for the cycle's snapshot, learned from the store's finished runs (edge).

The core predicts with :class:`~jupyter_sched.backfill.history.RuntimeHistory` (pure); this is
the feedback loop that feeds it in production, as the simulator does in its replays: the last
``keep`` succeeded jobs are read from the store (oldest first, so the history keeps the most
recent runs) and learnt as ``finished_at - started_at`` under their time limit — again as soon
as a job has succeeded since (counted every ``recheck_s``), and at least every ``refresh_s``;
each cycle's ``Snapshot.runtime_estimates`` then holds a prediction for every live job with
history — a running job's given how long it has run (start as the core counts it: ``started_at``,
else ``admitted_at``) — none for a queued job without history (its ETA uses its limit). ETAs read them when the
profile's ``eta_source`` is ``history`` (the default), and so does the ``fair`` queue order (each
user's next job's expected work); backfill never does.

Only succeeded runs teach: a failed or stopped run says nothing about how long the work takes.

One user's runs never crowd out the others' (red-team 5 finding 4): of the last ``keep``, at most
:data:`PER_USER` per user are learnt, and a user with live work who has fewer among them has their
own newest runs read too. Eve's 500 one-second runs (CPU-only jobs need no quota) used to fill the
whole window: alice's queued jobs lost their learnt runtime, and every running job of a user
without runs was predicted from eve's ratios alone (ending in about a second).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from ..backfill.history import KEEP, SAME_RUNS, Reading, RuntimeHistory
from ..model import Job, JobKind, JobState
from ..store import JobRecord, Store
from .clock import Clock

__all__ = ["PER_USER", "RuntimeFeed"]

PER_USER = KEEP
"""Runs of one user learnt per read at most (what the history keeps per user anyway), so the
pooled ratios of everybody hold several users' runs (module docstring)."""


_ENDED = [JobState.SUCCEEDED, JobState.FAILED]
"""The ends counted to read the runs again: a success teaches a runtime, a failure at the limit that
the same work runs to it (new user 17, N15)."""


class RuntimeFeed:
    """Learned runtimes per live job, refreshed from the store (module docstring).

    Args:
        store: the store (read only).
        clock: the engine's clock.
        refresh_s: the longest the finished runs go unread.
        recheck_s: how often the number of succeeded jobs is counted (one ``COUNT`` query); when
            it changed the runs are read again at once. A burst of short jobs (40 x ``sleep 3``)
            was predicted from a minute-old history — without its own first runs — and its ETAs
            were 2-2.5x too late (new-user 4 finding 18).
        keep: finished runs read each time (the newest by submit time).

    The cycle's snapshot asks :meth:`learnt_rows` with the live rows: each job's
    :meth:`~jupyter_sched.backfill.history.RuntimeHistory.reading` (its run key's samples, its
    start) is kept by job id while the row's ``version`` and the history read are the same, so a
    cycle over an unchanged snapshot only conditions running jobs on what they ran (a bisection);
    the kept set is replaced by each call's, so it follows the live set, as the store's
    :class:`~jupyter_sched.store.rowcache.RowCache` does. Issue 17: computing every live job's run
    key and reading again was 58 % of an unchanged snapshot at 20,000 pending + 5,000 running.
    """

    def __init__(self, store: Store, clock: Clock, *, refresh_s: float = 60.0, recheck_s: float = 2.0,
                 keep: int = 500) -> None:
        self.store = store
        self.clock = clock
        self.refresh_s = refresh_s
        self.recheck_s = recheck_s
        self.keep = keep
        self.reads = 0
        """Reads of the finished runs so far."""
        self._history = RuntimeHistory()
        self._read_at: datetime | None = None
        self._checked_at: datetime | None = None
        self._succeeded = -1
        self._kept: dict[str, _Known] = {}  # job id -> its reading at a row version and history (issue 17)

    def estimates(self, jobs: Iterable[Job]) -> dict[str, float]:
        """``{job id: expected runtime in seconds}`` for the live ``jobs`` that have one (module doc)."""
        return self.estimates_and_typical(jobs)[0]

    def estimates_and_typical(self, jobs: Iterable[Job]) -> tuple[dict[str, float], dict[str, float]]:
        """:meth:`estimates`, and ``Snapshot.runtime_typical``: for running jobs that ran longer
        than similar past runs typically take, that typical runtime (seconds)."""
        learnt, typical, _ = self.learnt(jobs)
        return learnt, typical

    def learnt(self, jobs: Iterable[Job]) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
        """:meth:`estimates_and_typical`, and ``Snapshot.runtime_sources``: the jobs whose guess
        came from their user's runs of other programs (``"other"``; new user 11, N15)."""
        return self._learnt([JobRecord(job=job) for job in jobs], keep=False)

    def learnt_rows(self, records: Iterable[JobRecord]) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
        """:meth:`learnt` of the live ``records``' jobs, reading each job's runs once per job
        version and history read (class docstring: the cycle's snapshot asks this)."""
        return self._learnt(list(records), keep=True)

    def _learnt(self, records: list[JobRecord], *,
                keep: bool) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
        """:meth:`learnt` of ``records``' jobs; ``keep``: read the kept readings at the rows'
        versions and keep these jobs' (only: the kept set follows the live set), else compute each."""
        now = self.clock.now()
        if self._stale(now):
            self._history = self._learn({r.job.spec.user for r in records if not r.job.state.terminal})
            self._read_at = now
        history = self._history
        kept, keeping = self._kept, {}
        out: dict[str, float] = {}
        typical: dict[str, float] = {}
        sources: dict[str, str] = {}
        for record in records:
            job_id = record.job.id
            known = kept.get(job_id) if keep else None
            if known is None or known.version != record.version or known.history is not history:
                known = _Known(record.job, record.version, history)
            if keep:
                keeping[job_id] = known
            start, reading = known.start, known.reading
            if start is None or reading is None:  # queued, or nothing to learn: its answer is kept
                if (guess := known.guess) is not None:
                    out[job_id] = guess
                    if known.source is not None:
                        sources[job_id] = known.source
                continue
            ran = max(0.0, (now - start).total_seconds())
            if (guess := reading.predict(ran)) is not None:
                out[job_id] = guess
                if (origin := reading.origin(ran)) not in (None, SAME_RUNS):
                    sources[job_id] = str(origin)
                if ran > 0 and (usual := reading.typical) is not None and usual <= ran:
                    typical[job_id] = usual
        if keep:
            self._kept = keeping  # one assignment: a dry run's read on another thread never sees it half made
        return out, typical, sources

    def estimate(self, job: Job) -> float | None:
        """One live job's expected runtime (s) from the history last read (no store read: the
        submit path asks), as :meth:`estimates` would give it; None without history."""
        if job.state.terminal or job.spec.kind is JobKind.LEASE:
            return None
        return self._history.predict(job.spec, job.spec.time_limit_s)

    def _stale(self, now: datetime) -> bool:
        """Read the finished runs again? First call, ``refresh_s`` since the last read, or (checked
        at most every ``recheck_s``) a different number of succeeded jobs than at the last read."""
        if self._read_at is None or (now - self._read_at).total_seconds() >= self.refresh_s:
            self._succeeded = self.store.count_jobs(states=_ENDED)
            self._checked_at = now
            return True
        if self._checked_at is not None and (now - self._checked_at).total_seconds() < self.recheck_s:
            return False
        self._checked_at = now
        succeeded = self.store.count_jobs(states=_ENDED)
        if succeeded == self._succeeded:
            return False
        self._succeeded = succeeded
        return True

    def _learn(self, live_users: Iterable[str] = ()) -> RuntimeHistory:
        """The history of the last ``keep`` succeeded runs, at most :data:`PER_USER` of each user,
        topped up with the own newest runs of ``live_users`` who have fewer among them."""
        self.reads += 1
        history = RuntimeHistory()
        succeeded, training = [JobState.SUCCEEDED], [JobKind.TRAINING]
        rows = self.store.list_jobs(states=succeeded, kinds=training, limit=self.keep, newest_first=True)
        taken: dict[str, list[JobRecord]] = {}
        for record in rows:
            mine = taken.setdefault(record.job.spec.user, [])
            if len(mine) < PER_USER:
                mine.append(record)
        if len(rows) >= self.keep:  # a full window: older runs of some users are not in it
            for user in sorted(set(live_users)):
                if len(taken.get(user, ())) < PER_USER:
                    taken[user] = self.store.list_jobs(user=user, states=succeeded, kinds=training, limit=PER_USER,
                                                       newest_first=True)
        # runs stopped at their time limit: the same work again is read from its limit, not from its
        # owner's other runs (new user 17, N15: a-fair2 "ends at ~75 % of its limit" after a-fair1 ran to it)
        stopped = [r for r in self.store.list_jobs(states=[JobState.FAILED], kinds=training, limit=self.keep,
                                                   newest_first=True) if _ran_to_limit(r.job)]
        learnt = sorted((r for mine in taken.values() for r in mine), key=lambda r: (r.job.submitted_at, r.job.id))
        for record in sorted(learnt + stopped, key=lambda r: (r.job.submitted_at, r.job.id)):
            job = record.job
            if job.state is JobState.FAILED:
                history.ran_to_limit(job.spec)
            elif job.started_at is not None and job.finished_at is not None:
                history.learn(job.spec, (job.finished_at - job.started_at).total_seconds(), job.spec.time_limit_s)
        return history


def _ran_to_limit(job: Job) -> bool:
    """``job`` ran to its time limit (it failed no earlier than its limit after it started)."""
    limit = job.spec.time_limit_s
    start = job.started_at or job.admitted_at
    return bool(limit) and start is not None and job.finished_at is not None \
        and (job.finished_at - start).total_seconds() >= float(limit or 0)


class _Known:
    """One live job's reading, kept by :class:`RuntimeFeed` while its row version and the history
    are the same: a cycle over an unchanged snapshot computes neither its run key nor its start
    again, nor a queued job's guess (class docstring of :class:`RuntimeFeed`).

    Attributes:
        reading: the history's reading of its runs; None: finished, or a lease (nothing learnt).
        start: when it started as the core counts it (``started_at``, else ``admitted_at``) while
            it holds GPUs; None: queued (or no reading).
        guess, source: a queued job's learnt runtime and its origin when not :data:`SAME_RUNS`
            (None: none), what :meth:`RuntimeFeed.learnt` gives it until the row or the history changes.
    """

    __slots__ = ("guess", "history", "reading", "source", "start", "version")

    def __init__(self, job: Job, version: int, history: RuntimeHistory) -> None:
        self.version = version
        self.history = history
        self.reading: Reading | None = None if job.state.terminal or job.spec.kind is JobKind.LEASE \
            else history.reading(job.spec, job.spec.time_limit_s)
        self.start = (job.started_at or job.admitted_at) if self.reading is not None and job.state.holds_gpus \
            else None
        self.guess: float | None = None
        self.source: str | None = None
        if self.reading is not None and self.start is None:
            self.guess = self.reading.predict(0.0)
            origin = self.reading.origin(0.0) if self.guess is not None else None
            self.source = None if origin in (None, SAME_RUNS) else str(origin)
