"""Crash safety: SIGKILL the embedded server at random moments while clients submit, cancel and lease.

Afterwards every accepted request (2xx) exists exactly once, nothing unanswered exists twice, no
GPU was ever held by two jobs (usage intervals), accepted cancels took effect, running local
jobs were re-adopted (they finish with their exit code) or marked lost with a reason, no answer
was a 5xx, and the store passes ``check_integrity`` (issue 10 item 1).

Bounded: a fixed number of kills a few seconds apart (seeded), then at most ~90 s for the last
server to take the leader lease and settle the short batch jobs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .chaos import run_chaos

pytestmark = pytest.mark.timeout(600)


def _check(outcome, kills: int) -> None:  # type: ignore[no-untyped-def]
    problems = outcome.problems()
    assert not problems, "\n".join(problems[:30])
    assert outcome.kills == kills
    assert len(outcome.accepted) >= 10, "the clients got work accepted between the kills"
    assert outcome.leader_terms >= 2, "a restarted server took over the store"
    print(f"\nchaos: kills survived {outcome.kills}, accepted {len(outcome.accepted)}, found "
          f"{sum(1 for j in outcome.jobs if j in outcome.accepted)}/{len(outcome.accepted)} "
          f"(+{len(outcome.jobs) - len(outcome.accepted)} of {len(outcome.unknown_names)} unanswered), "
          f"adopted {outcome.adopted}, settled from exit files {outcome.settled_while_down}, leader terms {outcome.leader_terms}, {outcome.seconds:.0f} s")


def test_sigkill_chaos_on_sqlite_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    outcome = run_chaos(tmp_path, kills=5, seed=20)
    _check(outcome, 5)


def test_sigkill_chaos_on_postgresql_loses_nothing_and_duplicates_nothing(tmp_path: Path, pg_url: str) -> None:
    outcome = run_chaos(tmp_path, db_url=pg_url, kills=3, seed=21)
    _check(outcome, 3)
