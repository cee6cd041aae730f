"""Issue 2, session 29: the 100-node cycle back under 50 ms — what its ETA pass and quota look-ups no
longer redo, counted (speed lives in ``benchmarks/cycle_bench.py``: no timed assertions), each shortcut
checked against the longer form. That the cycle decides and says exactly what it did is
``test_s28_cycle_golden.py``.

* The jobs ahead of each pending job are handed to its ETA record by id (a mapping): whether a job an
  ETA waits on is queued behind it is one look-up — a set of every job ahead was built per ETA
  (quadratic in the queue: ~7 % of the bench's 100-node cycle).
* A pass's first ETAs are said (``isoformat``) once per instant (``ctx.iso_times``), each in its own zone.
* "How many of the holders it waits on must end" (``eta_needs_of``) is worked out once per (holders,
  milli-GPUs, progress) per pass (``ctx.needs``): ~290 questions, 44 answers in the bench's cycle.
* A share's reservation takes the shared GPU its search found, without searching the unit again.
* The quota lines of a user without lines of their own are worked out once per (team, model).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone

import pytest
from core_builders import T0, make_job, make_node, running, snapshot
from cycle_golden import PROFILES, WORLDS, world

from jupyter_sched.backfill import projection as projection_module
from jupyter_sched.backfill.projection import Demand, Option, Projection, SharedGpu
from jupyter_sched.backfill.timeline import Timeline
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.quota.ledger import QuotaLedger, line_applies
from jupyter_sched.scheduling import eta as eta_module
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.context import CycleContext
from jupyter_sched.scheduling.cycle import run_on


def _golden(seed: int):  # type: ignore[no-untyped-def]
    _, n_nodes, n_jobs, quota_kind, profile = next(w for w in WORLDS if w[0] == seed)
    return world(seed, n_nodes, n_jobs, quota_kind), PROFILES[profile]


@pytest.mark.parametrize("seed", [2, 10])
def test_s29_cycle100_jobs_ahead_are_looked_up_by_id_and_backfilled_ones_named_as_before(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bool, list[str], list[str]]] = []
    backfilled = eta_module._backfilled

    def checked(queued: list[str], ahead):  # type: ignore[no-untyped-def]
        got = backfilled(queued, ahead)
        ids = set(ahead) if isinstance(ahead, Mapping) else {j.id for j in ahead}
        seen.append((isinstance(ahead, Mapping), got, [w for w in queued if w not in ids]))
        return got

    monkeypatch.setattr(eta_module, "_backfilled", checked)
    snap, profile = _golden(seed)
    run_cycle(snap, profile)
    assert seen, "the world has ETAs waiting on queued jobs"
    assert all(by_id for by_id, _, _ in seen)  # a mapping by id: no set of every job ahead built per ETA
    assert all(got == longhand for _, got, longhand in seen)


def test_s29_cycle100_first_etas_said_once_per_instant_in_their_own_zone() -> None:
    snap, profile = _golden(10)
    ctx = CycleContext(snap, profile)
    out = run_on(ctx)  # the cycle on a context whose memo we read
    etas = {p.reason.eta for p in out.pending if p.reason.eta is not None}
    assert etas and set(ctx.iso_times) <= etas  # only this pass's instants, each said once
    assert all(text == at.isoformat() for at, text in ctx.iso_times.items())
    for p in out.pending:
        basis = p.reason.details["eta_basis"]
        if p.reason.eta is not None:
            assert basis["recorded_eta"] == p.reason.eta.isoformat()
    # an equal instant of another zone is one dict key but another text: said as itself, never the memo's
    cet = timezone(timedelta(hours=1))
    at = next(iter(ctx.iso_times))
    assert eta_module._iso(ctx, at.astimezone(cet)) == at.astimezone(cet).isoformat() != ctx.iso_times[at]


def test_s29_cycle100_needs_of_is_worked_out_once_per_holders_and_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # 12 pending 1-GPU jobs behind three running jobs that end at the same second (newuser26 n5's batch)
    jobs = [*(running(make_job(f"r{i}", time_limit_s=600), indices=[i], started=-5) for i in range(4)),
            *(make_job(f"w{i:02d}", time_limit_s=600, submitted=i) for i in range(12))]
    asked: list[tuple[str, ...]] = []
    fewest = eta_module._fewest_freeing

    def counted(ctx, waits, milli):  # type: ignore[no-untyped-def]
        asked.append(waits)
        return fewest(ctx, waits, milli)

    monkeypatch.setattr(eta_module, "_fewest_freeing", counted)
    result = run_cycle(snapshot([make_node(gpus=4)], jobs))
    needs = {p.job_id: p.reason.details.get("eta_needs_of") for p in result.pending}
    assert len(asked) == len(set(asked)), asked  # once per (holders, size): not once per job
    monkeypatch.setattr(eta_module, "_fewest_freeing", fewest)
    assert needs == {p.job_id: p.reason.details.get("eta_needs_of")
                     for p in run_cycle(snapshot([make_node(gpus=4)], jobs)).pending}
    assert needs["w01"] == 1, needs  # the answer itself (test_s28_eta_same_end_and_backfill)


def test_s29_cycle100_a_shares_reservation_takes_the_gpu_its_search_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def built() -> Projection:
        unit = Timeline(0, [(600.0, 2)])  # a full 2-GPU unit whose GPUs free at 600 s
        shared = [SharedGpu("*", 0.0, 900.0, Timeline(200, [(300.0, 300)])),  # 0.2 free now, 0.5 from 300 s
                  SharedGpu("*", 0.0, 900.0, Timeline(500, [(400.0, 500)])),  # 0.5 free now
                  SharedGpu("*", 0.0, 900.0, Timeline(800))]
        return Projection(units=[unit], unit_max=[2], forever=[[]], enders=[[(600.0, "r1")]], shared={0: shared})

    demand = Demand(job_id="half", workers=(1,), milli=500, duration=300.0, after=0.0,
                    options=(Option(flavor="A100", units=(0,)),), strict=False, share=500)
    calls: list[float] = []
    slot = Projection._slot

    def counted(self, demand, unit, after, scan=projection_module.MAX_SHARED_SCAN):  # type: ignore[no-untyped-def]
        calls.append(after)
        return slot(self, demand, unit, after, scan)

    monkeypatch.setattr(Projection, "_slot", counted)
    proj = built()
    est = proj.place(demand)
    assert len(calls) == 1, calls  # the search's; the reservation did not search the unit's shared GPUs again
    assert est.start == 0.0
    assert [g.free.at(0.0) for g in proj.shared[0]] == [200, 0, 800]  # the first GPU with room: as searched
    # outside place() (a caller reserving on its own search, as the lookahead does) nothing is carried over
    calls.clear()
    other = built()
    found = other.earliest(demand)
    assert found is not None
    other.reserve(demand, found[0], demand.options[found[1]], found[2])
    assert len(calls) == 2
    assert [g.free.at(0.0) for g in other.shared[0]] == [200, 0, 800]


def test_s29_cycle100_quota_lines_of_users_without_lines_worked_out_once_per_team_and_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    quotas = QuotaSet(quotas=(Quota(team="a", guaranteed=8), Quota(team="a", gpu_model="H100-80GB", guaranteed=4),
                              Quota(team="b", guaranteed=2, borrowing_limit=2),
                              Quota(team="a", user="u1", guaranteed=1)))
    worked: list[tuple[str, str]] = []
    applicable = QuotaLedger._applicable

    def counted(self, team, own, model):  # type: ignore[no-untyped-def]
        worked.append((team, model))
        return applicable(self, team, own, model)

    monkeypatch.setattr(QuotaLedger, "_applicable", counted)
    ledger = QuotaLedger(quotas, {"A100-80GB": 16, "H100-80GB": 8})
    asks = [(team, f"u{k}", model) for team in ("a", "b", "c") for k in range(20)
            for model in ("A100-80GB", "H100-80GB")]
    got = {ask: ledger.applicable(*ask) for ask in asks}
    # once per (team, model) for users without lines, plus u1's own (team a, each model)
    assert len(worked) == 3 * 2 + 2, worked
    for (team, user, model), lines in got.items():  # the long form: team lines that apply, then the user's
        team_l = [ln for ln in ledger.team_lines.get(team, ()) if not ln.implicit and line_applies(ln.model, model)]
        user_l = [ln for ln in ledger.user_lines.get((team, user), ()) if line_applies(ln.model, model)]
        if not team_l:
            team_l = [ledger.lines[(team, None, model)]]  # the implicit zero line, made once
        assert lines == (*team_l, *user_l), (team, user, model)
    assert ledger.applicable("a", "u1", "H100-80GB")[-1].user == "u1"
    assert all(not math.isnan(ln.guaranteed) for lines in got.values() for ln in lines)


def test_s29_cycle100_capacity_basis_summed_once_per_flavors() -> None:
    snap, profile = _golden(10)
    ctx = CycleContext(snap, profile)
    out = run_on(ctx)
    sums = ctx.flavors_capacity
    assert sums and len(sums) < len({id(j.spec.resources) for j in snap.jobs})
    for flavors, total in sums.values():
        assert total == sum(f.capacity for f in flavors if f.pools)
    for p in out.pending:
        job = ctx.by_id[p.job_id]
        if "eta_basis" in p.reason.details:
            assert p.reason.details["eta_basis"]["capacity"] == sum(
                f.capacity for f in ctx.placer.flavors(job.spec.resources) if f.pools)


def test_s29_cycle100_iso_memo_keeps_the_cycles_zone_only() -> None:
    ctx = CycleContext(snapshot([make_node(gpus=1)]), PROFILES["default"])
    here = T0 + timedelta(minutes=5)
    assert eta_module._iso(ctx, here) == here.isoformat() and here in ctx.iso_times
    naive = datetime(2026, 1, 1, 12, 5)
    assert eta_module._iso(ctx, naive) == naive.isoformat() and naive not in ctx.iso_times
