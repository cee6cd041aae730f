"""A quarter of a hub's history replayed by ``jupyter-sched simulate`` (hubadmin26 B7: ``usage --as-scenario``).

A synthetic quarter: ``--jobs`` arrivals (Poisson over 90 days; 20 users in 3 teams; 1, 2 or 4 GPUs; runtimes
10 min .. ``--hours``) on 16 GPUs of two models with a quota line per team. Until session 28 every cycle summed
every usage interval of the replay for fair share (and looked at every job for its first reason): O(jobs²) —
on the shared 2-core dev box 2,000 jobs took 21.5 s of CPU and 6,000 did not finish in 146 s. The replay now
keeps the closed intervals as a running decayed sum (as the engine's ``UsageLedger``).

Prints the CPU seconds of the replay and of the same replay with the old full sum per cycle (the baseline:
``FullSum``, the ``_usage`` of before; the first-reason look is the new one in both, so the ratio is the sum's
part alone), their ratio, and whether the two replays agree job by job. Measured (shared dev box, load ~12):
1,500 jobs 1.6 s vs 11.7 s (7.5x), same replay; 6,000 jobs at --hours 2: 6.8 s (before: > 146 s, unfinished).
Run: ``python benchmarks/sim_quarter_bench.py [--jobs 2000] [--hours 6]``.
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import datetime
from typing import Any

from jupyter_sched.accounting import budget_usage, decayed_gpu_seconds
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.sim.scenario import parse_scenario
from jupyter_sched.sim.simulator import Simulator


class FullSum(Simulator):
    """The baseline: every interval summed again at every cycle (the simulator's ``_usage`` until session 28)."""

    def _usage(self, now: datetime) -> UsageHistory:
        if not self._intervals:
            return UsageHistory()
        return UsageHistory(
            decayed_gpu_seconds_by_user=decayed_gpu_seconds(self._intervals, now=now,
                                                            half_life_s=self.usage_half_life_s),
            gpu_hours_this_period=budget_usage(self._intervals, self.quotas.budgets, now=now))


def quarter(jobs: int, hours: float, seed: int = 1) -> dict[str, Any]:
    """The synthetic quarter's scenario document."""
    rng = random.Random(seed)
    t, arrivals = 0.0, []
    for i in range(jobs):
        t += rng.expovariate(jobs / (90 * 86400))
        arrivals.append({"name": f"j-{i}", "user": f"u{rng.randint(1, 20)}", "team": rng.choice(["cv", "nlp", "rl"]),
                         "gpus": rng.choice([1, 1, 2, 4]), "submit": round(t, 3),
                         "runtime": round(rng.uniform(600, hours * 3600), 3), "time_limit": 8 * 3600})
    return {"name": "quarter", "start": "2026-10-01T00:00:00Z",
            "cluster": {"nodes": [{"name": "a", "model": "A100-80GB", "gpus": 8},
                                  {"name": "h", "model": "H100-80GB", "gpus": 8}]},
            "quotas": [{"team": "cv", "guaranteed": 6}, {"team": "nlp", "guaranteed": 6}, {"team": "rl", "guaranteed": 4}],
            "jobs": arrivals}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--hours", type=float, default=6.0, help="longest runtime (h); 6 loads 16 GPUs ~100 %%")
    args = parser.parse_args()
    scenario = parse_scenario(quarter(args.jobs, args.hours))
    out = {}
    for name, cls in (("running sums", Simulator), ("full sum (baseline)", FullSum)):
        start = time.process_time()
        result = cls(scenario.inventory, scenario.jobs, **scenario.simulator_kwargs()).run()
        out[name] = (time.process_time() - start, result)
        print(f"{name:20s} {out[name][0]:7.1f} s CPU  {result.cycles} cycles  {len(result.jobs)} jobs")
    (new, a), (old, b) = out.values()
    same = a.jobs.drop(columns=["job_id"]).equals(b.jobs.drop(columns=["job_id"]))
    print(f"baseline / running sums: {old / max(new, 1e-9):.1f}x; the two replays agree job by job: {same}")
    print(a.teams.to_string(index=False))


if __name__ == "__main__":
    main()
