"""The minimal victim set: which candidates to evict so that one pending job fits.

Candidates come from the cycle (own-team jobs its :class:`~.policy.PreemptionPolicy` allows,
and jobs of *borrowing* teams its team's :class:`~.policy.ReclaimPolicy` allows); this module
picks the set to evict. It works on the cycle's ledger only through callbacks, inside the
caller's ``what_if`` trial (STYLE §2), so every trial eviction is undone.

Cost of a victim set, compared lexicographically (smaller is better; DESIGN.md *Preemption*,
issue 16):

0. victims evicted while their own team keeps lower-class work running that they, requeued, would
   preempt (:attr:`Candidate.below`; new user 19, N2): that eviction only moves the lower-class
   one, one more job stopped — so within a victim team class order comes before the minimum
   runtime (DESIGN.md *Reclaim*: young victims are protected "where possible", and it is not
   possible then);
1. victims younger than the profile's minimum runtime (the cycle never offers another team's
   young job that was evicted before as a candidate — red team 15 R13 — unless its own team's
   higher class would preempt it, item 0; so this spares young victims where another choice
   exists, within a class and across teams);
2. the classes evicted, highest first (one ``normal`` victim costs more than any number of ``low``
   ones: evicting lower classes first);
3. jobs broken; 4. GPUs of work evicted; 5. pods (gang workers) evicted;
6. work lost (GPU-seconds run since start; a checkpointable job or an idle lease loses none, and an
   idle lease is never protected by item 1: hubadmin22 H9); 7. job ids.

Search (kube-scheduler's per-node ``selectVictimsOnNode`` + Kueue's ``minimalPreemptions``
remove-then-fill-back, combined):

* **targets** — for a job that needs one node, the nodes where free GPUs plus the candidates
  running there could hold it are ranked by the cost of the cheapest local fill, and the best
  few are tried with that node's candidates first (then the others, which can only help with
  quota); for gangs and shared GPUs (or when no node can be cleared) the cheapest candidates
  overall are tried in two orders (cheapest first; largest of the cheapest class first); where
  some young candidate is another one's :attr:`Candidate.below`, every order is tried again with
  that protection set aside (item 0 can only be met by taking the young lower-class job);
* **remove** — candidates are trial-evicted in order until the job fits (quota, placement and
  the reclaim rules the caller checks in ``fits``); a candidate the caller's ``removable`` refuses
  at that moment (its team no longer borrows) is skipped;
* **fill back** — the removed ones are put back one by one, the costliest first (and, in a second
  pass, the smallest first, so that one large job goes instead of several small ones), keeping
  each one the job does not need;
* the cheapest resulting set wins. If no order makes the job fit, nothing is evicted: an
  eviction that cannot make the job fit is wasted work (case 001; issue 16 example B).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial

__all__ = ["Candidate", "PreemptionPlan", "plan_cost", "plan_preemption"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
TARGETS = 3
"""Nodes tried per search for a single-node job (ranked by the cost of their cheapest fill)."""
MAX_CANDIDATES = 256
"""Cheapest candidates a search looks at beyond a target node's own (bounds a search on a large,
saturated cluster; the cheapest are the ones a minimal set would pick anyway)."""
SPARED_NAMED = 8
"""Young candidates a plan names as spared by the minimum runtime (:attr:`PreemptionPlan.spared`)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A running job that may be evicted for the pending one.

    Attributes:
        job_id / team / user: the holder.
        rank: class rank (high 2, normal 1, low 0).
        milli: milli-GPUs it holds (quota units).
        pods: workers it runs (a gang breaks as a whole).
        started: when it started (or was admitted); None = unknown (treated as old).
        kind: ``"reclaim"`` (a borrowing team's job), ``"priority"`` (own team, lower class),
            ``"departed"`` (own team's work whose owner left the team: outside its guarantee,
            :data:`~.reclaim_rules.DEPARTED`) or ``"class"`` (no quota: another team's low work).
        protected: younger than the profile's minimum runtime (never an idle lease: it has no work
            for the minimum runtime to protect, :func:`~.candidates.candidate_of`).
        exempt: protected *and* restarted after an earlier eviction: another team may not evict
            it again before it has run the minimum runtime (red team 15 R13).
        work_lost: GPU-seconds of work lost if evicted (0 for checkpointable jobs).
        node: node id of a single-node job (-1 for gangs and GPU-less work).
        fresh: admitted in this very cycle and not started: withdrawing the admission costs nothing.
        per_node: whole GPUs it holds per node id (a gang spreads over several).
        nominated: not a running job but the free GPUs nominated to a pending job of a borrowing
            team (``job_id`` is that job's): nothing runs on them, so taking them over costs
            nothing (it is also ``fresh``); the nomination is dropped.
        below: ids of candidates of the same team, of a lower class, that this job would preempt
            if it were requeued (its team's preemption policy allows it): a plan evicting it while
            one of them runs on costs item 0 (module doc; new user 19, N2). Set by the cycle.
        idle: a lease that sits idle (the snapshot's ``idle_ends``): evicting it loses no work
            (``work_lost`` 0) and the minimum runtime does not protect it (hubadmin22 H9).
    """

    job_id: str
    team: str
    user: str
    rank: int
    milli: int
    started: datetime | None
    kind: str
    protected: bool = False
    pods: int = 1
    work_lost: float = 0.0
    node: int = -1
    fresh: bool = False
    per_node: tuple[tuple[int, int], ...] = ()
    nominated: bool = False
    exempt: bool = False
    below: tuple[str, ...] = ()
    idle: bool = False


@dataclass(frozen=True, slots=True)
class PreemptionPlan:
    """Outcome of a victim search.

    Attributes:
        victims: the set to evict, cheapest first; empty when refused.
        refused: one sentence saying why no preemption was issued (when ``victims`` is empty).
        details: numbers behind ``refused``.
        spared: ids (sorted, at most :data:`SPARED_NAMED`) of the candidates younger than the minimum
            runtime that the plan leaves running although they are of a class no higher than a
            victim's: the minimum runtime is why an older one went instead (the reclaim's audit
            names them; hubadmin22 H9). Empty when refused.
    """

    victims: tuple[Candidate, ...] = ()
    refused: str = ""
    details: Mapping[str, object] = field(default_factory=dict)
    spared: tuple[str, ...] = ()


_NONE: frozenset[str] = frozenset()


def _cheap(c: Candidate, unshielded: frozenset[str] = _NONE) -> tuple[object, ...]:
    """Removal order: what costs least to evict first (module doc, cost items 1-7); the young
    candidates in ``unshielded`` sort as if not protected (item 0)."""
    return (not c.fresh, c.protected and c.job_id not in unshielded, c.rank, c.milli, c.pods, c.work_lost,
            -(c.started or _EPOCH).timestamp(), c.job_id)


def _large(c: Candidate, unshielded: frozenset[str] = _NONE) -> tuple[object, ...]:
    """Alternative removal order: the largest of the cheapest class first (fewer jobs broken)."""
    return (not c.fresh, c.protected and c.job_id not in unshielded, c.rank, -c.milli, c.work_lost,
            -(c.started or _EPOCH).timestamp(), c.job_id)


def plan_cost(victims: Iterable[Candidate]) -> tuple[object, ...]:
    """The cost of a victim set (module doc, items 0-7), comparable with ``<``.

    Withdrawing an admission made earlier in the same cycle (``fresh``) breaks nothing: such
    victims count only after every running one.
    """
    all_vs = list(victims)
    vs = [c for c in all_vs if not c.fresh]
    ids = {c.job_id for c in all_vs}
    # item 0: a victim whose team keeps lower-class work it would preempt once requeued (N2)
    moved = sum(1 for c in vs if any(i not in ids for i in c.below))
    # the class vector counts victims per class, highest class first, compared lexicographically
    classes = tuple(sum(1 for c in vs if c.rank == r) for r in (2, 1, 0))
    return (moved, sum(c.protected for c in vs), classes, len(vs), sum(c.milli for c in vs),
            sum(c.pods for c in vs), sum(c.work_lost for c in vs), len(all_vs) - len(vs),
            tuple(sorted(c.job_id for c in all_vs)))


def plan_preemption(candidates: Sequence[Candidate], *, fits: Callable[[], bool],
                    evict: Callable[[Candidate], None], restore: Callable[[Candidate], None],
                    removable: Callable[[Candidate], bool],
                    what_if: Callable[[], AbstractContextManager[object]],
                    need: int = 0, node_free: Mapping[int, int] | None = None) -> PreemptionPlan:
    """Find the cheapest victim set that makes the job fit (module doc).

    Args:
        candidates: allowed victims (any order).
        fits: does the job fit now, on the trial ledger (quota, placement, reclaim rules)?
        evict / restore: trial-evict a candidate / put it back.
        removable: may this candidate be removed *now* (e.g. its team still borrows)?
        what_if: a fresh nested ledger trial (undone on exit).
        need: GPUs the job needs on one node (0: not a single-node job; no targets).
        node_free: for single-node jobs, free whole GPUs now per node of the job's flavor.

    Returns:
        The victims (empty with ``refused`` when no set works). The ledger is left as found.
    """
    if not candidates:
        return PreemptionPlan(refused="no preemptible job")
    below = frozenset(i for c in candidates for i in c.below)
    passes = [_NONE]
    if any(c.protected and c.job_id in below for c in candidates):  # item 0 needs them taken first
        passes.append(below)
    best: tuple[tuple[object, ...], tuple[Candidate, ...]] | None = None
    tried: set[tuple[str, ...]] = set()
    for unshielded in passes:
        cheap, large = partial(_cheap, unshielded=unshielded), partial(_large, unshielded=unshielded)
        orders: list[list[Candidate]] = []
        if need > 0 and node_free is not None:
            orders.extend(_targeted(candidates, need, node_free, cheap, large))
        if not orders:  # gangs, shared GPUs, quota-only waits — or no node could be cleared
            pool = heapq.nsmallest(MAX_CANDIDATES, candidates, key=cheap)
            orders.append(pool)
            orders.append(sorted(pool, key=large))
        for order in orders:
            with what_if():
                removed = _remove_until_fit(order, fits, evict, removable)
                if removed is None:
                    continue
                key = tuple(sorted(c.job_id for c in removed))
                if key in tried:
                    continue
                tried.add(key)
                for fill_back in (_costliest_back_first, _smallest_back_first):
                    with what_if():
                        kept = _fill_back(removed, partial(fill_back, unshielded=unshielded), fits, evict, restore)
                    cost = plan_cost(kept)
                    if best is None or cost < best[0]:
                        best = (cost, tuple(sorted(kept, key=_cheap)))
    if best is None:
        single = _single_victim(candidates, fits, evict, removable, what_if)
        if single is not None:
            return PreemptionPlan(victims=(single,), spared=_spared(candidates, (single,)))
        return PreemptionPlan(refused=f"evicting all {len(candidates)} preemptible jobs would still not make it fit",
                              details={"candidates": sorted(c.job_id for c in candidates)})
    return PreemptionPlan(victims=best[1], spared=_spared(candidates, best[1]))


def _spared(candidates: Sequence[Candidate], victims: Sequence[Candidate]) -> tuple[str, ...]:
    """:attr:`PreemptionPlan.spared`: the young candidates left running of a class no higher than
    the highest running victim's (fresh withdrawals and nominations cost nothing and spare nothing)."""
    ranks = [v.rank for v in victims if not v.fresh]
    if not ranks:
        return ()
    top, chosen = max(ranks), {v.job_id for v in victims}
    return tuple(sorted(c.job_id for c in candidates
                        if c.protected and not c.fresh and c.rank <= top and c.job_id not in chosen)[:SPARED_NAMED])


def _single_victim(candidates: Sequence[Candidate], fits: Callable[[], bool], evict: Callable[[Candidate], None],
                   removable: Callable[[Candidate], bool],
                   what_if: Callable[[], AbstractContextManager[object]]) -> Candidate | None:
    """The cheapest one candidate that alone makes the job fit: the orders above can miss it when
    removing a cheaper one first ends its team's borrowing (and so its right to be reclaimed)."""
    for cand in heapq.nsmallest(MAX_CANDIDATES, candidates, key=_cheap):
        with what_if():
            if removable(cand):
                evict(cand)
                if fits():
                    return cand
    return None


def _targeted(candidates: Sequence[Candidate], need: int, node_free: Mapping[int, int],
              cheap: Callable[[Candidate], tuple[object, ...]] = _cheap,
              large: Callable[[Candidate], tuple[object, ...]] = _large) -> Iterator[list[Candidate]]:
    """Orders putting the candidates of the few cheapest target nodes first (module doc)."""
    local: dict[int, list[Candidate]] = {}
    gpus_on: dict[tuple[int, str], int] = {}
    for c in candidates:
        for node, gpus in c.per_node or (((c.node, c.milli // 1000),) if c.node >= 0 else ()):
            local.setdefault(node, []).append(c)
            gpus_on[(node, c.job_id)] = gpus
    ranked: list[tuple[tuple[object, ...], int]] = []
    for node, cands in local.items():
        free = node_free.get(node)
        if free is None:
            continue
        room = free
        chosen: list[Candidate] = []
        for c in sorted(cands, key=cheap):
            if room >= need:
                break
            chosen.append(c)
            room += gpus_on[(node, c.job_id)]
        if room >= need:
            ranked.append((plan_cost(chosen), node))
    ranked.sort()
    for _, node in ranked[:TARGETS]:
        mine = {c.job_id for c in local[node]}
        rest = heapq.nsmallest(MAX_CANDIDATES, (c for c in candidates if c.job_id not in mine), key=cheap)
        yield sorted(local[node], key=cheap) + rest
        yield sorted(local[node], key=large) + rest


def _remove_until_fit(order: Sequence[Candidate], fits: Callable[[], bool], evict: Callable[[Candidate], None],
                      removable: Callable[[Candidate], bool]) -> list[Candidate] | None:
    removed: list[Candidate] = []
    for cand in order:
        if not removable(cand):
            continue
        evict(cand)
        removed.append(cand)
        if fits():
            return removed
    return None


def _costliest_back_first(c: Candidate, unshielded: frozenset[str] = _NONE) -> tuple[object, ...]:
    """Fill-back order keeping the costliest victims: running, protected, higher class, larger, more work."""
    return (c.fresh, not (c.protected and c.job_id not in unshielded), -c.rank, -c.milli, -c.work_lost, c.job_id)


def _smallest_back_first(c: Candidate, unshielded: frozenset[str] = _NONE) -> tuple[object, ...]:
    """Fill-back order keeping small victims, so that one large job is evicted instead of several."""
    return (c.fresh, not (c.protected and c.job_id not in unshielded), -c.rank, c.milli, -c.work_lost, c.job_id)


def _fill_back(removed: Sequence[Candidate], key: Callable[[Candidate], tuple[object, ...]],
               fits: Callable[[], bool], evict: Callable[[Candidate], None],
               restore: Callable[[Candidate], None]) -> list[Candidate]:
    """Put back every removed candidate the job does not need, in ``key`` order; return the rest."""
    kept = list(removed)
    for cand in sorted(removed, key=key):
        restore(cand)
        if fits():
            kept.remove(cand)
        else:
            evict(cand)
    return kept
