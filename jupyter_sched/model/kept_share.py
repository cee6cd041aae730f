"""What a holding of a GPU is charged: what it keeps from others (red40 R1).

Pure: the one rule accounting charges usage by (:meth:`jupyter_sched.store.StoreTx.open_usage`) and admission, quota and
reclaim count a share by (:mod:`jupyter_sched.scheduling.share_charge`, :mod:`jupyter_sched.quota.held_whole`): a GPU
only one team's shares hold is held whole by that team. Here, where the store can use it without loading the
scheduling core; :mod:`~jupyter_sched.scheduling.share_charge` exports it with the quota side of the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["kept_charges"]

_EPS = 1e-9


def kept_charges(holders: Sequence[tuple[str, float]]) -> list[float]:
    """The GPU each holder of one GPU is charged — what it keeps from others (red40 R1) — in the order given.

    ``holders``: ``(team, fraction)`` of every holding on one whole GPU at one time (a MIG slice is its own
    device, never passed here). The rule admission, quota and reclaim count by (:func:`~jupyter_sched.scheduling.share_charge.share_cost`,
    :class:`~jupyter_sched.quota.held_whole.HeldAway`): a GPU only one team's shares hold is held whole by
    that team, so its shares are charged the whole GPU between them, split by their fractions (4 x 0.25 →
    0.25 each; 0.1 alone → 1.0; 0.5 + 0.25 → 2/3 and 1/3). A GPU several teams share (where ``gpu_sharing``
    lets them) keeps nothing whole from anyone: each holder is charged its fraction — as is a whole-GPU job
    (1.0), and every holder of an over-full record (fractions above one GPU). Never less than a holder's own
    fraction; the charges of one GPU never add up to more than the GPU (or than its holders' fractions).
    Accounting charges usage by it at every change of a GPU's holders (:meth:`jupyter_sched.store.StoreTx.open_usage`)."""
    if not holders:
        return []
    team = holders[0][0]
    total = sum(fraction for _, fraction in holders)
    if total <= 0 or total > 1 + _EPS or any(t != team for t, _ in holders):
        return [fraction for _, fraction in holders]
    return [min(1.0, max(fraction, fraction / total)) for _, fraction in holders]
