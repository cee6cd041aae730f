"""New user 21, N5 (the submit half): a never-evicted ``low`` job was preempted 6 s after it started
and nothing at submit said a low job can be stopped at any moment. Now the submit answer's
``warnings`` (printed by the CLI and the magics) state the core's rule: young victims are spared
only where another job can make room; once preempted, each restart is protected for the minimum
runtime; a preempted job requeues with its submit time. Classes the profile does not make
preemptible get no note.

The running-line half of N5 ("— to be preempted at ~02:11 UTC for norm2 …") is not done here
(notes/s21-fix4.md, Left).

Real parts: a SQLite store, the local executor, the service's own profile; 2 simulated GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


def _services(tmp_path: Path, profile: SchedulingProfile | None) -> Services:
    clock = ManualClock(T0)
    return Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                    inventory=SimulatedInventory(2, model="A100-80GB"), executor=LocalExecutor(tmp_path / "jobs"),
                    clock=clock, scheduling_profile=profile)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = _services(tmp_path, None)
    yield svc
    svc.store.close()


def _notes(services: Services, priority: str) -> list[str]:
    job = services.jobs.submit(services.caller("ana", admin=False),
                               SubmitJobRequest(gpus=1, priority=priority, time_limit="10m", command=["true"]))
    return [w for w in job.warnings or [] if w.startswith(f"priority {priority}:")]


def test_newuser21_n5_a_low_job_is_told_at_submit_it_may_be_preempted_at_any_moment(services: Services) -> None:
    assert _notes(services, "low") == [  # was: nothing said (preempted 6 s after it started, unannounced)
        "priority low: higher-priority work may preempt it at any moment — a run shorter than 5m (the minimum "
        "runtime) is spared only when another job can make room, and once preempted, each restart is protected "
        "for its first 5m unless the job spared instead would preempt it in turn; a preempted job goes back to "
        "the queue with its submit time"]
    assert _notes(services, "normal") == []  # not preemptible for a higher class by default


@pytest.mark.parametrize("profile, want", [
    pytest.param(SchedulingProfile(preemption=False), None, id="no note when preemption is off"),
    pytest.param(SchedulingProfile(min_runtime_s=0), "priority low: higher-priority work may preempt it at any "
                 "moment; a preempted job goes back to the queue with its submit time",
                 id="no minimum runtime: no protection is promised"),
    pytest.param(SchedulingProfile(min_runtime_s=90), "its first 1m30s", id="the profile's minimum runtime is said"),
])
def test_newuser21_n5_the_note_follows_the_profile(tmp_path: Path, profile: SchedulingProfile, want: str | None) -> None:
    svc = _services(tmp_path, profile)
    try:
        notes = _notes(svc, "low")
    finally:
        svc.store.close()
    if want is None:
        assert notes == []
    else:
        assert len(notes) == 1 and want in notes[0], notes
