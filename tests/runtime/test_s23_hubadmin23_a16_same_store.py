"""hubadmin23 A16: a second `jupyter-sched serve` on the same store (a blue/green upgrade) said the
two schedulers were "blind to each other" — on one store one engine leads and the other follows,
sharing queue and quotas — and no log line said which one led."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.leadership import Leadership
from jupyter_sched.extension.host_schedulers import SERVE, HostScheduler, store_digest, warning_for
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


def _serve(pid: int, store: str) -> HostScheduler:
    return HostScheduler(user="root", uid=0, pid=pid, url=f"http://127.0.0.1:1790{pid % 10}/services/jupyter-sched/",
                         gpus=8, simulated=False, kind=SERVE, store=store)


def test_s23_hubadmin23_a16_two_services_on_one_store_are_told_one_leads_not_that_they_are_blind() -> None:
    url = "postgresql+psycopg://sched:s3cret@db/sched"
    digest = store_digest(url)
    assert len(digest) == 16 and "s3cret" not in digest
    assert store_digest("postgresql+psycopg://sched:other@db/sched") == digest, "a password is no other store"
    assert store_digest("postgresql+psycopg://sched@db/other") != digest
    said = warning_for(_serve(6455, digest), _serve(6460, digest))
    assert "blind" not in said, said
    assert said.startswith("another jupyter_sched (jupyter-sched serve of root, pid 6455, "), said
    assert "serves the same store: one of the two leads it" in said and "stop the old one (pid 6455" in said, said
    other_store = warning_for(_serve(6455, store_digest("postgresql+psycopg://sched@db/other")), _serve(6460, digest))
    assert "blind to the other's" in other_store, other_store  # two stores: as before


def test_s23_hubadmin23_a16_the_log_says_which_engine_leads_and_when_the_follower_takes_over(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(T0)
    old, new = (Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now) for _ in range(2))
    try:
        leader = Leadership(old, clock, "engine-old", 15.0, lease_clock=clock)
        follower = Leadership(new, clock, "engine-new", 15.0, lease_clock=clock)
        with caplog.at_level(logging.INFO, logger="jupyter_sched"):
            assert leader.acquire()[0]
            assert not follower.acquire()[0] and not follower.acquire()[0]
            clock.advance(16)  # the old one stopped: its lease ran out
            assert follower.acquire()[0]
        said = [(r.levelno, r.getMessage()) for r in caplog.records]
        assert said == [
            (logging.INFO, "jupyter_sched: engine engine-old leads the store (term 1)"),
            (logging.WARNING, "jupyter_sched: engine engine-new follows: engine engine-old leads the store (term 1) "
                              "and schedules; this server answers requests, and takes over when that one stops"),
            (logging.WARNING, "jupyter_sched: engine engine-new leads the store (term 2) now: the one that led stopped"),
        ], said
    finally:
        old.close()
        new.close()
