"""Verify 21, V5: ``%schedule define show dny`` (a name) said "no definition 'dny' visible to you"
while ``jupyter-sched definitions show dny`` found it: the magic took ids only. Every ``%schedule
define`` action on a definition now takes its name the way the CLI does (one resolver for both).
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.client._wire import Req
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.define import run_define

DNY = {"id": "d-1abc", "name": "dny", "script": "dny.py", "cron": None, "timezone": "UTC", "paused": False,
       "parameters": {}, "gpus": 1, "runs": [], "upcoming": []}


def _server(definitions: list[dict[str, Any]], seen: list[str]) -> Any:
    def call(req: Req) -> Any:
        seen.append(f"{req.method} {req.path}")
        if req.path == "definitions":
            return definitions
        wanted = req.path.split("/")[1]
        match = [d for d in definitions if d["id"] == wanted]
        if not match:
            raise AssertionError(f"the magic asked for {wanted!r}, not an id")
        return match[0]
    return call


@pytest.mark.parametrize("action", ["show", "runs", "pause", "resume"])
def test_verify21_v5_schedule_define_takes_a_definitions_name(action: str) -> None:
    seen: list[str] = []
    said: list[str] = []
    run_define(_server([DNY, {**DNY, "id": "d-2other", "name": "other"}], seen), [action, "dny"],
               resolve=lambda p, what: p, say=said.append)
    assert [s for s in seen if s != "GET definitions"] and all("d-1abc" in s for s in seen if s != "GET definitions"), seen


def test_verify21_v5_two_definitions_with_the_name_are_told_apart_by_id() -> None:
    seen: list[str] = []
    with pytest.raises(ValidationError) as refused:
        run_define(_server([DNY, {**DNY, "id": "d-2twin"}], seen), ["show", "dny"],
                   resolve=lambda p, what: p, say=lambda s: None)
    assert "2 of your definitions are named 'dny'" in str(refused.value), refused.value
    assert "d-1abc" in str(refused.value.hint) and "d-2twin" in str(refused.value.hint), refused.value.hint
