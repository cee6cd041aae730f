"""Progress reports of simulated jobs (issue 16 item 4): what a training loop would report, not the truth.

A trace has no progress reports, so the simulator makes them up — honestly, not flatteringly. A job
of true runtime ``T`` (seconds, the trace's) that reports at all:

* spends its first ``startup_share x T`` seconds starting up (imports, data loading, compiling):
  time that counts as run but not as progress — so a rate read from its reports projects it long,
  most of all early on;
* then progresses evenly: ``fraction = (ran - startup) / (T - startup)``, its true share done;
* reports every ``every_s`` seconds of its run (the first report after ``every_s``), each report's
  fraction off by a factor ``1 + u`` with ``u`` uniform in ``[-jitter, +jitter]``, drawn per report
  (a loss spike, a slow batch, an uneven epoch), clipped to 0..1;
* a share ``silent_share`` of the jobs never report (scripts without the call; leases never do).

Defaults: every 5 minutes, 10 % start-up, ±15 % jitter, a quarter of the jobs silent. Every draw is
seeded by ``(seed, job id, attempt, report number)`` — the same replay gives the same reports. A
resumed checkpointable job counts its earlier work in its fraction; each attempt starts up again.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..backfill.progress import ProgressFit, ProgressReport

__all__ = ["ProgressModel"]


@dataclass(frozen=True, slots=True)
class ProgressModel:
    """How simulated jobs report their progress (module doc).

    Attributes:
        every_s: seconds of run between two reports (> 0).
        startup_share: share of a job's true runtime spent starting up, no progress (0..1).
        jitter: each report's fraction is off by a uniform factor in ``1 ± jitter`` (>= 0).
        silent_share: share of jobs that never report (0..1), drawn per job.
        seed: the seed of every draw.
    """

    every_s: float = 300.0
    startup_share: float = 0.10
    jitter: float = 0.15
    silent_share: float = 0.25
    seed: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.every_s) and self.every_s > 0):
            raise ValueError(f"every_s must be > 0 seconds, not {self.every_s!r}")
        for name in ("startup_share", "silent_share"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be within 0..1, not {value!r}")
        if not (math.isfinite(self.jitter) and self.jitter >= 0):
            raise ValueError(f"jitter must be >= 0, not {self.jitter!r}")

    def reports(self, job_id: str) -> bool:
        """Whether the job ``job_id`` reports at all (a seeded draw per job)."""
        return random.Random(f"{self.seed}/{job_id}").random() >= self.silent_share

    def fraction(self, job_id: str, *, attempt: int, k: int, runtime_s: float, done_s: float = 0.0) -> float:
        """The fraction the ``k``-th report (1-based) of ``attempt`` says: true share done, then noise."""
        startup = self.startup_share * runtime_s
        work = runtime_s - startup
        true = 1.0 if work <= 0 else min(max((done_s + k * self.every_s - startup) / work, 0.0), 1.0)
        u = random.Random(f"{self.seed}/{job_id}/{attempt}/{k}").uniform(-self.jitter, self.jitter)
        return min(max(true * (1 + u), 0.0), 1.0)

    def latest(self, job_id: str, *, attempt: int, start: datetime, ran_s: float, runtime_s: float,
               done_s: float = 0.0, previous: ProgressReport | None = None) -> ProgressReport | None:
        """The latest report of a job running since ``start`` for ``ran_s`` seconds in this ``attempt``,
        with the line through every report of the attempt (``ProgressReport.fit``, as the edge keeps it).

        Args:
            job_id: the job (seeds its draws).
            attempt: its attempt (a restart reports afresh).
            start: when this attempt started (UTC).
            ran_s: seconds it has run in this attempt.
            runtime_s: its true runtime, all attempts together (seconds).
            done_s: seconds of work done by earlier attempts (checkpointable jobs).
            previous: an earlier result of this call for the same attempt (its line is carried on).

        Returns:
            Its last report so far, or None (a silent job, none due yet, or no runtime).
        """
        k = int(ran_s // self.every_s)
        if k < 1 or not (math.isfinite(runtime_s) and runtime_s > 0) or not self.reports(job_id):
            return None
        done = 0
        fit = ProgressFit()
        if previous is not None and previous.at - timedelta(seconds=previous.ran_s) == start and previous.ran_s <= k * self.every_s:
            done, fit = round(previous.ran_s / self.every_s), previous.fit
            if done == k:
                return previous
        fraction = 0.0
        for i in range(done + 1, k + 1):
            fraction = self.fraction(job_id, attempt=attempt, k=i, runtime_s=runtime_s, done_s=done_s)
            fit = fit.add(i * self.every_s, fraction)
        at_s = k * self.every_s
        return ProgressReport(fraction=fraction, at=start + timedelta(seconds=at_s), ran_s=at_s, fit=fit)
