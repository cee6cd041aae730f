"""Runtime estimates learned from past runs, for ETAs (a feedback loop over the accounting history).

Declared time limits are upper bounds users pad generously (Tsafrir, Etsion & Feitelson,
"Backfilling using system-generated predictions rather than user runtime estimates", IEEE TPDS
2007: the average of a user's two last runtimes predicts far better than their estimates). This
module keeps the finished runs — per *key* (the user and what they run: script, notebook or
command, and the GPU request), per user (runtime and limit), and the last runs of everybody —
and predicts a run's runtime from one of these *predictors*, each a set of sample runtimes:

* *same run*: the runtimes of the last runs with the same key;
* *padding*: the job's limit times each of the user's last ratios ``runtime / limit`` (a user who
  declares twice what they need is read as such);
* *linear*: the line ``runtime = a * limit + b`` fitted (least squares) to the user's last runs,
  plus each run's residual — once the user's runs have at least :data:`LINEAR_MIN_RUNS` and two
  different limits. It reads both a user who pads by a factor and one who rounds up to the hour
  (``b`` about minus half an hour), which the ratio alone cannot.

The guess is the median of the chosen predictor's samples (capped by the limit). The same run is
chosen unless another predictor has predicted this user's own recent runs better (the median
relative error of each over the user's last runs, scored as each run finished, before it was
learnt — so the choice adapts per user); else the one with the best record; else nothing (the
limit is used).

A *running* job is predicted given what it already ran (``ran_s``): the median of the chosen
predictor's samples longer than that — the conditional remainder of the user's own distribution,
not a jump to the limit the moment the job passes the median. When every sample is shorter than
what it ran, the unconditional guess is returned (below ``ran_s``): the core then re-estimates it
to its limit and says so (:func:`~jupyter_sched.scheduling.runtimes.time_left`). A running job of
a user with no finished run is predicted the same way from everybody's recent ratios (limit x
each ratio); a queued one keeps its limit, and with no finished run at all so does every job —
no runtime is guessed without data (a "halfway to the limit" prior would have helped the replays
below, which start with an empty history, but it is a guess that no run supports).

On the loaded replays of ``benchmarks/jct_loaded.py`` (default profile; 20 replays: the main one,
9 sweep and 10 held-out variants) the linear predictor, the conditioning on elapsed time and the
ratios of everybody for users without runs together cut the ETA error (median absolute error over
the median wait) from 37 % to 28 % on average (main replay 29 % to 27 %); each part helps (without
the conditioning 32 %, without the line 35 %, without everybody's ratios 28 % but a worse median),
and average JCT against SJF-oracle went from +8.1 % to +6.7 % (the fair order counts each user's
next job by the line too).

A prediction is never above the job's limit (the job is stopped there). Pure and deterministic;
the edge feeds it finished runs (the engine from its store, the simulator as jobs end) and passes
the predictions in ``Snapshot.runtime_estimates``.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import deque
from collections.abc import Hashable

from ..model import JobSpec

__all__ = ["LINEAR_MIN_RUNS", "RuntimeHistory", "run_key"]

KEEP = 8
"""Runs remembered per key and per user (the recent past predicts best)."""
POOLED = 4 * KEEP
"""Runs of all users remembered for users without runs of their own."""
LINEAR_MIN_RUNS = 3
"""Runs (with at least two different limits) a user needs before the linear predictor is fitted."""


def run_key(spec: JobSpec) -> tuple[Hashable, ...]:
    """The identity of "the same run again": user, program and GPU request."""
    program = spec.script or spec.notebook or (spec.command[0] if spec.command else "") or spec.name
    req = spec.resources
    return (spec.user, program, req.gpus, req.gpu_milli, req.workers, req.gpu_models)


class RuntimeHistory:
    """Finished runs per key, per user and of everybody, and predictions from them (module doc)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[Hashable, ...], deque[float]] = {}
        self._runs_by_user: dict[str, deque[tuple[float, float]]] = {}  # (runtime, limit), seconds
        self._pooled: deque[tuple[float, float]] = deque(maxlen=POOLED)
        self._errors: dict[tuple[str, str], deque[float]] = {}  # (user, predictor) -> relative errors
        # (run key, limit) -> (the chosen predictor's samples, sorted; from the user's own runs?) or
        # None: what every job of that key asks until the next learn (the engine asks it for every
        # live job each cycle; a running job's conditional median is then a bisection)
        self._memo: dict[tuple[Hashable, ...], tuple[list[float], bool] | None] = {}

    def learn(self, spec: JobSpec, runtime_s: float, limit_s: float | None) -> None:
        """Remember that a run of ``spec`` took ``runtime_s`` seconds under ``limit_s`` (None: none)."""
        if runtime_s <= 0:
            return
        self._memo.clear()
        for name, samples in self._samples(spec, limit_s).items():  # score each predictor before learning
            guess = statistics.median(samples)
            self._errors.setdefault((spec.user, name), deque(maxlen=KEEP)).append(abs(guess - runtime_s) / runtime_s)
        self._by_key.setdefault(run_key(spec), deque(maxlen=KEEP)).append(runtime_s)
        if limit_s:
            run = (min(runtime_s, limit_s), limit_s)
            self._runs_by_user.setdefault(spec.user, deque(maxlen=KEEP)).append(run)
            self._pooled.append(run)

    def predict(self, spec: JobSpec, limit_s: float | None, ran_s: float = 0.0) -> float | None:
        """Expected runtime in seconds of a run of ``spec``, at most ``limit_s`` (None: no history).

        ``ran_s``: seconds the run has already run (a running job; 0 for a queued one). The result
        is then the expected runtime *given* that (longer than ``ran_s`` while the history knows
        runs that long; else the unconditional guess, at most ``ran_s`` — module doc).
        """
        key = (run_key(spec), limit_s)
        if key in self._memo:
            chosen = self._memo[key]
        else:
            chosen = self._memo[key] = self._chosen(spec, limit_s)
        if chosen is None:
            return None
        samples, own = chosen
        if not own and ran_s <= 0:
            return None  # a queued job of a user without runs keeps its limit
        return _given(samples, ran_s)

    def typical(self, spec: JobSpec, limit_s: float | None) -> float | None:
        """The unconditional expected runtime of a run of ``spec`` (the median of the samples a
        running job is predicted from; None: none) — what :meth:`predict` gives before it ran."""
        key = (run_key(spec), limit_s)
        chosen = self._memo[key] if key in self._memo else self._memo.setdefault(key, self._chosen(spec, limit_s))
        return None if chosen is None else _given(chosen[0], 0.0)

    def _chosen(self, spec: JobSpec, limit_s: float | None) -> tuple[list[float], bool] | None:
        """The samples a run of ``spec`` is predicted from, sorted, and whether they are the user's
        own (else everybody's ratios: :meth:`_prior`); None: nothing to predict from."""
        samples = self._samples(spec, limit_s)
        if samples:
            name = self._choose(spec.user, {n: statistics.median(s) for n, s in samples.items()})
            return sorted(samples[name]), True
        pooled = self._prior(limit_s)
        return None if pooled is None else (sorted(pooled), False)

    def _choose(self, user: str, guesses: dict[str, float]) -> str:
        """The predictor for ``user``: the same run unless another has done better (module doc)."""
        errors = {name: statistics.median(e) if (e := self._errors.get((user, name))) else None for name in guesses}
        if "same" in guesses and (errors["same"] is None or errors.get("padding") is None):
            return "same"
        return min(guesses, key=lambda n: (math.inf if errors[n] is None else errors[n], n != "same", n != "padding"))

    def _prior(self, limit_s: float | None) -> list[float] | None:
        """Samples for a running job of a user without runs: ``limit_s`` times everybody's recent
        ratios (module doc); None without a limit or with no finished run at all."""
        if not limit_s or not self._pooled:
            return None
        return [limit_s * runtime / limit for runtime, limit in self._pooled]

    def _samples(self, spec: JobSpec, limit_s: float | None) -> dict[str, list[float]]:
        """``{"same": [...], "padding": [...], "linear": [...]}``: each predictor's sample runtimes
        for a run of ``spec`` under ``limit_s``, where it has some (each in [1 s, ``limit_s``])."""
        out: dict[str, list[float]] = {}
        same = self._by_key.get(run_key(spec))
        if same:
            out["same"] = list(same)
        runs = self._runs_by_user.get(spec.user)
        if limit_s and runs:
            out["padding"] = [limit_s * runtime / limit for runtime, limit in runs]
            line = _fit(runs)
            if line is not None:
                a, b = line
                out["linear"] = [a * limit_s + b + (runtime - (a * limit + b)) for runtime, limit in runs]
        if limit_s is not None:
            out = {name: [min(max(x, 1.0), limit_s) for x in xs] for name, xs in out.items()}
        return out


def _fit(runs: deque[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares ``(a, b)`` of ``runtime = a * limit + b`` over ``runs`` (None: too few, or one limit)."""
    if len(runs) < LINEAR_MIN_RUNS:
        return None
    limits = [limit for _, limit in runs]
    mean_l = statistics.fmean(limits)
    spread = sum((x - mean_l) ** 2 for x in limits)
    if spread <= 0:
        return None
    mean_r = statistics.fmean(runtime for runtime, _ in runs)
    a = sum((limit - mean_l) * (runtime - mean_r) for runtime, limit in runs) / spread
    return a, mean_r - a * mean_l


def _given(ordered: list[float], ran_s: float) -> float:
    """The median of the sorted ``ordered`` samples longer than ``ran_s`` (all of them when
    ``ran_s`` is 0); the median of all when none is (the job outran every one)."""
    first = bisect.bisect_right(ordered, ran_s) if ran_s > 0 else 0
    if first == len(ordered):
        first = 0
    n = len(ordered) - first
    mid = first + n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
