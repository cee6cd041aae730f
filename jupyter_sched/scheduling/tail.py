"""Would a full cycle visit a new pending job last? (the live ledger's pends; issue 17)

:class:`~.live.LiveCycle` decides a submitted job on the last full cycle's context as if it came
last in the queue. For an admission that is safe wherever the job sits in the order (it takes
only capacity no reservation or nomination protects). A *pend* keeps that context usable only if
the job really is last: then a full cycle run now would visit every other pending job before it,
exactly as the last one did, and its own visit changes nothing they see — the same decisions,
reasons, positions and ETAs for all of them. :class:`QueueTail` answers that question for one job
in O(1) amortised (summaries of the pending jobs are built once per full cycle, per class and
team when first asked, and updated as jobs are pended behind them).

How a full cycle orders the queue (:func:`~.cycle.run_on`): the profile's queue sort
(:data:`~jupyter_sched.queues.order.QUEUE_SORTS`) over every pending job; with quotas, the jobs
that would borrow — and every later job of their teams — go after all the others. A full cycle
run now, with nothing admitted since the last one (the pending jobs stay pending), sees constant
team shares, so the new job ``n`` of team ``T`` and class rank ``R`` is last when:

* **deferral** — no pending job would borrow now, or ``n`` would borrow too, or ``T`` already has
  a job that borrows (``n`` then follows it among the deferred jobs);
* **``fifo``** — no pending job is of a lower class, and ``n`` was submitted after all of them;
* **``fair`` / ``fair-usage``** — the same two conditions; every other team with jobs of class
  ``R`` has a fair share at most ``T``'s (teams are merged by ``(share, head's submit time)``:
  an equal share puts the newest head last); and ``n`` is last in its team's arrangement: its
  user's share once ``n`` ran (``fair``: usage plus the expected GPU-seconds of the user's queued
  jobs and ``n``'s, by the arrangement's own function
  :func:`~jupyter_sched.queues.order.share_once_ran`; ``fair-usage``: usage alone) is at
  least every other user's last share in that team and class;
* **no quota configured** (the order's ``held``) — ``n``'s user and team already have work (else
  the equal shares the keys are taken above change); teams are merged by the GPUs each holds before
  its head runs (held now plus its class-``R`` jobs ordered ahead), so ``T`` is last when its
  count before ``n`` is at least every other team's count before its last job — bounded here by
  that team's held GPUs plus its jobs' GPUs less its smallest job's; inside the team the key is
  (the GPUs ``n``'s user holds before ``n``, the share above), compared the same way;
* any other sort (``short-first``, a plugin) — unknown here: never last (a full cycle decides);
* a job past its promised wait (:func:`~jupyter_sched.queues.order.overdue`, issue 16) is elected
  first in its class by a full cycle: never last. (A job the cycle left pending whose promised wait
  runs out later spends the whole live context: :class:`~.live.LiveCycle`.)

Conservative by design: ``False`` sends the job to a full cycle, which is always right. The
equality with a full cycle is checked by ``tests/runtime/test_live_pend.py`` (property tests).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..model import Job
from ..queues.order import above, held_before, holdings, overdue, share_once_ran, submit_key
from .context import CycleContext
from .cycle import _shape, _would_borrow  # the cycle's own shape memo and borrowing test
from .runtimes import charged_runtime

__all__ = ["QueueTail"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SORTS = frozenset({"fifo", "fair", "fair-usage"})


@dataclass(slots=True)
class _Arrangement:
    """One team's pending jobs of one class as its arrangement orders them.

    Attributes:
        jobs: the members (until the summary is built, then cleared).
        longest: the longest finite expected runtime (s; what an unknown runtime counts as).
        unknown: some member has no finite expected runtime.
        shares: per user, the share after its last member (``fair``) or its usage (``fair-usage``).
        top: the largest member key: (GPUs its user holds before it — 0 with quotas —, share).
        built: the summary is up to date.
        held: per user, GPUs held now plus those of its members (no quota).
        gpus: GPUs of all members (kept from the start, for the team merge with no quota).
        smallest: GPUs of the smallest member.
    """

    jobs: list[Job] = field(default_factory=list)
    longest: float = 0.0
    unknown: bool = False
    shares: dict[str, float] = field(default_factory=dict)
    top: tuple[float, float] = (-math.inf, -math.inf)
    built: bool = False
    held: dict[str, float] = field(default_factory=dict)
    gpus: float = 0.0
    smallest: float = math.inf


class QueueTail:
    """Answers "would a full cycle visit ``job`` last?" against one live context (module doc).

    Args:
        ctx: the live cycle's context (its ledger, profile, snapshot).
        pending: the jobs the last full cycle left pending.
    """

    def __init__(self, ctx: CycleContext, pending: Iterable[Job]) -> None:
        self._ctx = ctx
        self._sort = ctx.profile.queue_sort
        self._ranks: dict[int, set[str]] = {}
        self._groups: dict[tuple[int, str], _Arrangement] = {}
        self._borrow_keys: set[tuple[str, str, str, int]] = set()
        self._latest: tuple[datetime, str] = (_EPOCH, "")
        self._waiting: frozenset[str] | None = None
        # as the cycle gives the order (no quota: what users and teams hold now); the tail is asked
        # only on a ledger that admitted nothing, so the snapshot's holdings are the state's
        self._held = None if ctx.quota.enabled else holdings(ctx.snap.jobs, ctx.snap.inventory.gpu_count())
        # the users and teams with work, over whom the equal shares are taken: a newcomer changes them
        working = [j.spec for j in ctx.snap.jobs if j.state.holds_gpus or j.state.value == "pending"]
        self._working = ({s.user for s in working}, {s.team for s in working}) if self._held is not None else None
        for job in pending:
            self._add(job)

    def _add(self, job: Job) -> None:
        spec = job.spec
        rank = spec.priority.rank
        self._ranks.setdefault(rank, set()).add(spec.team)
        group = self._groups.setdefault((rank, spec.team), _Arrangement())
        gpus = spec.resources.total_milli / 1000
        group.gpus += gpus
        group.smallest = min(group.smallest, gpus)
        if group.built:
            self._extend(group, job)
        else:
            group.jobs.append(job)
        self._latest = max(self._latest, submit_key(job))
        if self._ctx.quota.enabled:
            key = (spec.team, spec.user, _shape(self._ctx, spec.resources)[2], spec.resources.total_milli)
            if key not in self._borrow_keys:
                self._borrow_keys.add(key)
                self._waiting = None

    def charged(self) -> None:
        """The live ledger took an admission: quota usage grew (who would borrow is re-read)."""
        self._waiting = None

    def add(self, job: Job) -> None:
        """``job`` was pended last: later jobs come after it."""
        self._add(job)

    def is_last(self, job: Job) -> bool:
        """True when a full cycle run now would visit ``job`` after every pending job (module doc)."""
        if self._sort not in _SORTS or submit_key(job) <= self._latest:
            return False
        if overdue(job, self._ctx.now, self._ctx.profile.elect_overdue):
            return False  # a full cycle elects it: first in its class (queues.order.elect_overdue)
        spec = job.spec
        rank = spec.priority.rank
        if any(r < rank for r in self._ranks):
            return False
        if not self._defers_last(job):
            return False
        if self._sort == "fifo":
            return True
        team, share_of = spec.team, self._ctx.quota.team_share
        group = self._groups.get((rank, team))
        if self._held is not None:
            assert self._working is not None
            if spec.user not in self._working[0] or spec.team not in self._working[1]:
                return False  # a newcomer shrinks the equal shares every key is taken above
            by_team, groups, fair = self._held.by_team, self._groups, self._held.team_share
            # a team's key: GPUs held above the share once its head ran (queues.order._fair)
            mine = above(by_team.get(team, 0.0) + (group.gpus if group is not None else 0.0)
                         + spec.resources.total_milli / 1000, fair)
            if any(other != team and above(by_team.get(other, 0.0) + groups[(rank, other)].gpus, fair) > mine
                   for other in self._ranks.get(rank, ())):
                return False
        else:
            share = share_of(team)
            if any(other != team and share_of(other) > share for other in self._ranks.get(rank, ())):
                return False
        return group is None or self._last_in_team(group, job)

    # -- deferral --------------------------------------------------------------------------------

    def _defers_last(self, job: Job) -> bool:
        quota = self._ctx.quota
        if not quota.enabled:
            return True
        waiting = self._waiting
        if waiting is None:
            waiting = self._waiting = frozenset(
                team for team, user, model, milli in self._borrow_keys
                if milli and model and quota.would_borrow(team, user, model, milli))
        if not waiting or job.spec.team in waiting:
            return True
        return _would_borrow(quota, job, _shape(self._ctx, job.spec.resources)[2])

    # -- one team's arrangement (queues.order._by_share_after / _by_usage) -----------------------

    def _build(self, group: _Arrangement) -> None:
        members = sorted(group.jobs, key=submit_key)
        group.jobs = []
        group.built = True
        if self._sort == "fair-usage":
            for job in members:
                self._extend(group, job)
            return
        runtimes = [self._runtime(job) for job in members]
        finite = [r for r in runtimes if r < math.inf]
        group.longest = max(finite, default=0.0)
        group.unknown = len(finite) < len(runtimes)
        for job, runtime in zip(members, runtimes, strict=True):
            self._accumulate(group, job, runtime)

    def _runtime(self, job: Job) -> float:
        return charged_runtime(self._ctx, job)  # as the cycle's fair order charges it (red team 18, R2)

    def _before(self, group: _Arrangement, job: Job) -> float:
        """GPUs ``job``'s user holds before it (after every member; no quota), else 0."""
        if self._held is None:
            return 0.0
        if self._sort == "fair-usage":
            return self._held.by_user.get(job.spec.user, 0.0)
        return held_before(group.held, self._held.by_user, job.spec.user)

    def _first(self, group: _Arrangement, job: Job) -> float:
        """The order's first key of ``job`` placed after every member: GPUs its user holds above an
        equal share (no quota), else 0 (no such key)."""
        return 0.0 if self._held is None else above(self._before(group, job), self._held.user_share)

    def _key(self, group: _Arrangement, job: Job, runtime: float) -> tuple[float, float]:
        """The arrangement's key of ``job`` placed after every member (the order's own functions)."""
        usage = self._ctx.snap.usage.decayed_gpu_seconds_by_user
        if self._sort == "fair-usage":
            return self._first(group, job), usage.get(job.spec.user, 0.0)
        return self._first(group, job), share_once_ran(group.shares, usage, job, runtime, group.longest)

    def _accumulate(self, group: _Arrangement, job: Job, runtime: float) -> None:
        key = self._key(group, job, runtime)
        group.shares[job.spec.user] = key[1]
        group.held[job.spec.user] = self._before(group, job) + job.spec.resources.total_milli / 1000
        group.top = max(group.top, key)

    def _extend(self, group: _Arrangement, job: Job) -> None:
        runtime = math.inf
        if self._sort != "fair-usage":
            runtime = self._runtime(job)
            if runtime < math.inf:
                group.longest = max(group.longest, runtime)
            else:
                group.unknown = True
        self._accumulate(group, job, runtime)

    def _last_in_team(self, group: _Arrangement, job: Job) -> bool:
        if not group.built:
            self._build(group)
        if self._sort == "fair-usage":
            return self._key(group, job, math.inf) >= group.top
        runtime = self._runtime(job)
        if group.unknown and runtime < math.inf and runtime > group.longest:
            return False  # it would lengthen what every unknown runtime counts as: keys move
        return self._key(group, job, runtime) >= group.top
