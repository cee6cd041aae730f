"""Server restarts on one store, SQLite and PostgreSQL: the services built anew from settings, as a
server start does (run-time state that must outlive a restart: new user 20 N26 quota lines, N21
memberships). Each module says which settings it varies and which start-up warnings it reads; the
store is tests/services/conftest.py's ``db_url`` (both databases)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from jupyter_sched.services import Services, build_services


class Restarts:
    """Builds the services on one store, as a server start does; each start closes the last."""

    def __init__(self, db_url: str, root: Path, caplog: pytest.LogCaptureFixture) -> None:
        self.db_url, self.root, self.caplog, self.built = db_url, root, caplog, None  # type: Services | None

    def start_with(self, settings: Mapping[str, Any], said: str) -> tuple[Services, list[str]]:
        """Start on ``settings`` (over the store and a simulated, telemetry-less inventory); return the
        services and the start-up WARNINGs that contain ``said`` (e.g. ``"quotas:"``)."""
        self.stop()
        base = {"db_url": self.db_url, "log_dir": str(self.root / "logs"), "inventory_source": "simulated",
                "telemetry_source": "off"}
        self.caplog.clear()
        with self.caplog.at_level(logging.WARNING, logger="jupyter_sched"):
            self.built = build_services({**base, **settings})
        return self.built, [r.getMessage() for r in self.caplog.records if said in r.getMessage()]

    def stop(self) -> None:
        if self.built is not None:
            self.built.store.close()
            self.built = None


R = TypeVar("R", bound=Restarts)


def restarting(server: R) -> Iterator[R]:
    """A ``server`` fixture's body: yields it, closes its store after the test."""
    yield server
    server.stop()
