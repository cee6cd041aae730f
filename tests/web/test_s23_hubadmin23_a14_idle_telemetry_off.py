"""hubadmin23 A14: moving the service to an inventory file (telemetry off) replaced the admin's PUT
idle policy with one nobody configured (7200 s, the policy object's default), audited as "config";
idle reclaim was then off, said only at INFO ("telemetry off …").

A real jupyter_server with jupyter_sched on a tmp SQLite store (tests/web/conftest.py); each restart
builds a service from the same settings and store, as a server restart does — one with
``telemetry_source = "off"`` stands in for the static inventory file (no collector for it).
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.reclaim import IdlePolicies, idle_policies_to_dict
from jupyter_sched.services import SchedulerService
from jupyter_sched.services.idle import IDLE_SOURCE
from jupyter_sched.store.quota_source import config_digest

from .conftest import BOSS_TOKEN


async def _restart(settings: dict[str, Any]) -> dict[str, Any]:
    service = SchedulerService.from_config(settings)
    await service.start()
    try:
        return dict(service.idle_policy())
    finally:
        await service.stop()


async def _idle_records(api: Any) -> list[dict[str, Any]]:
    status, records = await api("GET", "audit", token=BOSS_TOKEN, params={"action": "idle_policy_set"})
    assert status == 200, records
    return list(records)


async def test_s23_hubadmin23_a14_telemetry_off_keeps_the_admin_s_put_and_warns_idle_reclaim_is_off(
        sched_app: Any, api: Any, caplog: pytest.LogCaptureFixture) -> None:
    status, put = await api("PUT", "idle-policy", {"default": {"window_s": 900}}, token=BOSS_TOKEN)
    assert status == 200 and put["source"]["set_by"] == "boss", put
    settings = dict(sched_app.service_settings())  # unchanged throughout, as the admin's was
    window = settings["idle_window_s"]
    assert window not in (900.0, IdlePolicies().default.window_s), window

    caplog.clear()
    caplog.set_level("WARNING", logger="jupyter_sched.services.idle")
    off = await _restart({**settings, "telemetry_source": "off"})  # the only change: no telemetry
    assert off["default"]["window_s"] == 900.0, off  # boss's, not 7200 s nobody configured
    assert off["source"]["set_by"] == "boss" and off["active"] is False, off
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "replaces the one boss set" not in said, said
    assert "idle reclaim is off: telemetry is off" in said and f"asks for a window of {window:g} s" in said, said
    assert "set c.SchedApp.telemetry_source" in said, said
    assert [r["actor"] for r in await _idle_records(api)] == ["boss"], "no config record replaced the PUT"

    back = await _restart(settings)  # and back on telemetry: boss's still, not the config's
    assert back["default"]["window_s"] == 900.0 and back["source"]["set_by"] == "boss", back
    assert [r["actor"] for r in await _idle_records(api)] == ["boss"]


async def test_s23_hubadmin23_a14_a_digest_an_older_telemetry_off_start_noted_replaces_no_put(
        sched_app: Any, api: Any) -> None:
    """Earlier versions noted the default policy's digest at a telemetry-off start: the first start
    after an upgrade must not read that as a changed config and throw the PUT away."""
    status, _ = await api("PUT", "idle-policy", {"default": {"window_s": 900}}, token=BOSS_TOKEN)
    assert status == 200
    settings = dict(sched_app.service_settings())
    store = sched_app.services.store
    with store.transaction() as tx:  # what such a start left in the store
        tx.note_quota_source("boss", digest=config_digest([idle_policies_to_dict(IdlePolicies())]), name=IDLE_SOURCE)
    shown = await _restart(settings)
    assert shown["default"]["window_s"] == 900.0 and shown["source"]["set_by"] == "boss", shown
    assert [r["actor"] for r in await _idle_records(api)] == ["boss"]
