"""``AccountingService``: who am I and what do I use (``me``), GPU-seconds rolled up (``usage``),
the accounting report (``usage/report``). Own usage for everyone; everyone's for admins."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .. import untrusted_json
from ..accounting import ROLLUP_KEYS, period_start, report_csv, rollup
from ..accounting.store_report import unattributed_for, usage_report_for, waste_report_for
from ..accounting.usage import USAGE_WINDOW, gpu_figures, usage_window
from ..accounting.waste import mig_uuids_of
from ..admission import AdmissionPolicy, Caller, resolve_caller
from ..engine.telemetry import TelemetryMonitor
from ..engine.waiting_on import WaitingOn, waiting_on_one
from ..errors import SchedError, ValidationError
from ..model import Budget, Job, JobState, Quota, QuotaSet
from ..model.codec import budget_to_dict, quota_to_dict
from ..model.units import parse_window, to_iso
from ..quota.held_whole import team_milli_held
from ..quota.ledger import line_applies
from ..scheduling.gates import HELD_CODES
from ..store import StoreTx
from ..wording.held import HeldGroup, held_groups
from ..wording.quota import quota_text
from ..wording.status import waiting_on_you_text
from .budget_standing import period_reset
from .context import Context
from .models import (
    GetMeResponse,
    GetUsageReportRequest,
    GetUsageReportResponse,
    GetUsageRequest,
    GetUsageResponse,
    GetUsageWasteRequest,
    GetUsageWasteResponse,
    UsageReportPage,
)
from .models.base import PAGE_BYTES
from .models.quotas import GetQuotaWhatIfRequest, GetQuotaWhatIfResponse
from .readcache import Builds
from .team_cooldown import StoredCooldowns, cooldown_views

__all__ = ["AccountingService", "CallerKey"]

@dataclass(frozen=True)
class _HeldSums:
    """``GET me``'s GPU-hour sums of one user taken at second ``at``, answered until ``until`` (red27 R5)."""

    at: datetime
    until: datetime
    week_s: float
    used: dict[tuple[str, str | None], float]


CallerKey = tuple[str, bool, tuple[str, ...] | None]
"""``(name, admin, hub groups or None)``: everything of a request's user its Caller is resolved from."""

_HELD_USERS = 4096
"""Users (and callers) whose held work and answer ``GET me`` keeps at most (then it starts again)."""

SUMS_HELD_FROM_ROWS = 20_000
"""Usage rows a ``GET me``'s GPU-hour sums read (the 7 days and each budget's period together) from which those
sums are held (red27 R5): below it they are taken at every second; from it they are kept for one second per
:data:`SUMS_HELD_ROWS_PER_S` rows, at most :data:`SUMS_HELD_AT_MOST` — one user's flood of instant jobs (~70k rows
a week) made each ``GET me`` of theirs sum for 0.5-4 s, and eight loops of it slowed every other user's requests."""
SUMS_HELD_ROWS_PER_S = 10_000
"""Rows summed per second the sums are then held (70,000 rows: 7 s)."""
SUMS_HELD_AT_MOST = timedelta(seconds=60)
"""The longest a ``GET me``'s GPU-hour sums are held: its figures miss at most this much of the newest usage."""


def _up_to_the_second(now: datetime) -> datetime:
    """``now`` rounded *up* to the whole second: a usage period is said to the second, and ends after
    ``now`` so that work which ended in the current second is in it (rounded down, a job that ran for
    half a second just now was left out of ``usage`` until the next second began)."""
    whole = now.replace(microsecond=0)
    return whole if whole == now else whole + timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class _Held:
    """One user's GPUs held (``in_use`` GPUs; ``jobs``, ``leases`` holding them) and pending jobs,
    as read at the ``jobs`` counter ``version``."""

    version: int
    in_use: float
    jobs: int
    leases: int
    pending: int
    stopping: int = 0
    by_team: tuple[tuple[str, float], ...] = ()
    """The GPUs held per team charged, in team order (new user 18, N1)."""
    held: tuple[HeldGroup, ...] = ()
    """Their held waiting jobs by kind of hold, from the stored reasons (:func:`~..wording.held.held_groups`)."""


def _by_team(holding: list[Job]) -> tuple[tuple[str, float], ...]:
    """GPUs of ``holding`` per team charged (summed in milli-GPUs, divided once), by team name."""
    milli: dict[str, int] = {}
    for job in holding:
        if job.allocation is not None:
            team = job.spec.team
            milli[team] = milli.get(team, 0) + len(job.allocation.all_gpu_uuids()) * job.allocation.gpu_milli
    return tuple((team, milli[team] / 1000) for team in sorted(milli))


def _held_work(groups: tuple[HeldGroup, ...], pending: int) -> list[dict[str, Any]]:
    """``held`` of ``GET me``: the user's held waiting jobs by kind (``groups``: :attr:`_Held.held`, read from the
    store's reasons, as every server reads them — s40-views: the leading engine's memory, another server said
    none); at most ``pending`` in all."""
    out: list[dict[str, Any]] = []
    for code, jobs, what, fix in groups:
        jobs = min(jobs, pending - sum(g["jobs"] for g in out))
        if jobs > 0:
            out.append({"code": code, "jobs": jobs, "what": what, "fix": fix})
    return out


class AccountingService:
    """Usage and identity (see module docstring).

    Args:
        ctx: shared dependencies.
        prices: price per GPU-hour by model for the report's cost column (None = no cost).
        price_unit: the currency of ``prices`` (e.g. ``"USD"``), said as each report row's ``cost_unit``
            (None or empty: :data:`~jupyter_sched.accounting.report.UNNAMED_COST_UNIT`).
    """

    def __init__(self, ctx: Context, prices: Mapping[str, Any] | None = None, *, monitor: TelemetryMonitor | None = None,
                 price_unit: str | None = None) -> None:
        self.ctx = ctx
        self.prices = dict(prices) if prices else None
        self.price_unit = price_unit or None
        self.monitor = monitor
        """The telemetry monitor (None: telemetry off): the report marks what it has not rolled up yet."""
        self._held: dict[str, _Held] = {}
        """Per user, what ``GET me`` read of their job rows, while the ``jobs`` counter is unchanged."""
        self._team_held: dict[str, tuple[int, tuple[float, float]]] = {}
        self._waits: dict[str, tuple[int, WaitingOn | None]] = {}
        """Per user, ``(jobs counter, what waits on them)`` as read from the store by a server that does not lead."""
        """Per team, ``(jobs counter, GPUs its work holds)`` as ``GET me`` last read them."""
        self._answers: dict[CallerKey, tuple[tuple[int, int, datetime], AdmissionPolicy, GetMeResponse]] = {}
        """Per caller key, the last :meth:`me_of` answer with the counters, second and policy it was computed at."""
        self._builds = Builds()
        """Callers whose :meth:`me_of` answer a thread is computing now."""
        self._sums: dict[tuple[str, tuple[tuple[str, str | None, str], ...]], _HeldSums] = {}
        """Per user and budgets asked, ``GET me``'s GPU-hour sums while they are held (:data:`SUMS_HELD_FROM_ROWS`)."""
        self.cooldowns = StoredCooldowns(ctx.store, lambda: getattr(ctx.engine.profile, "reclaim_cooldown_s", 0.0))
        """Each team's reclaim cool-down, from the store (shared with ``GET quotas`` by :class:`~.root.Services`)."""
        self.known_teams: Callable[[], set[str]] | None = None
        """The teams someone is in now (hub groups, or the configured memberships; set by
        :class:`~.root.Services`): what-if's close names of an unknown team (verify28 V4)."""

    def me(self, caller: Caller) -> GetMeResponse:
        """The caller: teams, granted classes, quota lines and budgets of their default team,
        GPUs held now, pending work, GPU-hours of the last 7 days (as of the current whole second; for a user
        whose sums read :data:`SUMS_HELD_FROM_ROWS` usage rows or more, as of a second at most
        :data:`SUMS_HELD_AT_MOST` before: :meth:`_gpu_sums`)."""
        return self._me(caller, None)

    def me_of(self, who: CallerKey) -> GetMeResponse:
        """:meth:`me` of the caller ``who`` (``SchedApp.caller_key``: name, admin flag, hub groups),
        resolved from the quota set read in the answer's own transaction, and kept for
        :meth:`kept_me` with what it was computed from. Callers who miss it together (fifty panels
        of one user, each second or after a submit) wait for the one computing it (issue 17)."""
        self._builds.wait_running(who)
        kept = self.kept_me(who)
        if kept is not None:
            return kept
        with self._builds.computing(who):
            return self._me(None, who)

    def kept_me(self, who: CallerKey, *, asked_at: float | None = None) -> GetMeResponse | None:
        """The answer :meth:`me_of` gave ``who`` if it is still the one it would give now — checked
        without a transaction, so the server answers on its event loop (issue 17: fifty panels
        polling ``GET me`` each second sent each poll to a request thread for a transaction, five
        statements, a validation and a serialisation of the same answer). Exact, because the
        answer is a function of ``who`` and of nothing but:

        - the store's ``jobs`` counter (held GPUs, pending and stopping work, the team's GPUs in
          use: job rows; the GPU-hour sums: usage intervals, which move it too) and its ``quotas``
          counter (teams, classes, quota lines, budgets), both read now (``Store.counters_now``):
          any committed write, by any process sharing the store, is seen by the next poll;
        - the admission policy (a frozen value, compared by identity);
        - the current whole second: the GPU-hour sums are taken at the start of the second
          (open intervals grow, windows slide), so an answer is kept within its second only
          (the sums themselves may be held longer where they are costly: :meth:`_gpu_sums`).

        Over commits that only inserted pending jobs (``Store.pending_inserted``: submits of this
        server, which change nothing of the answer but the owner's pending count), the kept answer
        is carried over with that count added, at the new counter value.

        ``asked_at``: when the request arrived (``time.monotonic()``): a counter read that began
        after it serves it (:meth:`Store.counters_now`). None: nothing kept for ``who``, or it is
        out of date — call :meth:`me_of`."""
        kept = self._answers.get(who)
        if kept is None:
            return None
        counters = self.ctx.store.counters_now(asked_at=asked_at)
        if counters is None or counters[0] < 0:
            return None
        version, policy, answer = kept
        now = (*counters, self._second())
        if version == now and policy is self.ctx.admission.policy:
            return answer
        if version[1:] != now[1:] or policy is not self.ctx.admission.policy:
            return None
        # only submits since (commits of this server that inserted pending jobs and wrote nothing
        # else): the same answer but for the caller's pending count (issue 17: the pollers' own
        # submits sent the GET me after each of them to a request thread)
        added = self.ctx.store.pending_inserted(version[0], now[0], who[0])
        if added is None:
            return None
        carried = answer.model_copy(update={"pending": answer.pending + added})
        self._answers[who] = (now, policy, carried)
        return carried

    def _second(self) -> datetime:
        """Now, to the whole second: the instant ``GET me``'s sums are taken at (:meth:`kept_me`)."""
        return self.ctx.clock.now().replace(microsecond=0)

    def _me(self, caller: Caller | None, who: CallerKey | None) -> GetMeResponse:
        now = self._second()
        policy = self.ctx.admission.policy
        # one read transaction; counts and sums in the database: only the caller's GPU-holding
        # rows are read, never their backlog of pending work nor everyone's usage rows
        with self.ctx.store.transaction(write=False) as tx:
            quotas = tx.quota_set()
            if who is not None:
                name, admin, groups = who
                caller = resolve_caller(name, admin=admin, groups=groups, quotas=quotas, policy=policy,
                                        group_order=self.ctx.admission.group_order)
                version = (tx.jobs_version(), tx.quotas_version(), now)
            assert caller is not None
            team = caller.default_team or policy.default_team
            held = self._held_by(tx, caller.user)
            waiting = self._waiting_on(tx, caller.user, held.version)  # newuser31 n14: what waits on them
            team_in_use, team_rest = self._team_in_use(tx, team)
            # every team the caller's work is charged to, not only the default one (new user 18, N1:
            # "2 GPUs in use by the team, 4 GPUs of them yours" with 2 of them charged to teama)
            charged = dict(held.by_team)
            # and each other team of the caller's with a quota line for them (newuser36 n9: a member of nlp and
            # vision saw only nlp's line; a team without one, where lines exist, takes no GPU work of hers)
            lined = {q.team for q in quotas.quotas if q.team in caller.teams and q.user in (None, caller.user)}
            others = {t: self._team_in_use(tx, t) for t in sorted(set(charged) | lined) if t != team}
            # every one of the caller's teams' budgets, the default team's first (newuser36 n9: a member of nlp
            # and vision saw only nlp's spent budget, never that vision's had room)
            order = {t: i for i, t in enumerate(dict.fromkeys((team, *caller.teams)))}
            mine_budgets = sorted((b for b in quotas.budgets if b.team in order and b.user in (None, caller.user)),
                                  key=lambda b: order[b.team])
            taken, week_s, used = self._gpu_sums(tx, now, caller.user, mine_budgets)
        in_use, jobs, leases, pending = held.in_use, held.jobs, held.leases, held.pending
        teams = [*caller.teams, *(t for t in (team, *others) if t not in caller.teams)]
        fields: dict[str, Any] = {
            "user": caller.user, "is_admin": caller.admin, "team": team, "teams": teams,
            "priorities": {t: [c for c in ("high", "normal", "low") if c in caller.classes_for(t)]
                           for t in teams},
            "quotas": [quota_to_dict(q) for q in _lines_of(quotas, team, caller.user)],
            "budgets": [{**budget_to_dict(b), "used_gpu_hours": used[(b.team, b.user)],
                         "resets_at": to_iso(period_reset(now, b.period))} for b in mine_budgets],
            "in_use": {"gpus": in_use, "jobs": jobs, "leases": leases, "stopping": held.stopping},
            "team_in_use": team_in_use, "team_held_whole": team_rest,
            "by_team": [{"team": t, "in_use": used, "held_whole": rest, "yours": charged.get(t, 0.0),
                         "quotas": [quota_to_dict(q) for q in _lines_of(quotas, t, caller.user)],
                         "unlisted": _unlisted(quotas, t, caller.user),
                         "unlisted_scope": self._unlisted_scope(quotas, t, caller.user)}
                        for t, (used, rest) in ((team, (team_in_use, team_rest)), *others.items())],
            "pending": pending,
            "gpu_hours_7d": gpu_figures(week_s)[1],  # one rounding on every route (new user 15, N13)
            "gpu_hours_since": to_iso(taken - USAGE_WINDOW),  # the window of the figure (held: earlier)
        }
        # the sentence `jupyter-sched status` and `%gpu` say, for the panel: one renderer (new user 17,
        # N17: the panel's own "you may use idle GPUs, preemptible" where they said "no limit")
        # the caller's teams' reclaim cool-downs, before any job waits on one (newuser38 n21)
        fields["reclaim_cooldowns"] = cooldown_views(self.cooldowns(now, held.version), now, teams=caller.teams,
                                                     reader=caller.user)
        fields["quota_text"] = quota_text(fields, now)
        if waiting is not None:  # newuser31 n14
            fields["waiting_on_you"] = waiting
        fields["held"] = _held_work(held.held, pending)  # said apart from the waiting (newuser38 n24)
        answer = GetMeResponse.model_validate(fields)
        if who is not None and version[0] >= 0:
            if len(self._answers) >= _HELD_USERS and who not in self._answers:
                self._answers.clear()  # bounded: the next poll of each caller computes again
            self._answers[who] = (version, policy, answer)  # one assignment: request threads may race, each right
        return answer

    def _waiting_on(self, tx: StoreTx, user: str, version: int) -> dict[str, Any] | None:
        """``waiting_on_you`` of ``GET me``: other users' waiting work whose ETA waits on ``user``'s GPU-holding
        work (:mod:`jupyter_sched.engine.waiting_on`; None: none) — as the leading engine's last full cycle saw it,
        or, on a server that does not lead, as the store holds those reasons (s40-views: it said none there), read
        again only when the ``jobs`` counter moved. Kept with the answer for its second, as the sums are."""
        engine = self.ctx.engine
        if engine.is_leader:
            found = engine.applier.waiting_on.get(user)
        else:
            kept = self._waits.get(user)
            if kept is not None and kept[0] == version and version >= 0:
                found = kept[1]
            else:
                found = waiting_on_one(user, ((owner, lease, reason.details)
                                              for owner, lease, reason in tx.waiting_on_owner(user)))
                if len(self._waits) >= _HELD_USERS and user not in self._waits:
                    self._waits.clear()
                self._waits[user] = (version, found)
        if found is None:
            return None
        return {"jobs": found.jobs + found.leases, "users": list(found.users),
                "text": waiting_on_you_text(found.jobs, found.leases, found.users)}

    def _gpu_sums(self, tx: StoreTx, now: datetime, user: str, budgets: list[Budget],
                  ) -> tuple[datetime, float, dict[tuple[str, str | None], float]]:
        """``(second taken at, GPU-seconds of ``user`` in the 7 days to it, GPU-hours this period per budget
        (team, user))``.

        The sums move with time (open intervals grow, windows slide): taken at ``now``, the whole second — or,
        where they read :data:`SUMS_HELD_FROM_ROWS` usage rows or more, as taken at an earlier second within
        the time they are held (one second per :data:`SUMS_HELD_ROWS_PER_S` rows, at most
        :data:`SUMS_HELD_AT_MOST`; red27 R5). A clock moved back takes them again."""
        key = (user, tuple((b.team, b.user, b.period) for b in budgets))
        held = self._sums.get(key)
        if held is not None and held.at <= now < held.until:
            return held.at, held.week_s, dict(held.used)
        week_s, rows = tx.gpu_seconds_and_rows(since=now - USAGE_WINDOW, until=now, user=user)  # the one period
        used: dict[tuple[str, str | None], float] = {}
        for b in budgets:
            seconds, more = tx.gpu_seconds_and_rows(since=period_start(now, b.period), until=now, team=b.team,
                                                    user=b.user)
            used[(b.team, b.user)] = gpu_figures(seconds)[1]
            rows += more
        if rows >= SUMS_HELD_FROM_ROWS:
            if len(self._sums) >= _HELD_USERS and key not in self._sums:
                self._sums.clear()  # bounded
            until = now + min(SUMS_HELD_AT_MOST, timedelta(seconds=rows / SUMS_HELD_ROWS_PER_S))
            self._sums[key] = _HeldSums(at=now, until=until, week_s=week_s, used=dict(used))
        else:
            self._sums.pop(key, None)
        return now, week_s, used

    def _unlisted_scope(self, quotas: QuotaSet, team: str, user: str) -> dict[str, Any] | None:
        """``by_team[].unlisted_scope``: the GPU models present where ``user`` in ``team``, which has
        lines (the team's or the user's own), is bounded by the unlisted line (verify20 V4: status
        showed vision's A100 line and not that H100 was 0 GPUs for it); None when there are none,
        when no limit is set, or when the team has no line at all (``unlisted``: its line is shown). For
        a team named only by other members' per-user lines (``unlisted`` too): ``models`` empty,
        ``members`` those members, ``member_models`` the models of their lines (verify21 V6)."""
        limit = quotas.unlisted_borrowing_limit
        if limit is None or not quotas.quotas:
            return None
        if _unlisted(quotas, team, user):  # a team named only by other members' lines (verify21 V6: status
            # said "team ghost has no quota line … no GPU work of the team can start", false twice)
            others: dict[str, list[str]] = {}
            for q in quotas.quotas:
                if q.team == team and q.user is not None:
                    others.setdefault(str(q.user), []).append(q.gpu_model)
            return ({"models": [], "borrowing_limit": limit, "members": sorted(others),
                     "member_models": {u: sorted(set(m)) for u, m in sorted(others.items())}} if others else None)
        team_lines, own = quotas.for_team(team), [q.gpu_model for q in quotas.for_user(team, user)]
        if not team_lines and not own:
            return None
        try:
            present = sorted(self.ctx.inventory().healthy_models())
        except SchedError:  # the inventory cannot be read now: nothing said rather than a guess
            return None
        left = [m for m in present if not any(line_applies(q.gpu_model, m) for q in team_lines)
                and not any(line_applies(g, m) for g in own)]
        if not left:
            return None
        lines_of: dict[str, list[str]] = {}
        for q in quotas.quotas:
            if q.team == team and q.user not in (None, user):
                lines_of.setdefault(str(q.user), []).append(q.gpu_model)
        members = sorted(u for u, models in lines_of.items()
                         if team_lines and all(any(line_applies(g, m) for g in models) for m in left))
        return {"models": left, "borrowing_limit": limit, "members": members, "own": sorted(set(own)),
                "covered": sorted({q.gpu_model for q in team_lines})}

    def _held_by(self, tx: StoreTx, user: str) -> _Held:
        """What ``user`` holds and has pending, from their job rows — read again only when the
        store's ``jobs`` counter moved (any job written, by any process sharing the store): 50
        panels polling ``GET me`` each second read and decoded them for every poll (issue 17)."""
        version = tx.jobs_version()
        kept = self._held.get(user)
        if kept is not None and kept.version == version and version >= 0:
            return kept
        records = [r for r in tx.list_jobs(user=user, states=(JobState.ADMITTED, JobState.RUNNING))
                   if r.job.allocation is not None]
        holding = [r.job for r in records]
        held = _Held(version=version,
                     # summed in milli-GPUs (integers), divided once: ten 0.1 shares are 1.0, not
                     # 0.9999999999999999 (new user 17, N22)
                     in_use=sum(len(j.allocation.all_gpu_uuids()) * j.allocation.gpu_milli
                                for j in holding if j.allocation is not None) / 1000,
                     jobs=sum(1 for j in holding if not j.is_lease), leases=sum(1 for j in holding if j.is_lease),
                     pending=tx.count_jobs(user=user, states=(JobState.PENDING,)),
                     # in a stop's grace (new user 8, N13: `status` said "1 job running" during a cancel)
                     stopping=sum(1 for r in records if r.stop_intent and not r.job.is_lease),
                     by_team=_by_team(holding),
                     held=tuple(held_groups((job_id, r.code, r.details, r.message, r.unblock or "")
                                            for job_id, r in tx.waiting_reasons(user, HELD_CODES))))
        if len(self._held) >= _HELD_USERS and user not in self._held:
            self._held.clear()  # bounded: the next poll of each user reads again
        self._held[user] = held
        return held

    def _team_in_use(self, tx: StoreTx, team: str) -> tuple[float, float]:
        """GPUs the work of ``team`` (everyone's in it) holds now — what its quota counts, shown
        beside the quota in ``jupyter-sched status`` (new user 11, N21); a sum, naming no job or
        user — and of them the unused rest of GPUs only the team's shares hold, which the count takes
        whole (newuser39 n5: "2 GPUs in use by the team, 1.7 GPUs of them yours" read as 0.3 someone
        else's). Read again only when the ``jobs`` counter moved, as :meth:`_held_by`."""
        version = tx.jobs_version()
        kept = self._team_held.get(team)
        if kept is not None and kept[0] == version and version >= 0:
            return kept[1]
        holdings = [(r.job.spec.team, uuid, r.job.allocation.gpu_milli)
                    for r in tx.list_jobs(states=(JobState.ADMITTED, JobState.RUNNING))
                    if r.job.allocation is not None for uuid in r.job.allocation.all_gpu_uuids()]
        # a GPU only the team's shares occupy counts whole, as admission and reclaim count it (red38 R3)
        charged = team_milli_held(holdings, team)
        asked = sum(milli for owner, _, milli in holdings if owner == team)
        total = (charged / 1000, max(0, charged - asked) / 1000)
        if len(self._team_held) >= _HELD_USERS and team not in self._team_held:
            self._team_held.clear()
        self._team_held[team] = (version, total)
        return total

    def _whose(self, caller: Caller, everyone: bool, user: str | None = None) -> str | None:
        """Whose usage ``caller`` reads: everyone (None) or one user; admins only beyond their own."""
        if everyone:
            self.ctx.admission.require_admin(caller, "reading everyone's usage", field="all",
                                             hint="leave out all to read your own usage")
            return None
        if user is not None and user != caller.user:  # never answer the caller's own figures instead
            self.ctx.admission.require_admin(caller, "reading another user's usage", field="user",
                                             hint="leave out user to read your own usage")
            return user
        return caller.user

    def usage(self, caller: Caller, request: GetUsageRequest) -> GetUsageResponse:
        """Allocated GPU-seconds/hours rolled up ``by`` inside ``[since, until)`` — by the one usage
        period rule (:func:`~jupyter_sched.accounting.usage.usage_window`: the last 7 days when
        ``since`` is not given); each row says its ``since`` and ``until`` (ISO 8601 UTC).

        Raises:
            AuthorizationError: ``all`` or another ``user`` from a non-admin (audited).
            ValidationError: an unknown grouping field or a timestamp without offset.
        """
        user = self._whose(caller, request.all, request.user)
        keys = tuple(k.strip() for k in request.by.split(","))
        bad = [k for k in keys if k not in ROLLUP_KEYS]
        if bad or not keys:
            raise ValidationError(f"cannot group usage by {bad[0][:40] if bad else '(nothing)'!r}", field="by",
                                  hint="use any of " + ", ".join(ROLLUP_KEYS))
        keys = _own_share(keys, user)
        now = self.ctx.clock.now()
        start, end = usage_window(*parse_window(request.since, request.until), now=_up_to_the_second(now))
        # summed by the database (exact microseconds); rows only of jobs it cannot decide (verify27 V7); B15: a
        # runaway row is not billed to now
        sums, rows = self.ctx.store.usage_sums(since=start, until=end, now=now, by=keys, user=user)
        window = {"since": to_iso(start), "until": to_iso(end)}  # every figure says its period
        return GetUsageResponse.model_validate([{**row, **window} for row in rollup(
            rows, now=now, by=keys, since=start, until=end, summed=sums)])

    def report(self, caller: Caller, request: GetUsageReportRequest) -> GetUsageReportResponse:
        """The rows of one page of the accounting report (:meth:`report_page`)."""
        return self.report_page(caller, request).rows

    def report_page(self, caller: Caller, request: GetUsageReportRequest) -> UsageReportPage:
        """One page of the accounting report (:func:`jupyter_sched.accounting.store_report.usage_report_for`)
        over the one usage period (as :meth:`usage`: the last 7 days when ``since`` is not given); each
        row says its ``since`` and ``until``. A page holds at most ``request.limit`` groups and ends once
        its rows pass :data:`~.models.base.PAGE_BYTES` (at least one group); ``next_cursor`` continues
        after it, ``total`` counts the groups in all. By ``job_id`` the database picks the page's jobs
        (ascending id) and only their usage rows are read (red30 R8: a day of one user's instant jobs,
        170k rows, made one 64 MiB answer in 34 s and the service 1.4 GiB under eight of them).

        Raises:
            AuthorizationError: ``all`` or another ``user`` from a non-admin (audited).
            ValidationError: bad grouping, period, timestamp, or a cursor this server did not give.
        """
        user = self._whose(caller, request.all, request.user)
        by = _own_share(tuple(k.strip() for k in request.by.split(",") if k.strip()), user)
        now = self.ctx.clock.now()
        since, until = usage_window(*parse_window(request.since, request.until),  # the one period
                                    now=_up_to_the_second(now))
        paged_by_job = "job_id" in by
        after = _decode_report_cursor(request.cursor, by_job=paged_by_job) if request.cursor else None
        job_ids: list[str] | None = None
        if paged_by_job:
            job_ids, total = self.ctx.store.usage_job_page(since=since, until=until, user=user,
                                                           after=after, limit=request.limit + 1)
            more = len(job_ids) > request.limit
            job_ids = job_ids[:request.limit]
        rows = usage_report_for(
            self.ctx, user=user, by=by, since=since, until=until, period=request.period, now=now,
            prices=self.prices, cost_unit=self.price_unit, job_ids=job_ids,
            telemetry_until=self.monitor.rolled_until() if self.monitor is not None else None)
        if "team" in by and rows:  # a team whose work an admin moved (renamed hub group): one line links its rows
            from .team_move import moved_notes

            notes = moved_notes(self.ctx.store, since, until)
            for row in rows:
                if (note := notes.get(str(row.get("team")))) is not None:
                    row["moved"] = note
        if paged_by_job:
            rows.sort(key=lambda row: str(row.get("job_id") or ""))  # stable: the page's jobs in id order
            rows, cut = _bounded_by_job(rows)
            more = more or cut is not None
            last = cut if cut is not None else (job_ids[-1] if job_ids else None)
            next_cursor = _encode_report_cursor("j", last) if more and last is not None else None
        else:
            start = int(after or 0)
            total = len(rows)
            rows, end = _bounded_from(rows, start, request.limit)
            next_cursor = _encode_report_cursor("o", end) if end < total else None
        return UsageReportPage(rows=GetUsageReportResponse.model_validate(rows), next_cursor=next_cursor, total=total)

    def waste(self, caller: Caller, request: GetUsageWasteRequest) -> GetUsageWasteResponse:
        """Admins: jobs and users ranked by allocated-but-idle GPU-hours (case 025;
        :func:`jupyter_sched.accounting.store_report.waste_report_for`), idle meaning a valid
        reading below the default idle threshold or a confirmed utilization latch; time without a
        valid reading is reported apart as unknown, never as waste. Plus the GPUs busy while
        nobody was allocated them (case 021; :func:`~jupyter_sched.accounting.store_report.unattributed_for`).

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a timestamp without offset.
        """
        self.ctx.admission.require_admin(caller, "reading the waste report")
        start, end = parse_window(request.since, request.until)
        policies = self.ctx.engine.idle_policies
        threshold = policies.default.threshold_pct if policies is not None else 5.0
        now = self.ctx.clock.now()
        report = waste_report_for(self.ctx.store, now=now, since=start, until=end, threshold_pct=threshold)
        nobody = unattributed_for(self.ctx.store, now=now, since=start, until=end, threshold_pct=threshold,
                                  mig_uuids=mig_uuids_of(self.ctx.inventory()))
        return GetUsageWasteResponse.model_validate({"threshold_pct": threshold, **report.to_dict(),
                                                     "unattributed": [r.to_dict() for r in nobody]})

    def what_if(self, caller: Caller, request: GetQuotaWhatIfRequest) -> GetQuotaWhatIfResponse:
        """Admins: a past period's usage of a team against a proposed quota line (:mod:`.quota_what_if`).

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a bad team name, timestamp or period.
        """
        from .quota_what_if import quota_what_if

        return quota_what_if(self.ctx, caller, request, self.known_teams)

    @staticmethod
    def report_csv(rows: GetUsageReportResponse, request: GetUsageReportRequest) -> str:
        """The report as CSV text with a header row; its last two columns, ``since`` and ``until``,
        say the period on every row (the rows' own: ISO 8601 UTC; hubadmin23 A10)."""
        by = tuple(k.strip() for k in request.by.split(",") if k.strip())
        # one user's rows by team carry the user (as :meth:`report` grouped them): a column says whose
        return report_csv(rows.to_wire(), by=_own_share(by, None if request.all else "one user"))


def _row_bytes(row: Mapping[str, Any]) -> int:
    """About how many bytes a report row takes in the answer (its JSON)."""
    return len(json.dumps(row, default=str))


def _bounded_by_job(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    """``rows`` (ordered by job id) up to the last whole job before they pass :data:`PAGE_BYTES` (at
    least one job), and the id of the last job kept when some were left for the next page (else None)."""
    total, kept_job = 0, None
    for at, row in enumerate(rows):
        job = str(row.get("job_id") or "")
        if at and total >= PAGE_BYTES and job != kept_job:
            return rows[:at], kept_job
        total += _row_bytes(row)
        kept_job = job
    return rows, None


def _bounded_from(rows: list[dict[str, Any]], start: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The rows of a page from ``start``: at most ``limit``, ending once they pass :data:`PAGE_BYTES`
    (at least one); and where the next page starts."""
    total, end = 0, start
    while end < len(rows) and end - start < limit and (end == start or total < PAGE_BYTES):
        total += _row_bytes(rows[end])
        end += 1
    return rows[start:end], end


def _encode_report_cursor(kind: str, value: str | int) -> str:
    """The opaque cursor of the report page after job id ``value`` (``kind`` "j") or from row ``value`` ("o")."""
    return base64.urlsafe_b64encode(json.dumps(["r", kind, value]).encode()).decode().rstrip("=")


def _decode_report_cursor(cursor: str, *, by_job: bool) -> str | int:
    """Inverse of :func:`_encode_report_cursor` for a report grouped ``by_job`` (a job id) or not (a row).

    Raises:
        ValidationError: not a cursor of this report this server gave (field ``cursor``).
    """
    try:
        tag, kind, value = untrusted_json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if tag != "r" or kind != ("j" if by_job else "o"):
            raise ValueError(cursor)
        if by_job and isinstance(value, str) and 0 < len(value) <= 512:
            return value
        if not by_job and type(value) is int and 0 <= value <= 10**9:
            return value
        raise ValueError(cursor)
    except (ValueError, TypeError):
        raise ValidationError("cursor is not one this server gave for this report", field="cursor",
                              hint="pass the cursor of the Link: rel=next header unchanged (with the same by), "
                                   "or leave it out") from None


def _own_share(keys: tuple[str, ...], user: str | None) -> tuple[str, ...]:
    """``keys`` plus ``user`` when one user's usage is grouped by team: the rows are that user's
    share of each team, never the team's total (red team 15, R14: a member's ``usage?by=team`` read
    "team teamb used 0.65 GPU-h" for their own 0.65 of the team's 0.71), so each row says whose it
    is — ``{"team": "teamb", "user": "red15b", …}``. Admins' ``all`` (user None) are team totals."""
    if user is None or "team" not in keys or "user" in keys:
        return keys
    return (*keys, "user")


def _lines_of(quotas: QuotaSet, team: str, user: str) -> list[Quota]:
    """The quota lines that bound ``user`` in ``team``: its own, else — once other teams have lines
    and ``unlisted_borrowing_limit`` is set — the unlisted line that applies to it (guaranteed 0,
    that borrowing limit, any model: red team 19, R3; ``GET me`` said "no limit" where submits
    were refused), also for a member of a team named only by others' per-user lines (red team 20, R2)."""
    own = [q for q in quotas.quotas if q.team == team and q.user in (None, user)]
    if own or not _unlisted(quotas, team, user):
        return own
    return [Quota(team=team, guaranteed=0.0, borrowing_limit=quotas.unlisted_borrowing_limit)]


def _unlisted(quotas: QuotaSet, team: str, user: str) -> bool:
    """Is ``user`` in ``team`` bounded by the unlisted line on every model (no team line, no line of
    their own, others have lines, a limit is set)? (A team with lines for some models only is
    bounded on the others too: GET quotas' warnings say those; ``by_team`` has no field for them.)"""
    return (bool(quotas.quotas) and quotas.unlisted_borrowing_limit is not None and not quotas.for_team(team)
            and not quotas.for_user(team, user))
