"""Defragmentation by migration: the fewest moves of checkpointable jobs that free one node (case 006).

When a single-node job is ``Fragmented`` (enough GPUs free in total, too few on any node), and
the profile allows migration, look for the node that can be cleared with the fewest moves:

1. for every node of the job's flavor, the deficit is ``gpus - free GPUs on the node``;
2. movable jobs on it (checkpointable, single node) are taken largest first until the deficit is
   covered — largest first minimises the number of moves;
3. inside a ledger trial the movers are released, the node's free GPUs masked (a mover must not
   land back on it) and each mover is re-placed with the normal placer; all must fit elsewhere;
4. the plan with the fewest moves wins (ties: inventory order). Jobs that are not checkpointable
   are never moved.

This is a simple, deterministic form of the rescheduling Volcano #3948 asks for; it moves work
only through the normal preempt-requeue path, so it inherits grace periods, nominations and audit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..model import ResourceRequest
from ..placement.placer import Flavor, Placer
from ..placement.state import ClusterState, Holding

__all__ = ["DefragPlan", "Move", "plan_defrag"]

_MASK = "\0defrag-mask"


@dataclass(frozen=True, slots=True)
class Move:
    """One migration: ``job_id`` leaves ``from_node`` and would restart on ``to_node`` with ``gpus`` GPUs."""

    job_id: str
    from_node: str
    to_node: str
    gpus: int


@dataclass(frozen=True, slots=True)
class DefragPlan:
    """The node to clear and the moves that clear it."""

    node: str
    moves: tuple[Move, ...]


def plan_defrag(state: ClusterState, placer: Placer, flavor: Flavor, request: ResourceRequest,
                movable: Mapping[str, ResourceRequest], flavor_of: Callable[[ResourceRequest], Flavor | None],
                ) -> DefragPlan | None:
    """Find the fewest moves that give ``request`` one node of ``flavor`` (None: no plan).

    Args:
        state: the cycle's ledger (left unchanged: all trials are undone).
        placer: the cycle's placer.
        flavor: the waiting job's flavor.
        request: the waiting job's request (single worker).
        movable: checkpointable holders that may move, by job id, with their requests.
        flavor_of: a mover's flavor on the same GPU model (None when it has none).
    """
    need = request.gpus
    if request.workers != 1 or need <= 0:
        return None
    on_node: dict[int, list[tuple[int, str]]] = {}
    for holder, holding in state.holdings.items():
        if holder in movable and not holding.extra and holding.gpus:
            on_node.setdefault(holding.node, []).append((len(holding.gpus), holder))
    best: DefragPlan | None = None
    for pid in flavor.pools:
        for node in state.pools[pid].nodes:
            deficit = need - state.node_free[node]
            if deficit <= 0 or node not in on_node:
                continue
            movers: list[str] = []
            freed = 0
            for gpus, holder in sorted(on_node[node], key=lambda item: (-item[0], item[1])):
                if freed >= deficit:
                    break
                movers.append(holder)
                freed += gpus
            if freed < deficit or (best is not None and len(movers) >= len(best.moves)):
                continue
            moves = _try_moves(state, placer, node, movers, movable, flavor_of)
            if moves is not None:
                best = DefragPlan(node=state.nodes[node].name, moves=moves)
                if len(moves) == 1:
                    return best
    return best


def _try_moves(state: ClusterState, placer: Placer, node: int, movers: list[str],
               movable: Mapping[str, ResourceRequest], flavor_of: Callable[[ResourceRequest], Flavor | None],
               ) -> tuple[Move, ...] | None:
    moves: list[Move] = []
    with state.what_if():
        for holder in movers:
            state.release(holder)
        free_here = tuple((g, 1000) for g in state.free_gpus_on(node))
        if free_here:
            state.take(_MASK, Holding(gpus=free_here, node=node))
        for holder in sorted(movers, key=lambda h: -movable[h].gpus):
            req = movable[holder]
            mover_flavor = flavor_of(req)
            placement = placer.place(holder, req, mover_flavor) if mover_flavor is not None else None
            if placement is None:
                return None
            state.take("\0moved:" + holder, placement.holding)
            moves.append(Move(holder, state.nodes[node].name, placement.allocation.node, req.gpus))
    return tuple(sorted(moves, key=lambda m: m.job_id))
