"""New user 22 (small items): on a hub whose spawner was the stock one, the service's start-up log
said "user servers are fenced where the hub's spawner is …FencedLocalProcessSpawner" — a condition
read as "are fenced". The service now asks the hub its spawner class (``GET info``, scope
``read:hub``) and says plainly which applies: fenced, not fenced (with the setting), or that it
cannot tell (and both cases)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_sched.hub.hubapi import HubLookupError
from jupyter_sched.hub.spawner_check import FENCED_SPAWNER, spawner_fence_said


class _Hub:
    """The hub's ``GET info`` answer (or its refusal), as :class:`~jupyter_sched.hub.hubapi.HubAPI` raises it."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def request(self, method: str, path: str, body: Any = None, *, paginated: bool = False) -> Any:
        self.asked.append(f"{method} {path}")
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _said(answer: Any) -> tuple[bool, str]:
    hub = _Hub(answer)
    said = asyncio.run(spawner_fence_said(hub))
    assert hub.asked == ["GET info"]
    return said


def test_s22_newuser22_small_stock_spawner_is_said_not_to_fence() -> None:
    warn, line = _said({"spawner": {"class": "jupyterhub.spawner.SimpleLocalProcessSpawner", "version": "5.3.0"}})
    assert warn and line.startswith("user servers are not fenced: this hub's spawner is "
                                    "jupyterhub.spawner.SimpleLocalProcessSpawner, not " + FENCED_SPAWNER), line
    assert "can open any GPU" in line and f'c.JupyterHub.spawner_class = "{FENCED_SPAWNER}"' in line, line


def test_s22_newuser22_small_fenced_spawner_is_said_to_fence() -> None:
    warn, line = _said({"spawner": {"class": FENCED_SPAWNER, "version": "0.1.0"}})
    assert not warn and line.startswith(f"user servers are fenced: this hub's spawner is {FENCED_SPAWNER}: "), line


@pytest.mark.parametrize(("answer", "why"), [
    (HubLookupError("GET info: hub answered 403: Action is not authorized with current scopes", 403), "read:hub"),
    (HubLookupError("GET info: no answer from the hub", 0), "no answer from the hub"),
    ({"version": "5.3.0"}, "named no spawner class"),
], ids=["no read:hub scope", "hub down", "no spawner in the answer"])
def test_s22_newuser22_small_unknown_spawner_is_said_as_unknown(answer: Any, why: str) -> None:
    warn, line = _said(answer)
    assert warn and line.startswith("user servers may not be fenced: this service cannot tell the hub's spawner ("), line
    assert why in line and "can open any GPU" in line and FENCED_SPAWNER in line, line
