"""``GET config`` is the same answer object while its fields are equal (its JSON and ETag reused;
every ``jupyter-sched status`` asks for it), and a new one as soon as a setting changes (issue 17)."""

from __future__ import annotations

from typing import Any


async def test_the_config_answer_is_kept_until_a_setting_changes(sched_app: Any, api: Any) -> None:
    first = sched_app.capabilities()
    assert sched_app.capabilities() is first, "nothing changed: the same answer"
    status, body = await api("GET", "config")
    assert status == 200 and body["stop_grace_s"] == first.to_wire()["stop_grace_s"]
    sched_app.stop_grace_s = first.to_wire()["stop_grace_s"] + 7
    changed = sched_app.capabilities()
    assert changed is not first and changed.to_wire()["stop_grace_s"] == first.to_wire()["stop_grace_s"] + 7
    status, body = await api("GET", "config")
    assert status == 200 and body["stop_grace_s"] == changed.to_wire()["stop_grace_s"], "served, not the old one"
