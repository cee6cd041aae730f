"""Builders for the definitions tests: one "server" = the real services over a store.

Each :class:`Server` is the scheduler's own composition root (:class:`~jupyter_sched.services.Services`)
on a shared database with a simulated inventory, a local executor in a temporary folder and a
manual clock: definitions are saved, fired and run-now'ed through the same admission step as
``POST jobs``. Requests go in as the REST layer sends them: parsed request models and a Caller.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.definitions import DefinitionSettings, DefinitionsService
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import (
    CreateDefinitionRequest,
    GetDefinitionRequest,
    ListDefinitionsRequest,
    RunDefinitionRequest,
    UpdateDefinitionRequest,
)
from jupyter_sched.store import SortableIds, Store


class Server:
    """One scheduler process on ``url`` (its own Store connection pool, ids and engine)."""

    def __init__(self, url: str, clock: ManualClock, jobs_dir: Path, **settings: Any) -> None:
        self.clock = clock
        self.services = Services(store=Store(url, now=clock.now), inventory=SimulatedInventory(4, node="n1"),
                                 executor=LocalExecutor(jobs_dir), clock=clock, ids=SortableIds(clock.now),
                                 definitions=DefinitionSettings(**settings))
        self.store = self.services.store

    @property
    def definitions(self) -> DefinitionsService:
        return self.services.definitions

    def caller(self, user: str, admin: bool = False) -> Any:
        return self.services.caller(user, admin=admin)

    def create(self, body: dict[str, Any], *, user: str) -> dict[str, Any]:
        request = parse(CreateDefinitionRequest, body)
        return dict(self.definitions.create(self.caller(user), request).to_wire())

    def update(self, definition_id: str, body: dict[str, Any], *, user: str, admin: bool = False) -> dict[str, Any]:
        request = parse(UpdateDefinitionRequest, body)
        return dict(self.definitions.update(self.caller(user, admin), definition_id, request).to_wire())

    def get(self, definition_id: str, *, user: str, admin: bool = False) -> dict[str, Any]:
        answer = self.definitions.get(self.caller(user, admin), definition_id, GetDefinitionRequest())
        return dict(answer.to_wire())

    def list(self, *, user: str, admin: bool = False, everyone: bool = False) -> list[dict[str, Any]]:
        answer = self.definitions.list(self.caller(user, admin), ListDefinitionsRequest(all=everyone))
        return list(answer.definitions.to_wire())

    def delete(self, definition_id: str, *, user: str) -> dict[str, Any]:
        return dict(self.definitions.delete(self.caller(user), definition_id).to_wire())

    def pause(self, definition_id: str, *, user: str) -> dict[str, Any]:
        return dict(self.definitions.pause(self.caller(user), definition_id).to_wire())

    def resume(self, definition_id: str, *, user: str) -> dict[str, Any]:
        return dict(self.definitions.resume(self.caller(user), definition_id).to_wire())

    def run_now(self, definition_id: str, body: dict[str, Any], *, user: str) -> dict[str, Any]:
        request = parse(RunDefinitionRequest, body)
        return dict(self.definitions.run_now(self.caller(user), definition_id, request).to_wire())

    def fire_due(self) -> Any:
        return self.definitions.fire_due()


MakeServer = Callable[[str, ManualClock], Server]
"""Makes one server on a database URL with a clock (a fixture of the tests that need several)."""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)
