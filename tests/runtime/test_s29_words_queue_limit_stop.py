"""s29-plan Left (issue 20 words): a job that gave no time limit was stopped at its queue's default and
said only ``time limit of 30s exceeded`` — not that the queue chose that limit. The end message, the
audit row and the log's stop line now say ``30s (queue default; none given)`` as the job's lines did while
it ran (JobSpec.time_limit_source, one renderer: wording.time_limits.stopped_limit_text). Real engine,
SQLite, the local executor with a real job process; a manual clock moves past the limit."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.engine import ManualClock
from jupyter_sched.queues.limits import TimeLimitRule
from jupyter_sched.scheduling import SchedulingProfile
from tests.runtime.builders import T0
from tests.runtime.test_engine import make_service
from tests.runtime.test_newuser20_n10_limit_words import stopped_at_limit


def test_s29_words_a_job_stopped_at_its_queues_default_limit_says_the_queue_gave_it(
        sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock=clock,
                       scheduling_profile=SchedulingProfile(time_limits=(TimeLimitRule(default_s=30),)))
    message, audit, stopped = stopped_at_limit(svc, clock, tmp_path, 31)
    assert message.startswith("time limit of 30s (queue default; none given) exceeded ("), message
    assert audit == ["time limit of 30s (queue default; none given) reached; stopping"], audit
    assert stopped == "stopped: time limit 30s (queue default; none given) reached"
