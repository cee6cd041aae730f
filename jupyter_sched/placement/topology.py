"""Which GPUs of a chosen node a worker gets: NVLink-domain aware selection (case 007).

Rules (DESIGN.md "Placement"; NVIDIA k8s-device-plugin issues #1193 and #546):

* a multi-GPU worker gets GPUs inside one NVLink domain when one has enough free GPUs, choosing
  the domain with the fewest free GPUs that still fits (best fit keeps big domains whole);
  with ``nvlink=True`` and no such domain the node is infeasible; otherwise it takes whole free
  domains first, largest first, so it spans as few domains as possible;
* a single-GPU worker prefers a GPU whose NVLink partners are already busy (it "fills a broken
  pair"), then the lowest NVML index — never breaking an intact pair while a broken one exists.

Domains are connected components of ``GPU.nvlink_peers`` computed by the ledger; the core
never assumes pairs are adjacent indices (node B of case 007 pairs 0-2 and 1-3).
"""

from __future__ import annotations

from collections.abc import Sequence

from .state import ClusterState

__all__ = ["choose_gpus", "free_peer_count"]


def free_peer_count(state: ClusterState, g: int) -> int:
    """Number of wholly free NVLink peers of GPU ``g``."""
    fm, pl = state.free_milli, state.placeable
    n = 0
    for p in state.peers[g]:
        if pl[p] and fm[p] == 1000:
            n += 1
    return n


def choose_gpus(state: ClusterState, free: list[int], count: int, *, nvlink: bool,
                free_milli: Sequence[int] | None = None) -> list[int] | None:
    """Pick ``count`` GPU ids among ``free`` (wholly free GPUs of one node, NVML order).

    ``free_milli``: free milli-GPUs per GPU id that a single GPU's pick reads its peers' by (default the
    ledger's now; the ETA replay asks for the pick at a later time: :mod:`..scheduling.eta_gpus`).

    Returns:
        The chosen global GPU ids, or None when impossible (too few, or ``nvlink`` required and
        no single domain has ``count`` free GPUs).
    """
    if len(free) < count or count <= 0:
        return None
    if len(free) == count and (count == 1 or not nvlink or len({state.domain[g] for g in free}) == 1):
        return list(free)  # best fit: the node has exactly what the job needs
    if count == 1:
        fm, pl, peers = state.free_milli if free_milli is None else free_milli, state.placeable, state.peers
        best = free[0]
        best_peers = 99
        for g in free:  # NVML order, so ties keep the lowest index
            n = 0
            for p in peers[g]:
                if pl[p] and fm[p] == 1000:
                    n += 1
            if n < best_peers:
                best, best_peers = g, n
                if n == 0:
                    break
        return [best]
    domains: dict[int, list[int]] = {}
    for g in free:
        domains.setdefault(state.domain[g], []).append(g)
    fitting = [d for d in domains.values() if len(d) >= count]
    if fitting:
        chosen = min(fitting, key=lambda d: (len(d), state.gpu_local[d[0]]))
        return _compact(state, chosen, count)
    if nvlink:
        return None
    out: list[int] = []
    for dom in sorted(domains.values(), key=lambda d: (-len(d), state.gpu_local[d[0]])):
        out.extend(dom[: count - len(out)])
        if len(out) == count:
            break
    return out


def _compact(state: ClusterState, domain: list[int], count: int) -> list[int]:
    """Take ``count`` GPUs of one domain, preferring directly linked ones (chain topologies)."""
    if count >= len(domain):
        return list(domain)
    chosen = [domain[0]]
    rest = domain[1:]
    while len(chosen) < count:
        linked = [g for g in rest if any(g in state.peers[c] for c in chosen)]
        pick = linked[0] if linked else rest[0]
        chosen.append(pick)
        rest.remove(pick)
    return chosen
