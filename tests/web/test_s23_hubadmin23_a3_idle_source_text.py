"""hubadmin23 A3: after the config replaced a PUT idle policy, GET idle-policy's ``source`` was
``{"set_by": "config", "set_at": null}`` — no time, no words — where GET quotas' source has both.

A real jupyter_server with jupyter_sched on a tmp SQLite store (tests/web/conftest.py); the restart
builds a service from the same store with a changed ``idle_window_s``, as an edited config does.
"""

from __future__ import annotations

import re
from typing import Any

from jupyter_sched.services import SchedulerService
from jupyter_sched.services.idle import idle_config

from .conftest import BOSS_TOKEN

WHEN = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"


async def test_s23_hubadmin23_a3_the_idle_policy_s_source_says_who_when_and_in_words(sched_app: Any, api: Any) -> None:
    status, put = await api("PUT", "idle-policy", {"default": {"window_s": 900}}, token=BOSS_TOKEN)
    assert status == 200, put
    assert re.fullmatch(f"PUT idle-policy by boss at {WHEN}", put["source"]["text"]), put["source"]

    settings = dict(sched_app.service_settings())
    changed = SchedulerService.from_config({**settings, "idle_window_s": settings["idle_window_s"] + 600.0})
    await changed.start()
    try:
        source = changed.idle_policy()["source"]
        config_source = idle_config(changed, sched_app)["source"]  # what GET config's idle says
    finally:
        await changed.stop()
    assert source["set_by"] == "config" and source["set_at"] is not None, source
    assert re.fullmatch(f"the config file \\(c.SchedApp.idle_\\*\\) at {WHEN}", source["text"]), source
    assert config_source == source, config_source

    again = SchedulerService.from_config({**settings, "idle_window_s": settings["idle_window_s"] + 600.0})
    await again.start()
    try:
        assert again.idle_policy()["source"] == source, "a later start keeps when the config took over"
    finally:
        await again.stop()
