"""Red team 20, R2: the unlisted rule per scope. Once any quota line exists and
``unlisted_borrowing_limit`` is set, a job on a GPU model no *team* line of its team covers, by a
user without a line of their own there, counts on its team's unlisted line (guaranteed 0 + that
limit) — a team with lines for A100 only is no longer unlimited on H100, and the members of a team
named only by one member's per-user line are no longer unlimited anywhere (red20 a36/a37: all 4
GPUs of the cluster to a user of a team with only a per-user line).

Pure core: the ledger, the never-fits check (admission and cycle) and the admin's warnings.
"""

from __future__ import annotations

import pytest
from core_builders import make_job, make_node, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.admission.rules import check_ceiling
from jupyter_sched.errors import QuotaError
from jupyter_sched.model import JobSpec, Quota, QuotaSet
from jupyter_sched.quota.ceiling import scope_warnings
from jupyter_sched.quota.ledger import QuotaLedger, line_applies
from jupyter_sched.scheduling import run_cycle

CAPACITY = {"A100": 4, "H100": 8}
VISION_A100 = Quota(team="vision", gpu_model="A100", guaranteed=2, borrowing_limit=0)
NLP_ALL = Quota(team="nlp", guaranteed=2, borrowing_limit=0)
GHOST_ALICE = Quota(team="ghost", user="alice", guaranteed=0, borrowing_limit=1)


def _ledger(*lines: Quota, limit: float | None = 0.0) -> QuotaLedger:
    return QuotaLedger(QuotaSet(quotas=lines, unlisted_borrowing_limit=limit), CAPACITY)


def test_red20_r2_a_team_with_lines_for_one_model_gets_the_unlisted_line_on_the_others() -> None:
    led = _ledger(VISION_A100, NLP_ALL)
    assert led.check("vision", "ana", "A100", 2000).ok  # its own line governs A100
    on_h100 = led.check("vision", "ana", "H100", 1000)  # was ok for 8 GPUs (implicit unlimited line)
    assert not on_h100.ok and on_h100.details["unlisted"] is True, on_h100
    assert on_h100.line == ("vision", None, "*")
    # with a limit of 1 GPU the team's H100 work together is bounded by it; A100 is not charged there
    led = _ledger(VISION_A100, NLP_ALL, limit=1.0)
    led.charge("a", "vision", "ana", "A100", 2000)
    assert led.check("vision", "bo", "H100", 1000).ok
    led.charge("b", "vision", "bo", "H100", 1000)
    second = led.check("vision", "ana", "H100", 1000)
    assert not second.ok and second.details["unlisted"] is True and second.details["used"] == 1


def test_red20_r2_a_team_named_only_by_a_user_line_bounds_its_other_members() -> None:
    led = _ledger(VISION_A100, GHOST_ALICE)
    assert led.check("ghost", "alice", "H100", 1000).ok  # her own cap governs her (the admin's line)
    capped = led.check("ghost", "alice", "H100", 2000)
    assert not capped.ok and capped.details["rule"] == "user cap"
    mallory = led.check("ghost", "mallory", "H100", 1000)  # was ok for 8 GPUs
    assert not mallory.ok and mallory.details["unlisted"] is True
    # alice's GPU is not charged to what the other members may use
    led = _ledger(GHOST_ALICE, limit=2.0)
    led.charge("a", "ghost", "alice", "A100", 1000)
    assert led.check("ghost", "mallory", "H100", 2000).ok
    led.charge("m", "ghost", "mallory", "H100", 2000)
    assert not led.check("ghost", "eve", "A100", 1000).ok


def test_red20_r2_a_star_team_line_covers_every_model_and_a_user_cap_inside_it_still_works() -> None:
    led = _ledger(NLP_ALL, Quota(team="nlp", user="bob", guaranteed=0, borrowing_limit=1))
    for model in CAPACITY:
        lines = led.applicable("nlp", "cy", model)
        assert [ln.key for ln in lines] == [("nlp", None, "*")] and not any(ln.unlisted for ln in lines)
    assert led.check("nlp", "cy", "H100", 2000).ok
    bob = led.check("nlp", "bob", "A100", 2000)
    assert not bob.ok and bob.details["rule"] == "user cap" and bob.line == ("nlp", "bob", "*")
    assert led.check("nlp", "bob", "A100", 1000).ok


def test_red20_r2_without_a_limit_the_uncovered_scopes_keep_the_old_implicit_line() -> None:
    led = _ledger(VISION_A100, GHOST_ALICE, limit=None)
    assert led.check("vision", "ana", "H100", 8000).ok
    assert led.check("ghost", "mallory", "H100", 8000).ok
    assert not any(ln.unlisted for ln in led.applicable("vision", "ana", "H100"))


def _spec(team: str, user: str, gpus: int, models: tuple[str, ...] = ()) -> JobSpec:
    return make_job(team=team, user=user, gpus=gpus, models=models).spec


def test_red20_r2_a_submit_on_an_uncovered_model_is_refused_naming_the_model_and_the_covered_ones() -> None:
    quotas = QuotaSet(quotas=(VISION_A100, NLP_ALL), unlisted_borrowing_limit=0)
    check_ceiling(_spec("vision", "ana", 2), quotas, CAPACITY, ("vision",))  # fits A100: passes
    with pytest.raises(QuotaError) as refused:
        check_ceiling(_spec("vision", "ana", 1, ("H100",)), quotas, CAPACITY, ("vision",))
    err = refused.value
    assert err.field == "model"
    assert err.message.startswith("team vision has no share of the H100 GPUs (no quota line for that model): it may use 0 GPUs there"), err.message
    assert "so this 1-GPU job can never start" in err.message  # new user 23, N6 (s24): was "1 GPU … on it"
    assert "ask an admin to add a quota line for team vision on model H100" in (err.hint or ""), err.hint
    assert "--model <one team vision has a line for: A100>" in (err.hint or ""), err.hint
    assert err.details["uncovered"] == ["H100"] and err.details["covered"] == ["A100"]
    with pytest.raises(QuotaError) as admin:
        check_ceiling(_spec("vision", "root", 1, ("H100",)), quotas, CAPACITY, ("vision",), admin=True)
    assert '"gpu_model": "H100"' in (admin.value.hint or ""), admin.value.hint


def test_red20_r2_a_member_of_a_team_named_only_by_user_lines_is_refused_naming_the_team() -> None:
    quotas = QuotaSet(quotas=(NLP_ALL, GHOST_ALICE), unlisted_borrowing_limit=0)
    check_ceiling(_spec("ghost", "alice", 1), quotas, CAPACITY, ("ghost",))
    with pytest.raises(QuotaError) as refused:
        check_ceiling(_spec("ghost", "mallory", 1), quotas, CAPACITY, ("ghost", "nlp"))
    err = refused.value
    assert err.field == "team"
    assert err.message.startswith("team ghost has only a quota line for user alice: its other members may use "
                                  "0 GPUs"), err.message
    # the refused team is not offered back as "one of yours with a line"; a team with a team line is
    assert "submit with --team <one of yours with a line: nlp>" in (err.hint or ""), err.hint


def test_red20_r2_the_cycle_pends_uncovered_work_as_never_and_admits_covered_work() -> None:
    nodes = [make_node("a", gpus=4, model="A100"), make_node("h", gpus=8, model="H100")]
    quota = QuotaSet(quotas=(VISION_A100, GHOST_ALICE), unlisted_borrowing_limit=0)
    jobs = [make_job("v_h100", team="vision", user="ana", models=("H100",)),
            make_job("v_any", team="vision", user="ana"),
            make_job("g_alice", team="ghost", user="alice"),
            make_job("g_mallory", team="ghost", user="mallory")]
    result = run_cycle(snapshot(nodes, jobs, quota=quota))
    admitted = {a.job_id: a.allocation for a in result.admits}
    pending = {p.job_id: p.reason for p in result.pending}
    assert sorted(admitted) == ["g_alice", "v_any"], (admitted, pending)
    assert all(u.startswith("GPU-a-") for u in admitted["v_any"].all_gpu_uuids())  # where its team has a line
    assert pending["v_h100"].details["never"] == "quota"
    assert pending["v_h100"].message.startswith("team vision has no share of the H100 GPUs (no quota line for that model)"), pending["v_h100"]
    assert pending["g_mallory"].details["never"] == "quota"
    assert "only a quota line for user alice" in pending["g_mallory"].message


def test_red20_r2_the_admin_is_warned_of_each_uncovered_scope() -> None:
    quotas = QuotaSet(quotas=(VISION_A100, NLP_ALL, GHOST_ALICE), unlisted_borrowing_limit=0)
    said = scope_warnings(quotas, ["A100", "H100"], 0.0, first=["ghost"])
    assert said[0].startswith("team ghost has only a quota line for user alice: its other members, you included, "
                              "may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit)"), said  # verify21 V6 order
    assert said[1].startswith("team vision has no share of the H100 GPUs (no quota line for that model): it may use 0 GPUs there"), said
    assert len(said) == 2  # nlp's "*" line covers every model
    assert scope_warnings(quotas, ["A100", "H100"], None) == []  # no limit: those scopes borrow as before
    many = QuotaSet(quotas=tuple(Quota(team=f"t{i:02}", gpu_model="A100") for i in range(30)),
                    unlisted_borrowing_limit=1)
    bounded = scope_warnings(many, ["A100", "H100"], 1.0)
    assert len(bounded) == 11 and bounded[-1].startswith("and 20 more teams"), bounded[-1]



def test_verify21_v7_the_admin_whose_own_line_it_is_is_not_told_you_included() -> None:
    # root (admin) put only their own per-user line in ml: the team's *other* members get 0 GPUs, not root
    quotas = QuotaSet(quotas=(Quota(team="ml", user="root", guaranteed=1, borrowing_limit=0.5), NLP_ALL),
                      unlisted_borrowing_limit=0)
    said = scope_warnings(quotas, ["A100"], 0.0, first=["ml"], reader="root")
    assert said[0].startswith("team ml has only a quota line for user root: its other members may use 0 GPUs"), said
    assert "you included" not in said[0], said
    # another admin of ml, whom no line names, is one of those other members
    other = scope_warnings(quotas, ["A100"], 0.0, first=["ml"], reader="carol")
    assert other[0].startswith("team ml has only a quota line for user root: its other members, you included,"), other
    # a team line for A100 only, with root's own line covering H100: root is excepted on H100, so not "included"
    split = QuotaSet(quotas=(Quota(team="ml", gpu_model="A100"), Quota(team="ml", user="root", gpu_model="H100")),
                     unlisted_borrowing_limit=0)
    assert "you included" not in scope_warnings(split, ["A100", "H100"], 0.0, first=["ml"], reader="root")[0]
    assert "you included" in scope_warnings(split, ["A100", "H100"], 0.0, first=["ml"], reader="carol")[0]

TEAMS, USERS, MODELS = ("a", "b"), ("u1", "u2", "u3"), ("A100", "H100")


@st.composite
def _worlds(draw: st.DrawFn) -> tuple[QuotaSet, list[tuple[str, str, str, int]]]:
    lines: dict[tuple[str, str | None, str], Quota] = {}
    for _ in range(draw(st.integers(1, 5))):
        team, user = draw(st.sampled_from(TEAMS)), draw(st.sampled_from((None, *USERS)))
        model = draw(st.sampled_from(("*", *MODELS)))
        lines[(team, user, model)] = Quota(team=team, user=user, gpu_model=model, guaranteed=draw(st.integers(0, 2)),
                                           borrowing_limit=draw(st.one_of(st.none(), st.integers(0, 3))))
    limit = draw(st.sampled_from((0.0, 1.0, 2.0)))
    asks = draw(st.lists(st.tuples(st.sampled_from(TEAMS), st.sampled_from(USERS), st.sampled_from(MODELS),
                                   st.sampled_from((500, 1000, 2000))), max_size=25))
    return QuotaSet(quotas=tuple(lines.values()), unlisted_borrowing_limit=limit), asks


@settings(max_examples=150, deadline=None)
@given(_worlds())
def test_red20_r2_property_uncovered_scopes_never_exceed_the_limit_and_lines_never_their_ceiling(
        world: tuple[QuotaSet, list[tuple[str, str, str, int]]]) -> None:
    quotas, asks = world
    led = QuotaLedger(quotas, CAPACITY)
    assert quotas.unlisted_borrowing_limit is not None
    limit = round(quotas.unlisted_borrowing_limit * 1000)
    uncovered: dict[str, int] = {}
    for i, (team, user, model, milli) in enumerate(asks):
        covered = any(line_applies(q.gpu_model, model) for q in quotas.quotas
                      if q.team == team and q.user in (None, user))
        if led.check(team, user, model, milli).ok:
            led.charge(f"j{i}", team, user, model, milli)
            if not covered:
                uncovered[team] = uncovered.get(team, 0) + milli
    for team, used in uncovered.items():  # what no line covers, the team's unlisted line bounds
        assert used <= limit, (team, used, limit)
        assert led.usage[(team, None, "*")] == used
    for q in quotas.quotas:  # every line the admin wrote holds
        line = led.lines[q.key]
        if line.ceiling is not None:
            assert led.usage.get(q.key, 0) <= line.ceiling, (q, led.usage)
