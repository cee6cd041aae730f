"""Admins set the idle policy through the API (issue 9 item 3): ``GET|PUT api/sched/idle-policy``.

A real jupyter_server with jupyter_sched on a tmp SQLite store and a simulated inventory (so a
simulated telemetry monitor runs and the engine does idle detection). The restart test builds a
second service from the same settings and store, as a server restart does.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.reclaim import IdlePolicies, IdlePolicy, ReclaimMode, idle_policies_from_dict, idle_policies_to_dict
from jupyter_sched.services import IDLE_RETENTION_MAX_S, SchedulerService

from .conftest import BOSS_TOKEN, JUDY_TOKEN
from .test_openapi import json_schema, load_spec, response_schema

CHANGE = {"default": {"threshold_pct": 7},
          "by_priority": {"low": {"window_s": 1800, "warning_s": 300, "lease_mode": "notify"}}}


def assert_documented(method: str, status: int, payload: Any) -> None:
    """``payload`` conforms to openapi.yaml's schema for ``method idle-policy`` answering ``status``."""
    import jsonschema

    spec = load_spec()
    schema = {**json_schema(response_schema(spec, method, "/idle-policy", status)),
              "components": {"schemas": json_schema(spec["components"]["schemas"])}}
    jsonschema.validate(payload, schema, cls=jsonschema.Draft202012Validator)


async def idle_records(api: Any) -> list[dict[str, Any]]:
    status, records = await api("GET", "audit", token=BOSS_TOKEN, params={"action": "idle_policy_set"})
    assert status == 200, records
    return list(records)


async def test_an_admin_put_applies_at_once_and_is_audited_old_to_new(sched_app: Any, api: Any) -> None:
    status, before = await api("GET", "idle-policy")
    assert status == 200, before
    assert_documented("get", 200, before)
    assert before["active"] is True and before["by_priority"] == {}

    status, after = await api("PUT", "idle-policy", CHANGE, token=BOSS_TOKEN)
    assert status == 200, after
    assert_documented("put", 200, after)

    status, shown = await api("GET", "idle-policy", token=JUDY_TOKEN)
    assert status == 200 and shown == after
    assert shown["default"]["threshold_pct"] == 7.0
    low = shown["by_priority"]["low"]
    assert (low["window_s"], low["warning_s"], low["lease_mode"]) == (1800.0, 300.0, "notify")
    assert low["threshold_pct"] == 7.0, "a priority block merges into the new default"

    engine_policies = sched_app.services.engine.idle_policies
    assert engine_policies.default.threshold_pct == 7.0
    assert engine_policies.by_priority["low"].window_s == 1800.0
    assert engine_policies.by_priority["low"].lease_mode is ReclaimMode.NOTIFY

    [record] = await idle_records(api)
    assert record["actor"] == "boss"
    assert record["at"]
    assert record["details"]["old"] == {k: before[k] for k in ("default", "by_priority", "by_kind")}
    assert record["details"]["new"] == {k: after[k] for k in ("default", "by_priority", "by_kind")}


async def test_a_longer_window_grows_the_telemetry_retention(sched_app: Any, api: Any) -> None:
    status, before = await api("GET", "idle-policy")
    assert status == 200, before
    longest = 30000.0
    status, after = await api("PUT", "idle-policy", {"default": {"window_s": 20000, "busy_kernel_window_s": longest}},
                              token=BOSS_TOKEN)
    assert status == 200, after
    assert after["retention_s"] >= longest > before["retention_s"]
    assert sched_app.services.monitor.retention_s == after["retention_s"]


async def test_a_window_beyond_what_telemetry_may_grow_to_is_refused_naming_the_field(sched_app: Any, api: Any) -> None:
    too_long = IDLE_RETENTION_MAX_S + 3600
    status, body = await api("PUT", "idle-policy",
                             {"default": {"window_s": too_long, "busy_kernel_window_s": None}}, token=BOSS_TOKEN)
    assert status == 400, body
    assert body["error"]["field"] == "idle.default.window_s"
    assert "telemetry" in body["error"]["message"] and body["error"]["hint"]
    assert await idle_records(api) == []


@pytest.mark.parametrize("token", [JUDY_TOKEN, None], ids=["another user may not", "anonymous may not"])
async def test_a_non_admin_put_is_refused_and_changes_nothing(sched_app: Any, api: Any, token: str | None) -> None:
    _, before = await api("GET", "idle-policy")
    status, body = await api("PUT", "idle-policy", CHANGE, token=token)
    assert status == 403, body
    _, after = await api("GET", "idle-policy")
    assert after == before
    assert sched_app.services.engine.idle_policies.by_priority == {}
    assert await idle_records(api) == []


BAD = [
    pytest.param({"by_priority": {"normal": {"window_s": 0, "enabled": True}}}, "idle.normal.window_s",
                 id="a zero window with enabled true"),
    pytest.param({"default": {"window_s": -5}}, "idle.default.window_s", id="a negative window"),
    pytest.param({"default": {"warning_s": 99999}}, "idle.default.warning_s", id="a warning longer than the window"),
    pytest.param({"default": {"threshold_pct": 0}}, "idle.default.threshold_pct", id="a zero threshold"),
    pytest.param({"default": {"threshold_pct": 101}}, "idle.default.threshold_pct", id="a threshold over 100 %"),
    pytest.param({"default": {"window_s": "2h"}}, "idle.default.window_s", id="a window that is not a number"),
    pytest.param({"default": {"enabled": "yes"}}, "idle.default.enabled", id="enabled that is not a boolean"),
    pytest.param({"default": {"lease_mode": "zap"}}, "idle.default.lease_mode", id="an unknown reclaim mode"),
    pytest.param({"default": {"window_s": 1200, "busy_kernel_window_s": 60}}, "idle.default.busy_kernel_window_s",
                 id="a busy-kernel limit shorter than the window"),
    pytest.param({"default": {"keepalive_max_s": -1}}, "idle.default.keepalive_max_s", id="a negative keepalive"),
    pytest.param({"default": {"window": 600}}, "idle.default.window", id="an unknown policy field"),
    pytest.param({"urgent": {}}, "urgent", id="an unknown top-level field, named as the body has it"),
    pytest.param({"by_priority": {"urgent": {}}}, "idle.by_priority.urgent", id="an unknown priority class"),
    pytest.param({"by_priority": []}, "idle.by_priority", id="by_priority that is not an object"),
    pytest.param({"default": 5}, "idle.default", id="a policy that is not an object"),
    pytest.param([], "body", id="a body that is not an object"),
]


@pytest.mark.parametrize(("body", "field"), BAD)
async def test_bad_values_answer_400_naming_the_field(sched_app: Any, api: Any, body: Any, field: str) -> None:
    _, before = await api("GET", "idle-policy")
    status, answer = await api("PUT", "idle-policy", body, token=BOSS_TOKEN)
    assert status == 400, answer
    assert answer["error"]["field"] == field
    assert answer["error"]["hint"]
    _, after = await api("GET", "idle-policy")
    assert after == before
    assert await idle_records(api) == []


async def test_newuser17_n18_a_zero_window_turns_idle_reclamation_off_as_the_trait_does(sched_app: Any,
                                                                                          api: Any) -> None:
    """New user 17, N18: ``c.SchedApp.idle_window_s = 0`` "disables idle reclamation", and the same
    0 typed in the panel's form (``PUT idle-policy``) was a 400. One meaning on both surfaces: 0 is
    off; the window itself keeps its value, so turning it back on restores it."""
    from jupyter_sched.extension.app import SchedApp
    from jupyter_sched.reclaim import idle_policies_from_settings

    _, before = await api("GET", "idle-policy")
    assert before["default"]["enabled"] is True, before
    status, after = await api("PUT", "idle-policy", {"default": {"window_s": 0}}, token=BOSS_TOKEN)
    assert status == 200, after
    assert_documented("put", 200, after)
    assert after["default"]["enabled"] is False, after
    assert after["default"]["window_s"] == before["default"]["window_s"], after
    assert sched_app.services.engine.idle_policies.default.enabled is False
    assert idle_policies_from_settings({"idle_window_s": 0}).default.enabled is False  # the trait's meaning
    assert '"window_s": 0' in SchedApp.class_traits()["idle_window_s"].help  # its help names the API's form
    (record,) = await idle_records(api)
    assert record["details"]["new"]["default"]["enabled"] is False, record
    status, again = await api("PUT", "idle-policy", {"default": {"enabled": True}}, token=BOSS_TOKEN)
    assert status == 200 and again["default"]["enabled"] is True, again
    assert again["default"]["window_s"] == before["default"]["window_s"], again


async def test_the_policy_survives_a_service_restart(sched_app: Any, api: Any) -> None:
    status, after = await api("PUT", "idle-policy",
                              {**CHANGE, "default": {"threshold_pct": 7, "busy_kernel_window_s": 30000}},
                              token=BOSS_TOKEN)
    assert status == 200, after
    restarted = SchedulerService.from_config(sched_app.service_settings())
    configured = restarted.idle_policy()
    assert configured["by_priority"] == {}, "before start: the configured traits"
    await restarted.start()
    try:
        shown = restarted.idle_policy()
        assert {k: shown[k] for k in ("default", "by_priority", "by_kind")} == {k: after[k] for k in ("default", "by_priority", "by_kind")}
        assert restarted.engine.idle_policies.by_priority["low"].window_s == 1800.0
        assert shown["retention_s"] >= 30000.0, "the stored window sizes the restarted telemetry"
    finally:
        await restarted.stop()


def test_the_codec_round_trips_and_merges_into_the_current_policy() -> None:
    policies = IdlePolicies(default=IdlePolicy(window_s=3600.0, warning_s=600.0, busy_kernel_window_s=None,
                                               job_mode=ReclaimMode.REQUEUE),
                            by_priority={"high": IdlePolicy(enabled=False)})
    assert idle_policies_from_dict(idle_policies_to_dict(policies)) == policies
    merged = idle_policies_from_dict({"default": {"warning_s": 300}}, base=policies)
    assert merged.default.warning_s == 300.0 and merged.default.window_s == 3600.0
    assert merged.by_priority == policies.by_priority, "by_priority left out keeps the current overrides"


@pytest.mark.parametrize("filled", [3, 8], ids=["a ring not yet full", "a ring that wrapped around"])
def test_growing_the_sample_store_keeps_the_samples_in_order(filled: int) -> None:
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.model.samples import GpuSample
    from jupyter_sched.telemetry import SampleStore

    t0 = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)

    def sample(second: int) -> GpuSample:
        return GpuSample(gpu_uuid="GPU-a", mig_instance=None, timestamp=t0 + timedelta(seconds=second),
                         utilization_pct=float(second), memory_used_mib=1.0, memory_total_mib=80.0)

    store = SampleStore(retention_s=5, rate_hz=1.0)
    for second in range(filled):
        store.add([sample(second)])
    store.grow(12, rate_hz=1.0)
    for second in range(filled, filled + 6):
        store.add([sample(second)])
    kept = [s.utilization_pct for s in store.window(("GPU-a", None), t0)]
    first = max(0, filled - 5)
    assert kept == [float(s) for s in range(first, filled + 6)][-12:]
    assert store.capacity == 12


async def test_s22_hubadmin22_h4_a_changed_config_replaces_a_put_policy_at_the_next_start_and_says_so(
        sched_app: Any, api: Any, caplog: pytest.LogCaptureFixture) -> None:
    """hubadmin22 H4: after one PUT idle-policy, an edited ``c.SchedApp.idle_window_s`` was ignored
    at every later start, silently, and GET config's ``idle`` showed the trait, not the policy in
    force. Now as for quotas: an unchanged config leaves the PUT in force (said in a WARNING naming
    who set it), a changed one replaces it (WARNING, audited by ``config``); ``source`` says which."""
    status, put = await api("PUT", "idle-policy", {"default": {"window_s": 1200}}, token=BOSS_TOKEN)
    assert status == 200 and put["source"]["set_by"] == "boss", put
    status, config = await api("GET", "config")
    assert status == 200 and config["idle"]["window_s"] == 1200.0, config["idle"]
    assert config["idle"]["source"]["set_by"] == "boss", config["idle"]

    settings = dict(sched_app.service_settings())
    assert settings["idle_window_s"] != 1200.0
    caplog.set_level("WARNING", logger="jupyter_sched.services.idle")
    same = SchedulerService.from_config(settings)
    await same.start()
    try:
        shown = same.idle_policy()
        assert shown["default"]["window_s"] == 1200.0 and shown["source"]["set_by"] == "boss", shown
    finally:
        await same.stop()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "is not applied" in said and "boss set with PUT idle-policy" in said and "window 1200 s" in said, said

    caplog.clear()
    changed = SchedulerService.from_config({**settings, "idle_window_s": 2400.0})
    await changed.start()
    try:
        shown = changed.idle_policy()
        assert shown["default"]["window_s"] == 2400.0 and shown["source"]["set_by"] == "config", shown
    finally:
        await changed.stop()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "replaces the one boss set with PUT idle-policy" in said, said
    records = await idle_records(api)
    assert [r["actor"] for r in records][:2] == ["config", "boss"], records

    caplog.clear()
    again = SchedulerService.from_config({**settings, "idle_window_s": 2400.0})
    await again.start()
    try:
        assert again.idle_policy()["default"]["window_s"] == 2400.0, "the config's policy stays at a later start"
    finally:
        await again.stop()
    assert not [r for r in caplog.records if "idle" in r.getMessage()], caplog.text


async def test_s22_hubadmin22_h4_a_policy_key_at_the_top_names_it_and_shows_the_body_to_send(api: Any) -> None:
    status, answer = await api("PUT", "idle-policy", {"window_s": 600}, token=BOSS_TOKEN)
    assert status == 400, answer
    assert answer["error"]["field"] == "window_s", answer
    assert '{"default": {"window_s": 600}}' in answer["error"]["hint"], answer
