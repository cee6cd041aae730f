"""The server's ``idle_*`` settings become the idle policy the engine enforces (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.engine.telemetry import ladder_from_dict, ladder_to_dict
from jupyter_sched.errors import ValidationError
from jupyter_sched.reclaim import LadderState, ReclaimMode
from jupyter_sched.services import idle_policies_from_settings

from .test_idle_reclamation import at

CASES = [
    # The window and the grace stay two numbers (warnings say "30 + 10 min", case 013); the
    # busy-kernel limit is the whole time to reclaim, so its window is that minus the grace.
    pytest.param({}, {"enabled": True, "window_s": 1800.0, "grace_s": 0.0, "warning_s": 600.0,
                      "busy_kernel_window_s": 14400.0, "lease_mode": ReclaimMode.RELEASE,
                      "job_mode": ReclaimMode.NOTIFY, "service_mode": ReclaimMode.NOTIFY},
                 id="defaults: reclaimed after 30 min idle, warned 10 min before, no grace nobody set; busy kernels "
                    "get 4 h; jobs and services are only reported"),
    pytest.param({"idle_window_s": 60}, {"window_s": 60.0, "grace_s": 0.0, "warning_s": 30.0},
                 id="a 1-minute window is reclaimed at 1 minute, warned at its half (new user 4: 11 minutes)"),
    pytest.param({"idle_window_s": 3600, "idle_grace_s": 900}, {"window_s": 3600.0, "grace_s": 900.0, "warning_s": 0.0},
                 id="a grace the admin set is the notice: warned when the window ends, reclaimed 15 min later"),
    pytest.param({"idle_window_s": 3600, "idle_warning_s": 300}, {"grace_s": 0.0, "warning_s": 300.0},
                 id="the warning time the admin set"),
    pytest.param({"idle_window_s": 0}, {"enabled": False}, id="a window of 0 turns idle reclamation off"),
    pytest.param({"idle_window_s": 7200, "idle_grace_s": 900, "idle_busy_kernel_window_s": 3600},
                 {"window_s": 7200.0, "grace_s": 900.0, "busy_kernel_window_s": 7200.0},
                 id="a busy-kernel limit shorter than the idle limit is raised to it (7200 + 900 grace)"),
    pytest.param({"idle_busy_kernel_window_s": 0}, {"busy_kernel_window_s": None},
                 id="a busy-kernel limit of 0 disables that rule"),
    pytest.param({"idle_job_action": "requeue", "idle_lease_action": "notify", "idle_keepalive_max_s": 60},
                 {"job_mode": ReclaimMode.REQUEUE, "lease_mode": ReclaimMode.NOTIFY, "keepalive_max_s": 60.0},
                 id="actions and the keepalive maximum are the admin's"),
]


@pytest.mark.parametrize(("settings", "want"), CASES)
def test_idle_settings_map_to_the_policy(settings: dict[str, Any], want: dict[str, Any]) -> None:
    policy = idle_policies_from_settings(settings).default
    assert {key: getattr(policy, key) for key in want} == want


def test_a_warning_longer_than_the_window_names_the_setting() -> None:
    with pytest.raises(ValidationError) as bad:
        idle_policies_from_settings({"idle_window_s": 600, "idle_warning_s": 600})
    assert bad.value.field == "idle_warning_s"
    assert "shorter than idle_window_s" in str(bad.value)


def test_an_unknown_idle_action_names_the_setting() -> None:
    with pytest.raises(ValidationError) as bad:
        idle_policies_from_settings({"idle_job_action": "kill"})
    assert bad.value.field == "idle_job_action"


def test_the_persisted_ladder_round_trips() -> None:
    ladder = LadderState(warned_at=at("2026-11-29T12:00:00Z"), warned_idle_since=at("2026-11-29T11:00:00Z"),
                         keepalive_until=at("2026-11-29T13:00:00Z"), keepalive_used=True)
    assert ladder_from_dict(ladder_to_dict(ladder)) == ladder
    assert ladder_from_dict({}) == LadderState()
