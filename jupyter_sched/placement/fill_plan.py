"""Fill plans for shared GPUs: the cutting-stock LP of a share-size distribution and its prices.

When pods take parts of GPUs (openb's 470-, 650-, 810-milli pods), how many GPUs the shares
need depends on which sizes end up together: 650 + 320 leaves 30 milli, 470 + 320 leaves 210
that almost nothing fills. The best mix of *fills* (multisets of sizes that fit one GPU) for a
known size distribution is the linear relaxation of cutting stock (Gilmore & Gomory, "A Linear
Programming Approach to the Cutting-Stock Problem", Operations Research 9(6), 1961)::

    minimise   sum_f x_f                       (GPUs)
    subject to sum_f k_{f,s} x_f >= d_s        for every size s (demand: popularity of s)
               x_f >= 0

solved by column generation: a few fills to start, then the fill of largest dual value
(an unbounded knapsack over the GPU's 1000 milli) joins while that value exceeds one GPU.

Its dual gives every size a *price* ``y_s``: the fraction of a GPU the plan spends on it
(on openb's default workload 810 -> 1, 650 -> 2/3, 470 -> 1/2, 320 -> 1/3). A GPU with ``h``
milli free is worth ``V(h)``, the most price that fits into ``h``. Putting a share of size
``s`` there costs the plan ``V(h) - V(h - s) - y_s >= 0`` — LP reduced cost, in milli-GPUs of
expected waste: 0 when the share starts or continues a fill of the plan, positive when it
breaks one (a 320 into a 530 gap meant for a 470). Placing by this cost is the primal-dual
idea of online bin packing with a known distribution (Gupta & Radovanović, "Interior-Point-Based
Online Stochastic Bin Packing", Operations Research 68(5), 2020); :mod:`.planned` uses it
to choose GPUs on top of FGD.

Pure: numpy and scipy's LP solver (HiGHS), no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..model import GPU_MILLI
from .fgd import FloatArray, IntArray

__all__ = ["PLAN_GRID", "FillPlan", "solve_fill_plan"]

_MAX_ROUNDS = 40
"""Column-generation rounds, per LP, before settling for the best plan so far. openb's workloads
converge in 3-5 rounds; the cap bounds a solve (0.3 s here with all 99 sizes) and keeps it
deterministic, where a time budget would make placements depend on the machine's speed."""
PLAN_GRID = 10
"""Share sizes are planned in steps of this many milli-GPUs, rounded up (openb's sizes are all
multiples of 10): at most 99 sizes and a 100-cell knapsack."""
_COLUMNS_PER_ROUND = 10
_TOLERANCE = 1e-7
"""A fill counts as worth more than one GPU above ``1 + _TOLERANCE``: HiGHS's duals are exact to
about 1e-9, and smaller thresholds chase the solver's own rounding."""


@dataclass(frozen=True)
class FillPlan:
    """The optimal fill mix of a share-size distribution and the prices of its dual.

    Attributes:
        sizes: share sizes in milli-GPUs (1..999), ascending.
        prices: dual price of each size, as a fraction of one GPU (0..1).
        gpus: LP optimum — GPUs the shares need per unit of demand (the demand's own scale).
        fills: ``(fill, GPUs)`` of the optimal mix: ``fill`` as ``((size, count), ...)``.
        value: ``(1001,)`` float array, ``value[h]`` = ``V(h)`` in milli-GPUs: the most price
            (x 1000) a GPU with ``h`` milli free can still earn.
    """

    sizes: tuple[int, ...]
    prices: tuple[float, ...]
    gpus: float
    fills: tuple[tuple[tuple[tuple[int, int], ...], float], ...]
    value: FloatArray

    def __post_init__(self) -> None:
        if len(self.sizes) != len(self.prices) or np.shape(self.value) != (GPU_MILLI + 1,):
            raise ValueError(f"a FillPlan needs one price per size and a value table of {GPU_MILLI + 1} "
                             f"entries, got {len(self.sizes)} sizes, {len(self.prices)} prices and "
                             f"{np.shape(self.value)}")

    def price(self, size: int) -> float:
        """Price of ``size`` in milli-GPUs: the dual for a planned size, else ``V(size)``.

        A size the plan has not seen is priced at what the plan could fit into its space, so its
        cost below is never negative.
        """
        planned = _planned_size(size)
        if planned in self.sizes:
            return GPU_MILLI * self.prices[self.sizes.index(planned)]
        return float(self.value[min(max(size, 0), GPU_MILLI)])

    def waste(self, size: int, free: IntArray) -> FloatArray:
        """Expected milli-GPUs the plan loses by putting a ``size``-milli share on GPUs with ``free`` left.

        Args:
            size: the share (1..1000 milli-GPUs).
            free: milli-GPUs left on each candidate GPU (each at least ``size``), any shape.

        Returns:
            ``V(free) - V(free - size) - price(size)``, clipped at 0 (float noise of the LP), same
            shape as ``free``.

        Raises:
            ValueError: a ``free`` below ``size`` or above 1000.
        """
        if not _is_int(size) or not 1 <= size <= GPU_MILLI:
            raise ValueError(f"share size must be a whole number of milli-GPUs in 1..{GPU_MILLI}, got {size!r}")
        raw = np.asarray(free)
        if raw.dtype.kind not in "iu":
            raise ValueError(f"free milli-GPUs must be integers, got an array of {raw.dtype}")
        free = raw.astype(np.int64)
        if free.size and (int(free.min()) < size or int(free.max()) > GPU_MILLI):
            raise ValueError(f"free milli-GPUs must be in {size}..{GPU_MILLI} for a {size}-milli share")
        cost = self.value[free] - self.value[free - size] - self.price(size)
        return np.maximum(cost, 0.0)


def solve_fill_plan(demand: Mapping[int, float]) -> FillPlan:
    """The cutting-stock LP of ``demand`` (module docstring), by column generation.

    Args:
        demand: share size in milli-GPUs (1..999) -> its weight (pods, or popularity; > 0).
            Sizes are planned rounded up to :data:`PLAN_GRID` (333 as 340); those that round to a
            whole GPU (991..999) fill one alone and are left out.

    Returns:
        The plan; cached on the demand, so engine cycles with the same live shapes solve once.

    Raises:
        ValueError: ``demand`` not a mapping, a size that is not a whole number in 1..999, or a
            weight that is not a finite positive number.
    """
    if not isinstance(demand, Mapping):
        raise ValueError(f"demand must map share sizes to weights, got {type(demand).__name__}")
    weights: dict[int, float] = {}
    for size, weight in demand.items():
        if not _is_int(size) or not 1 <= size < GPU_MILLI:
            raise ValueError(f"share size must be a whole number of milli-GPUs in 1..{GPU_MILLI - 1}, got {size!r}")
        try:
            value = float(weight)
        except (TypeError, ValueError, OverflowError):
            value = math.nan
        number = isinstance(weight, (int, float, np.integer, np.floating)) and not isinstance(weight, bool)
        if not number or not (math.isfinite(value) and value > 0):
            raise ValueError(f"demand of {size}-milli shares must be a finite number > 0, got {weight!r}")
        weights[int(size)] = value
    top = max(weights.values(), default=1.0)
    planned: dict[int, float] = {}
    for size, value in weights.items():
        if _planned_size(size) < GPU_MILLI:
            # scaled by the largest weight first: a sum of two 1e308 weights must not overflow
            planned[_planned_size(size)] = planned.get(_planned_size(size), 0.0) + value / top
    if not planned:
        return FillPlan((), (), 0.0, (), np.zeros(GPU_MILLI + 1))
    total = sum(planned.values())
    # normalised and rounded so that equal distributions share one cache entry; a size below
    # 1e-9 of the demand counts as none
    key = tuple(sorted((s, round(w / total, 9)) for s, w in planned.items()))
    return _solve(key)


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _planned_size(size: int) -> int:
    return -(-size // PLAN_GRID) * PLAN_GRID


@lru_cache(maxsize=64)
def _solve(key: tuple[tuple[int, float], ...]) -> FillPlan:
    # scipy is imported here, not at module level: only fill-planning policies need it, and it
    # costs a server start ~0.3 s
    from scipy.optimize import linprog

    sizes = np.array([s for s, _ in key], dtype=np.int64)
    need = np.array([w for _, w in key])
    unit = math.gcd(GPU_MILLI, *sizes.tolist())          # knapsack grid: 10 milli on openb
    columns = [np.where(np.arange(len(sizes)) == i, GPU_MILLI // s, 0) for i, s in enumerate(sizes)]
    known = {c.tobytes() for c in columns}
    prices = np.zeros(len(sizes))
    x = np.zeros(0)
    for _ in range(_MAX_ROUNDS):
        a = np.array(columns, dtype=np.float64).T                  # sizes x fills
        res = linprog(np.ones(a.shape[1]), A_ub=-a, b_ub=-need, bounds=(0, None), method="highs")
        if res.status != 0:  # cannot happen: the single-size fills always cover the demand
            raise RuntimeError(f"fill-plan LP failed: {res.message}")
        x = res.x
        prices = np.maximum(-res.ineqlin.marginals, 0.0)
        new = _new_fills(sizes // unit, prices, GPU_MILLI // unit, known)
        if not new:
            break   # optimal: no fill is worth more than one GPU at these prices
        columns.extend(new)
    columns = columns[: len(x)]   # a fill found in the last round has no LP weight yet
    prices = _volume_like_prices(sizes, need, float(x.sum()), columns, prices, unit)
    value, _ = _knapsack(sizes // unit, prices, GPU_MILLI // unit)
    per_milli = np.repeat(value, unit)[: GPU_MILLI + 1] * GPU_MILLI   # V(h) on the 1-milli grid
    fills = tuple(
        (tuple((int(sizes[i]), int(c[i])) for i in np.flatnonzero(c)), float(n))
        for c, n in zip(columns, x, strict=True) if n > _TOLERANCE)
    return FillPlan(tuple(int(s) for s in sizes), tuple(float(p) for p in prices),
                    float(x.sum()), fills, per_milli)


def _volume_like_prices(sizes: IntArray, need: FloatArray, gpus: float, columns: list[IntArray],
                        prices: FloatArray, unit: int) -> FloatArray:
    """Among the optimal duals, the one nearest the sizes' volumes (``size / 1000``).

    Cutting-stock duals are rarely unique (on a 470/650/320/230 mix, 320 may cost 1/4 or 1/3 of a
    GPU with 650 at 3/4 or 2/3), and which vertex a solver returns decides placements. Where the
    LP is indifferent, the price nearest a share's volume is the natural one and does not depend on
    the solver: minimise ``sum_s d_s |y_s - s/1000|`` subject to dual optimality ``sum_s d_s y_s =
    gpus`` and dual feasibility (no fill worth more than one GPU), adding violated fills from the
    knapsack as in the primal (at most :data:`_MAX_ROUNDS` rounds; then the last optimal prices
    found). Prices are rounded to 6 decimals. Keeps ``prices`` if that LP cannot be solved.
    """
    from scipy.optimize import linprog

    n = len(sizes)
    target = sizes / GPU_MILLI
    # variables: y (n), t (n) = |y - target|; minimise need . t
    cost = np.concatenate([np.zeros(n), need])
    eye = np.eye(n)
    abs_rows = np.block([[eye, -eye], [-eye, -eye]])
    abs_rhs = np.concatenate([target, -target])
    rows = [np.asarray(c, dtype=np.float64) for c in columns]
    known = {np.asarray(c, dtype=np.int64).tobytes() for c in columns}
    best = prices
    for _ in range(_MAX_ROUNDS):
        fills = np.hstack([np.array(rows), np.zeros((len(rows), n))])
        optimal = np.concatenate([-need, np.zeros(n)])[None, :]
        res = linprog(cost, A_ub=np.vstack([fills, abs_rows, optimal]),
                      b_ub=np.concatenate([np.ones(len(rows)), abs_rhs, [-gpus * (1 - 1e-9)]]),
                      bounds=(0, None), method="highs")
        if res.status != 0:
            return best
        y = np.maximum(res.x[:n], 0.0)
        best = np.round(y, 6)   # drop the solver's 1e-9 noise: 1/3 stays 1/3 to 6 places
        new = _new_fills(sizes // unit, y, GPU_MILLI // unit, known)
        if not new:
            break   # dual feasible: no fill is worth more than one GPU
        rows.extend(np.asarray(c, dtype=np.float64) for c in new)
    return np.asarray(best, dtype=np.float64)


def _knapsack(sizes: IntArray, prices: FloatArray, capacity: int) -> tuple[FloatArray, IntArray]:
    """Unbounded knapsack on the grid: best price per capacity 0..capacity, and the last item taken."""
    value = np.zeros(capacity + 1)
    last = np.full(capacity + 1, -1, dtype=np.int64)
    for h in range(1, capacity + 1):
        value[h], last[h] = value[h - 1], -1
        fit = sizes <= h
        if fit.any():
            gain = np.where(fit, value[np.maximum(h - sizes, 0)] + prices, -1.0)
            i = int(np.argmax(gain))
            if gain[i] > value[h] + _TOLERANCE:
                value[h], last[h] = gain[i], i
    return value, last


def _improving_fills(sizes: IntArray, prices: FloatArray, capacity: int) -> list[IntArray]:
    """Fills worth more than one GPU at ``prices``: for each size, the best fill that holds it.

    Returns up to :data:`_COLUMNS_PER_ROUND` of them, most valuable first (several per round
    instead of the single best cuts the rounds of column generation about tenfold when users ask
    for many distinct fractions).
    """
    value, last = _knapsack(sizes, prices, capacity)
    worth = prices + value[np.maximum(capacity - sizes, 0)]
    fills = []
    for i in np.argsort(-worth, kind="stable")[:_COLUMNS_PER_ROUND]:
        if worth[i] <= 1.0 + _TOLERANCE:
            break
        fill = _fill_of(last, sizes, int(capacity - sizes[i]), len(sizes))
        fill[i] += 1
        fills.append(fill)
    return fills


def _new_fills(sizes: IntArray, prices: FloatArray, capacity: int, known: set[bytes]) -> list[IntArray]:
    """:func:`_improving_fills` not in ``known`` (fills as counts per size), which then holds them too."""
    new = [c for c in _improving_fills(sizes, prices, capacity) if c.tobytes() not in known]
    known.update(c.tobytes() for c in new)
    return new


def _fill_of(last: IntArray, sizes: IntArray, capacity: int, n: int) -> IntArray:
    """The multiset the knapsack chose for ``capacity``, as counts per size."""
    counts = np.zeros(n, dtype=np.int64)
    h = capacity
    while h > 0:
        i = int(last[h])
        if i < 0:
            h -= 1
            continue
        counts[i] += 1
        h -= int(sizes[i])
    return counts
