"""Request and response models of quotas, profiles and ``me`` (who am I, what do I use)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, RootModel, field_validator

from ...model.periods import Period
from ...model.validation import fold_priority
from .base import CodecView, QueryModel, RequestModel, ResponseModel
from .jobs import PriorityName

__all__ = [
    "GetQuotaWhatIfRequest", "GetQuotaWhatIfResponse", "QuotaWhatIfLine",
    "BudgetLine",
    "BudgetView",
    "GetMeResponse",
    "GetQuotasResponse",
    "ListProfilesResponse",
    "QuotaSourceView",
    "MeBudget",
    "MeInUse",
    "Profile",
    "QuotaLine",
    "QuotaLineView",
    "SetQuotasRequest",
    "TeamPolicyLine",
    "TeamPolicyView",
]

MAX_GPUS = 1_000_000.0
"""Largest guarantee or borrowing limit (GPUs) a quota line may name."""


class QuotaLine(RequestModel):
    """A quota line: ``guaranteed`` GPUs and a ``borrowing_limit`` above it (null = unlimited),
    for a team or one user in it, on one GPU model or any (``*``)."""

    team: str = Field(min_length=1, examples=["ml"])
    user: str | None = Field(default=None, examples=["ana"], description="null for the team's line")
    gpu_model: str = Field(default="*", min_length=1, examples=["*"])
    guaranteed: float = Field(default=0, ge=0, le=MAX_GPUS, examples=[4])
    borrowing_limit: float | None = Field(default=None, ge=0, le=MAX_GPUS, examples=[2],
                                          description="null = unlimited, 0 = no borrowing")


class BudgetLine(RequestModel):
    """A GPU-hour budget per period for a team, or one user in it."""

    team: str = Field(min_length=1, examples=["ml"])
    user: str | None = Field(default=None, description="null for the whole team")
    gpu_hours: float = Field(ge=0, le=1e9, examples=[500])
    period: Period = Field(default="month", examples=["month"],
                          description="calendar periods in UTC; a week from Monday, a quarter from Jan 1, Apr 1, Jul 1, Oct 1")


class TeamPolicyLine(RequestModel):
    """A team's fair-share weight, granted priority classes and members."""

    team: str = Field(min_length=1, examples=["ml"])
    weight: float = Field(default=1.0, gt=0, le=1e6, examples=[1])
    allowed_priorities: list[PriorityName] = Field(default=["normal", "low"], examples=[["normal", "low"]],
                                                   description="high only when an admin grants it")
    members: list[str] = Field(default=[], examples=[["ana"]], description=(
        "users in the team (embedded mode); hub mode: refused unless [] (a user's teams are their hub groups)"))
    reclaim: str | None = Field(default=None, examples=["lower-or-equal"],
                                description="the team's reclaim rule: any, lower-or-equal, lower or never "
                                            "(null = the scheduling profile's)")

    @field_validator("allowed_priorities", mode="before")
    @classmethod
    def _classes_case_folded(cls, value: Any) -> Any:
        """``["High"]`` is ``["high"]``: class names are case folded wherever they are named
        (:func:`~jupyter_sched.model.validation.fold_priority`; new user 20, N27)."""
        return [fold_priority(c) for c in value] if isinstance(value, list) else value


class SetQuotasRequest(RequestModel):
    """``PUT quotas``: keys left out keep their current value (a bare list of quota lines is
    accepted too). GET quotas' whole answer may be sent back: its read-only ``warnings`` and ``source``
    are ignored. The set it stores outlives restarts (new user 20, N26)."""

    quotas: list[QuotaLine] | None = None
    budgets: list[BudgetLine] | None = None
    teams: list[TeamPolicyLine] | None = None
    user_teams: dict[str, str | list[str]] | None = Field(
        default=None, examples=[{"ana": "ml", "bo": ["ml", "cv"]}],
        description="who is in which team (embedded mode), as c.SchedApp.user_teams takes it: a user's teams in "
                    "order, the first charged when a request names none; a single team name is a list of one. "
                    "It replaces every membership in force (the config file's too, until c.SchedApp.user_teams "
                    "changes); {} removes them all. Changes are audited (team_members_changed, a row per user). "
                    "Hub mode: refused (400, field user_teams) unless {}: a user's teams are their hub groups")
    user_teams_source: dict[str, Any] | None = Field(
        default=None, description="read-only: who set the memberships GET quotas answered; sent back, it is ignored")
    warnings: list[str] | None = Field(
        default=None, description="read-only: what GET quotas answered; sent back unchanged (a read-modify-write "
                                  "of GET quotas' body), it is ignored")
    source: dict[str, Any] | None = Field(
        default=None, description="read-only: who set the set GET quotas answered; sent back, it is ignored "
                                  "(this PUT becomes the source)")
    budget_standings: list[dict[str, Any]] | None = Field(
        default=None, description="read-only: the standings GET quotas answered an admin; sent back, they are ignored")
    reclaim_cooldowns: list[dict[str, Any]] | None = Field(
        default=None, description="read-only: the teams' reclaim cool-downs GET quotas answered; sent back, they are "
                                  "ignored")
    dry_run: bool = Field(default=False, description=(
        "true: check the change and answer what would then be in force, with its warnings (teams left "
        "without a quota line and the work that strands), storing nothing"))
    preempts: list[str] | None = Field(
        default=None, description="read-only: what a PUT quotas answered; sent back, it is ignored")

    @field_validator("user_teams", mode="before")
    @classmethod
    def _user_teams_as_the_config_takes_them(cls, value: Any) -> Any:
        """``{user: team | [team, ...]}`` by the config's rule, refused naming ``user_teams.<user>[i]``
        (:func:`~jupyter_sched.admission.policy.parse_user_teams`; new user 20, N21)."""
        from ...admission.policy import parse_user_teams

        if value is None:
            return None
        return {user: list(teams) for user, teams in parse_user_teams(value).items()}


class QuotaLineView(CodecView):
    """A quota line as stored (:func:`~jupyter_sched.model.codec.quota_to_dict`)."""

    team: str
    user: str | None = None
    gpu_model: str = "*"
    guaranteed: float = 0
    borrowing_limit: float | None = None


class BudgetView(CodecView):
    """A budget as stored (:func:`~jupyter_sched.model.codec.budget_to_dict`)."""

    team: str
    user: str | None = None
    gpu_hours: float
    period: str


class TeamPolicyView(CodecView):
    """A team policy as stored (:func:`~jupyter_sched.model.codec.team_policy_to_dict`)."""

    team: str
    weight: float = 1.0
    allowed_priorities: list[PriorityName] = Field(default_factory=list)
    members: list[str] = Field(default_factory=list)
    reclaim: str | None = None


class BudgetStandingView(ResponseModel):
    """Where one budget stands now (admins; hubadmin25 B16), from the usage accounting."""

    team: str
    user: str | None = Field(default=None, description="the user the budget is of (null: the whole team)")
    gpu_hours: float = Field(description="the budget: GPU-hours per period")
    period: str = Field(description="day, week (from Monday), month or quarter (from Jan 1, Apr 1, Jul 1, Oct 1), from 00:00 UTC")
    used_gpu_hours: float = Field(description="GPU-hours allocated in the current period")
    left_gpu_hours: float = Field(description="GPU-hours left this period (0 when spent): a new GPU job fits while its "
                                              "GPUs times its time limit is at most this (the rule "
                                              "c.SchedApp.budget_admission = safe admits by)")
    resets_at: str = Field(description="when the period ends and the budget resets (UTC, ISO 8601)",
                           json_schema_extra={"format": "date-time"})
    running_may_use_gpu_hours: float | None = Field(description=(
        "GPU-hours the budget's admitted and running work may still use, up to its time limits or the reset "
        "(null: some of it has no time limit)"))
    pending_gpu_jobs: int = Field(description="pending GPU jobs charged to the budget")
    text: str = Field(description=(
        "the standing in words, the reset in UTC and a day budget's period `this UTC day` (true in every zone); "
        "jupyter-sched quotas and queue --summary say it again from the numbers in the reader's zone"))


class QuotaSourceView(ResponseModel):
    """Who set the quota set in force (new user 20, N26), or its team memberships (N21)."""

    set_by: str = Field(description="`config` (the config file's c.SchedApp.quotas, applied at a start) "
                                    "or the admin of the last PUT quotas")
    set_at: str = Field(description="when (UTC, ISO 8601)", json_schema_extra={"format": "date-time"})
    config: bool = Field(description="true: the config file's lines; false: set at run time by PUT quotas")
    text: str = Field(description="in words: `root with PUT quotas at Dec 4 23:14 UTC` or "
                                  "`the config file (c.SchedApp.quotas) at Dec 4 23:15 UTC`")


class ReclaimCooldownView(ResponseModel):
    """A team whose reclaims of other teams' borrowed GPUs wait out a reclaim cool-down (newuser38 n21): work of
    the team that took GPUs back by reclaim gave them up soon after (DESIGN.md *Reclaim*)."""

    team: str
    until: str = Field(description="when the team's reclaims may go on (ISO 8601 UTC)")
    user: str | None = Field(default=None, description=(
        "the member whose work took GPUs back and gave them up: said to the team's members and admins only "
        "(null to others)"))
    cause: str | None = Field(default=None, description=(
        "how that work ended: release, cancel, exit, failure, time_limit, idle_reclaim, budget, preempted or lost "
        "(null where user is)"))
    actor: str | None = Field(default=None, description="who released or cancelled it, where someone did")
    lease: bool = Field(default=False, description="it was a kernel's lease (%gpu request)")
    text: str = Field(description=(
        "the line `jupyter-sched status` and the panel's Quota section say: `vision: reclaims paused until 11:08 UTC "
        "(cool-down after n38a's release): its jobs take no borrowed GPUs back until then` (to other teams: `(a "
        "reclaim cool-down)`)"))


class GetQuotasResponse(ResponseModel):
    """The quota set in force. It outlives restarts: the config file's c.SchedApp.quotas replaces the
    lines at a start only when it changed since it was last applied (the start-up log then warns)."""

    quotas: list[QuotaLineView]
    budgets: list[BudgetView]
    teams: list[TeamPolicyView]
    user_teams: dict[str, list[str]] = Field(description=(
        "who is in which team (embedded mode): each user's teams in order, the first charged when a request "
        "names none — the memberships in force, the config file's c.SchedApp.user_teams or an admin's PUT "
        "(user_teams_source says which); in hub mode the hub's groups as the hub poll last read them, read-only "
        "({} before the first read). An admin reads every user's; any other user reads only their own"))
    source: QuotaSourceView | None = Field(default=None, description=(
        "who set the quota set in force (null: not recorded since the upgrade that records it)"))
    user_teams_source: QuotaSourceView | None = Field(default=None, description=(
        "who set the memberships in force: the config file (c.SchedApp.user_teams, applied at a start when it "
        "changed) or the admin of the PUT quotas that changed them last (null: not recorded since the upgrade "
        "that records it); in hub mode set_by `hub`: the hub's groups decide, set_at when they were read"))
    budget_standings: list[BudgetStandingView] = Field(default_factory=list, description=(
        "admins: where every budget stands now — used, left, when it resets, what running work may still use "
        "and what a new job may use (hubadmin25 B16)"))
    reclaim_cooldowns: list[ReclaimCooldownView] = Field(default_factory=list, description=(
        "teams whose reclaims of other teams' borrowed GPUs wait out a reclaim cool-down now, as the store says "
        "(every server the same; absent when none); who ended the work is said to the team's members and admins "
        "only"))
    warnings: list[str] = Field(default_factory=list,
                                description="admins: guarantees the GPUs that exist now cannot honour (a drained node), teams "
                                            "without a line, lines that apply to nobody (hub mode: no hub group); a PUT's "
                                            "answer first names each line it set below what its running work holds (that "
                                            "work runs on; pending work waits)")

    def to_wire(self) -> Any:
        return self.model_dump(mode="json", exclude_unset=True)


class Profile(ResponseModel):
    """An admin's request template."""

    name: str
    description: str
    defaults: dict[str, Any]


class ListProfilesResponse(RootModel[list[Profile]]):
    """Request templates, sorted by name."""

    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> Any:
        return self.model_dump(mode="json")


class MeInUse(ResponseModel):
    gpus: float = Field(description="GPUs held now (fractions count)")
    jobs: int = Field(description="jobs holding GPUs (admitted or running), the stopping ones included")
    leases: int
    stopping: int = Field(default=0, description="of those jobs, the ones in the grace of a stop (a cancel, "
                                                 "a preemption, a time limit): their stop_requested says which")


class MeWaitingOnYou(ResponseModel):
    """Other users' waiting work whose start waits for GPUs the caller's work holds (newuser31 n14)."""

    jobs: int = Field(description="waiting jobs and leases of other users whose ETA waits on your GPU-holding work")
    users: list[str] = Field(description="their owners (public: every queue line shows them), sorted")
    text: str = Field(description=(
        "the sentence `jupyter-sched status`, `%schedule status` and the panel's My work say: `1 job of another user "
        "(n31a) waits for GPUs you hold` — no job's name or command (their owners' own)"))


class MeHeld(ResponseModel):
    """Your pending jobs held until someone acts, of one kind of hold (newuser38 n24)."""

    code: str = Field(description="their reasons' code (Held, OwnerRemoved, TeamMembership, OwnerUnconfirmed, "
                                  "QuotaRowUnreadable, Reinstalled)")
    jobs: int = Field(description="how many of your pending jobs are held so (counted in pending too)")
    what: str = Field(description="the hold in a few words: `never starts (you left team nlp)`")
    fix: str = Field(description="what to do: `cancel and resubmit with --team vision`")


class MeBudget(BudgetView):
    used_gpu_hours: float
    resets_at: str | None = Field(default=None, description=(
        "when the budget's period ends and used_gpu_hours starts again from 0 (ISO 8601 UTC, 00:00 UTC; weeks on "
        "Monday): while used_gpu_hours >= gpu_hours, new GPU jobs wait until then or until an admin raises it"))


class MeUnlistedScope(ResponseModel):
    """GPU models present on which no quota line of a team (nor one of yours in it) applies to you:
    there the unlisted rule bounds your work (guaranteed 0, borrowing limit
    c.SchedApp.unlisted_team_borrowing_limit), as the queue's reasons say (verify20 V4)."""

    models: list[str] = Field(description="the GPU models (present) where no line applies to you in this team")
    borrowing_limit: float = Field(description=(
        "GPUs the team's work without a line may use there together (c.SchedApp.unlisted_team_borrowing_limit)"))
    covered: list[str] = Field(default_factory=list, description="the GPU models (or *) the team's own lines name")
    own: list[str] = Field(default_factory=list, description=(
        "the GPU models (or *) of your own lines in this team (none applies on models)"))
    members: list[str] = Field(default_factory=list, description=(
        "members other than you whose own lines apply on every one of models (the rule does not count them); "
        "for a team named only by other members' lines (models empty), those members"))
    member_models: dict[str, list[str]] = Field(default_factory=dict, description=(
        "per user in members, the GPU models (or *) of their lines in this team (verify21 V6)"))


class MeTeamUse(ResponseModel):
    team: str
    in_use: float = Field(description="GPUs the work of this team (everyone's in it) holds now, as its quota lines "
                          "count them: a GPU only the team's shares hold counts whole")
    held_whole: float = Field(default=0.0, description=(
        "of in_use, the unused rest of GPUs only the team's shares hold (counted whole against its lines)"))
    yours: float = Field(description="of them, the GPUs your work charged to this team holds")
    quotas: list[QuotaLineView] = Field(description="this team's quota lines that apply to you")
    unlisted: bool = Field(default=False, description=(
        "the team has no quota line of its own while other teams have: quotas is the line it gets "
        "(guaranteed 0, borrowing limit c.SchedApp.unlisted_team_borrowing_limit; 0 by default: no GPU work starts)"))
    unlisted_scope: MeUnlistedScope | None = Field(default=None, description=(
        "for a team with lines: the GPU models here on which none of its lines (nor one of yours) applies "
        "to you, bounded by the unlisted rule; null when every model is covered, or no limit is set"))


class GetMeResponse(ResponseModel):
    """The caller: name, admin flag, teams, and usage against quota and budget."""

    user: str
    is_admin: bool
    team: str = Field(description="the default team of your requests")
    teams: list[str] = Field(description="every team you may charge")
    priorities: dict[str, list[PriorityName]] = Field(description="per team, the classes granted to you")
    quotas: list[QuotaLineView]
    budgets: list[MeBudget]
    in_use: MeInUse
    team_in_use: float | None = Field(default=None, description=(
        "GPUs the work of your default team (everyone's in it) holds now: what its quota lines count "
        "(a GPU only the team's shares hold counts whole)"))
    team_held_whole: float | None = Field(default=None, description=(
        "of team_in_use, the unused rest of GPUs only the team's shares hold (counted whole against its lines)"))
    by_team: list[MeTeamUse] = Field(default_factory=list, description=(
        "per team: your default team first, then every other team your GPU-holding work is charged to"))
    pending: int
    gpu_hours_7d: float = Field(description="GPU-hours allocated to you in the last 7 days (the one usage period)")
    gpu_hours_since: str | None = Field(default=None, description=(
        "start of gpu_hours_7d's period (ISO 8601 UTC): 7 days before the second its sums were taken: this answer's, or up to 60 s earlier where they are held (20,000 usage rows or more)"))
    quota_text: str = Field(default="", description=(
        "your quota in one sentence, as `jupyter-sched status` and `%gpu` say it (the panel shows it): "
        "`team ml: guaranteed 2 GPUs, borrowing limit 1 GPU (at most 3 GPUs); 2 GPUs in use by the team, 1 GPU "
        "yours`, or `team default has no GPUs set aside and no limit (no quota); …` (with no quota line "
        "while others have: `team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs (…); …`); one "
        "line per team in by_team"))
    waiting_on_you: MeWaitingOnYou | None = Field(default=None, description=(
        "other users' waiting work that waits for GPUs your work holds, as of the last scheduling cycle (a server "
        "that does not lead: as the store holds its reasons); absent when none does"))
    reclaim_cooldowns: list[ReclaimCooldownView] = Field(default_factory=list, description=(
        "your teams whose reclaims of other teams' borrowed GPUs wait out a reclaim cool-down now, as the store says "
        "(every server the same; empty when none); also in quota_text"))
    held: list[MeHeld] = Field(default_factory=list, description=(
        "your pending jobs that are held until someone acts, by kind of hold, with what to do, from their stored "
        "reasons (every server the same; empty when none)"))
    team_note: str | None = Field(default=None, description=(
        "hub mode: your hub groups changed in the last day, and where new work goes now (`you are now also in nlp; "
        "new work still goes to vision — --team nlp to charge it`); absent otherwise"))
    jobs_cannot_run: str | None = Field(default=None, description=(
        "hub mode: why your jobs cannot run on this host and whom to ask (`cannot run — hub user 'n38d' has no OS "
        "account 'n38d' on this host to run their jobs as: ask an admin to create the account …`); absent when "
        "they can"))


class GetQuotaWhatIfRequest(QueryModel):
    """``GET quotas/what-if`` (admins): a past period's usage of ``team`` against a proposed line (hubadmin26 B7)."""

    team: str = Field(min_length=1, max_length=200, examples=["cv"], description="the team the line is for")
    guaranteed: float = Field(ge=0, le=MAX_GPUS, allow_inf_nan=False, examples=[4],
                              description="the proposed guarantee (GPUs)")
    borrowing_limit: float | None = Field(default=None, ge=0, le=MAX_GPUS, allow_inf_nan=False, description=(
        "the proposed borrowing limit above the guarantee (GPUs); absent: no limit"))
    gpu_model: str | None = Field(default=None, max_length=200, description=(
        "the line's GPU model; absent: the team's usage on every model (a line for any model)"))
    since: str | None = Field(default=None, examples=["2026-10-01T00:00:00+00:00"], description=(
        "start of the period replayed (ISO 8601 with offset); default: the last full calendar quarter"))
    until: str | None = Field(default=None, description="end of the period (not included; at most now)")


class QuotaWhatIfLine(ResponseModel):
    """One line's meaning over the period (:class:`jupyter_sched.accounting.what_if.LineReplay`)."""

    guaranteed: float
    borrowing_limit: float | None = Field(description="null: no limit")
    used_gpu_hours: float = Field(description="the team's allocated GPU-hours in the period (on the line's model)")
    within_guarantee_gpu_hours: float = Field(description="GPU-hours at or below the guarantee")
    borrowed_gpu_hours: float = Field(description="GPU-hours above the guarantee, within the limit: borrowed work, "
                                                  "which another team's reclaim can take")
    over_limit_gpu_hours: float = Field(description="GPU-hours above guarantee + limit: work that would have waited")
    hours_above_guarantee: float = Field(description="wall-clock hours the team held more than the guarantee")
    hours_above_limit: float = Field(description="wall-clock hours it held more than guarantee + limit")
    peak_gpus: float = Field(description="the most GPUs it held at once, counted as its quota lines count them: a GPU "
                                         "only the team's GPU shares held counts whole, as admission counts it")
    asked_gpu_hours: float = Field(description="used_gpu_hours with each GPU share counted as asked (its fraction)")
    asked_peak_gpus: float = Field(description="peak_gpus with each GPU share counted as asked (its fraction)")


class GetQuotaWhatIfResponse(ResponseModel):
    """The proposed line and the line in force, replayed over the same period."""

    team: str
    gpu_model: str | None = Field(description="the line's model (null: every model)")
    since: str = Field(description="ISO 8601 UTC")
    until: str = Field(description="ISO 8601 UTC (not included)")
    proposed: QuotaWhatIfLine
    in_force: QuotaWhatIfLine | None = Field(description="the team's line in force now for that model, replayed the "
                                                         "same way (null: it has none)")
    text: str = Field(description="the same in words, with what the figures cannot say")


class SetQuotasResponse(GetQuotasResponse):
    """``PUT quotas``' answer: the set then in force (GET quotas' shape), whether it was a dry run, and the running
    work the change preempts (newuser38 n13: a dry run's answer said neither, and a reclaim held by a team's
    cool-down was not said at all)."""

    dry_run: bool = Field(description="true: nothing was stored (the request's dry_run)")
    preempts: list[str] = Field(description=(
        "running work the change preempts, one sentence each: at the next cycle, or once a team's reclaim "
        "cool-down ends ('after team vision's reclaim cool-down ends at 10:51 UTC, this change preempts: …'); "
        "[] when it preempts nothing. Also among warnings"))
