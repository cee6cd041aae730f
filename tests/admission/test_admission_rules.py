"""The admission step's pure half, as scenarios: who is asking (``resolve_caller``) and may they
ask this (``check_job``), without a server or a store (STYLE §10: table-driven, sentence ids)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from jupyter_sched.admission import AdmissionPolicy, Caller, check_job, resolve_caller
from jupyter_sched.admission.policy import parse_user_teams
from jupyter_sched.errors import AuthorizationError, QuotaError, SchedError, ValidationError
from jupyter_sched.model import Budget, JobSpec, Quota, QuotaSet, TeamPolicy, spec_from_request

GPUS = {"NVIDIA A100-SXM4-80GB": 8, "NVIDIA H100 80GB HBM3": 4}


def make_quotas(*lines: Quota, teams: Sequence[TeamPolicy] = (), budgets: Sequence[Budget] = (),
                user_teams: Mapping[str, Any] | None = None) -> QuotaSet:
    """A quota set; ``user_teams`` as the config and PUT quotas take them (``{user: team | [teams]}``):
    the store's memberships, the config file's as last applied or an admin's (new user 20, N21)."""
    return QuotaSet(quotas=tuple(lines), teams=tuple(teams), budgets=tuple(budgets),
                    user_teams=parse_user_teams(user_teams or {}))


def make_policy(*, user_teams: Mapping[str, Any] | None = None, grants: Mapping[str, Any] | None = None,
                default_team: str = "default") -> AdmissionPolicy:
    return AdmissionPolicy.from_settings({"user_teams": user_teams or {}, "priority_grants": grants or {},
                                          "default_team": default_team})


def make_caller(user: str = "ana", *, quotas: QuotaSet | None = None, policy: AdmissionPolicy | None = None,
                groups: Sequence[str] | None = None, admin: bool = False) -> Caller:
    return resolve_caller(user, admin=admin, quotas=quotas or QuotaSet(), policy=policy or make_policy(),
                          groups=groups)


def make_spec(caller: Caller, **body: Any) -> JobSpec:
    """What the service builds from a request body: the caller's default team unless the body names one."""
    run = {} if body.get("kind") == "lease" else {"command": ["python", "train.py"]}  # a lease runs nothing (N4)
    return spec_from_request({**run, **body}, user=caller.user, default_team=caller.default_team or "default")


# ---- who is asking -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Who:
    id: str
    user: str = "ana"
    groups: Sequence[str] | None = None
    quotas: QuotaSet = field(default_factory=QuotaSet)
    policy: AdmissionPolicy = field(default_factory=make_policy)
    want_teams: tuple[str, ...] = ()
    want_granted: Mapping[str, set[str]] = field(default_factory=dict)


WHO = [
    Who("nobody named the user: the default team alone", want_teams=("default",),
        want_granted={"default": {"normal", "low"}}),
    Who("the admin's default team is the fallback", policy=make_policy(default_team="lab"), want_teams=("lab",)),
    Who("embedded: user_teams names one team", quotas=make_quotas(user_teams={"ana": "ml"}),
        want_teams=("ml",)),
    Who("embedded: user_teams may name several, the first is the default",
        quotas=make_quotas(user_teams={"ana": ["cv", "ml"]}), want_teams=("cv", "ml")),
    Who("the stored memberships decide, not the policy's: the services put the config's there when it changes",
        quotas=make_quotas(user_teams={"ana": "nlp"}), policy=make_policy(user_teams={"ana": "ml"}),
        want_teams=("nlp",)),
    Who("hub: stored memberships are not read, the hub's groups are the one source (red21 R6)",
        quotas=make_quotas(user_teams={"ana": "nlp"}, teams=[TeamPolicy(team="cv", members=("ana",))]),
        groups=["ml"], want_teams=("ml",)),
    Who("team policies listing the user add their teams",
        quotas=make_quotas(teams=[TeamPolicy(team="infra", members=("ana",)), TeamPolicy(team="other")]),
        want_teams=("infra",)),
    Who("hub: groups that are known teams come first",
        quotas=make_quotas(Quota(team="ml", guaranteed=1)), groups=["zeta", "ml", "alpha"],
        want_teams=("ml", "alpha", "zeta")),
    Who("hub: a user without groups is in the default team", groups=[], want_teams=("default",)),
    Who("high is granted to nobody by default, whatever the team",
        quotas=make_quotas(user_teams={"ana": ["ml", "cv"]}),
        want_granted={"ml": {"normal", "low"}, "cv": {"normal", "low"}}),
    Who("a user grant applies in each of the user's teams",
        quotas=make_quotas(user_teams={"ana": ["ml", "cv"]}), policy=make_policy(grants={"users": {"ana": ["high"]}}),
        want_granted={"ml": {"high", "normal", "low"}, "cv": {"high", "normal", "low"}}),
    Who("a team grant applies in that team only",
        quotas=make_quotas(user_teams={"ana": ["ml", "cv"]}), policy=make_policy(grants={"teams": {"ml": ["high"]}}),
        want_granted={"ml": {"high", "normal", "low"}, "cv": {"normal", "low"}}),
    Who("a team policy may narrow a team to low",
        quotas=make_quotas(teams=[TeamPolicy(team="scratch", allowed_priorities=("low",), members=("ana",))]),
        want_granted={"scratch": {"low"}}),
    Who("identity never validates quotas: guarantees above the GPUs that exist still resolve",
        quotas=make_quotas(Quota(team="ml", guaranteed=10_000)), groups=["ml"], want_teams=("ml",)),
]


@pytest.mark.parametrize("case", WHO, ids=[c.id for c in WHO])
def test_who_is_asking(case: Who) -> None:
    caller = resolve_caller(case.user, admin=False, quotas=case.quotas, policy=case.policy, groups=case.groups)
    if case.want_teams:
        assert caller.teams == case.want_teams
        assert caller.default_team == case.want_teams[0]
    for team, classes in case.want_granted.items():
        assert caller.classes_for(team) == classes, team
    assert caller.classes_for("not-a-team-of-ana") == frozenset()


# ---- may they ask this -------------------------------------------------------------------------

CAP_1 = make_quotas(Quota(team="students", guaranteed=2, borrowing_limit=0),
                    Quota(team="students", user="ana", guaranteed=1, borrowing_limit=0), user_teams={"ana": "students"})
STUDENT = make_quotas(user_teams={"ana": "students"})


@dataclass(frozen=True)
class Ask:
    id: str
    body: Mapping[str, Any]
    quotas: QuotaSet = field(default_factory=QuotaSet)
    policy: AdmissionPolicy = field(default_factory=make_policy)
    want: type[SchedError] | None = None
    want_field: str | None = None
    want_in_message: tuple[str, ...] = ()
    want_details: Mapping[str, Any] = field(default_factory=dict)
    admin: bool = False


ASKS = [
    Ask("a request naming no team is charged to the caller's only team and passes", {"gpus": 1}),
    Ask("naming one's own team passes", {"gpus": 1, "team": "students"}, quotas=STUDENT),
    Ask("another team is refused naming team", {"gpus": 1, "team": "research"}, quotas=STUDENT,
        want=AuthorizationError, want_field="team", want_in_message=("research",)),
    Ask("a made-up team is refused too: no implicit unlimited borrowing line", {"gpus": 3, "team": "zzz-free-for-all"},
        want=AuthorizationError, want_field="team"),
    Ask("the queue alias of team is checked the same way", {"gpus": 1, "queue": "research"}, quotas=STUDENT,
        want=AuthorizationError, want_field="team"),
    Ask("an admin may charge a team an admin named", {"gpus": 1, "team": "research"}, admin=True,
        quotas=make_quotas(Quota(team="research", guaranteed=1))),
    Ask("an admin may not charge a made-up team either", {"gpus": 1, "team": "zzz"}, admin=True,
        quotas=make_quotas(Quota(team="research", guaranteed=1)), want=AuthorizationError, want_field="team"),
    Ask("an admin needs a grant for high like anyone", {"gpus": 1, "team": "research", "priority": "high"},
        admin=True, quotas=make_quotas(Quota(team="research", guaranteed=1)), want=AuthorizationError,
        want_field="priority"),
    Ask("high is refused without a grant", {"gpus": 1, "priority": "high"}, want=AuthorizationError,
        want_field="priority", want_in_message=("high",)),
    Ask("high passes with the user's grant", {"gpus": 1, "priority": "high"},
        policy=make_policy(grants={"users": {"ana": ["high"]}})),
    Ask("low is always granted by default", {"gpus": 1, "priority": "low"}),
    Ask("a 4-GPU job under a 1-GPU per-user cap is 422 naming gpus and the numbers", {"gpus": 4}, quotas=CAP_1,
        want=QuotaError, want_field="gpus", want_in_message=("4 GPUs", "per-user limit of ana", "1 GPU ("),
        want_details={"requested": 4, "ceiling": 1, "user": "ana", "team": "students"}),
    Ask("one GPU under the same cap fits", {"gpus": 1}, quotas=CAP_1),
    Ask("the team ceiling is guarantee plus borrowing limit",
        {"gpus": 4}, quotas=make_quotas(Quota(team="default", guaranteed=1, borrowing_limit=2)),
        want=QuotaError, want_field="gpus", want_details={"ceiling": 3, "guaranteed": 1, "borrowing_limit": 2}),
    Ask("within guarantee plus borrowing limit fits", {"gpus": 3},
        quotas=make_quotas(Quota(team="default", guaranteed=1, borrowing_limit=2))),
    Ask("unlimited borrowing never hits a ceiling", {"gpus": 8}, quotas=make_quotas(Quota(team="default", guaranteed=1))),
    Ask("a gang counts every worker's GPUs", {"gpus": 2, "workers": 2},  # one worker fits: fewer workers (issue 20)
        quotas=make_quotas(Quota(team="default", guaranteed=3, borrowing_limit=0)), want=QuotaError, want_field="workers"),
    Ask("a gang whose one worker is over the limit names gpus", {"gpus": 4, "workers": 2},
        quotas=make_quotas(Quota(team="default", guaranteed=3, borrowing_limit=0)), want=QuotaError, want_field="gpus"),
    Ask("a model-specific cap does not bind a request that may run on another model", {"gpus": 4},
        quotas=make_quotas(Quota(team="default", gpu_model="NVIDIA H100 80GB HBM3", guaranteed=1, borrowing_limit=0),
                           Quota(team="default", gpu_model="NVIDIA A100-SXM4-80GB", guaranteed=4, borrowing_limit=0))),
    Ask("asking for the capped model only is refused", {"gpus": 4, "model": "H100"},
        quotas=make_quotas(Quota(team="default", gpu_model="NVIDIA H100 80GB HBM3", guaranteed=1, borrowing_limit=0),
                           Quota(team="default", gpu_model="NVIDIA A100-SXM4-80GB", guaranteed=4, borrowing_limit=0)),
        want=QuotaError, want_field="gpus", want_in_message=("H100",)),
    Ask("CPU-only work never hits a GPU ceiling", {"gpus": 0},
        quotas=make_quotas(Quota(team="default", guaranteed=0, borrowing_limit=0))),
    Ask("a 50,000-character team name is refused before anything echoes it", {"gpus": 1, "team": "t" * 50_000},
        want=ValidationError, want_field="team"),
    Ask("a right-to-left override in the name is refused", {"gpus": 1, "name": "train\u202egnp.exe"},
        want=ValidationError, want_field="name", want_in_message=("U+202E",)),
    Ask("a control character in the name is refused", {"gpus": 1, "name": "a\x1b[2Jb"}, want=ValidationError,
        want_field="name"),
    Ask("an env key with '=' is refused", {"gpus": 1, "env": {"A=B": "1"}}, want=ValidationError, want_field="env"),
    Ask("an empty env key is refused", {"gpus": 1, "env": {"": "1"}}, want=ValidationError, want_field="env"),
    Ask("an env key starting with a digit is refused", {"gpus": 1, "env": {"1X": "1"}}, want=ValidationError,
        want_field="env"),
    Ask("an ordinary environment passes", {"gpus": 1, "env": {"BATCH_SIZE": "64", "_X1": ""}}),
    Ask("a 40 KiB env value is refused", {"gpus": 1, "env": {"BIG": "x" * 40_000}}, want=ValidationError,
        want_field="env"),
    Ask("a kernel id longer than 256 characters is refused", {"gpus": 1, "kind": "lease", "kernel_id": "k" * 300},
        want=ValidationError, want_field="kernel_id"),
]


@pytest.mark.parametrize("case", ASKS, ids=[c.id for c in ASKS])
def test_may_they_ask_this(case: Ask) -> None:
    caller = make_caller(quotas=case.quotas, policy=case.policy, admin=case.admin)
    if case.want is None:
        check_job(caller, make_spec(caller, **case.body), quotas=case.quotas, gpus_by_model=GPUS)
        return
    with pytest.raises(case.want) as refused:  # the request's own validation may refuse first (env '=')
        check_job(caller, make_spec(caller, **case.body), quotas=case.quotas, gpus_by_model=GPUS)
    err = refused.value
    assert err.field == case.want_field
    assert err.hint, "every refusal says what to do"
    for text in case.want_in_message:
        assert text in err.message, (text, err.message)
    for key, value in case.want_details.items():
        assert err.details[key] == value, (key, err.details)
    assert len(err.message) < 400, "a refusal never echoes an unbounded input"


def test_the_tables_have_unique_sentence_ids() -> None:
    assert len({c.id for c in WHO}) == len(WHO) and len({c.id for c in ASKS}) == len(ASKS)
