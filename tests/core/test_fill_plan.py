"""The cutting-stock LP behind FGD-Planned (``placement/fill_plan.py``), on hand-solved demands.

Units: sizes and free capacity in milli-GPUs; prices as fractions of one GPU; ``waste`` in
milli-GPUs. Each expected value is worked out by hand in the test's docstring.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from jupyter_sched.placement.fill_plan import PLAN_GRID, FillPlan, solve_fill_plan


def fills_of(plan_fills: tuple[tuple[tuple[tuple[int, int], ...], float], ...]) -> dict[tuple[tuple[int, int], ...], float]:
    return {fill: round(gpus, 6) for fill, gpus in plan_fills}


def test_halves_pair_up_and_cost_nothing_in_a_half_empty_gpu() -> None:
    """500-milli shares: two per GPU, each priced 1/2; V(h) is 0 below 500, 500 from 500, 1000 at 1000."""
    plan = solve_fill_plan({500: 4.0})
    assert plan.prices == pytest.approx((0.5,))
    assert plan.gpus == pytest.approx(0.5)   # demand normalised to 1 share -> half a GPU
    assert fills_of(plan.fills) == {((500, 2),): 0.5}
    assert [plan.value[h] for h in (0, 499, 500, 999, 1000)] == pytest.approx([0, 0, 500, 500, 1000])
    # 700 free holds one 500 whichever way, so filling it loses nothing either
    assert list(plan.waste(500, np.array([500, 1000, 700]))) == pytest.approx([0, 0, 0])


def test_an_810_share_is_a_whole_gpu_and_160s_fill_its_remnant_for_free() -> None:
    """10 pods of 810 and 2 of 160: two 810+160 fills and eight 810s alone, 10 GPUs of 12 pods."""
    plan = solve_fill_plan({810: 10.0, 160: 2.0})
    assert plan.gpus * 12 == pytest.approx(10.0)
    assert dict(zip(plan.sizes, plan.prices, strict=True)) == pytest.approx({160: 0.0, 810: 1.0})
    # the 190 remnant and a fresh GPU are equally good homes for a 160 (neither costs a GPU) ...
    assert list(plan.waste(160, np.array([190, 1000]))) == pytest.approx([0, 0])
    # ... and an 810 never wastes: it is a GPU's worth on its own
    assert list(plan.waste(810, np.array([1000, 970]))) == pytest.approx([0, 0])


def test_a_320_belongs_beside_a_650_not_in_a_470s_gap() -> None:
    """470 (half), 650 and 320 (a quarter each): 650+320 and 470+470 fills, half a GPU per pod.

    Prices: 470 -> 1/2; 650 + 320 -> 1 with 3 x 320 <= 1 GPU, so 320 <= 1/3. A 320 in the 350 gap
    beside a 650 completes a planned fill (waste 0); in the 530 gap beside a 470 it leaves 210 that
    no planned share fills and takes the place of a 470 (waste V(530) - V(210) - y320 >= 1/6 GPU).
    """
    plan = solve_fill_plan({470: 0.5, 650: 0.25, 320: 0.25})
    assert plan.gpus == pytest.approx(0.5)
    assert fills_of(plan.fills) == {((470, 2),): 0.25, ((320, 1), (650, 1)): 0.25}
    price = dict(zip(plan.sizes, plan.prices, strict=True))
    assert price[470] == pytest.approx(0.5) and price[320] + price[650] == pytest.approx(1.0)
    assert price[320] <= 1 / 3 + 1e-9
    assert plan.waste(320, np.array([350]))[0] == pytest.approx(0.0)
    assert plan.waste(320, np.array([530]))[0] >= 1000 / 6 - 1e-6


def test_column_generation_reaches_the_lp_over_every_fill() -> None:
    """Against the LP with all fills enumerated (feasible only for a handful of sizes)."""
    demand = {230: 3.0, 320: 5.0, 470: 11.0, 550: 2.0, 650: 4.0, 810: 9.0, 160: 1.0}
    sizes = sorted(demand)
    fills = [c for c in itertools.product(*(range(1000 // s + 1) for s in sizes))
             if 0 < sum(k * s for k, s in zip(c, sizes, strict=True)) <= 1000]
    a = np.array(fills, dtype=float).T
    need = np.array([demand[s] for s in sizes]) / sum(demand.values())
    full = linprog(np.ones(a.shape[1]), A_ub=-a, b_ub=-need, bounds=(0, None), method="highs")
    assert solve_fill_plan(demand).gpus == pytest.approx(full.fun, rel=1e-9)


def test_waste_is_never_negative_and_a_size_the_plan_never_saw_is_priced_by_its_space() -> None:
    plan = solve_fill_plan({470: 1.0, 650: 1.0, 320: 1.0, 230: 1.0})
    free = np.arange(300, 1001)
    assert (plan.waste(300, free) >= 0).all()        # 300 is not a planned size
    assert plan.price(300) == pytest.approx(plan.value[300])
    assert (plan.waste(230, np.arange(230, 1001)) >= 0).all()


def test_equal_distributions_share_one_solve() -> None:
    assert solve_fill_plan({470: 2.0, 320: 1.0}) is solve_fill_plan({470: 4.0, 320: 2.0})


def test_no_shares_give_an_empty_plan() -> None:
    plan = solve_fill_plan({})
    assert plan.sizes == () and plan.gpus == 0.0 and float(plan.value.max()) == 0.0


@pytest.mark.parametrize("demand, match", [
    ({1000: 1.0}, r"share size must be a whole number of milli-GPUs in 1\.\.999, got 1000"),
    ({0: 1.0}, "share size must be .* got 0"),
    ({"470": 1.0}, "share size must be .* got '470'"),
    ({True: 1.0}, "share size must be .* got True"),
    ({470: 0.0}, "470-milli shares must be a finite number > 0, got 0.0"),
    ({470: float("nan")}, "finite number > 0"),
    ({470: "1"}, "finite number > 0, got '1'"),
    ({470: 10**400}, "finite number > 0"),
    ([470], "demand must map share sizes to weights, got list"),
], ids=["whole GPU", "zero size", "string size", "bool size", "zero weight", "NaN weight", "string weight",
        "weight beyond float", "not a mapping"])
def test_bad_demand_is_refused_naming_the_size(demand: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        solve_fill_plan(demand)  # type: ignore[arg-type]


def test_huge_weights_keep_their_proportions() -> None:
    """Weights are scaled before they are summed: two 1.7e308 weights must not overflow to inf."""
    plan = solve_fill_plan({470: 1.7e308, 320: 1.7e308})
    assert plan.gpus == solve_fill_plan({470: 1.0, 320: 1.0}).gpus > 0


@pytest.mark.parametrize("size, free, match", [
    (470, [400], r"must be in 470\.\.1000"),
    (-100, [950], "share size must be a whole number"),
    (0, [950], "share size must be a whole number"),
    (320.5, [950], "share size must be a whole number"),
    (320, [500.7], "free milli-GPUs must be integers"),
    (320, [float("nan")], "free milli-GPUs must be integers"),
], ids=["gpu too small", "negative size", "zero size", "fractional size", "fractional free", "NaN free"])
def test_waste_refuses_bad_sizes_and_free_capacity(size: float, free: list[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        solve_fill_plan({470: 1.0}).waste(size, np.array(free))  # type: ignore[arg-type]


def test_a_plan_needs_a_full_value_table() -> None:
    with pytest.raises(ValueError, match="value table of 1001 entries"):
        FillPlan((470,), (0.5,), 0.5, (), np.zeros(10))


def test_prices_that_need_many_rounds_converge_quickly_and_stay_exact() -> None:
    """420 and 150: prices where rounding to 6 decimals once made every round look improvable."""
    plan = solve_fill_plan({420: 5.0, 150: 4.0})
    value = dict(zip(plan.sizes, plan.prices, strict=True))
    # fills: 420 + 420 + 150 (one GPU) covers 2 x 420 and 1 x 150; the rest of the 150s go 6 a GPU
    assert plan.gpus * 9 == pytest.approx(2.5 + (4 - 2.5) / 6)
    assert 2 * value[420] + value[150] == pytest.approx(1.0, abs=1e-5)   # prices carry 6 decimals
    assert value[150] == pytest.approx(1 / 6, abs=1e-6)


def test_sizes_are_planned_on_a_10_milli_grid_rounded_up() -> None:
    """333 is planned as 340 (two fit beside a 320, not three); 995 fills a GPU alone, out of the plan."""
    plan = solve_fill_plan({333: 1.0, 995: 5.0})
    assert plan.sizes == (340,) and plan.price(333) == pytest.approx(plan.price(340))
    assert fills_of(plan.fills) == {((340, 2),): 0.5}


def test_a_thousand_distinct_fractions_still_give_a_plan_near_the_volume_bound() -> None:
    """Column generation adds several fills a round; the plan needs at least the shares' volume in GPUs."""
    demand = {size: 1.0 + size % 7 for size in range(1, 1000)}
    plan = solve_fill_plan(demand)
    volume = sum(-(-s // PLAN_GRID) * PLAN_GRID * w for s, w in demand.items() if s <= 990) / 1000
    assert volume / sum(w for s, w in demand.items() if s <= 990) <= plan.gpus <= 0.6
