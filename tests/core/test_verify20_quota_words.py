"""verify20 V3 and V6 in the core, and the rest of their kind: a reason over several GPU models or
quota scopes says the one that running work can free first, names each part's model, and speaks of
the reader where a line is the reader's own.

- V3: a job allowed on A100 and H100, its team's A100 line full and no line on H100, was told
  "vision has no quota. A100: …" (the H100 part without its model) and "vision has no GPU quota: an
  admin must give it one" — it starts when vision's A100 work ends.
- V6: the named user of a per-user A100 line asking for H100 was told "its *other* members may use
  0 GPUs"; a team's A100 line beside ana's own A100 line told bob on H100 "its members other than
  ana may use 0 GPUs there" (ana's line does not apply there either).

Pure core: the cycle's reasons, the submit-time ceiling check, the admin's warnings, rendered by
the one reason renderer every surface shows.
"""

from __future__ import annotations

import pytest
from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.admission.rules import check_ceiling
from jupyter_sched.errors import QuotaError
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.quota.ceiling import scope_warnings
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import render_reason

A100, H100 = "A100-80GB", "H100-80GB"
SETTING = "(c.SchedApp.unlisted_team_borrowing_limit)"
NODES = [make_node("a", gpus=2, model=A100), make_node("h", gpus=4, model=H100)]
VISION_A100 = Quota(team="vision", gpu_model=A100, guaranteed=1, borrowing_limit=1)


def _pending(quota: QuotaSet, *jobs: object, job_id: str = "x") -> dict[str, object]:
    result = run_cycle(snapshot(NODES, list(jobs), quota=quota))  # type: ignore[arg-type]
    (reason,) = [p.reason for p in result.pending if p.job_id == job_id]
    return reason_to_dict(reason)


def _vision_full() -> list[object]:
    return [running(make_job(f"f{i}", team="vision", models=(A100,)), "a", [i]) for i in range(2)]


def test_verify20_v3_the_lined_models_wait_is_the_primary_reason_and_the_unlined_model_is_said_second() -> None:
    quota = QuotaSet(quotas=(VISION_A100,), unlisted_borrowing_limit=0)
    reason = _pending(quota, *_vision_full(), make_job("x", team="vision", models=(H100, A100)))
    assert reason["code"] == "BorrowingLimitReached" and reason["details"]["model"] == A100, reason  # type: ignore[index]
    assert reason["message"] == (
        "vision would use 3 A100-80GB GPUs, above its limit of 2 A100-80GB GPUs (guaranteed 1 + borrowing limit 1). "
        f"team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there {SETTING}.")
    flavors = [(e["flavor"], e["code"]) for e in reason["per_flavor"]]  # type: ignore[attr-defined]
    assert flavors == [(H100, "NoQuota"), (A100, "InsufficientQuota")]  # the data in the job's order
    text = render_reason(reason, mine=True)
    assert "no GPU quota" not in text.unblock, text
    assert text.unblock == ("It starts when vision's running jobs or kernel leases release A100-80GB GPUs, or when an "
                            "admin raises vision's borrowing limit or gives vision a quota line for H100-80GB."), text
    assert "f0" in text.eta and "f1" in text.eta, text  # it waits on vision's A100 work, as the unblock says


def test_verify20_v3_a_capacity_wait_on_the_lined_model_comes_before_the_unlined_model() -> None:
    quota = QuotaSet(quotas=(VISION_A100, Quota(team="nlp", guaranteed=2)), unlisted_borrowing_limit=0)
    others = [running(make_job(f"n{i}", team="nlp", models=(A100,)), "a", [i]) for i in range(2)]
    reason = _pending(quota, *others, make_job("x", team="vision", models=(H100, A100)))
    message = str(reason["message"])
    assert reason["code"] in ("WaitingForCapacity", "Priority"), reason
    assert not message.startswith("team vision has no share"), message
    assert f"team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there {SETTING}" in message, message


def test_verify20_v3_a_wait_on_the_unlisted_line_itself_says_its_scope_and_whose_work_frees_it() -> None:
    quota = QuotaSet(quotas=(VISION_A100,), unlisted_borrowing_limit=1)
    held = running(make_job("h0", team="vision", models=(H100,)), "h", [0])
    reason = _pending(quota, held, make_job("x", team="vision", models=(H100,)))
    assert reason["message"] == ("team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 1 GPU there, none of "
                                 f"them guaranteed {SETTING}; 1 GPU in use without a line, job needs 1."), reason
    text = render_reason(reason, mine=True)
    assert text.unblock == ("It starts when vision's work without a quota line releases GPUs, or when an admin gives "
                            "vision a quota line for H100-80GB (PUT quotas) or raises "
                            "c.SchedApp.unlisted_team_borrowing_limit."), text


def test_verify20_v3_one_line_full_on_every_model_is_said_once() -> None:
    quota = QuotaSet(quotas=(Quota(team="vision", guaranteed=1, borrowing_limit=1),), unlisted_borrowing_limit=0)
    reason = _pending(quota, *_vision_full(), make_job("x", team="vision"))
    assert reason["message"] == ("vision would use 3 GPUs, above its limit of 2 GPUs (guaranteed 1 + borrowing "
                                 "limit 1)."), reason
    assert len(reason["per_flavor"]) == 2  # type: ignore[arg-type]  # the data still per flavor


def test_verify20_v3_a_label_names_the_whole_model_where_two_models_share_its_short_name() -> None:
    nodes = [make_node("a", gpus=2, model="A100-80GB"), make_node("b", gpus=2, model="A100-40GB")]
    quota = QuotaSet(quotas=(VISION_A100, Quota(team="vision", gpu_model="A100-40GB", borrowing_limit=0)))
    jobs = [*_vision_full(), make_job("x", team="vision", models=("A100",))]
    (reason,) = [p.reason for p in run_cycle(snapshot(nodes, jobs, quota=quota)).pending if p.job_id == "x"]
    assert reason.message.endswith(". A100-40GB: team has no quota."), reason.message


def _refusal(quota: QuotaSet, team: str, user: str, *models: str) -> QuotaError:
    with pytest.raises(QuotaError) as refused:
        check_ceiling(make_job(team=team, user=user, models=models).spec, quota, {A100: 2, H100: 4}, (team, "nlp"))
    return refused.value


GHOST = QuotaSet(quotas=(Quota(team="nlp", guaranteed=1),
                         Quota(team="ghost", user="ann", gpu_model=A100, guaranteed=0, borrowing_limit=1)),
                 unlisted_borrowing_limit=0)


def test_verify20_v6_the_named_user_of_a_model_line_is_told_of_her_line_on_another_model() -> None:
    err = _refusal(GHOST, "ghost", "ann", H100)
    assert err.message == (f"your quota line in team ghost (user ann) is for A100-80GB only: on H100-80GB you may use "
                           f"0 GPUs {SETTING}, so this 1-GPU job can never start"), err.message  # N6 (s24): not "1 GPU … on it"
    assert err.field == "model" and err.details["own_models"] == [A100], err.details
    assert "--model <one you have a line for: A100-80GB>" in (err.hint or ""), err.hint
    assert "a quota line for user ann in team ghost (or for the team) on model H100-80GB" in (err.hint or "")
    check_ceiling(make_job(team="ghost", user="ann").spec, GHOST, {A100: 2, H100: 4}, ("ghost",))  # A100: fits
    bob = _refusal(GHOST, "ghost", "bob", A100)  # another member: the team's words
    assert bob.message.startswith("team ghost has only a quota line for user ann (A100-80GB): its other members may "
                                  "use 0 GPUs"), bob.message


def test_verify20_v6_a_queued_jobs_reason_names_her_line_in_words_others_may_read_too() -> None:
    reason = _pending(GHOST, make_job("x", team="ghost", user="ann", models=(H100,)))
    assert str(reason["message"]).startswith("the quota line of user ann in team ghost is for A100-80GB only: on "
                                             "H100-80GB ann may use 0 GPUs"), reason  # the queue shows it to others
    # a scope without a line has no quota to raise: the line is what an admin adds
    assert render_reason(reason, mine=True).unblock == (
        "Cancel it and resubmit with a GPU model ann has a line for (A100-80GB), or ask an admin to add a quota "
        "line for it (or to raise c.SchedApp.unlisted_team_borrowing_limit).")
    both = QuotaSet(quotas=(VISION_A100, Quota(team="vision", user="ana", gpu_model=A100, borrowing_limit=1)),
                    unlisted_borrowing_limit=0)
    reason = _pending(both, *_vision_full(), make_job("x", team="vision", user="ana", models=(A100, H100)))
    assert str(reason["message"]).endswith(". team vision has quota lines only for A100-80GB and user ana's is for "
                                           f"A100-80GB only: on H100-80GB ana may use 0 GPUs {SETTING}."), reason


def test_verify20_v6_a_member_whose_line_names_another_model_is_not_excepted_on_this_one() -> None:
    only_a100 = QuotaSet(quotas=(VISION_A100, Quota(team="vision", user="ana", gpu_model=A100, borrowing_limit=1)),
                         unlisted_borrowing_limit=0)
    bob = _refusal(only_a100, "vision", "bob", H100)
    assert bob.message.startswith(f"team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there "
                                  f"{SETTING}"), bob.message
    ana = _refusal(only_a100, "vision", "ana", H100)
    assert ana.message.startswith("team vision has quota lines only for A100-80GB and yours (user ana) is for "
                                  "A100-80GB only: on H100-80GB you may use 0 GPUs"), ana.message
    anywhere = QuotaSet(quotas=(VISION_A100, Quota(team="vision", user="ana", borrowing_limit=1)),
                        unlisted_borrowing_limit=0)
    assert _refusal(anywhere, "vision", "bob", H100).message.startswith(
        "team vision has no share of the H100-80GB GPUs (no quota line for that model): its members other than ana may use 0 GPUs there")
    # and in the cycle, on a job allowed on both models
    reason = _pending(only_a100, *_vision_full(), make_job("x", team="vision", user="bob", models=(H100, A100)))
    assert f"team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there {SETTING}" \
        in str(reason["message"]), reason


def test_verify20_v6_the_admins_warnings_say_the_models_a_members_line_leaves_out() -> None:
    said = scope_warnings(GHOST, [A100, H100], 0.0)
    assert said == [f"team ghost has only a quota line for user ann (A100-80GB): its other members may use 0 GPUs "
                    f"{SETTING}; ann's line is for A100-80GB only: on H100-80GB ann may use 0 GPUs too; give the team "
                    f"a line with PUT quotas"], said
    team_and_member = QuotaSet(quotas=(VISION_A100, Quota(team="vision", user="ana", gpu_model=A100)),
                               unlisted_borrowing_limit=0)
    assert scope_warnings(team_and_member, [A100, H100], 0.0)[0].startswith(
        "team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there")


@pytest.mark.parametrize(("gpus", "workers", "field"), [(3, 1, "gpus"), (2, 2, "workers")],
                         ids=["a job of 3 GPUs", "a gang of 2 workers of 2 GPUs"])
def test_verify20_v3_a_request_that_never_fits_on_two_models_says_the_line_of_each(gpus: int, workers: int,
                                                                                  field: str) -> None:
    quota = QuotaSet(quotas=(VISION_A100,), unlisted_borrowing_limit=0)
    spec = make_job(team="vision", gpus=gpus, workers=workers, models=(A100, H100)).spec
    with pytest.raises(QuotaError) as refused:  # was: only "… can never fit the limit of team vision: 2 GPUs of A100"
        check_ceiling(spec, quota, {A100: 2, H100: 4}, ("vision",))
    said = (f"can never fit the limit of team vision: 2 GPUs of A100-80GB (guaranteed 1 + borrowing limit 1); team "
            f"vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there {SETTING}")
    assert said in refused.value.message and refused.value.field == field, refused.value
    job = make_job("x", team="vision", gpus=gpus, workers=workers, models=(A100, H100))
    assert said in str(_pending(quota, job)["message"])  # the cycle, for one pending since before the line


def test_verify20_v6_a_users_zero_line_on_the_other_model_is_said_as_hers_not_the_teams() -> None:
    quota = QuotaSet(quotas=(VISION_A100, Quota(team="vision", user="ana", gpu_model=H100, borrowing_limit=0)))
    jobs = [*_vision_full(), make_job("x", team="vision", user="ana", models=(A100, H100))]
    message = str(_pending(quota, *jobs)["message"])
    assert message.endswith(". H100: user ana has no quota."), message  # was "H100: team has no quota"


def test_verify20_v3_a_second_full_line_is_named_with_its_model() -> None:
    quota = QuotaSet(quotas=(VISION_A100, Quota(team="vision", user="ana", gpu_model=A100, borrowing_limit=1)))
    held = [running(make_job("f0", team="vision", user="ana", models=(A100,)), "a", [0]),
            running(make_job("f1", team="vision", user="bo", models=(A100,)), "a", [1])]
    reason = _pending(quota, *held, make_job("x", team="vision", user="ana", models=(A100,)))
    unblock = render_reason(reason, mine=True).unblock
    assert unblock.endswith(" Also full: vision's A100-80GB quota."), unblock  # was "vision's quota"
