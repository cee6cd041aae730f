"""Idle policy per kind and class: the wire shape round-trips, the most specific entry wins, the
server settings keep window and grace apart, and bad input names the field."""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import JobKind, PriorityClass
from jupyter_sched.reclaim import (
    IdlePolicies,
    ReclaimMode,
    idle_policies_from_dict,
    idle_policies_from_settings,
    idle_policies_to_dict,
    longest_idle_window_s,
)

from .idle_harness import make_job

BODY = {"default": {"window_s": 3600, "grace_s": 900},
        "by_priority": {"low": {"window_s": 1800}},
        "by_kind": {"inference": {"service_mode": "notify", "window_s": 10800,
                                  "by_priority": {"high": {"enabled": False}}},
                    "training": {"job_mode": "requeue"}}}


def test_the_most_specific_policy_wins() -> None:
    policies = idle_policies_from_dict(BODY)
    pick = {(k, p): policies.for_job(make_job("j", ["G"], kind=k, priority=p))
            for k in JobKind for p in PriorityClass}
    assert pick[(JobKind.INFERENCE, PriorityClass.HIGH)].enabled is False
    assert pick[(JobKind.INFERENCE, PriorityClass.LOW)].window_s == 10800  # kind before class
    assert pick[(JobKind.TRAINING, PriorityClass.NORMAL)].job_mode is ReclaimMode.REQUEUE
    assert pick[(JobKind.LEASE, PriorityClass.LOW)].window_s == 1800
    assert pick[(JobKind.LEASE, PriorityClass.NORMAL)].grace_s == 900
    assert longest_idle_window_s(policies) == max(14400 + 900, 10800 + 900)


def test_the_wire_shape_round_trips() -> None:
    policies = idle_policies_from_dict(BODY)
    again = idle_policies_from_dict(idle_policies_to_dict(policies), base=IdlePolicies())
    assert again == policies


@pytest.mark.parametrize(("body", "field"), [
    ({"by_kind": {"batch": {}}}, "idle.by_kind.batch"),
    ({"by_kind": {"inference": {"service_mode": "explode"}}}, "idle.inference.service_mode"),
    ({"by_kind": {"lease": {"by_priority": {"urgent": {}}}}}, "idle.lease.by_priority.urgent"),
    ({"default": {"grace_s": -1}}, "idle.default.grace_s"),
    ({"by_kind": []}, "idle.by_kind"),
])
def test_bad_blocks_name_the_field(body: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        idle_policies_from_dict(body)
    assert info.value.field == field


def test_settings_with_a_per_kind_override_and_a_bad_action() -> None:
    policies = idle_policies_from_settings({"idle_window_s": 1800, "idle_grace_s": 600,
                                            "idle_policy": {"by_kind": {"inference": {"window_s": 7200}}}})
    assert policies.by_kind["inference"].window_s == 7200 and policies.by_kind["inference"].grace_s == 600
    assert idle_policies_from_settings({"idle_window_s": 0}).default.enabled is False
    with pytest.raises(ValidationError) as info:
        idle_policies_from_settings({"idle_service_action": "kill"})
    assert info.value.field == "idle_service_action"
