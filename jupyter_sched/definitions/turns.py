"""Which due definitions a firing pass takes, and in what order: owners in turn (pure).

red36 (s37-defs): 100 minutely definitions of one user (the per-user cap) were fired in id order, one
after the other; another user's one definition, created later, fired after all of them — ~13 s late
with an 8.5 MiB notebook read per firing, and in the next pass when more than a pass's bound were due.
A firing pass now takes its due definitions round robin by owner — every owner's first, then every
owner's second, … — so one user's many definitions delay another user's few by at most one firing per
owner, never by a whole burst (as a fair queue serves flows, not packets; Demers, Keshav & Shenker,
SIGCOMM'89). Within one owner the order turns between passes (``turns``), so a definition of theirs that
fails at every pass (a hub that does not answer) never holds the rest of theirs back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

__all__ = ["in_turn"]

T = TypeVar("T")


def in_turn(due: Sequence[T], owner_of: Callable[[T], str], limit: int, turns: Mapping[str, int],
            owner_turn: int = 0) -> tuple[list[T], dict[str, int]]:
    """The first ``limit`` of ``due`` taken round robin by owner, and the turns for the next pass.

    Args:
        due: the due definitions in a stable order (the store's: by id).
        owner_of: each one's owner.
        limit: most taken (the pass's bound; at least 1).
        turns: per owner, where their list starts this pass (0 when absent), as returned last time.
        owner_turn: where the owners' order starts this pass (a pass cut mid-round leaves the last
            owners one firing short; turning the owners moves that shortfall on).

    Returns:
        ``(taken, turns)``: the definitions to fire, in order, and the next pass's turns — an owner's
        advanced by how many of theirs were taken when not all of theirs were, else dropped.
    """
    mine: dict[str, list[T]] = {}
    for item in due:
        mine.setdefault(owner_of(item), []).append(item)
    owners = list(mine)
    if owners:
        first = owner_turn % len(owners)
        owners = owners[first:] + owners[:first]
    queues = []
    for owner in owners:
        items = mine[owner]
        start = turns.get(owner, 0) % len(items)
        queues.append(items[start:] + items[:start])
    order = [queue[i] for i in range(max(map(len, queues), default=0)) for queue in queues if i < len(queue)]
    taken = order[:max(1, limit)]
    counts: dict[str, int] = {}
    for item in taken:
        counts[owner_of(item)] = counts.get(owner_of(item), 0) + 1
    following = {owner: turns.get(owner, 0) + n for owner, n in counts.items() if n < len(mine[owner])}
    return taken, following
