"""Runtime estimates learned from past runs, for ETAs (a feedback loop over the accounting history).

Declared time limits are upper bounds users pad generously (Tsafrir, Etsion & Feitelson,
"Backfilling using system-generated predictions rather than user runtime estimates", IEEE TPDS
2007: the average of a user's two last runtimes predicts far better than their estimates). This
module keeps, per *key* — the user and what they run (script, notebook or command, and the GPU
request) — the runtimes of finished runs, and predicts a new run's runtime as:

1. the median runtime of the last runs with the same key (same user, same program, same request);
2. else the job's limit times the user's median ratio ``runtime / limit`` over their last runs
   (a user who declares twice what they need is read as such);
3. else nothing (the limit is used).

A prediction is never above the job's limit (the job is stopped there). Pure and deterministic;
the edge feeds it finished runs (the engine from its store, the simulator as jobs end) and passes
the predictions in ``Snapshot.runtime_estimates``.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Hashable

from ..model import JobSpec

__all__ = ["RuntimeHistory", "run_key"]

KEEP = 8
"""Runs remembered per key and per user (the recent past predicts best)."""


def run_key(spec: JobSpec) -> tuple[Hashable, ...]:
    """The identity of "the same run again": user, program and GPU request."""
    program = spec.script or spec.notebook or (spec.command[0] if spec.command else "") or spec.name
    req = spec.resources
    return (spec.user, program, req.gpus, req.gpu_milli, req.workers, req.gpu_models)


class RuntimeHistory:
    """Finished runs per key and per user, and predictions from them (module doc)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[Hashable, ...], deque[float]] = {}
        self._ratio_by_user: dict[str, deque[float]] = {}

    def learn(self, spec: JobSpec, runtime_s: float, limit_s: float | None) -> None:
        """Remember that a run of ``spec`` took ``runtime_s`` seconds under ``limit_s`` (None: none)."""
        if runtime_s <= 0:
            return
        self._by_key.setdefault(run_key(spec), deque(maxlen=KEEP)).append(runtime_s)
        if limit_s:
            self._ratio_by_user.setdefault(spec.user, deque(maxlen=KEEP)).append(min(1.0, runtime_s / limit_s))

    def predict(self, spec: JobSpec, limit_s: float | None) -> float | None:
        """Expected runtime of a run of ``spec`` in seconds, at most ``limit_s`` (None: no history)."""
        same = self._by_key.get(run_key(spec))
        guess: float | None = None
        if same:
            guess = statistics.median(same)
        elif limit_s and (ratios := self._ratio_by_user.get(spec.user)):
            guess = limit_s * statistics.median(ratios)
        if guess is None:
            return None
        return guess if limit_s is None else min(guess, limit_s)
