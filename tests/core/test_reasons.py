"""Truthful pending reasons (issue 16 §5): only GPUs actually lent, and the rule that applies."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.model.units import gpus_phrase
from jupyter_sched.scheduling import run_cycle


def _reason(result: object, job_id: str) -> object:
    return next(p.reason for p in result.pending if p.job_id == job_id)  # type: ignore[attr-defined]


def test_a_team_guaranteed_nothing_is_never_said_to_lend_gpus() -> None:
    # c borrows all 8 GPUs; b is guaranteed 0: nothing of b's is lent, whatever c borrows.
    q = quotas(Quota(team="b", guaranteed=0), Quota(team="c", guaranteed=0))
    jobs = [running(make_job("c1", gpus=8, team="c"), "n1", range(8)), make_job("b1", gpus=2, team="b")]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q)), "b1")
    assert "b is guaranteed 0 GPUs but this job needs 2" in reason.message  # type: ignore[attr-defined]
    assert "lent" not in reason.message  # type: ignore[attr-defined]


def test_lending_counts_only_the_guarantee_left_unused_and_borrowed_by_others() -> None:
    # b is guaranteed 3 and uses 1: 2 of its guarantee are unused; c borrows 5 — only 2 are b's.
    q = quotas(Quota(team="b", guaranteed=3), Quota(team="c", guaranteed=0))
    jobs = [running(make_job("b0", gpus=1, team="b"), "n1", [0]), running(make_job("c1", gpus=7, team="c"), "n1", range(1, 8)),
            make_job("b1", gpus=4, team="b")]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q)), "b1")
    assert "b is guaranteed 3 GPUs (2 lent to c, reclaimable) but this job needs 4 with 1 already in use" \
        in reason.message  # type: ignore[attr-defined]


def test_a_user_cap_that_binds_is_named_with_its_numbers() -> None:
    q = quotas(Quota(team="t", guaranteed=8, borrowing_limit=0), Quota(team="t", user="bob", guaranteed=2, borrowing_limit=0))
    jobs = [running(make_job("mine", gpus=2, team="t", user="bob"), "n1", [0, 1]), make_job("more", gpus=1, team="t", user="bob")]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q)), "more")
    assert reason.code == "ExceedsQuota" and reason.details["rule"] == "user cap"  # type: ignore[attr-defined]
    assert (reason.details["user"], reason.details["quota"], reason.details["used"]) == ("bob", 2, 2)  # type: ignore[attr-defined]
    assert reason.message.startswith("user bob in t has 0 of 2 GPUs free (2 in use), job needs 1")  # type: ignore[attr-defined]


def test_when_both_the_team_quota_and_a_user_cap_are_exceeded_the_tighter_is_named() -> None:
    q = quotas(Quota(team="t", guaranteed=4, borrowing_limit=0), Quota(team="t", user="bob", guaranteed=3, borrowing_limit=0))
    jobs = [running(make_job("ann", gpus=3, team="t", user="ann"), "n1", [0, 1, 2]),
            running(make_job("b", gpus=1, team="t", user="bob"), "n1", [3]), make_job("big", gpus=3, team="t", user="bob")]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=8)], jobs, quota=q)), "big")
    assert reason.details["rule"] == "team quota" and reason.details["available"] == 0  # type: ignore[attr-defined]
    assert reason.details["also_exceeds"][0]["user"] == "bob"  # type: ignore[attr-defined]


def test_newuser3_a_preempted_job_in_backoff_names_who_preempted_it_and_counts_read_right() -> None:
    """New-user findings 33 and 14 (session 3): 'requeued after preemption; retries from …' did not
    say by whom, and quota sentences said '1 GPUs'."""
    victim = replace(make_job("low1", gpus=1), preempted_by="hi2", not_before=T0 + timedelta(seconds=30))
    [pend] = run_cycle(snapshot([make_node("n1", gpus=1)], [victim])).pending
    assert pend.reason.code == "Backoff"
    assert pend.reason.message.startswith("requeued after preemption by hi2; retries from ")
    assert pend.reason.details["preempted_by"] == "hi2"
    assert [gpus_phrase(n) for n in (1, 2, 0.5, 0, 1.0)] == ["1 GPU", "2 GPUs", "0.5 GPU", "0 GPUs", "1 GPU"]
    assert gpus_phrase(1, "A100") == "1 A100 GPU"
    assert gpus_phrase(2, "Simulated GPU 80GB") == "2 Simulated GPU 80GB"  # new-user 4 finding 3: no "GPU ... GPUs"


def test_newuser3_finding_14_a_kernels_lease_is_told_this_kernel_needs_at_the_source() -> None:
    """New-user finding 14 (session 3): the core told a notebook's ``%gpu request`` "default has 0
    of 1 GPUs free (1 in use), job needs 1" — the REST ``message`` itself now says "this kernel"
    for a lease (and "job" for a job), and "1 GPU"."""
    from jupyter_sched.model import JobKind

    q = quotas(Quota(team="t", guaranteed=1, borrowing_limit=0))
    holder = running(make_job("held", gpus=1, team="t"), "n1", [0])
    lease = make_job("l-k2", gpus=1, team="t", submitted=1)
    lease = replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE))
    job = make_job("j2", gpus=1, team="t", submitted=2)
    result = run_cycle(snapshot([make_node("n1", gpus=4)], [holder, lease, job], quota=q))
    assert _reason(result, "l-k2").message.startswith(  # type: ignore[attr-defined]
        "t has 0 of 1 GPU free (1 in use), this kernel needs 1")
    assert _reason(result, "j2").message.startswith("t has 0 of 1 GPU free (1 in use), job needs 1")  # type: ignore[attr-defined]


def test_newuser3_finding_33_a_high_job_is_told_why_it_does_not_preempt_normal_work() -> None:
    """New-user finding 33 (session 3, second half): granted ``high``, a job waited behind two
    normal jobs with only "needs 3 …, 0 free" — the README says "preemption by priority". The
    reason names the rule that spares them (high takes only low work of its team; other teams'
    work only as reclaim of a guarantee), with the numbers. A normal job behind normal work
    expects nothing, and is told nothing more (case 006's sentence stays as it is)."""
    jobs = [running(make_job("n1", gpus=2, team="a"), "n1", [0, 1]),
            running(make_job("b1", gpus=2, team="b"), "n1", [2, 3]),
            make_job("hi", gpus=3, priority="high", team="a", submitted=1),
            make_job("same", gpus=3, team="a", submitted=2)]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs))
    assert result.preemptions == [] or not list(result.preemptions)
    high = _reason(result, "hi")
    assert high.message.endswith(  # type: ignore[attr-defined]
        "no preemption: high preempts only low-priority work of its team (rule 'lower-class'), and 1 job (2 GPUs) "
        "of a on these GPUs is normal; work of other teams is not preempted for it (b: 1 job (2 GPUs)): no quotas "
        "are set, so other teams' low work is preempted only for a team holding less than an equal share of the "
        "GPUs (a holds 2, share 2).")
    assert high.details["preemption_rule"]["preemptible"] == ["low"]  # type: ignore[attr-defined]
    assert "no preemption" not in _reason(result, "same").message  # type: ignore[attr-defined]


def test_newuser4_finding_2_nvlink_on_gpus_without_nvlink_is_rejected_naming_nvlink() -> None:
    # 4 GPUs without NVLink, all free: a 2-GPU NVLink job pended forever as "needs 2, 4 free"
    result = run_cycle(snapshot([make_node("n1", gpus=4)], [make_job("link", gpus=2, nvlink=True)]))
    assert not result.admits and not result.pending
    reason = result.rejects[0].reason
    assert reason.code == "Unschedulable" and reason.details["field"] == "nvlink"
    assert "needs 2 NVLink-connected GPUs" in reason.message and "no GPUs here are connected by NVLink" in reason.message
    assert reason.unblock == "resubmit without nvlink"
    # NVLink pairs: 4 linked GPUs are never one domain -> refused, saying pairs are the most there is
    pairs = [(1,), (0,), (3,), (2,)]
    four = run_cycle(snapshot([make_node("n1", gpus=4, nvlink=pairs)], [make_job("four", gpus=4, nvlink=True)]))
    assert four.rejects[0].reason.details["max_nvlink_group"] == 2
    assert "at most 2 GPUs here are connected by NVLink" in four.rejects[0].reason.message
    # without nvlink, or one GPU with it, nothing changes
    plain = run_cycle(snapshot([make_node("n1", gpus=4)], [make_job("a", gpus=2), make_job("b", gpus=1, nvlink=True)]))
    assert {a.job_id for a in plain.admits} == {"a", "b"}


def test_newuser4_finding_2_a_nvlink_job_waiting_for_a_free_pair_says_so() -> None:
    # pairs (0,1) (2,3): one GPU busy in each pair -> 2 GPUs free but no free pair
    pairs = [(1,), (0,), (3,), (2,)]
    jobs = [running(make_job("r0"), "n1", [0]), running(make_job("r2"), "n1", [2]),
            make_job("link", gpus=2, nvlink=True)]
    result = run_cycle(snapshot([make_node("n1", gpus=4, nvlink=pairs)], jobs))
    reason = next(p.reason for p in result.pending if p.job_id == "link")
    assert reason.code == "Fragmented" and reason.details["max_free_nvlink_group"] == 1
    assert "needs 2 NVLink-connected A100-80GB GPUs" in reason.message
    assert "2 free, but at most 1 of them connected" in reason.message


def test_newuser4_finding_3_a_model_named_gpu_is_not_followed_by_gpus_in_the_core_s_message() -> None:
    node = make_node("n1", gpus=4, model="Simulated GPU 80GB")
    jobs = [running(make_job("r", gpus=3), "n1", [0, 1, 2]), make_job("w", gpus=2)]
    reason = next(p.reason for p in run_cycle(snapshot([node], jobs)).pending if p.job_id == "w")
    assert reason.message.startswith("needs 2 Simulated GPU 80GB, 1 free"), reason.message  # was "... 80GB GPUs, 1 free"


def test_newuser4_finding_17_an_ordinary_wait_of_a_team_guaranteed_nothing_reads_without_reclaim_jargon() -> None:
    """New user 4, finding 17: once any team had a quota, every wait of a team without one read
    "0 free; no preemption: default is guaranteed 0 GPUs but … nothing is reclaimed for it;
    cohort free 0" — the rendered sentence leaves it out (message and details keep it); a team
    with a guarantee keeps it (it says what reclaim would need)."""
    from jupyter_sched.model.codec import reason_to_dict
    from jupyter_sched.wording import render_reason

    jobs = [running(make_job("a1", gpus=4, team="default"), "n1", range(4)), make_job("w", gpus=1, team="default")]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=quotas(Quota(team="research", guaranteed=1))))
    reason = _reason(result, "w")
    assert "no preemption: default is guaranteed 0 GPUs" in reason.message  # type: ignore[attr-defined]
    text = render_reason(reason_to_dict(reason))  # type: ignore[arg-type]
    assert text.summary == "needs 1 A100-80GB GPU, 0 free." and "guarantee" not in text.line
    guaranteed = run_cycle(snapshot([make_node("n1", gpus=4)], jobs,
                                    quota=quotas(Quota(team="default", guaranteed=2), Quota(team="research", guaranteed=1))))
    kept = render_reason(reason_to_dict(_reason(guaranteed, "w")))  # type: ignore[arg-type]
    assert "no preemption" in kept.summary or "no preemption" not in _reason(guaranteed, "w").message  # type: ignore[attr-defined]


def test_newuser4_finding_20_with_quotas_a_high_job_is_told_the_class_rule_not_the_guarantee() -> None:
    """Team research has the only quota line (so quotas are on); default is guaranteed nothing.
    'high' evicts default's low job, but not its normal one: the reason said "guaranteed 0 GPUs"
    both times; what spares the normal job is the class rule, and that is what it now says."""
    from jupyter_sched.model import TeamPolicy

    policies = quotas(Quota(team="research", guaranteed=1),
                      teams=[TeamPolicy(team="default", allowed_priorities=("high", "normal", "low"))])
    jobs = [running(make_job("norm3", gpus=3), "n1", [0, 1, 2]), make_job("hi2b", gpus=2, priority="high")]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=policies))
    assert not list(result.preemptions)
    reason = _reason(result, "hi2b")
    assert "high preempts only low-priority work of its team (rule 'lower-class'), and 1 job (3 GPUs) of default " \
           "on these GPUs is normal" in reason.message  # type: ignore[attr-defined]
    assert "guaranteed" not in reason.message  # type: ignore[attr-defined]
    assert reason.details["preemption_rule"]["rule"] == "lower-class"  # type: ignore[attr-defined]
    low = [running(make_job("low3", gpus=3, priority="low"), "n1", [0, 1, 2]), make_job("hi2b", gpus=2, priority="high")]
    evicted = run_cycle(snapshot([make_node("n1", gpus=4)], low, quota=policies))
    assert [p.job_id for p in evicted.preemptions] == ["low3"]  # the low job goes, as before


def test_newuser4_finding_20_with_quotas_a_high_job_behind_normal_work_is_told_the_priority_rule() -> None:
    """New user 4, finding 20: once another team had a quota line, a job granted ``high`` behind
    a normal job of its own team read only "no preemption: default is guaranteed 0 GPUs …" — the
    same words as when it DID preempt a low job. The priority rule that spares normal work is
    said first; a low job that could not make room anyway is not called spared."""
    q = quotas(Quota(team="research", guaranteed=1))
    jobs = [running(make_job("norm3", gpus=3, team="default"), "n1", [0, 1, 2]),
            running(make_job("x", gpus=1, team="default"), "n1", [3]),
            make_job("hi2b", gpus=2, priority="high", team="default", submitted=1)]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q)), "hi2b")
    assert "no preemption: high preempts only low-priority work of its team (rule 'lower-class'), and 2 jobs " \
           "(4 GPUs) of default on these GPUs are normal" in reason.message  # type: ignore[attr-defined]


def test_newuser8_n9_a_team_at_its_guarantee_is_told_it_may_only_borrow_with_the_numbers() -> None:
    """New user 8, N9: interns (guaranteed 1, borrow 1) had eve2 preempted by research (guaranteed
    3, at its guarantee); eve2's reason read "j-…(itself) needs 1 with 1 already in use …; cohort
    free 0; it cannot fit until research releases 1 GPU of its own quota (requeued after preemption
    by j-…)": its own bare id, Kueue's "cohort", a quota research is not over, the preemptor by id."""
    from jupyter_sched.model.codec import reason_to_dict
    from jupyter_sched.wording import render_reason

    q = quotas(Quota(team="research", guaranteed=3, borrowing_limit=0), Quota(team="interns", guaranteed=1, borrowing_limit=1))
    eve2 = replace(make_job("j-eve2", gpus=1, team="interns", user="eve"), preempted_by="j-mal3")
    eve2 = replace(eve2, spec=replace(eve2.spec, name="eve2"))
    mal3 = running(make_job("j-mal3", gpus=1, team="research", user="mal"), "n1", [2])
    mal3 = replace(mal3, spec=replace(mal3.spec, name="mal3"))
    jobs = [running(make_job("eve1", gpus=1, team="interns", user="eve"), "n1", [0]),
            running(make_job("mal1", gpus=1, team="research", user="mal"), "n1", [1]), mal3,
            running(make_job("mal2", gpus=1, team="research", user="mal"), "n1", [3]), eve2]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q)), "j-eve2")
    text = render_reason(reason_to_dict(reason)).summary  # type: ignore[arg-type]
    assert "j-eve2" not in text and "cohort" not in text and "own quota" not in text, text
    # requeued: it leads with what happened, and says when the GPUs come back without its "no preemption"
    # clause (new user 22, N8); the preemptor by its owner (R8)
    assert text == ('requeued after preemption by mal\'s job "mal3" (j-mal3); needs 1 A100-80GB GPU, 0 free; it can '
                    "start when research's jobs free 1 GPU (research uses its whole guarantee of 3 GPUs) or interns' "
                    "own running work frees 1 GPU."), text
    assert "no preemption" in reason.message  # type: ignore[attr-defined]  # the core's words keep it (details too)


def test_newuser9_n11_a_team_above_its_guarantee_is_said_to_borrow_with_both_numbers() -> None:
    """New user 9, N11: nlp (guaranteed 1, borrowing limit 1) ran 2 GPUs; amy's vision job read
    "it can start when nlp's jobs free 1 GPU (nlp uses all 1 GPU of its guarantee)" — nlp used 2."""
    from jupyter_sched.model.codec import reason_to_dict
    from jupyter_sched.wording import render_reason

    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    jobs = [running(make_job("amy1", gpus=1, team="vision", user="amy"), "n1", [0]),
            running(make_job("amy2", gpus=1, team="vision", user="amy"), "n1", [1]),
            running(make_job("eve1", gpus=1, team="nlp", user="eve"), "n1", [2]),
            running(make_job("eve2", gpus=1, team="nlp", user="eve"), "n1", [3]),
            make_job("amy3", gpus=1, team="vision", user="amy", submitted=5)]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q)), "amy3")
    text = render_reason(reason_to_dict(reason)).summary  # type: ignore[arg-type]
    assert "nlp uses all 1 GPU of its guarantee" not in text, text
    assert ("it can start when nlp's jobs free 1 GPU (nlp uses 2 GPUs: its whole guarantee of 1 and 1 borrowed) "
            "or vision's own running work frees 1 GPU") in text, text


def test_newuser10_n6_a_job_held_by_its_teams_quota_waits_only_on_that_teams_work() -> None:
    """New user 10, N6: eve-3 (nlp at guarantee 1 + borrowing limit 1) read "it can start only after
    one or more of kernel-… (amy's lease), eve-1, eve-2 and 1 more end": amy's work ending frees GPUs
    but never nlp's quota."""
    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    jobs = [running(make_job("amy-lease", gpus=1, team="vision", user="amy"), "n1", [0]),
            running(make_job("amy-q1", gpus=1, team="vision", user="amy"), "n1", [1]),
            running(make_job("eve-1", gpus=1, team="nlp", user="eve"), "n1", [2]),
            running(make_job("eve-2", gpus=1, team="nlp", user="eve"), "n1", [3]),
            make_job("eve-3", gpus=1, team="nlp", user="eve", submitted=5)]
    reason = _reason(run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q)), "eve-3")
    assert reason.code == "BorrowingLimitReached", reason  # type: ignore[attr-defined]
    waits = reason.details.get("eta_waits_on")  # type: ignore[attr-defined]
    assert sorted(waits) == ["eve-1", "eve-2"], reason.details  # type: ignore[attr-defined]
