"""verify39 V1 (HIGH): a borrowing share opened the wholly free GPU owed to a waiting ``--no-preempt`` guarantee.

After red39 R5's fix a whole-GPU borrower of teamc waited ("would borrow GPUs owed to team teama's guarantee"), but
a 0.1-GPU/70 GiB share of the same borrowing team started on the one wholly free GPU: admission's owed check ran on
the share's *least* cost (nothing, where it might pack beside its team's shares), so ``check.borrowed`` was 0 and the
check was skipped; placed, the share opened a GPU of its own (charged whole, borrowed) and nothing looked again.
Now the owed check also runs on what the share is charged where it lands. Pure core test over :class:`Scenario`,
red39 R5's world (tests/core/test_s39_red39_r5_owed_usable.py).
"""

from __future__ import annotations

from core_builders import make_job
from test_s39_red39_r5_owed_usable import _SHARE_MIB, _free_only, _owed_reason, _shares_world


def test_verify39_v1_borrowing_share_does_not_open_a_gpu_owed_to_a_no_preempt_guarantee() -> None:
    sc = _shares_world()
    sc.at(10).submit(_free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=10))).cycle()
    _owed_reason(sc, "a-guar")
    result = sc.at(11).submit(make_job("c-share", gpus=1, milli=100, min_memory_mib=_SHARE_MIB, team="teamc",
                                       user="rc", submitted=11)).cycle()
    assert [a.job_id for a in result.admits] == [], result.admits  # before: it started on the last whole GPU
    held = sc.job("c-share").reason
    assert held is not None and held.code == "Priority", held
    assert "would borrow GPUs owed to team teama's guarantee: ra's job a-guar waits within it" in held.message
    sc.finish("c-share0")  # a share ends: two whole GPUs free, a-guar starts on them, not the share
    result = sc.at(12).cycle()
    assert [a.job_id for a in result.admits] == ["a-guar"], result.admits


def test_verify39_v1_a_share_that_packs_beside_its_own_teams_share_still_goes() -> None:
    """The reverse: a 0.1 share that fits beside teamc's own share (no memory ask) takes nothing owed and starts."""
    sc = _shares_world()
    sc.at(10).submit(_free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=10))).cycle()
    result = sc.at(11).submit(make_job("c-small", gpus=1, milli=100, team="teamc", user="rc", submitted=11)).cycle()
    assert [a.job_id for a in result.admits] == ["c-small"], [(p.job_id, p.reason) for p in result.pending]
