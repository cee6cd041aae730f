"""red32's small ones: ``jupyter-sched audit --action reclaim_dropped`` was refused as an unknown action (the action is
written through a module constant, which the scan of literal writers missed), and during a store outage the hub's
budget check logged a ~110-line traceback at ERROR each try beside the outage's one line (red32 n1)."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from jupyter_sched.errors import StoreError
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.services.audit import AUDIT_ACTIONS
from jupyter_sched.store.outage import UNREACHABLE

PACKAGE = Path(__file__).resolve().parents[2] / "jupyter_sched"


def test_red32_every_audit_action_a_module_names_as_a_constant_is_known() -> None:
    named = {m.group(1) for path in PACKAGE.rglob("*.py")
             for m in re.finditer(r'^ACTION(?:_[A-Z]+)? = "([a-z_]+)"$', path.read_text(), re.M)}
    assert "reclaim_dropped" in named
    assert named <= AUDIT_ACTIONS, sorted(named - AUDIT_ACTIONS)


def test_red32_n1_a_budget_check_during_a_store_outage_leaves_it_to_the_outage_line(
        caplog: pytest.LogCaptureFixture) -> None:
    async def down(*_args: object) -> None:
        raise StoreError("store failure: OperationalError: the database does not answer", field="db_url",
                         details={UNREACHABLE: True})

    app = SimpleNamespace(off_loop=down, services=None)
    with caplog.at_level(logging.DEBUG, logger="jupyter_sched.hub.central"):
        asyncio.run(HubSchedApp._check_budgets(app))  # type: ignore[arg-type]
    said = [r for r in caplog.records if "budget check failed" in r.getMessage()]
    assert said and all(r.levelno == logging.DEBUG for r in said), [(r.levelname, r.getMessage()) for r in said]

    async def broken(*_args: object) -> None:
        raise ValueError("a fault worth reading")

    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="jupyter_sched.hub.central"):
        asyncio.run(HubSchedApp._check_budgets(SimpleNamespace(off_loop=broken, services=None)))  # type: ignore[arg-type]
    assert [r.levelno for r in caplog.records if "budget check failed" in r.getMessage()] == [logging.ERROR]
