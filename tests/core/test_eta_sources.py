"""New user 11, N15: an ETA from a learnt end says what it was learnt from.

amy's job waited on eve's ``eve-two`` (``sleep 200`` on 2 GPUs, 5m limit): ``ETA 14:10 UTC (in 36s),
when eve-two (j-…) ends (if it runs as long as similar past runs did)`` — but eve had no run like
eve-two: the guess was her *other* programs' padding (her 1-second ``echo`` / ``env`` jobs read as
fractions of their limits; ``backfill/history.py``, "Running jobs"). Once eve-two outran it, the
note said it "ran longer than the ~Xs that similar past runs took" — untrue as well. The history
now says where a guess came from (``RuntimeHistory.origin``: ``same`` / ``other``), the snapshot
carries it (``runtime_sources``), the reason keeps it (``details.eta_learned_other``: the share of
the limit) and one renderer (``wording/estimates.py``) writes each source's sentence for the
panel, the magics and the CLI (all three show ``render_reason``'s text)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.history import OTHER_RUNS, POPULATION_RUNS, SAME_RUNS, RuntimeHistory
from jupyter_sched.model import Job, JobSpec, PendingReason, ResourceRequest
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason


def _secs(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def _jobs() -> list[Job]:
    """eve's ``eve-two`` (2 GPUs, 5m limit) runs from t=0; amy's ``amy-cell-job`` waits for its GPUs."""
    return [running(make_job("eve-two", gpus=2, user="eve", time_limit_s=300), "n1", started=0),
            make_job("amy-cell-job", gpus=1, user="amy", time_limit_s=60, submitted=0.05)]


def _reason(seconds: float, learned: float, sources: dict[str, str], typical: float | None = None) -> PendingReason:
    snap = replace(snapshot([make_node("n1", gpus=2)], _jobs(), now=_secs(seconds)),
                   runtime_estimates={"eve-two": learned}, runtime_sources=sources,
                   runtime_typical={"eve-two": typical} if typical is not None else {})
    return {p.job_id: p.reason for p in run_cycle(snap).pending}["amy-cell-job"]


def test_newuser11_n15_an_eta_learnt_from_the_owners_other_programs_says_so() -> None:
    reason = _reason(10, 36.0, {"eve-two": OTHER_RUNS})
    # 36 s from its start: the end its own line says, never floored a minute away (new user 25, N2)
    assert reason.eta == _secs(36) and reason.details["eta_learned"] == ["eve-two"]
    assert reason.details["eta_learned_other"] == {"eve-two": 0.12}  # 36 s of its 5m limit
    text = render_reason(reason_to_dict(reason), now=_secs(10), relative=True).eta
    assert text == "ETA 12:00 UTC (in 26s), when eve's job eve-two ends (if it ends at ~12 % of its time limit, " \
                   "as its owner's other runs did)", text
    assert "similar past runs" not in text


def test_newuser11_n15_an_eta_learnt_from_similar_past_runs_keeps_its_words() -> None:
    reason = _reason(10, 36.0, {})  # no source: runs of the same program and request
    assert "eta_learned_other" not in reason.details
    text = render_reason(reason_to_dict(reason), now=_secs(10), relative=True).eta
    assert text == "ETA 12:00 UTC (in 26s), when eve's job eve-two ends (if it runs as long as similar past runs did)", text


def test_newuser11_n15_the_owner_reading_it_is_told_your_other_runs() -> None:
    """When the waiting job's owner also owns the job it waits on, the renderer says "your"."""
    jobs = [running(make_job("eve-two", gpus=2, user="eve", time_limit_s=300), "n1", started=0),
            make_job("eve-three", gpus=1, user="eve", time_limit_s=60, submitted=0.05)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, now=_secs(10)),
                   runtime_estimates={"eve-two": 36.0}, runtime_sources={"eve-two": OTHER_RUNS})
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["eve-three"]
    wire = reason_to_dict(reason)
    mine = render_reason(wire, now=_secs(10), relative=True, mine=True).eta
    assert mine.endswith("(if it ends at ~12 % of its time limit, as your other runs did)"), mine
    assert render_reason(wire, now=_secs(10), relative=True).eta.endswith("as its owner's other runs did)")


def test_newuser11_n15_a_job_that_outran_its_owners_other_runs_is_not_said_to_outrun_similar_runs() -> None:
    """Past the guess: re-estimated to its limit, and the note (kept with the ETA and its move
    records, and in the audit) names the owner's other runs, not "similar past runs"."""
    reason = _reason(40, 36.0, {"eve-two": OTHER_RUNS})
    assert reason.eta == _secs(300)
    assert reason.details["eta_note"] == ("eve-two ran longer than ~36s (its owner's other runs ended at ~12 % of "
                                          "their time limits), so it is now expected to run to its 5m time limit")
    same = _reason(40, 36.0, {})
    assert same.details["eta_note"] == ("eve-two ran longer than the ~36s that similar past runs took, so it is now "
                                        "expected to run to its 5m time limit")
    # past the typical run but still under the conditional guess: "has run longer than"
    typical = _reason(40, 90.0, {"eve-two": OTHER_RUNS}, typical=36.0)
    assert typical.details["eta_note"] == "eve-two has run longer than ~36s (its owner's other runs ended at ~12 % " \
                                          "of their time limits)"
    text = render_reason(reason_to_dict(typical), now=_secs(40), relative=True).eta
    assert text.endswith("when eve's job eve-two ends (by its 5m time limit at the latest)"), text


def test_newuser11_n15_several_jobs_waited_on_each_say_their_own_source() -> None:
    jobs = [running(make_job("a", gpus=1, user="eve", time_limit_s=300), "n1", [0], started=0),
            running(make_job("b", gpus=1, user="bob", time_limit_s=300), "n1", [1], started=0),
            make_job("w", gpus=2, user="amy", time_limit_s=60, submitted=0.05)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, now=_secs(10)),
                   runtime_estimates={"a": 60.0, "b": 60.0}, runtime_sources={"a": OTHER_RUNS})
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["w"]
    text = render_reason(reason_to_dict(reason), now=_secs(10), relative=True).eta
    assert text.endswith("when bob's job b and eve's job a end (if b runs as long as similar past runs did; if a ends at ~20 % of its "
                         "time limit, as its owner's other runs did)"), text


def _spec(user: str, command: tuple[str, ...]) -> JobSpec:
    return JobSpec(name=command[-1], user=user, command=command, resources=ResourceRequest(gpus=1))


def test_newuser11_n15_the_history_says_where_each_guess_comes_from() -> None:
    """``origin`` agrees with ``predict``: the key's own runs (``same``), the user's runs of other
    programs (``other``: an earned first-run guess, or a running first run's padding), none."""
    history = RuntimeHistory(min_key_runs=1, running_first_record=False)  # sessions 7-15's rule (the benchmark's baseline)
    for i, (runtime, limit) in enumerate(((24.0, 60.0), (48.0, 120.0), (120.0, 300.0))):  # eve pads 2.5x
        history.learn(_spec("eve", ("echo", str(i))), runtime, limit)
    again, new = _spec("eve", ("echo", "0")), _spec("eve", ("sleep", "200"))
    assert history.predict(again, 60.0) == 24.0 and history.origin(again, 60.0) == SAME_RUNS
    assert history.predict(new, 300.0) == 120.0 and history.origin(new, 300.0) == OTHER_RUNS
    assert history.predict(new, 300.0, ran_s=10) == 120.0 and history.origin(new, 300.0, ran_s=10) == OTHER_RUNS
    stranger = _spec("amy", ("sleep", "200"))
    assert history.predict(stranger, 300.0) is None and history.origin(stranger, 300.0) is None


def test_an_eta_learnt_from_other_users_runs_of_its_size_says_so_not_its_owners() -> None:
    """Session 14: a running job of a user with no finished run is read from everybody's runs of its
    size (``backfill/history.py``, "cold start from the population"); its ETA says so — "its
    owner's other runs" would be untrue (the owner has none) — and so does the note once it outran
    them, and the history says where the guess came from."""
    reason = _reason(10, 36.0, {"eve-two": POPULATION_RUNS})
    assert reason.details["eta_learned_other"] == {"eve-two": 0.12}
    assert reason.details["eta_learned_population"] == ["eve-two"]
    text = render_reason(reason_to_dict(reason), now=_secs(10), relative=True).eta
    assert text == "ETA 12:00 UTC (in 26s), when eve's job eve-two ends (if it ends at ~12 % of its time limit, " \
                   "as other users' runs of its size did)", text
    past = _reason(40, 36.0, {"eve-two": POPULATION_RUNS})
    assert past.details["eta_note"] == ("eve-two ran longer than ~36s (other users' runs of its size ended at "
                                        "~12 % of their time limits), so it is now expected to run to its 5m time "
                                        "limit")
    history = RuntimeHistory(min_key_runs=1, running_first_record=False)  # sessions 14-15's rule (the benchmark's baseline)
    history.learn(_spec("eve", ("echo", "0")), 36.0, 300.0)
    stranger = _spec("amy", ("sleep", "200"))
    assert history.predict(stranger, 300.0) is None  # queued: its limit
    assert history.predict(stranger, 300.0, ran_s=10) == 36.0 and history.origin(stranger, 300.0, ran_s=10) == \
        POPULATION_RUNS


def test_newuser15_n5_quick_test_runs_and_a_single_run_of_its_key_predict_nothing() -> None:
    """The report: after ``true``, ``sleep 5`` and a 2-s training, ``big`` (``sleep 600``, 20m limit)
    was told to end "now" from those runs (``eta_learned_other`` 0.0012). Runs that ended within 1 %
    of their limits are tests, not padding (``MIN_PADDING_RATIO``): no guess for big, queued or
    running, nor for another user's job from them; one run of big's own key is not a record yet
    (``MIN_KEY_RUNS``), two are."""
    history = RuntimeHistory()
    for command, runtime in ((("true",), 1.0), (("sleep", "5"), 5.0), (("python", "train.py"), 2.0)):
        history.learn(_spec("nu", command), runtime, 1800.0)
    big = _spec("nu", ("sleep", "600"))
    for ran in (0.0, 0.5, 30.0):
        assert history.predict(big, 1200.0, ran_s=ran) is None and history.origin(big, 1200.0, ran_s=ran) is None
    assert history.predict(_spec("amy", ("sleep", "600")), 1200.0, ran_s=5) is None  # nor other users' runs
    history.learn(big, 600.0, 1200.0)
    assert history.predict(big, 1200.0) is None  # one run of it: its limit still
    history.learn(big, 610.0, 1200.0)
    assert history.predict(big, 1200.0) == 605.0 and history.origin(big, 1200.0) == SAME_RUNS


def test_newuser15_n5_a_job_blocked_by_a_running_job_is_never_told_now() -> None:
    """A learnt end a second away (the report's 0.12 % of a 20m limit) is projected where it is, at least
    ``MIN_LEFT_S`` from now — no longer floored a minute away (new user 25, N1/N2: the floor chained a
    batch's ETAs on one GPU and put "in 59s" on a 5-s run's own line): "now" is never shown for a start
    that waits on a running job, and once the job outruns its learnt end the next cycle (the engine runs
    one every few seconds) projects it to its limit and says why."""
    from jupyter_sched.scheduling.runtimes import MIN_LEFT_S
    jobs = [running(make_job("big", gpus=2, user="nu", time_limit_s=1200), "n1", started=0),
            make_job("waiter", gpus=1, user="nu", time_limit_s=3600, submitted=0.01)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, now=_secs(0.5)),
                   runtime_estimates={"big": 1.44}, runtime_sources={"big": SAME_RUNS})
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["waiter"]
    assert reason.eta == _secs(0.5 + MIN_LEFT_S), reason.eta
    text = render_reason(reason_to_dict(reason), now=_secs(0.5), relative=True).eta
    assert "(now)" not in text and "(in 1s)" in text, text
    outran = {p.job_id: p.reason for p in run_cycle(replace(snap, now=_secs(5))).pending}["waiter"]
    assert outran.eta == _secs(1200) and outran.details["eta_bounds"] == {"big": "by its 20m time limit"}
    # near its limit the limit bounds it: 10 s before the 20m limit the ETA is the limit, not past it
    late = replace(snap, now=_secs(1190), runtime_estimates={"big": 1191.0})
    assert {p.job_id: p.reason for p in run_cycle(late).pending}["waiter"].eta == _secs(1191)


def test_newuser18_n5_ends_learnt_the_same_way_are_said_once_and_by_name() -> None:
    """New user 18, N5: "when half (j-1) and waitA (j-2) end (if j-1 ends at ~25 % of its time
    limit, as your other runs did; if j-2 ends at ~25 % of its time limit, as your other runs did)"
    — one clause per job, each by its bare id. Now one clause for the ends learnt the same way."""
    from jupyter_sched.wording.reasons import render_reason

    base = {"code": "Capacity", "message": "needs 2 GPUs, 0 free", "eta": "2026-12-04T16:12:00Z",
            "details": {"eta_code": "Projected", "eta_waits_on": ["j-1", "j-2"],
                        "eta_waits_on_names": {"j-1": "half", "j-2": "waitA"},
                        "eta_learned": ["j-1", "j-2"], "eta_learned_other": {"j-1": 0.25, "j-2": 0.25},
                        "eta_waits_on_own": [{"id": "j-1"}, {"id": "j-2"}]}}
    eta = render_reason(base, mine=True).eta
    assert eta.endswith("when half (j-1) and waitA (j-2) end (if they end at ~25 % of their time limits, as your "
                        "other runs did)"), eta
    apart = {**base, "details": {**base["details"], "eta_learned": ["j-2"], "eta_learned_other": {"j-2": 0.5}}}
    eta = render_reason(apart, mine=True).eta
    assert eta.endswith("(if waitA ends at ~50 % of its time limit, as your other runs did)"), eta


def test_newuser19_n13_a_seconds_long_smoke_run_is_no_padding_for_long_jobs() -> None:
    """The report: one ``train.py 3`` (4 s under a 5m limit: 1.3 %, above the 1 % floor) made three
    30-min jobs of its user look like they end in 18 s (``eta_learned_other`` 0.0105). A run of a few
    seconds is no record of how its user pads real work (``MIN_PADDING_RUNTIME_S``): the running
    first runs keep their limits, and nobody's cold-start prior reads it either."""
    history = RuntimeHistory()
    history.learn(_spec("eve", ("python", "train.py", "3")), 4.0, 300.0)
    long1 = _spec("eve", ("python", "train.py", "1500"))
    assert history.predict(long1, 1800.0, ran_s=10) is None and history.origin(long1, 1800.0, ran_s=10) is None
    stranger = _spec("amy", ("python", "train.py", "1500"))
    assert history.predict(stranger, 1800.0, ran_s=10) is None  # no population prior from it
    # a run that measured work (here 2 min of 5) is read as before: its user pads 2.5x — for a limit
    # within reach of the 5m it was learnt under (LIMIT_REACH, new user 25 N6: 20m is 4x), not for 30m (6x)
    history.learn(_spec("eve", ("python", "train.py", "120")), 120.0, 300.0)
    assert history.predict(long1, 1200.0, ran_s=10) == 480.0 and history.origin(long1, 1200.0, ran_s=10) == OTHER_RUNS
    assert history.predict(long1, 1800.0, ran_s=10) is None and history.origin(long1, 1800.0, ran_s=10) is None
