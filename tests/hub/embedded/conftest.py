"""Fixtures of the embedded-mode report test: pytest-jupyter's server fixtures (imported here, as
in tests/web, so its async test hooks apply to these tests only) and the started SchedApp."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403  (fixtures + async test hooks)


@pytest.fixture
def sched_app(jp_serverapp: Any, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """The loaded SchedApp (embedded), started as ServerApp._post_start starts extensions."""
    jp_asyncio_loop.run_until_complete(jp_serverapp.extension_manager.start_extension("jupyter_sched"))
    app = next(iter(jp_serverapp.extension_manager.extension_apps["jupyter_sched"]))
    yield app
    if app._started:
        jp_asyncio_loop.run_until_complete(app.stop_extension())
