"""New user 20, N23 and N24: what leaving a duration out means, said where it is refused or taken.

N23: ``jupyter-sched submit`` without ``--time-limit`` on a server with no default ran with no limit and
no note, while ``--time-limit 0`` (the same job) got "time limit 0 = unlimited; this job can only start
when nothing is reserved". N24: ``%gpu watch --seconds 1e9`` was told "… or leave it out for none",
the time limit's hint — left out, a watch lasts 30 s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model.validation import NO_LIMIT_WARNING, UNLIMITED_WARNING, parse_time_limit
from jupyter_sched.queues.limits import TimeLimitRule
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


def _services(root: Path, profile: SchedulingProfile | None = None) -> Services:
    clock = ManualClock(T0)
    return Services(store=Store(sqlite_url(root / "s.sqlite"), now=clock.now), inventory=SimulatedInventory(2, node="vm"),
                    executor=LocalExecutor(root / "jobs"), clock=clock, scheduling_profile=profile)


@pytest.mark.parametrize("body,rules,want", [
    ({}, (), [NO_LIMIT_WARNING]),
    ({"time_limit": 0}, (), [UNLIMITED_WARNING]),
    ({"time_limit": "0"}, (TimeLimitRule(default_s=600),), [UNLIMITED_WARNING]),
    # newuser28 N8: it is stopped at the default, so that is said (it was given silently)
    ({}, (TimeLimitRule(default_s=600),), ["no time limit given: team default's queue default 10m applies (it is "
                                           "stopped there); give a time limit for longer"]),
    ({"time_limit": "2h"}, (), []),
], ids=["left out, no default: the no-limit note", "0: the unlimited note", "0 beside a default: still unlimited",
        "left out with a queue default: it gets the default, said", "a limit given: no note"])
def test_newuser20_n23_no_time_limit_is_said_the_same_given_as_0_or_left_out(
        tmp_path: Path, body: dict[str, Any], rules: tuple[TimeLimitRule, ...], want: list[str]) -> None:
    services = _services(tmp_path, SchedulingProfile(time_limits=rules))
    try:
        job = services.jobs.submit(services.caller("bo", admin=False),
                                   SubmitJobRequest.model_validate({"gpus": 1, "command": ["true"], **body}))
        notes = [w for w in job.model_dump(mode="json").get("warnings") or () if "time limit" in w]
        assert notes == want
    finally:
        services.store.close()
    assert "can only start when nothing is reserved" in NO_LIMIT_WARNING  # the consequence, as for 0


@pytest.mark.parametrize("line,field,want", [
    ("watch --seconds 1e9", "--seconds", "give how long to watch, e.g. 30 or 2m (left out: 30 s)"),
    ("watch --seconds -1", "--seconds", "give how long to watch, e.g. 30 or 2m (left out: 30 s)"),
    ("watch --interval 0", "--interval", "give the time between samples, e.g. 1 or 5s (left out: 1 s)"),
], ids=["too long a watch: what leaving it out means, 30 s", "a negative watch: the same", "a zero interval: its own"])
def test_newuser20_n24_gpu_watch_durations_are_refused_with_their_own_hint(line: str, field: str, want: str) -> None:
    from jupyter_sched.magics.parsing import parse_gpu_line

    with pytest.raises(ValidationError) as refused:
        parse_gpu_line(line)
    assert (refused.value.field, refused.value.hint) == (field, want), refused.value
    assert "leave it out for none" not in str(refused.value.hint)


def test_newuser20_n24_a_time_limit_too_long_says_what_0_and_leaving_it_out_mean() -> None:
    with pytest.raises(ValidationError) as refused:
        parse_time_limit("1e9", field="time_limit")
    assert refused.value.hint == "give a shorter limit, e.g. '7d', or 0 for no limit at all; left out, the queue's default applies"
