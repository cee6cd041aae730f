"""Which GPUs of a node the ETA replay's EASY reservation keeps from now: the placer's pick (newuser38 n23).

The replay (:func:`..backfill.lookahead.lookahead`) counts free GPUs per unit. The cycle's EASY reservation
(:func:`.pending._reserve` → :func:`..backfill.easy.walk_ends` → the placer) takes particular GPUs: of those
free once the work ahead of it has ended (held to its time limits), the ones the placer picks
(:func:`..placement.topology.choose_gpus`: an NVLink domain that fits best, else the lowest NVML indices;
one GPU: the fewest free NVLink peers). Of those, the GPUs free *now* are what later jobs may not use
meanwhile (:func:`.admit._place` keeps them off); the rest are the ending work's. A count can say neither
which: "free now first" kept GPU 3 of a 4-GPU node for a 2-GPU job the cycle placed on GPUs 0-1 (freed by a
3-GPU job's end), so a 1-GPU job's ETA read "when A ends" though the cycle admitted it when GPU 3 freed
(newuser38 n23); "the ending work's first" let a job backfill on GPU 0 that the cycle kept for a job placed
on GPUs 0 and 2 (new user 17, N14). :class:`NodeGpus` follows each node's GPUs through the replay — who
holds each until when (expected, and to its time limit), the replay's own starts placed as the placer
places them — and answers :meth:`NodeGpus.keep` with the placer's pick, :meth:`NodeGpus.node` with the node
the cycle's walk stops on.

:meth:`NodeGpus.place` says which node the placer gives a one-worker job that starts where the replay counts
several nodes able to hold it: its walk by free count, the order of each count's nodes (the cycle loads running
jobs in the snapshot's order; its own admissions, the reservation's masks and the trial walk of
:meth:`NodeGpus.node` move nodes after them) and the binpack and topology scores (s40-eta: the replay took the
first node by index; 17 of 2,000 one-user worlds of up to three nodes off, none after).

Only where units are nodes (a node of one model, or its GPUs of one model: :mod:`.eta_units`); on pools
the replay keeps its count (free now first). Not modelled: a reservation's worker layout on a node (its
workers there are picked as one), an NVLink requirement, the vectorised score plugins' own GPU picks and
other score plugins (there :meth:`NodeGpus.place` says None), gangs' nodes.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..model import GPU_MILLI
from ..placement.state import ClusterState
from ..placement.topology import choose_gpus

__all__ = ["NodeGpus"]


class NodeGpus:
    """Each placeable GPU of the replay's units, with when its holder ends (module doc).

    Args:
        state: the cycle's ledger (topology, what is free now).
        gpu_unit: per GPU id, its unit (:attr:`.eta_units.Units.gpu_unit`).
        ends: per GPU id held now, ``(holder, expected end, latest end)``, the ends in seconds after now
            (``math.inf``: none); a held GPU missing from it is held for ever.
    """

    __slots__ = ("_fm", "_kept", "_t", "_touched", "expected", "holder", "latest", "rank", "state", "unit_gpus",
                 "weights")

    def __init__(self, state: ClusterState, gpu_unit: Sequence[int],
                 ends: Mapping[int, tuple[str, float, float]], *, rank: Mapping[str, int] | None = None,
                 weights: tuple[float, float] | None = None) -> None:
        self.state = state
        self.rank = rank or {}
        """Per job id, its place in the snapshot's job list: the order the cycle loads holders in (:meth:`place`)."""
        self.weights = weights
        """The placer's ``(binpack, topology)`` weights where those are its only scores (:meth:`place`); None: other."""
        self._touched: dict[int, int] = {}  # units a start at ``_t`` took GPUs on, in the order taken
        n = len(state.free_milli)
        self.expected = [math.inf] * n
        self.latest = [math.inf] * n
        self.holder = [""] * n
        self.unit_gpus: dict[int, list[int]] = {}
        for g in range(n):
            if not state.placeable[g]:
                continue
            self.unit_gpus.setdefault(gpu_unit[g], []).append(g)
            if state.free_milli[g] >= GPU_MILLI:
                self.expected[g] = self.latest[g] = 0.0
            elif (end := ends.get(g)) is not None:
                self.holder[g], self.expected[g], self.latest[g] = end[0], end[1], max(end[1], end[2])
        self._fm = [0] * n  # scratch: free milli-GPUs at the time a pick is made (choose_gpus reads peers by it)
        self._kept: dict[int, set[int]] = {}  # per unit, GPUs kept at ``_t`` for a reservation
        self._t = -1.0

    def keep(self, unit: int, count: int, t: float, start: float, *, freed_first: bool = False) -> int | None:
        """How many of the ``count`` GPUs a job reserved on ``unit`` from ``start`` gets are free at ``t``:
        the placer's pick among the GPUs free at ``t`` and those of the work running then released as
        :func:`..backfill.easy.walk_ends` releases it — by latest end (time limit), then holder, until the job
        fits (so of two jobs ending at ``start`` only the first may be released). Those are kept for it from
        ``t`` (:meth:`take` keeps later jobs off them). ``freed_first`` (a job its quota line holds back:
        :func:`.pending._hold_headroom`): the placer picks among the GPUs all the work ending by ``start`` frees,
        those free at ``t`` masked, and only where they do not hold it among all (then as above). None: the
        unit's GPUs do not hold it then (the replay's count decides)."""
        self._step(t)
        kept = self._kept.setdefault(unit, set())
        expected, latest, holder = self.expected, self.latest, self.holder
        free: list[int] = []
        ending: dict[tuple[float, str], list[int]] = {}
        for g in self.unit_gpus.get(unit, ()):
            if g in kept:
                continue
            if expected[g] <= t:
                free.append(g)
            elif latest[g] <= start:
                ending.setdefault((latest[g], holder[g]), []).append(g)
        if freed_first and sum(len(gs) for gs in ending.values()) >= count:
            return 0  # on GPUs the work ending by then frees: none kept from now
        for key in sorted(ending):
            if len(free) >= count:
                break
            free.extend(ending[key])
        chosen = self._pick(sorted(free), count)
        if chosen is None:
            return None
        now = [g for g in chosen if expected[g] <= t]
        kept.update(now)
        return len(now)

    def node(self, units: Sequence[int], count: int, t: float, start: float) -> int | None:
        """The unit of ``units`` that a one-worker job of ``count`` GPUs reserved from ``start`` is placed on at
        ``t``: :func:`..backfill.easy.walk_ends` releases the work running then by latest end, then holder, and
        stops at the first release after which a node holds it; of the units that do then, the fullest (best
        fit; the first of ``units`` among equals). Where two jobs end at ``start`` on two nodes only the first
        may be released: the projection, which sees both ended, took the fuller node of the two. The walk runs
        in a trial the cycle undoes: each released job's node is taken again and moves behind the others
        (:meth:`place`'s order). None: none holds it by ``start``."""
        self._step(t)
        expected, latest, holder = self.expected, self.latest, self.holder
        free = dict.fromkeys(units, 0)
        ending: dict[tuple[float, str], list[int]] = {}
        for unit in units:
            kept = self._kept.get(unit, ())
            for g in self.unit_gpus.get(unit, ()):
                if g in kept:
                    continue
                if expected[g] <= t:
                    free[unit] += 1
                elif latest[g] <= start:
                    ending.setdefault((latest[g], holder[g]), []).append(unit)
        fits = [u for u in units if free[u] >= count]
        released: list[int] = []
        for key in sorted(ending):
            if fits:
                break
            for unit in ending[key]:
                free[unit] += 1
            released.append(ending[key][0])
            fits = [u for u in units if free[u] >= count]
        # the walk ran in a trial: undone newest first, each release's node taken again, moved last (:meth:`place`)
        for unit in reversed(released):
            self._touch(unit)
        return min(fits, key=free.__getitem__) if fits else None

    def place(self, units: Sequence[int], count: int, t: float, *, around: bool = False) -> int | None:
        """The unit of ``units`` (those where a one-worker job of ``count`` whole GPUs fits at ``t``) the placer gives
        it then, as the cycle at ``t`` walks them (:meth:`..placement.placer.Placer._walk_builtin`): by wholly free
        GPUs, fewest first, each count's nodes in the order they came to have it — the cycle loads the running
        jobs in the snapshot's order (``rank``), each take moving its node to the end of its count, and its own
        admissions move theirs after those — scored binpack plus topology (:meth:`.Placer._choose`), the first of
        the highest total; ``around`` the GPUs kept for a reservation at ``t`` (:func:`.admit._place` masks them:
        a node with fewer free). None: not worked out (other score plugins, a spread walk)."""
        if self.weights is None or len(units) < 2:
            return None
        self._step(t)
        kept = self._kept
        w_pack, w_topo = self.weights
        expected, holder, rank, st = self.expected, self.holder, self.rank, self.state
        best: tuple[float, tuple[int, int, int, int], int] | None = None  # (-total, walk order, unit)
        for unit in units:
            gpus = self.unit_gpus.get(unit, [])
            masked = kept.get(unit, ()) if around else ()
            free = [g for g in gpus if expected[g] <= t and g not in masked]
            if len(free) < count:
                continue
            node = st.gpu_node[gpus[0]]
            last = max((rank.get(holder[g], -1) for g in gpus if expected[g] > t), default=-1)
            touched = self._touched.get(unit)
            walk = (len(free), 0 if touched is None else 1, last if touched is None else touched, unit)
            pack = min(100, 100 * (len(gpus) - len(free) + count) // max(len(gpus), 1))
            total = w_pack * pack + w_topo * self._topology(free, count, node)
            key = (-total, walk, unit)
            if best is None or key < best:
                best = key
        return None if best is None else best[2]

    def _topology(self, free: list[int], count: int, node: int) -> int:
        """:meth:`..placement.placer.Placer._choose`'s topology score of the pick among ``free`` (free at the step)."""
        st = self.state
        if not st.node_has_nvlink[node]:
            return 100
        if count == 1:
            mine = set(free)
            return 100 if len(free) == 1 or any(not any(q in mine for q in st.peers[g] if st.placeable[q])
                                                 for g in free) else 50
        chosen = self._pick(free, count)
        if chosen is None:
            return 0
        domains = len({st.domain[g] for g in chosen})
        fewest = -(-count // max(st.node_max_domain[node], 1))
        return max(0, 100 - (100 * (domains - fewest)) // (count - 1))

    def take(self, job_id: str, unit: int, count: int, t: float, end: float, latest: float, *, around: bool) -> int:
        """``job_id`` started at ``t`` on ``unit`` with ``count`` GPUs holds the ones the placer picks among
        those free at ``t`` until ``end`` (to ``latest`` at the most): off the GPUs kept for a reservation at
        ``t`` when it goes ``around`` it (:func:`.admit._place`), else anywhere (it ends by the reservation's
        start: :func:`.admit._may_bypass`). Returns how many of the kept GPUs it took."""
        self._step(t)
        kept = self._kept.get(unit, set())
        expected = self.expected
        free = [g for g in self.unit_gpus.get(unit, ()) if expected[g] <= t]
        chosen = (self._pick([g for g in free if g not in kept], count) if around else None) or self._pick(free, count)
        for g in chosen or ():
            self.holder[g], self.expected[g], self.latest[g] = job_id, end, max(end, latest)
        if chosen:
            if around:  # admit._place masked the reservation's GPUs free now in a trial: undone, its node moved last
                for other, gs in self._kept.items():
                    if other != unit and any(expected[g] <= t for g in gs):
                        self._touch(other)
            self._touch(unit)
        return sum(1 for g in chosen or () if g in kept)

    def _touch(self, unit: int) -> None:
        """``unit``'s node moved to the end of its free count's nodes at this step (:meth:`place`'s walk order)."""
        self._touched.pop(unit, None)
        self._touched[unit] = len(self._touched)

    def _pick(self, free: list[int], count: int) -> list[int] | None:
        """The placer's pick of ``count`` among ``free`` (one node's GPUs, NVML order), as if only they were free."""
        if len(free) < count or count <= 0:
            return None
        fm = self._fm
        for g in free:
            fm[g] = GPU_MILLI
        try:
            return choose_gpus(self.state, free, count, nvlink=False, free_milli=fm)
        finally:
            for g in free:
                fm[g] = 0

    def _step(self, t: float) -> None:
        if t != self._t:
            self._t = t
            self._kept.clear()
            self._touched.clear()
