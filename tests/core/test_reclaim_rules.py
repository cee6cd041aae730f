"""Quota reclaim's rules (jupyter_sched.preemption.reclaim_rules) without a cycle: one team line,
its usage in milli-GPUs, and the trial victims the rules have seen removed."""

from __future__ import annotations

from jupyter_sched.preemption import Candidate, LineKey, ReclaimRules

B: LineKey = ("b", None, "*")
C: LineKey = ("c", None, "*")


def _cand(job_id: str, milli: int, *, team: str = "b", fresh: bool = False) -> Candidate:
    return Candidate(job_id=job_id, team=team, user="u", rank=1, milli=milli, started=None, kind="reclaim",
                     fresh=fresh)


def _rules(usage: int, guaranteed: int, cands: list[Candidate],
           reclaimed: dict[LineKey, list[tuple[str, int]]] | None = None, line: LineKey = B) -> ReclaimRules:
    lines = {c.job_id: [line] for c in cands}

    def borrowing(key: LineKey, extra: int) -> bool:  # the trial ledger: usage less the removed victims
        held = usage - sum(v.milli for v in rules.removed.values() if key in lines[v.job_id])
        return held + extra > guaranteed

    rules = ReclaimRules(lines, borrowing, reclaimed or {})
    return rules


def test_a_team_gives_while_it_borrows_and_its_last_victim_may_take_it_below_its_guarantee() -> None:
    # b uses 7 of a guarantee of 4: after the 2-GPU job it still borrows 1, so its 4-GPU job may go
    # too (b ends at 1, below its guarantee through its own borrowing: example A); in either order
    for order in (("y", "x"), ("x", "y")):
        x, y = _cand("x", 4000), _cand("y", 2000)
        rules = _rules(7000, 4000, [x, y])
        for c in sorted((x, y), key=lambda c: order.index(c.job_id)):
            assert rules.removable(c), order
            rules.evicted(c)
        assert rules.guarantee_required  # reclaim victims in the set: the job must be within its guarantee


def test_a_team_at_its_guarantee_gives_nothing_more() -> None:
    # b uses 6 of 4: one of its two jobs goes, then b is at its guarantee and the other is refused
    for first, second in (("x", "y"), ("y", "x")):
        cands = {"x": _cand("x", 4000), "y": _cand("y", 2000)}
        rules = _rules(6000, 4000, list(cands.values()))
        assert rules.removable(cands[first])
        rules.evicted(cands[first])
        assert not rules.removable(cands[second]), (first, second)
        rules.restored(cands[first])
        assert not rules.removed and not rules.guarantee_required


def test_a_withdrawal_that_a_running_reclaim_relied_on_is_kept_and_named() -> None:
    # r (1 GPU of c) was reclaimed earlier this cycle; c's fresh 2-GPU admission f made c borrow then.
    # Withdrawing f would leave that reclaim unjustified: refused, and the refusal says so.
    f = _cand("f", 2000, team="c", fresh=True)
    rules = _rules(4500, 4000, [f], reclaimed={C: [("r", 1000)]}, line=C)
    assert not rules.removable(f)
    plan = rules.refusal()
    assert plan is not None and not plan.victims
    assert plan.refused == ("f of c is not withdrawn: without it c would not have been borrowing when r was "
                            "reclaimed from it this cycle")
    assert dict(plan.details) == {"rule": "withdrawal", "protected": ["f"], "reclaimed": ["r"]}


def test_save_and_rollback_undo_a_nested_trial() -> None:
    x, y = _cand("x", 4000), _cand("y", 2000)
    rules = _rules(7000, 4000, [x, y])
    rules.evicted(x)
    saved = rules.save()
    rules.evicted(y)
    assert set(rules.removed) == {"x", "y"} and rules.reclaiming == 2
    rules.rollback(saved)
    assert set(rules.removed) == {"x"} and rules.reclaiming == 1
