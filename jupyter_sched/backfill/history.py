"""Runtime estimates learned from past runs, for ETAs (a feedback loop over the accounting history).

Declared time limits are upper bounds users pad generously (Tsafrir, Etsion & Feitelson,
"Backfilling using system-generated predictions rather than user runtime estimates", IEEE TPDS
2007: the average of a user's two last runtimes predicts far better than their estimates). This
module keeps the finished runs per *key* — the same user running the same program with the same
request (:func:`run_key`: the script or notebook, or the whole command line, and the GPU request;
issue 16 item 4: "past runs of the same user, script or notebook and request") — and predicts a
run's runtime from the runs of its own key only, with one of these *predictors*, each a set of
sample runtimes:

* *same run*: the runtimes of the key's last runs;
* *padding*: the job's limit times each of those runs' ratios ``runtime / limit`` (the same work
  declared with a different limit: a user who declares twice what they need is read as such);
* *linear*: the line ``runtime = a * limit + b`` fitted (least squares) to the key's runs, plus
  each run's residual — once the key has at least :data:`LINEAR_MIN_RUNS` runs and two different
  limits. It reads both a limit that tracks the work by a factor and one rounded up to the hour
  (``b`` about minus half an hour), which the ratio alone cannot.

No run of another program, another request or another user is ever a sample (new user 5,
findings 4 and 8: a ``python -c`` loop of 600 s was predicted from a 3-s ``python -c`` — the key
was the program's first word — and a ``sleep 60`` from shorter runs of other commands scaled to
its limit, so the first ETA after submitting said "now", and a job queued ahead was projected to
end the moment it started). A job without runs of its key keeps its limit, queued or running —
with one exception, earned per user: the *first run* of new work is predicted from the user's
own runs of any program — the *padding* (its limit times each of their ratios ``runtime /
limit``) or the *linear* predictor fitted to them — once that guess has predicted the user's own
first runs better than their limits did and within :data:`FIRST_RUN_MAX_ERROR` (median
relative error over at least :data:`FIRST_RUNS_SCORED` of them, each scored before it was learnt;
the better of the two). A
user who declares twice what they need, or rounds up to the hour, is read as such; a user whose
limits say nothing about their runs keeps the limit; nobody else's runs are ever used
(``benchmarks/jct_loaded.py``, default profile: main replay 116 % -> 71 %, declared limits alone
151 %; session 7 notes of issue 16).

The guess is the median of the chosen predictor's samples (capped by the limit, never below
:data:`MIN_RUNTIME_S`). The same run is chosen unless another predictor has predicted this
user's own recent runs better (the median relative error of each over the user's last runs,
scored as each run finished, before it was learnt — so the choice adapts per user: how a user
declares limits is a habit, though the samples are always the key's own); else the one with
the best record.

A *running* job is predicted given what it already ran (``ran_s``): the median of the chosen
predictor's samples longer than that — the conditional remainder of the key's distribution, not
a jump to the limit the moment the job passes the median. When every sample is shorter than
what it ran, the unconditional guess is returned (below ``ran_s``): the core then re-estimates
it to its limit and says so (:func:`~jupyter_sched.scheduling.runtimes.time_left`).

Running jobs (since session 9): a running first run of new work whose user has not earned the
first-run guess yet is predicted from the user's own padding all the same — conditioned on what
it ran, so it corrects itself: once the job outruns the user's runs it is projected to its limit
again — unless the user's record shows that padding missing their first runs (scored, as above,
worse than the limit or beyond :data:`FIRST_RUN_MAX_ERROR`). A user's first finished run can
never be scored (there was nothing to guess it from), so until their second one every running
job of theirs was projected to its limit: most of the error of a replay's first hours (with the
running jobs' true remaining times the default profile's error is 13 % on the main replay, 2 % on
the dev mean). Queued jobs keep the earning rule: a guess that is wrong before a job starts moves
every ETA behind it, and nothing corrects it until it runs (new user 5, findings 4 and 8).
``benchmarks/jct_loaded.py``, default profile: main replay 49 % -> 45 %, dev 48 mean 37 % ->
34 %, held-out 10 mean 47 % -> 40 %.

Cold start from the population (since session 14): a *running* job of a user with no finished
run at all — nothing of theirs is known — is read from everybody's runs of the same size: its limit
times the ratios ``runtime / limit`` of the last runs (any user, any program) with the same GPU
request and a time limit in the same power-of-two bucket, else of the same GPU request, else (a GPU job)
GPU runs of any size in its limit's bucket — never a CPU-only run, and only under limits within
:data:`LIMIT_REACH` of its own (session 25: hubadmin25 B11, new user 25 N6) — one sample per user (their median ratio), so one user's flood of short runs is one vote; conditioned on what it ran, so it corrects itself once the job outruns them (a hierarchical
prior; the guess says "as other users' runs of its size did": :data:`POPULATION_RUNS`); once it
outran every one of them it is projected to its limit (no "ran longer than" note: nothing of its
user's was guessed). The user's own runs replace it from their first finished run on
(the rule above). Queued jobs and users whose padding failed them keep their limits (new user 5,
findings 4 and 8: a queued job told "now" from others' runs moved every ETA behind it, uncorrected
until it ran). ``benchmarks/jct_loaded.py``, default profile, ETA median abs error over the median
wait: main replay 45.4 % -> 37.3 %, dev 48 mean 33.7 % -> 33.3 %, held-out 10 mean 38.0 % -> 37.0 %;
JCT unchanged (running jobs' ends are not what admission reads).

Since session 16 (new user 15, N5: ``sleep 600`` under a 20m limit was guessed to end after 1.4 s,
0.12 % of its limit as its user's ``true`` and 2-s test runs did, and the job behind it read "ETA
now" for a minute): a key's runs predict from :data:`MIN_KEY_RUNS` of them on; runs that ended
within :data:`MIN_PADDING_RATIO` of their limits (or, since session 19, in less than
:data:`MIN_PADDING_RUNTIME_S`) are no padding (neither the user's for their other
programs nor everybody's prior); and the core projected no learnt end within a minute of now (a floor
dropped in session 25: new user 25, N1/N2 — it chained a batch's ETAs on one GPU and put "in 59s" on a
5-s run's own line). ``benchmarks/jct_loaded.py``, default
profile, same run: main replay 37 % -> 45 %, held-out mean 37 % -> 35 % (median 40 % -> 33 %),
JCT unchanged (the 1 % floor alone changes nothing there; the second run of a key moves both).
Learning only from the key's own runs (``other_runs=False``) cost main 37 % -> 151 %, held-out
mean 37 % -> 73 % and avg JCT +2.1 % -> +5.0 % vs SJF (the fair order reads the learnt work): on
that trace 53 of 60 jobs are first runs.

Figures (``benchmarks/jct_loaded.py``, 20 loaded replays): see the notes of issue 16; the
predictors read the key's runs only since session 6 (before, a user's runs of *any* program fed
the padding and the line, and everybody's ratios a running job of a user without runs).

Since session 17 (new user 17, N15: a ``python -m http.server`` service was told to end "at ~75 % of
its time limit, as its owner's other runs did", and ``a-fair2`` the same, its twin ``a-fair1`` having
just been stopped at its limit): a *service* (kind inference, or a job with a port: it runs until
stopped) is never read from any run — it runs to its limit; nor is a run whose key's last run ran
to its limit (:meth:`RuntimeHistory.ran_to_limit`: the same work again is expected to do the same),
until a run of that key ends before its limit.

A prediction is never above the job's limit (the job is stopped there). Pure and deterministic;
the edge feeds it finished runs (the engine from its store, the simulator as jobs end) and passes
the predictions in ``Snapshot.runtime_estimates``.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import deque
from collections.abc import Hashable, Iterable

from ..model import JobKind, JobSpec

__all__ = ["GPU_RUNS_CLASS", "LIMIT_REACH", "LINEAR_MIN_RUNS", "MIN_KEY_RUNS", "MIN_PADDING_RATIO", "MIN_PADDING_RUNTIME_S", "MIN_RUNTIME_S", "OTHER_RUNS", "POPULATION_GPU_RUNS", "POPULATION_RUNS", "Reading", "SAME_RUNS", "RuntimeHistory",
           "run_key", "runs_to_limit", "within_reach"]

SAME_RUNS = "same"
"""A guess's origin (:meth:`RuntimeHistory.origin`): past runs of its key — the same user, program and request."""
OTHER_RUNS = "other"
"""A guess's origin: its user's runs of other programs, as fractions of their time limits."""
POPULATION_RUNS = "population"
"""A guess's origin: everybody's runs of the same size, as fractions of their time limits (a running
job of a user with no finished run; module doc, "cold start from the population")."""
POPULATION_GPU_RUNS = "population_gpus"
"""A guess's origin: everybody's GPU runs of any size under time limits like its own (the cold-start
prior's last class, :func:`size_classes`), as fractions of their limits."""

KEEP = 8
"""Runs remembered per key, and prediction errors per user and predictor (the recent past predicts best)."""
FIRST_RUNS_SCORED = 1
"""First runs of new work on which a user's padding must have been scored (and have beaten their
limits, within :data:`FIRST_RUN_MAX_ERROR`) before it predicts one. 1 since session 8: with 3, a
user's padding was earned only after their fourth finished run, so most running jobs of a loaded
replay were still projected to their limits (``benchmarks/jct_loaded.py``, default profile, ETA
median abs error over the median wait, 3 -> 1 with the 25 % bound: main replay 71 % -> 49 %,
held-out 10 mean 51 % -> 47 %, sweep 9 mean 50 % -> 39 %; avg JCT vs SJF main +4.0 % -> +2.1 %)."""
FIRST_RUN_MAX_ERROR = 0.25
"""The most a user's own guess may have missed their first runs by (median relative error) to predict
one: a user whose short test runs (``true``, ``sleep 5`` under 30-min limits) "predict" each other
within 50 % has not shown how they pad real work (new user 5, findings 4 and 8)."""
POPULATION_USERS = 16
"""Users whose runs make the cold-start prior of a size class (module doc): the most recent, each one
vote (the median ratio of their last :data:`KEEP` runs of the class), so that one user's flood of
short runs is one sample, not everybody's prior (red team 5, finding 4)."""
MIN_PADDING_RATIO = 0.01
"""Runs that ended within this share of their time limit (``true``, ``sleep 5`` under 30 minutes) are
tests, not a record of how their user pads real work: neither the user's padding for their other
programs nor everybody's cold-start prior reads them (new user 15, N5: ``sleep 600`` under 20
minutes was projected to end after 1.4 s — 0.12 % of its limit, as those runs did — and the job
behind it was told "now" for a minute)."""
MIN_PADDING_RUNTIME_S = 15.0
"""Runs shorter than this (s) are no padding either, whatever share of their limit they ran: a run
of a few seconds measures mostly its start (interpreter, imports, a CUDA context), not how its user
pads the limits of real work. A 4-s smoke test under a 5-min limit (1.3 %, just above
:data:`MIN_PADDING_RATIO`) alone made three 30-min jobs of its user look like they end in 18 s
(new user 19, N13). A key's own runs (the same work again) are read however short."""
MIN_KEY_RUNS = 2
"""Finished runs of its key (the same user, program and request) a job's runtime is learnt from:
below it the job keeps its time limit (new user 15, N5: one ``sleep 5`` said nothing about a job's
next run; Tsafrir et al. average a user's *two* last runs)."""
LINEAR_MIN_RUNS = 3
"""Runs (with at least two different limits) a key needs before the linear predictor is fitted."""
LIMIT_REACH = 4.0
"""How far (a factor, each way) a job's time limit may lie outside the range of the limits of the runs its
end is read from as shares of their limits (padding, the fitted line, everybody's prior) and still be read
so: further out, the share is an extrapolation — runs of a user's other programs under 1-5 min limits
made a 366-day job "projected end in 49 days" and a 1-h one "in 8 min" (new user 25, N6). Past it the job
keeps its limit ("no similar past runs"); the key's own runtimes (the *same run* predictor, not scaled by
the limit) are still read. 4 from the data (``benchmarks/jct_loaded.py``, session 25): the loaded replay's
limits run 2 h to 60 h (the runtime rounded up to the hour, doubled by some users); of its 72,050 readings
of a share, 16,318 were for a limit outside the learnt range, 2,730 beyond 4x, 1,560 beyond 8x (at most 10x),
and its ETA error is the same at 4, 8 and no reach at all, while 2 moves the second workload's median
(50 % -> 54 %); 4 is the least that leaves the replay as it was. A minute-long try never reaches an hour."""
MIN_RUNTIME_S = 1.0
"""The least any sample or prediction is (s): the core's least time a job still runs once it
holds GPUs (:data:`~jupyter_sched.scheduling.runtimes.MIN_LEFT_S`), so a queued job is never
projected to end when it starts — a ``true`` measured at 0.01 s is counted as 1 s."""


GPU_RUNS_CLASS = -2
"""The size of the cold-start prior's last class of a GPU run: GPU runs of any size, in its limit bucket only."""


def size_classes(spec: JobSpec, limit_s: float) -> tuple[tuple[int, int], ...]:
    """The cold-start prior's classes of a run, most specific first: ``(milli-GPUs, limit bucket)``
    (limits in powers of two from 30 min: 30-60 min, 1-2 h, 2-4 h, ...; -1 below 30 min),
    ``(milli-GPUs, -2)`` (its size, any limit) and, for a GPU run, ``(GPU_RUNS_CLASS, limit bucket)``: GPU
    runs of any size under limits like its own (said so: :data:`POPULATION_GPU_RUNS`). Until session 25
    the last class ``(-1, None)`` held every run, 0-GPU ones included: a 2-GPU training job's end was
    "learnt" from 0-GPU 30-s sleeps and said "as other users' runs of its size did" (hubadmin25 B11).
    The GPU-runs class keeps what the old last class gave the loaded replay (``benchmarks/jct_loaded.py``:
    ETA error 36 % with it, 41 % with runs of its own size only; session 25 notes)."""
    milli = spec.resources.total_milli
    bucket = int(math.log2(max(limit_s, 1.0) / 1800.0)) if limit_s >= 1800.0 else -1
    return ((milli, bucket), (milli, -2), (GPU_RUNS_CLASS, bucket)) if milli > 0 else ((milli, bucket), (milli, -2))


def within_reach(limit_s: float, limits: Iterable[float], reach: float | None = None) -> bool:
    """Is ``limit_s`` inside the range of ``limits`` widened by :data:`LIMIT_REACH` (``reach``) each way?
    A runtime read as a share of its limit says nothing about a limit far outside the ones it was learnt
    under (new user 25, N6). False when ``limits`` is empty."""
    found = [x for x in limits if x > 0]
    if not found:
        return False
    reach = LIMIT_REACH if reach is None else reach
    return min(found) / reach <= limit_s <= max(found) * reach


def run_key(spec: JobSpec) -> tuple[Hashable, ...]:
    """The identity of "the same run again": the user, the program and the request.

    The program is the script or the notebook (its path; a definition's runs differ in their
    parameters but are the same work), else the *whole* command line (``python -c <code>``:
    the first word names the interpreter, not the work), with the working directory; a job with
    none of these (the simulator's traces) is known by its name. The request is its shape: GPUs
    per worker, GPU share, workers or worker groups, GPU models and MIG profile — not the time
    limit, which the padding and linear predictors read.
    """
    if spec.script:
        program: tuple[Hashable, ...] = ("script", spec.script)
    elif spec.notebook:
        program = ("notebook", spec.notebook)
    elif spec.command:
        program = ("command", *spec.command)
    else:
        program = ("name", spec.name)
    req = spec.resources
    groups = tuple((g.name, g.gpus, g.workers) for g in req.groups)
    return (spec.user, spec.working_dir, program, req.gpus, req.gpu_milli, req.workers, groups, req.gpu_models,
            req.mig_profile)


def runs_to_limit(spec: JobSpec) -> bool:
    """A service — kind inference, or a job with a port —, which runs until it is stopped: no run of
    any work says when it ends but its limit (module doc, session 17; new user 17, N15)."""
    return spec.kind is JobKind.INFERENCE or spec.port is not None


class RuntimeHistory:
    """Finished runs per key, and predictions from them (module doc)."""

    def __init__(self, *, first_runs_scored: int = FIRST_RUNS_SCORED,
                 first_run_max_error: float = FIRST_RUN_MAX_ERROR, running_first: bool = True,
                 population: bool = True, other_runs: bool = True, min_key_runs: int = MIN_KEY_RUNS,
                 running_first_record: bool = False, min_padding_ratio: float = MIN_PADDING_RATIO,
                 min_padding_runtime_s: float = MIN_PADDING_RUNTIME_S) -> None:
        self.first_runs_scored = first_runs_scored  # the earning rule of first runs (module constants)
        self.first_run_max_error = first_run_max_error
        # other_runs False: nothing but the key's own runs is ever a sample (module doc, session 16)
        self.other_runs = other_runs
        # True: a running first run is read with its user's padding only once that has a record (tried
        # in session 16: main replay 37 % -> 41 %, held-out mean 37 % -> 41 %; not the default)
        self.running_first_record = running_first_record
        self.min_padding_ratio = min_padding_ratio  # runs shorter than this share of their limit: no padding
        self.min_padding_runtime_s = min_padding_runtime_s  # nor runs shorter than this, seconds (N13)
        self.running_first = running_first and other_runs  # False: session 8's rule, running first runs on their limits
        self.population = population and other_runs  # False: session 13's rule, a newcomer's running job on its limit
        self.min_key_runs = max(1, min_key_runs)  # runs of its key a guess needs (1: sessions 6-15)
        self._by_key: dict[tuple[Hashable, ...], deque[tuple[float, float | None]]] = {}  # (runtime, limit) s
        self._errors: dict[tuple[str, str], deque[float]] = {}  # (user, predictor) -> relative errors
        # (run key, limit) -> the chosen predictor's samples, sorted, or None: what every job of that
        # key asks until the next learn (the engine asks it for every live job each cycle; a running
        # job's conditional median is then a bisection)
        self._memo: dict[tuple[Hashable, ...], list[float] | None] = {}
        self._readings: dict[tuple[Hashable, ...], Reading] = {}  # (run key, limit) -> its reading, until the next learn
        self._cold: dict[tuple[int, float], tuple[list[float], str] | None] = {}  # (milli, limit) -> prior, origin
        self._user_runs: dict[str, deque[tuple[float, float]]] = {}  # user -> (runtime, limit) of last runs, any program
        # size class -> user -> (ratio runtime / limit, limit) of their last runs of that class (users by recency)
        self._classes: dict[tuple[int, int], dict[str, deque[tuple[float, float]]]] = {}
        self._at_limit: set[tuple[Hashable, ...]] = set()  # run keys whose last run ran to its limit (module doc)

    def ran_to_limit(self, spec: JobSpec) -> None:
        """Remember that a run of ``spec`` ran to its time limit (stopped there): until a run of its key
        ends before its limit, runs of that key are read from nothing but their limit (module doc,
        session 17). Called in the runs' order, with :meth:`learn`."""
        self._memo.clear()
        self._cold.clear()
        self._readings.clear()
        self._at_limit.add(run_key(spec))

    def learn(self, spec: JobSpec, runtime_s: float, limit_s: float | None) -> None:
        """Remember that a run of ``spec`` took ``runtime_s`` seconds under ``limit_s`` (None: none)."""
        if not runtime_s > 0 or not math.isfinite(runtime_s):
            return
        self._memo.clear()
        self._cold.clear()
        self._readings.clear()
        samples = self._samples(spec, limit_s, least=1)
        for name, xs in samples.items():  # score each predictor before learning
            guess = statistics.median(xs)
            self._errors.setdefault((spec.user, name), deque(maxlen=KEEP)).append(abs(guess - runtime_s) / runtime_s)
        if not samples and limit_s:  # a first run: would the user's own padding have beaten the limit?
            self._score_first(spec.user, runtime_s, limit_s)
        if limit_s:
            self._user_runs.setdefault(spec.user, deque(maxlen=KEEP)).append((min(runtime_s, limit_s), limit_s))
            for size in size_classes(spec, limit_s) if self._pads(min(runtime_s, limit_s), limit_s) else ():
                users = self._classes.setdefault(size, {})
                ratios = users.pop(spec.user, None) or deque(maxlen=KEEP)
                ratios.append((min(runtime_s, limit_s) / limit_s, limit_s))
                users[spec.user] = ratios  # the most recent last
                if len(users) > POPULATION_USERS:
                    del users[next(iter(users))]
        runtime = max(runtime_s, MIN_RUNTIME_S)
        self._at_limit.discard(run_key(spec))
        self._by_key.setdefault(run_key(spec), deque(maxlen=KEEP)).append(
            (min(runtime, limit_s) if limit_s else runtime, limit_s or None))

    def predict(self, spec: JobSpec, limit_s: float | None, ran_s: float = 0.0) -> float | None:
        """Expected runtime in seconds of a run of ``spec``, at most ``limit_s`` (None: no runs of its key).

        ``ran_s``: seconds the run has already run (a running job; 0 for a queued one). The result
        is then the expected runtime *given* that (longer than ``ran_s`` while the history knows
        runs that long; else the unconditional guess, at most ``ran_s`` — module doc).
        """
        return self.reading(spec, limit_s).predict(ran_s)

    def origin(self, spec: JobSpec, limit_s: float | None, ran_s: float = 0.0) -> str | None:
        """Where :meth:`predict`'s guess for the same arguments comes from: :data:`SAME_RUNS` (runs
        of its key: the same user, program and request), :data:`OTHER_RUNS` (its user's runs of
        other programs, read against their limits: an earned first-run guess, or a running first
        run's padding), :data:`POPULATION_RUNS` (a running job of a user without runs, from
        everybody's runs of its size) or None (no guess). The ETA's words say which (new user 11, N15: a guess
        from a user's 1-second ``echo`` runs was worded "as long as similar past runs did")."""
        return self.reading(spec, limit_s).origin(ran_s)

    def typical(self, spec: JobSpec, limit_s: float | None) -> float | None:
        """The unconditional expected runtime of a run of ``spec`` (the median of the samples a
        running job is predicted from; None: none) — what :meth:`predict` gives before it ran."""
        return self.reading(spec, limit_s).typical

    def reading(self, spec: JobSpec, limit_s: float | None) -> Reading:
        """What this history knows of runs of ``spec`` under ``limit_s``, whatever they already ran:
        :meth:`predict`, :meth:`origin` and :meth:`typical` answer from it (memoised until the next
        learn; a caller that keeps it per job asks again only when the job or the history changed)."""
        if runs_to_limit(spec):  # a service: its limit (module doc, session 17); its key says no kind nor port
            return _LIMIT_ONLY
        key = (run_key(spec), limit_s)
        found = self._readings.get(key)
        if found is None and key[0] in self._at_limit:  # its last run ran to its limit (module doc, session 17)
            found = self._readings[key] = _LIMIT_ONLY
        if found is None:
            chosen = self._chosen(spec, limit_s)
            running = chosen is None and bool(limit_s) and self.running_first
            found = self._readings[key] = Reading(
                own=len(self._by_key.get(key[0], ())) >= self.min_key_runs, chosen=chosen,
                running_first=self._running_first(spec.user, limit_s) if running and limit_s else None,
                cold=self._cold_start(spec, limit_s) if running and limit_s else None, running=running)
        return found

    def _chosen(self, spec: JobSpec, limit_s: float | None) -> list[float] | None:
        """The sorted samples a run of ``spec`` is predicted from (memoised until the next learn);
        None: its key has no runs."""
        key = (run_key(spec), limit_s)
        if key in self._memo:
            return self._memo[key]
        samples = self._samples(spec, limit_s)
        chosen = None
        if samples:
            name = self._choose(spec.user, samples)
            chosen = sorted(samples[name])
        elif self.other_runs and limit_s and (first := self._first_samples(spec.user, limit_s)) and \
                (earned := self._first_earned(spec.user, first)) is not None:
            chosen = sorted(first[earned])
        self._memo[key] = chosen
        return chosen

    def _running_first(self, user: str, limit_s: float) -> list[float] | None:
        """A *running* first run's samples when no guess is earned: the user's own padding, unless
        their record shows it missing their first runs (module doc, "running jobs"); None: the limit."""
        key = ("running-first", user, limit_s)
        if key in self._memo:
            return self._memo[key]
        padding = self._first_samples(user, limit_s).get("padding")
        errs = self._errors.get((user, "first:padding"))
        if padding and errs:
            err, limit = statistics.median(errs), statistics.median(list(self._errors[(user, "first:limit")])[-len(errs):])
            padding = padding if err <= self.first_run_max_error and err < limit else None
        elif padding and self.running_first_record:  # no first run of theirs scored yet: no record
            padding = None
        self._memo[key] = chosen = sorted(padding) if padding else None
        return chosen

    def _cold_start(self, spec: JobSpec, limit_s: float) -> tuple[list[float], str] | None:
        """A running job's samples when its user has no finished run (module doc, "cold start from
        the population"): ``limit_s`` times each user's median ratio in the most specific size
        class with runs whose limits ``limit_s`` is within reach of (:func:`within_reach`), with its origin
        (:data:`POPULATION_RUNS`: of its size; :data:`POPULATION_GPU_RUNS`: GPU runs of any size under limits
        like its own); None: the limit (a user with runs, or no such runs)."""
        if not self.population or self._user_runs.get(spec.user):
            return None
        key = (spec.resources.total_milli, limit_s)
        if key in self._cold:
            return self._cold[key]
        found = next(((size, users) for size in size_classes(spec, limit_s) if (users := self._classes.get(size))
                      and within_reach(limit_s, (limit for runs in users.values() for _, limit in runs))), None)
        top = max(limit_s, MIN_RUNTIME_S)
        self._cold[key] = chosen = None if found is None else (
            sorted(min(max(limit_s * statistics.median(r for r, _ in runs), MIN_RUNTIME_S), top)
                   for runs in found[1].values()),
            POPULATION_GPU_RUNS if found[0][0] == GPU_RUNS_CLASS else POPULATION_RUNS)
        return chosen

    def _first_samples(self, user: str, limit_s: float) -> dict[str, list[float]]:
        """A first run's samples from the user's own runs of any program: ``padding`` (``limit_s``
        times each ratio) and ``linear`` (the line fitted to them, with each run's residual); none where
        ``limit_s`` is out of reach of their limits (:func:`within_reach`)."""
        runs = [(runtime, limit) for runtime, limit in self._user_runs.get(user, ()) if self._pads(runtime, limit)]
        if not runs or not within_reach(limit_s, (limit for _, limit in runs)):
            return {}
        out = {"padding": [limit_s * runtime / limit for runtime, limit in runs]}
        line = _fit(runs)
        if line is not None:
            a, b = line
            out["linear"] = [a * limit_s + b + (runtime - (a * limit + b)) for runtime, limit in runs]
        top = max(limit_s, MIN_RUNTIME_S)
        return {name: [min(max(x, MIN_RUNTIME_S), top) for x in xs] for name, xs in out.items()}

    def _pads(self, runtime_s: float, limit_s: float) -> bool:
        """Is a finished run of ``runtime_s`` seconds under ``limit_s`` a record of how its user pads
        limits (not a test: at least :data:`MIN_PADDING_RATIO` of its limit and
        :data:`MIN_PADDING_RUNTIME_S` long)?"""
        return runtime_s >= self.min_padding_ratio * limit_s and runtime_s >= self.min_padding_runtime_s

    def _score_first(self, user: str, runtime_s: float, limit_s: float) -> None:
        """Score, on a first run of its key, the limit and each of the user's own guesses."""
        self._errors.setdefault((user, "first:limit"), deque(maxlen=KEEP)).append(abs(limit_s - runtime_s) / runtime_s)
        for name, xs in self._first_samples(user, limit_s).items():
            guess = statistics.median(xs)
            self._errors.setdefault((user, f"first:{name}"), deque(maxlen=KEEP)).append(
                abs(guess - runtime_s) / runtime_s)

    def _first_earned(self, user: str, available: Iterable[str]) -> str | None:
        """Of the ``available`` guesses, the user's own that has predicted their last first runs
        best, if better than their limits did (each scored on at least :data:`FIRST_RUNS_SCORED` of
        them); None: the limit."""
        limit = self._errors.get((user, "first:limit"))
        best: tuple[float, str] | None = None
        for name in available:
            errs = self._errors.get((user, f"first:{name}"))
            if not limit or not errs or len(errs) < self.first_runs_scored:
                continue
            err = statistics.median(errs)
            if err <= self.first_run_max_error and err < statistics.median(list(limit)[-len(errs):]) \
                    and (best is None or err < best[0]):
                best = (err, name)
        return None if best is None else best[1]

    def _choose(self, user: str, samples: dict[str, list[float]]) -> str:
        """The predictor for ``user``: the same run unless another has done better (module doc)."""
        errors = {name: statistics.median(e) if (e := self._errors.get((user, name))) else None for name in samples}
        if errors["same"] is None or errors.get("padding") is None:
            return "same"
        return min(samples, key=lambda n: (math.inf if errors[n] is None else errors[n], n != "same", n != "padding"))

    def _samples(self, spec: JobSpec, limit_s: float | None, least: int = 0) -> dict[str, list[float]]:
        """``{"same": [...], "padding": [...], "linear": [...]}``: each predictor's sample runtimes
        for a run of ``spec`` under ``limit_s`` from its key's runs, where it has at least ``least``
        (default: ``min_key_runs``) of them (each in [:data:`MIN_RUNTIME_S`, ``limit_s``]); ``padding`` and
        ``linear`` only where ``limit_s`` is within reach of those runs' limits (:func:`within_reach`)."""
        runs = self._by_key.get(run_key(spec))
        if not runs or len(runs) < (least or self.min_key_runs):
            return {}
        out: dict[str, list[float]] = {"same": [runtime for runtime, _ in runs]}
        limited = [(runtime, limit) for runtime, limit in runs if limit]
        if limit_s and limited and within_reach(limit_s, (limit for _, limit in limited)):
            out["padding"] = [limit_s * runtime / limit for runtime, limit in limited]
            line = _fit(limited)
            if line is not None:
                a, b = line
                out["linear"] = [a * limit_s + b + (runtime - (a * limit + b)) for runtime, limit in limited]
        top = math.inf if limit_s is None else max(limit_s, MIN_RUNTIME_S)
        return {name: [min(max(x, MIN_RUNTIME_S), top) for x in xs] for name, xs in out.items()}


class Reading:
    """What a :class:`RuntimeHistory` knows of the runs of one spec under one limit (its
    :meth:`~RuntimeHistory.reading`): a run's guess and its origin given what it already ran.

    Attributes:
        own: its key has the runs a guess needs (:data:`MIN_KEY_RUNS`): the origin is :data:`SAME_RUNS`.
        chosen: the sorted samples of its chosen predictor (its key's runs, or an earned first-run
            guess from its user's other runs); None: neither.
        running_first: without ``chosen``, the user's own padding a *running* first run is read with; None: none.
        cold: without ``chosen``, everybody's runs of its size (or GPU runs of any size under limits like
            its own) a *running* job of a user without runs is read with (module doc, "cold start from the
            population"), and which of the two (:data:`POPULATION_RUNS`, :data:`POPULATION_GPU_RUNS`); None: none.
        running: a running job may be read from ``running_first`` or ``cold`` (no ``chosen``, a
            limit, the rule on).
        typical: the unconditional guess (the median of ``chosen``); None: no ``chosen``.
    """

    __slots__ = ("chosen", "cold", "cold_origin", "own", "running", "running_first", "typical")

    def __init__(self, *, own: bool, chosen: list[float] | None, running_first: list[float] | None,
                 cold: tuple[list[float], str] | None, running: bool) -> None:
        self.own = own
        self.chosen = chosen
        self.running_first = running_first
        self.cold: list[float] | None = None if cold is None else cold[0]
        self.cold_origin = POPULATION_RUNS if cold is None else cold[1]
        self.running = running
        self.typical = None if chosen is None else _given(chosen, 0.0)

    def predict(self, ran_s: float = 0.0) -> float | None:
        """:meth:`RuntimeHistory.predict` of a run that already ran ``ran_s`` seconds."""
        if ran_s <= 0:  # a queued run: the unconditional guess
            return self.typical
        samples = self.chosen
        if samples is None and self.running:
            samples = self.running_first
            if samples is None and (cold := self.cold) is not None and cold[-1] > ran_s:
                samples = cold  # a newcomer's job that outran everybody's runs of its size: its limit
        return None if samples is None else _given(samples, ran_s)

    def origin(self, ran_s: float = 0.0) -> str | None:
        """:meth:`RuntimeHistory.origin` of a run that already ran ``ran_s`` seconds."""
        if self.own:
            return SAME_RUNS
        if self.chosen is not None:
            return OTHER_RUNS
        if ran_s > 0 and self.running:
            if self.running_first is not None:
                return OTHER_RUNS
            if (cold := self.cold) is not None and cold[-1] > ran_s:
                return self.cold_origin
        return None


_LIMIT_ONLY = Reading(own=False, chosen=None, running_first=None, cold=None, running=False)
"""The reading of work read from its limit alone (a service; a run whose key's last run ran to its limit)."""


def _fit(runs: list[tuple[float, float]]) -> tuple[float, float] | None:
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
