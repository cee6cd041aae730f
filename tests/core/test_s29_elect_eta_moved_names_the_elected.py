"""s28-elect "Left": a waiting job's ETA moved later because another user's overdue job was elected ahead of it,
and the recorded move (``details["eta_moved"]``, the ``eta_moved`` audit row) said only "the queue ahead changed".
It now names the elected job, its owner and the rule (cause ``elected``).

The scene, on the pure cycle: one node, 2 GPUs. ana's ``a-run`` holds GPU 0 and has run past 2 x what her similar
runs took, so her long-overdue 2-GPU ``a-big`` is not elected (a user whose history proved short is not elected
meanwhile: runtimes.elected_in); carol's ``c-run`` holds GPU 1 until +20 min. bo's ``b-next`` (1 GPU, 40 min) is
first in the fair order, ETA +20 min. Then ``a-run`` ends: GPU 0 is free, but ``a-big`` is elected now, goes first
and reserves both GPUs from +20 min, so ``b-next`` (too long to backfill before it) waits until +50 min.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node, running

from jupyter_sched.model import PendingReason
from jupyter_sched.queues.order import PROMISE


def _scene() -> Scenario:
    overdue = PendingReason(code="WaitingForCapacity", message="waiting", details={PROMISE: {
        "at": (T0 - timedelta(minutes=50)).isoformat(), "start": (T0 - timedelta(minutes=40)).isoformat()}})
    a_big = replace(make_job("a-big", user="ana", gpus=2, time_limit_s=30 * 60, submitted=-50), reason=overdue)
    sc = Scenario([make_node("n1", gpus=2)])
    sc.submit(running(make_job("a-run", user="ana", time_limit_s=120 * 60), "n1", [0], started=-60),
              running(make_job("c-run", user="carol", time_limit_s=80 * 60), "n1", [1], started=-60),
              a_big, make_job("b-next", user="bo", time_limit_s=40 * 60, submitted=-5))
    sc.snap = replace(sc.snap, runtime_typical={"a-run": 600.0})  # ran 60 min against a typical 10
    return sc


def test_s29_elect_an_eta_moved_by_an_election_names_the_elected_job_and_the_rule() -> None:
    sc = _scene()
    first = {p.job_id: p.reason for p in sc.cycle().pending}
    assert first["b-next"].eta == T0 + timedelta(minutes=20), first["b-next"]
    assert "elected" not in first["a-big"].details, first["a-big"].details
    second = {p.job_id: p.reason for p in sc.finish("a-run").at(1).cycle().pending}
    assert "elected" in second["a-big"].details, second["a-big"]
    b = second["b-next"]
    assert b.eta == T0 + timedelta(minutes=50), (b.eta, b.message)
    moved = b.details["eta_moved"]
    # before: cause "queue_changed", "the queue ahead changed"
    assert moved["cause"] == "elected" and moved["jobs"] == ["a-big"], moved
    assert moved["message"].endswith(
        ": ana's job a-big waited past 0.75 x the wait promised when it was queued, so it was elected to go first in "
        "its class (c.SchedApp.elect_overdue)"), moved["message"]


def test_s29_elect_an_election_already_ahead_last_cycle_is_not_named_again() -> None:
    """The cause is an election made since the last cycle: ``a-big``, elected ahead before, is not what moves
    ``b-next`` when a high-class job arrives ten minutes on."""
    sc = _scene()
    sc.cycle()
    sc.finish("a-run").at(1).cycle()
    sc.submit(make_job("d-high", user="dan", priority="high", gpus=2, time_limit_s=30 * 60, submitted=12))
    third = {p.job_id: p.reason for p in sc.at(12).cycle().pending}
    b = third["b-next"]
    assert "elected" in third["a-big"].details, third["a-big"]  # still elected ahead of it, as last cycle
    moved = b.details["eta_moved"]
    assert moved["cause"] == "arrival" and moved["jobs"] == ["d-high"], moved
