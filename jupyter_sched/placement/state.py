"""Per-cycle cluster ledger: free capacity per GPU and per node, indexed for fast placement.

The ledger is built once per cycle from the frozen :class:`~jupyter_sched.model.Inventory`
plus the allocations of jobs that hold GPUs, then mutated as the cycle assumes admissions and
trial evictions (STYLE §2). Every mutation is journalled so that :meth:`ClusterState.what_if`
can undo it — the analogue of Kueue's ``SimulateWorkloadRemoval`` returning a restore function.

Shapes and units:
    * GPUs are numbered ``0..G-1`` over the whole inventory (``gpu id``); nodes ``0..N-1``.
    * ``node_mask[n]``: bit ``j`` set when the ``j``-th GPU of node ``n`` is wholly free and placeable
      (kept in step by every take and release; the placer's memo key, :class:`~.placer.Placer`).
    * ``free_milli[g]``: free milli-GPUs on GPU ``g`` (1000 = wholly free). Unplaceable GPUs
      (unhealthy, held by foreign processes — case 014 —, in MIG mode, or on nodes that are not
      ready / cordoned) are recorded with ``placeable[g] = False`` and never offered.
    * Nodes with identical placement-relevant attributes form a *pool* (GPU model set, memory per
      GPU, labels, taints). Inside a pool, nodes are indexed by their number of wholly free
      placeable GPUs (``pool.by_free[k]`` = ordered set of node ids with ``k`` free GPUs) and
      partially used GPUs by free milli-GPUs (``pool.partial``). A best-fit lookup is then
      O(max GPUs per node) instead of O(nodes) — the bucketed index kube-scheduler lacks and
      that FGD-style simulators approximate with vectorised scans.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ..model import GPU_MILLI, Inventory, Node, Taint
from .trial import Journaled, Trial

if TYPE_CHECKING:
    from .fgd import NodeArrays

__all__ = ["FOREIGN_WHY", "ClusterState", "Holding", "Pool", "Trial"]

FOREIGN_WHY = "used by processes the scheduler did not start"
"""How an unplaceable GPU's reason ends when processes outside the scheduler hold memory on it (case 014)."""


@dataclass(slots=True)
class Pool:
    """Nodes sharing every node-level placement attribute.

    Attributes:
        pid: pool id (index in ``ClusterState.pools``).
        models: GPU models present on the pool's nodes (usually one).
        memory_mib: smallest memory per GPU in MiB on these nodes.
        labels: node labels (identical for all member nodes).
        taints: node taints (identical for all member nodes).
        nodes: member node ids, inventory order.
        by_free: ``by_free[k]`` = node ids (insertion-ordered dict used as a set) with exactly
            ``k`` wholly free placeable GPUs.
        partial: free milli-GPUs -> GPU ids with that much free (0 < free < 1000).
        partial_keys: sorted keys of ``partial``.
        capacity: placeable GPUs in the pool.
        max_per_node: most placeable GPUs on one node of the pool.
    """

    pid: int
    models: tuple[str, ...]
    memory_mib: int
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    nodes: list[int] = field(default_factory=list)
    by_free: list[dict[int, None]] = field(default_factory=list)
    partial: dict[int, dict[int, None]] = field(default_factory=dict)
    partial_keys: list[int] = field(default_factory=list)
    capacity: int = 0
    max_per_node: int = 0
    free_whole: int = 0
    structural_max: int = 0
    structural_total: int = 0


class Holding(NamedTuple):
    """What one holder (a job, or a reservation mask) takes: ``(gpu id, milli)`` pairs, host resources.

    A named tuple rather than a frozen dataclass: one is built per placement attempt on the hot path.
    """

    gpus: tuple[tuple[int, int], ...]
    node: int
    cpu_millis: int = 0
    memory_mib: int = 0
    extra: tuple[tuple[int, int, int], ...] = ()  # (node, cpu, mem) of further gang workers
    migs: tuple[str, ...] = ()                    # MIG device uuids taken


_STATIC = ("inventory", "nodes", "node_index", "gpu_uuid", "gpu_node", "gpu_model", "gpu_memory", "gpu_local",
           "gpu_mig", "placeable", "peers", "domain", "node_gpus", "node_pool", "node_capacity", "node_has_nvlink",
           "node_max_domain", "unplaceable_why", "uuid_to_gpu", "mig_uuid", "inventory_memo", "gpu_bit")
"""Attributes fixed by the inventory: shared between ledgers of the same inventory object."""

_TEMPLATES: dict[int, ClusterState] = {}
"""Pristine ledgers of the last inventories seen, by ``id(inventory)`` (the template holds the
inventory, so the id cannot be reused while the entry lives). Read and written only under
:data:`_TEMPLATES_LOCK`: the engine's thread runs cycles while the API's threads run dry runs
and never-fits checks, and an unguarded eviction (``del _TEMPLATES[next(iter(...))]``) raced
with another thread's (issue 17). Templates themselves are never mutated once stored."""

_TEMPLATES_LOCK = threading.Lock()


def _template_of(inventory: Inventory) -> ClusterState | None:
    with _TEMPLATES_LOCK:
        template = _TEMPLATES.get(id(inventory))
    return template if template is not None and template.inventory is inventory else None


def _remember(inventory: Inventory, pristine: ClusterState) -> None:
    with _TEMPLATES_LOCK:
        _TEMPLATES[id(inventory)] = pristine
        while len(_TEMPLATES) > 2:  # the engine and the simulator reuse one inventory object per cycle
            _TEMPLATES.pop(next(iter(_TEMPLATES)))


class ClusterState(Journaled):
    """Mutable per-cycle view of free capacity with an undo journal.

    Args:
        inventory: the cycle's inventory.

    Holders are keyed by string (job id, or ``"\\0reserve:<job>"`` for masks). Taking GPUs a
    holder already holds, or more milli-GPUs than are free, raises ``ValueError`` (a bug, not
    bad input: callers check first).
    """

    inventory: Inventory

    def __init__(self, inventory: Inventory) -> None:
        template = _template_of(inventory)
        if template is not None:
            self._copy_from(template)
            return
        self.inventory = inventory
        self.nodes: list[Node] = list(inventory.nodes)
        self.node_index: dict[str, int] = {n.name: i for i, n in enumerate(self.nodes)}
        self.gpu_uuid: list[str] = []
        self.gpu_node: list[int] = []
        self.gpu_model: list[str] = []
        self.gpu_memory: list[int] = []
        self.gpu_local: list[int] = []           # NVML index on its node
        self.gpu_mig: list[bool] = []
        self.placeable: list[bool] = []
        self.peers: list[tuple[int, ...]] = []   # global ids of NVLink peers
        self.domain: list[int] = []              # NVLink domain id (connected component)
        self.free_milli: list[int] = []
        self.node_gpus: list[list[int]] = []
        self.node_pool: list[int] = []
        self.node_free: list[int] = []           # wholly free placeable GPUs per node
        self.node_mask: list[int] = []           # per node, bit j set: its j-th GPU is wholly free and placeable
        self.gpu_bit: list[int] = []             # 1 << (the GPU's position among its node's GPUs)
        self.node_capacity: list[int] = []       # placeable GPUs per node
        self.node_has_nvlink: list[bool] = []
        self.node_max_domain: list[int] = []     # GPUs in the node's largest NVLink domain
        self.node_cpu_free: list[int | None] = []
        self.node_mem_free: list[int | None] = []
        self.unplaceable_why: dict[int, str] = {}
        self.uuid_to_gpu: dict[str, int] = {}
        self.mig_uuid: dict[str, tuple[int, str, int]] = {}  # mig uuid -> (gpu, profile, memory)
        self.inventory_memo: dict[object, Any] = {}  # facts derived from the inventory alone, shared by its ledgers
        self.mig_used: dict[str, str] = {}
        self.pools: list[Pool] = []
        self.holdings: dict[str, Holding] = {}
        self._journal: list[tuple[str, Any, Any]] | None = None
        self._arrays: NodeArrays | None = None   # built on first use by vectorised score plugins
        self.version = 0  # bumped on every take/release; lets callers cache per state
        self.share_version = 0  # bumped on every take/release that changes a GPU share (see _change)
        self.gpu_shares: dict[int, dict[str, None]] = {}
        self.share_log: list[int] = []
        self._build()
        self.pool_stamp: list[int] = [0] * len(self.pools)
        self._stamps = 0
        pristine = ClusterState.__new__(ClusterState)
        pristine._copy_from(self)
        _remember(inventory, pristine)

    def _copy_from(self, other: ClusterState) -> None:
        """Share ``other``'s static arrays (never mutated after build) and copy its free capacity.

        Building the index is O(GPUs); a cycle over an inventory object seen in a recent cycle
        starts from a pristine copy instead (pure memoisation keyed by the frozen inventory).
        """
        for name in _STATIC:
            setattr(self, name, getattr(other, name))
        self.free_milli = list(other.free_milli)
        self.node_free = list(other.node_free)
        self.node_mask = list(other.node_mask)
        self.node_cpu_free = list(other.node_cpu_free)
        self.node_mem_free = list(other.node_mem_free)
        self.pools = [Pool(pid=p.pid, models=p.models, memory_mib=p.memory_mib, labels=p.labels, taints=p.taints,
                           nodes=p.nodes, by_free=[dict(b) for b in p.by_free],
                           partial={k: dict(v) for k, v in p.partial.items()}, partial_keys=list(p.partial_keys),
                           capacity=p.capacity, max_per_node=p.max_per_node, free_whole=p.free_whole,
                           structural_max=p.structural_max, structural_total=p.structural_total)
                      for p in other.pools]
        self.mig_used = dict(other.mig_used)
        self.holdings = dict(other.holdings)
        self._journal = None
        self._arrays = None
        self.version = 0
        self.share_version = 0
        """Bumped on every take or release whose ``(gpu, milli)`` pairs include one of less than a whole
        GPU (0 included): what is derived from the shares on GPUs alone — who holds a share of which
        GPU, the free rest of a GPU a share is on — is unchanged while it is (whole-GPU changes never
        touch a GPU a share is on: a share keeps it below 1000 free, a whole GPU needs all 1000), so
        callers cache that by it rather than by :attr:`version`, which every admission moves (issue 17:
        ``held_away`` redone per admission was a quarter of a 5,000-node cycle)."""
        self.gpu_shares = {g: dict(on) for g, on in other.gpu_shares.items()}
        """GPU -> the holders of a part of it below a whole GPU (0 included), kept with ``share_version``."""
        self.share_log = list(other.share_log)
        """The GPU of every ``(gpu, milli)`` pair below a whole GPU taken or released, in order: a
        caller that worked something out from the shares at one length of it redoes only the GPUs
        logged since (:func:`~jupyter_sched.scheduling.preempt.candidates.held_away`)."""
        self.pool_stamp = [0] * len(self.pools)
        """Per pool, a number naming its free capacity (free GPUs and shares per node, host resources):
        a change gives the pool a number never used before, and undoing a trial gives back the number
        it had before — so equal numbers mean equal free capacity (in any index order), and callers
        cache what they derive from a pool's free capacity by it (:meth:`stamps`)."""
        self._stamps = 0

    # ------------------------------------------------------------------ build
    def _build(self) -> None:
        pool_keys: dict[tuple[object, ...], int] = {}
        domain_next = 0
        for n_id, node in enumerate(self.nodes):
            ids: list[int] = []
            local_to_global: dict[int, int] = {}
            for gpu in node.gpus:
                g = len(self.gpu_uuid)
                ids.append(g)
                local_to_global[gpu.index] = g
                self.gpu_uuid.append(gpu.uuid)
                self.uuid_to_gpu[gpu.uuid] = g
                self.gpu_node.append(n_id)
                self.gpu_model.append(gpu.model)
                self.gpu_memory.append(gpu.memory_mib)
                self.gpu_local.append(gpu.index)
                self.gpu_mig.append(gpu.mig_enabled)
                why = ""
                if not gpu.healthy:
                    why = f"GPU {gpu.index} on {node.name} is unhealthy" + (
                        f" ({gpu.health_reason})" if gpu.health_reason else "")
                elif gpu.foreign_memory_mib > 0:
                    why = f"GPU {gpu.index} on {node.name} holds {gpu.foreign_memory_mib} MiB {FOREIGN_WHY}"
                elif gpu.mig_enabled:
                    why = f"GPU {gpu.index} on {node.name} is in MIG mode"
                    for mig in gpu.mig_devices:
                        self.mig_uuid[mig.uuid] = (g, mig.profile, mig.memory_mib)
                        self.uuid_to_gpu[mig.uuid] = g
                ok = not why and node.schedulable
                self.placeable.append(ok)
                if why:
                    self.unplaceable_why[g] = why
                self.free_milli.append(GPU_MILLI)
                self.domain.append(-1)
            for gpu in node.gpus:
                self.peers.append(tuple(local_to_global[p] for p in gpu.nvlink_peers
                                        if p in local_to_global and p != gpu.index))
            # NVLink domains: connected components of the peer graph on this node.
            for g in ids:
                if self.domain[g] >= 0:
                    continue
                stack = [g]
                self.domain[g] = domain_next
                while stack:
                    cur = stack.pop()
                    for p in self.peers[cur]:
                        if self.domain[p] < 0:
                            self.domain[p] = domain_next
                            stack.append(p)
                domain_next += 1
            self.node_gpus.append(ids)
            self.gpu_bit.extend(1 << j for j in range(len(ids)))
            self.node_mask.append(sum(1 << j for j, g in enumerate(ids) if self.placeable[g]))
            self.node_cpu_free.append(node.cpu_millis or None)
            self.node_mem_free.append(node.memory_mib or None)
            models = tuple(sorted({gpu.model for gpu in node.gpus}))
            memory = min((gpu.memory_mib for gpu in node.gpus), default=0)
            key = (models, memory, tuple(sorted(node.labels.items())), node.taints, node.schedulable)
            pid = pool_keys.get(key)
            if pid is None:
                pid = len(self.pools)
                pool_keys[key] = pid
                self.pools.append(Pool(pid=pid, models=models, memory_mib=memory,
                                       labels=node.labels, taints=node.taints))
            self.node_pool.append(pid)
            pool = self.pools[pid]
            pool.nodes.append(n_id)
            count = sum(1 for g in ids if self.placeable[g])
            pool.capacity += count
            pool.max_per_node = max(pool.max_per_node, count)
            self.node_free.append(count)
            self.node_capacity.append(count)
            self.node_has_nvlink.append(any(self.peers[g] for g in ids))
            sizes: dict[int, int] = {}
            for g in ids:
                sizes[self.domain[g]] = sizes.get(self.domain[g], 0) + 1
            self.node_max_domain.append(max(sizes.values(), default=0))
            structural = sum(1 for g in ids if not self.gpu_mig[g])
            pool.structural_max = max(pool.structural_max, structural)
            pool.structural_total += structural
        for pool in self.pools:
            pool.by_free = [{} for _ in range(pool.max_per_node + 1)]
            for n_id in pool.nodes:
                pool.by_free[self.node_free[n_id]][n_id] = None
                pool.free_whole += self.node_free[n_id]

    # ------------------------------------------------------------------ queries
    def node_schedulable(self, n_id: int) -> bool:
        """True when new work may go to node ``n_id``."""
        return self.nodes[n_id].schedulable

    def free_gpus_on(self, n_id: int) -> list[int]:
        """Wholly free placeable GPU ids on node ``n_id``, NVML order."""
        fm, pl = self.free_milli, self.placeable
        return [g for g in self.node_gpus[n_id] if pl[g] and fm[g] == GPU_MILLI]

    def holds(self, holder: str) -> bool:
        """True when ``holder`` holds capacity in this ledger."""
        return holder in self.holdings

    def node_arrays(self) -> NodeArrays:
        """The :class:`~jupyter_sched.placement.fgd.NodeArrays` view of this ledger, kept in step.

        Built on first call (O(GPUs)) from the current free capacity; from then on every
        take/release/undo updates it too (row ``gen`` bumped), so vectorised score plugins
        (FGD, the paper baselines) read the same state the placer commits to. Column ``j`` of
        node ``n`` is GPU ``node_gpus[n][j]``; GPUs that are not placeable show 0 milli left.
        Ledgers that never call it pay nothing (the default profile).
        """
        arrays = self._arrays
        if arrays is None:
            from .fgd import MAX_GPUS_PER_NODE, UNTRACKED, NodeArrays
            arrays = NodeArrays.from_inventory(self.inventory)
            for n_id, ids in enumerate(self.node_gpus):
                for j, g in enumerate(ids[:MAX_GPUS_PER_NODE]):
                    arrays.gpu_left[n_id, j] = self.free_milli[g] if self.placeable[g] else 0
                cpu, mem = self.node_cpu_free[n_id], self.node_mem_free[n_id]
                arrays.cpu_left[n_id] = UNTRACKED if cpu is None else cpu
                arrays.mem_left[n_id] = UNTRACKED if mem is None else mem
            for holding in self.holdings.values():
                for n_id, tag in _tags(holding):
                    arrays.tag_count[n_id, tag] += 1
            self._arrays = arrays
        return arrays

    # ------------------------------------------------------------------ index upkeep
    def _change(self, gpus: tuple[tuple[int, int], ...], sign: int) -> None:
        """Add ``sign * milli`` to the free milli-GPUs of each ``(gpu, milli)``, indexes kept in step.

        A node moves between ``by_free`` buckets once per run of its GPUs, not once per GPU (a
        4-GPU worker: one move); where it ends up in its bucket is the same either way.
        """
        fm, gpu_node, placeable = self.free_milli, self.gpu_node, self.placeable
        node_mask, gpu_bit = self.node_mask, self.gpu_bit
        plain = self._arrays is None
        node, delta = -1, 0
        shares = False
        for g, milli in gpus:
            old = fm[g]
            new = old + sign * milli
            if milli != GPU_MILLI:
                shares = True
            if plain and (old == 0 or old == GPU_MILLI) and (new == 0 or new == GPU_MILLI):
                # a whole GPU taken or freed, no array view: what _set_free does, without the call
                if old == new:
                    continue
                fm[g] = new
                if not placeable[g]:
                    continue
                moved = 1 if new == GPU_MILLI else -1
            else:
                moved = self._set_free(g, new)
            if moved:
                node_mask[gpu_node[g]] ^= gpu_bit[g]  # its wholly free bit flips
                if gpu_node[g] != node:
                    if delta:
                        self._shift(node, delta)
                    node, delta = gpu_node[g], 0
                delta += moved
        if delta:
            self._shift(node, delta)
        if shares:
            self.share_version += 1

    def _log_shares(self, holder: str, gpus: tuple[tuple[int, int], ...], taken: bool) -> None:
        """Keep :attr:`gpu_shares` and :attr:`share_log` for ``holder``'s pairs below a whole GPU."""
        log, on_gpu = self.share_log, self.gpu_shares
        for g, milli in gpus:
            if milli != GPU_MILLI:
                log.append(g)
                if taken:
                    on_gpu.setdefault(g, {})[holder] = None
                elif (on := on_gpu.get(g)) is not None:
                    on.pop(holder, None)
                    if not on:
                        del on_gpu[g]

    def _shift(self, n_id: int, delta: int) -> None:
        """Node ``n_id`` has ``delta`` more wholly free placeable GPUs: move it between ``by_free`` buckets."""
        pid = self.node_pool[n_id]
        if self._journal is not None:  # _restamp, inlined (once per admission)
            self._journal.append(("stamp", pid, self.pool_stamp[pid]))
        self._stamps += 1
        self.pool_stamp[pid] = self._stamps
        pool = self.pools[pid]
        k = self.node_free[n_id]
        del pool.by_free[k][n_id]
        self.node_free[n_id] = k + delta
        pool.by_free[k + delta][n_id] = None
        pool.free_whole += delta

    def _set_free(self, g: int, new: int) -> int:
        """Set GPU ``g``'s free milli-GPUs; returns the change (-1, 0, +1) in its node's wholly free
        placeable GPUs, for the caller to :meth:`_shift` the node."""
        old = self.free_milli[g]
        if old == new:
            return 0
        self.free_milli[g] = new
        if not self.placeable[g]:
            return 0
        n_id = self.gpu_node[g]
        arrays = self._arrays
        if arrays is not None:
            col = g - self.node_gpus[n_id][0]  # GPU ids are consecutive per node
            if col < arrays.gpu_left.shape[1]:
                arrays.gpu_left[n_id, col] = new
                arrays.gen[n_id] += 1
        self._restamp(self.node_pool[n_id])
        pool = self.pools[self.node_pool[n_id]]
        if 0 < old < GPU_MILLI:
            bucket = pool.partial[old]
            del bucket[g]
            if not bucket:
                del pool.partial[old]
                pool.partial_keys.pop(bisect.bisect_left(pool.partial_keys, old))
        if 0 < new < GPU_MILLI:
            bucket2 = pool.partial.get(new)
            if bucket2 is None:
                bucket2 = pool.partial[new] = {}
                bisect.insort(pool.partial_keys, new)
            bucket2[g] = None
        return (new == GPU_MILLI) - (old == GPU_MILLI)

    # ------------------------------------------------------------------ mutations
    def take(self, holder: str, holding: Holding) -> None:
        """Record that ``holder`` takes ``holding``.

        Raises:
            ValueError: the holder already holds something, or a GPU lacks the free milli-GPUs.
        """
        holdings = self.holdings
        if holder in holdings:
            raise ValueError(f"{holder} already holds capacity")
        gpus, _, cpu_millis, memory_mib, extra, migs = holding  # read once (hot: once per admission)
        fm = self.free_milli
        for g, milli in gpus:
            if fm[g] < milli:
                raise ValueError(f"GPU {self.gpu_uuid[g]} has {fm[g]} milli-GPUs free, {milli} asked")
        if migs:
            for mig in migs:
                if mig in self.mig_used:
                    raise ValueError(f"MIG device {mig} already used by {self.mig_used[mig]}")
        shares = self.share_version
        self._change(gpus, -1)
        if shares != self.share_version:
            self._log_shares(holder, gpus, True)
        if migs:
            for mig in migs:
                self.mig_used[mig] = holder
        if cpu_millis or memory_mib or extra:
            self._host(holding, -1)
        if self._arrays is not None:
            self._tag(holding, +1)
        holdings[holder] = holding
        self.version += 1
        if self._journal is not None:
            self._journal.append(("take", holder, None))

    def release(self, holder: str) -> Holding | None:
        """Free what ``holder`` holds; returns the holding (None when it held nothing)."""
        holding = self.holdings.pop(holder, None)
        if holding is None:
            return None
        shares = self.share_version
        self._change(holding.gpus, +1)
        if shares != self.share_version:
            self._log_shares(holder, holding.gpus, False)
        for mig in holding.migs:
            self.mig_used.pop(mig, None)
        if holding.cpu_millis or holding.memory_mib or holding.extra:
            self._host(holding, +1)
        if self._arrays is not None:
            self._tag(holding, -1)
        self.version += 1
        if self._journal is not None:
            self._journal.append(("release", holder, holding))
        return holding

    def force_take(self, holder: str, holding: Holding) -> None:
        """Record an existing allocation even where it overlaps (the snapshot is the truth).

        Used when loading jobs that already hold GPUs: a GPU shared beyond its capacity is
        clamped at 0 free rather than rejected, so a corrupted store never crashes the cycle.
        """
        fm = self.free_milli
        clamped = tuple((g, min(milli, fm[g])) for g, milli in holding.gpus)
        migs = tuple(m for m in holding.migs if m not in self.mig_used)
        self.take(holder, Holding(gpus=clamped, node=holding.node, cpu_millis=holding.cpu_millis,
                                  memory_mib=holding.memory_mib, extra=holding.extra, migs=migs))

    def _restamp(self, pid: int) -> None:
        """Pool ``pid``'s free capacity changes: a new :attr:`pool_stamp` (the old one journaled in a trial)."""
        if self._journal is not None:
            self._journal.append(("stamp", pid, self.pool_stamp[pid]))
        self._stamps += 1
        self.pool_stamp[pid] = self._stamps

    def stamps(self, pools: tuple[int, ...]) -> object:
        """A cache key for the free capacity of ``pools`` (:attr:`pool_stamp`)."""
        stamp = self.pool_stamp
        return stamp[pools[0]] if len(pools) == 1 else tuple([stamp[p] for p in pools])

    def _host(self, holding: Holding, sign: int) -> None:
        for n_id, cpu, mem in ((holding.node, holding.cpu_millis, holding.memory_mib), *holding.extra):
            self._restamp(self.node_pool[n_id])
            cur_cpu = self.node_cpu_free[n_id]
            if cur_cpu is not None and cpu:
                self.node_cpu_free[n_id] = cur_cpu + sign * cpu
            cur_mem = self.node_mem_free[n_id]
            if cur_mem is not None and mem:
                self.node_mem_free[n_id] = cur_mem + sign * mem
            arrays = self._arrays
            if arrays is not None:
                if cur_cpu is not None and cpu:
                    arrays.cpu_left[n_id] += sign * cpu
                if cur_mem is not None and mem:
                    arrays.mem_left[n_id] += sign * mem
                arrays.gen[n_id] += 1

    def _tag(self, holding: Holding, sign: int) -> None:
        """Count the holding's pods per GPU class (:attr:`PodShape.tag`) in the array view."""
        arrays = self._arrays
        if arrays is not None:
            for n_id, tag in _tags(holding):
                arrays.tag_count[n_id, tag] += sign
                arrays.gen[n_id] += 1

    def _undo(self, record: tuple[str, Any, Any]) -> None:
        """Reverse one journaled take (release it), release (take it again) or new pool stamp
        (the pool gets its old one back: records are undone newest first, so after a trial every
        pool has the stamp it had before it)."""
        op, holder, holding = record
        if op == "take":
            self.release(holder)
        elif op == "stamp":
            self.pool_stamp[holder] = holding
        elif holding is not None:
            self.take(holder, holding)


def _tags(holding: Holding) -> list[tuple[int, int]]:
    """``(node, GPU class)`` per worker of a holding, the class as :attr:`PodShape.tag`:
    0 no GPU (or MIG), 1 one shared GPU, ``1 + k`` for ``k`` whole GPUs (at most 8)."""
    if not holding.extra:
        gpus = holding.gpus
        if not gpus:
            return [(holding.node, 0)]
        if len(gpus) == 1:
            return [(holding.node, 1 if gpus[0][1] < GPU_MILLI else 2)]
        return [(holding.node, 1 + min(len(gpus), 8))]
    if not holding.gpus:
        return [(holding.node, 0)] + [(n, 0) for n, _, _ in holding.extra]
    workers = 1 + len(holding.extra)
    per = max(1, len(holding.gpus) // workers)
    nodes = [holding.node] + [n for n, _, _ in holding.extra]
    milli = holding.gpus[0][1]
    tag = 1 if per == 1 and milli < GPU_MILLI else 1 + min(per, 8)
    return [(n, tag) for n in nodes]
