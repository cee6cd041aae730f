"""Idle reclamation on interactive leases: GPU-hours reclaimed vs idle, and false reclaims.

Usage::

    python benchmarks/idle_scenario.py [benchmarks/scenarios/idle_leases.yaml]

Runs the scenario twice in the discrete-event simulator (production ``run_cycle`` +
``jupyter_sched.reclaim`` ladder on per-minute samples): once with the scenario's idle policy
and once with idle reclamation off. Prints

* idle GPU-hours: GPU-hours the leases held at < threshold utilisation in the run without
  reclamation — split into the idle *tail* (after the user's last activity; reclaimable) and
  idle *pauses/dips* inside the working session (must not be reclaimed);
* reclaimed GPU-hours: GPU-hours between each reclaim and the lease's natural end;
* false reclaims: reclaims before the lease's last active moment (must be 0);
* the queueing delay of the batch jobs with and without reclamation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jupyter_sched.model import GPU_MILLI, JobKind
from jupyter_sched.sim.scenario import Scenario, load_scenario
from jupyter_sched.sim.simulator import SimJob, simulate

DEFAULT = Path(__file__).parent / "scenarios" / "idle_leases.yaml"


def idle_hours(job: SimJob, start_s: float, end_s: float, threshold: float) -> tuple[float, float]:
    """(idle GPU-hours in pauses/dips, idle GPU-hours in the tail) of a lease held over [start, end)."""
    gpus = job.resources.total_milli / GPU_MILLI
    active_until = job.active_until_s()
    held = end_s - start_s
    pauses = 0.0
    t = 0.0
    for stretch in job.activity:
        seg = max(0.0, min(stretch.duration_s, held - t, active_until - t))
        if stretch.util_pct < threshold:
            pauses += seg
        t += stretch.duration_s
    tail = max(0.0, held - active_until)
    return gpus * pauses / 3600.0, gpus * tail / 3600.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", nargs="?", default=str(DEFAULT))
    args = parser.parse_args(argv)
    sc: Scenario = load_scenario(args.scenario)
    if sc.idle is None:
        print("the scenario has no idle policy", file=sys.stderr)
        return 2
    kw = sc.simulator_kwargs()
    on = simulate(sc.inventory, sc.jobs, **kw)
    off = simulate(sc.inventory, sc.jobs, **{**kw, "idle": None})
    horizon = sc.horizon_s or float(off.summary["end_s"])
    threshold = sc.idle.default.threshold_pct
    by_name = {j.name: j for j in sc.jobs}

    pauses_h = tail_h = 0.0
    for row in off.jobs.itertuples():
        job = by_name[row.name]
        if job.kind is not JobKind.LEASE or row.start_s is None or row.start_s != row.start_s:
            continue
        end = row.finish_s if row.finish_s == row.finish_s and row.finish_s is not None else horizon
        p, t = idle_hours(job, float(row.start_s), float(end), threshold)
        pauses_h += p
        tail_h += t

    reclaimed_h = 0.0
    false = 0
    reclaims = 0
    for row in on.jobs.itertuples():
        job = by_name[row.name]
        if row.reclaimed_s is None or row.reclaimed_s != row.reclaimed_s:
            continue
        reclaims += 1
        natural_end = min(horizon, float(row.start_s) + (job.runtime_s if job.runtime_s is not None else horizon))
        reclaimed_h += job.resources.total_milli / GPU_MILLI * max(0.0, natural_end - float(row.reclaimed_s)) / 3600
        if float(row.reclaimed_s) < float(row.start_s) + job.active_until_s():
            false += 1

    def batch_wait(res_jobs: object) -> float:
        frame = res_jobs  # pandas DataFrame
        sub = frame[frame["kind"] == "training"]["queue_s"].dropna()  # type: ignore[index]
        return float(sub.mean()) / 60.0 if len(sub) else float("nan")

    leases = sum(1 for j in sc.jobs if j.kind is JobKind.LEASE)
    print(f"Scenario {sc.name}: {sc.inventory.gpu_count()} GPUs, {leases} leases, "
          f"{len(sc.jobs) - leases} batch jobs, horizon {horizon / 3600:.1f} h; idle window "
          f"{sc.idle.default.window_s / 60:.0f} min, warning {sc.idle.default.warning_s / 60:.0f} min, "
          f"threshold {threshold:g} %")
    print(f"{'idle GPU-hours (no reclamation)':42s} {pauses_h + tail_h:7.2f}  "
          f"(tail after last activity {tail_h:.2f}, pauses and data-loading dips {pauses_h:.2f})")
    share = 100.0 * reclaimed_h / tail_h if tail_h else 0.0
    print(f"{'GPU-hours reclaimed':42s} {reclaimed_h:7.2f}  ({share:.0f} % of the idle tail; "
          f"the rest is the window + warning each lease is allowed)")
    print(f"{'reclaims / warnings':42s} {reclaims:4d} / {int(on.jobs['idle_warnings'].sum())}")
    print(f"{'false reclaims (before last activity)':42s} {false:4d}")
    print(f"{'batch jobs: mean queueing delay (min)':42s} {batch_wait(on.jobs):7.1f} with reclamation, "
          f"{batch_wait(off.jobs):.1f} without")
    print(f"{'GPU-hours allocated':42s} {on.summary['gpu_h_allocated']:7.2f} with, "
          f"{off.summary['gpu_h_allocated']:.2f} without; cycles {on.cycles}")
    return 0 if false == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
