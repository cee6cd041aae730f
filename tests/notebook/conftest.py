"""A real jupyter_server with jupyter_sched loaded (pytest-jupyter) and real kernels started by it.

Kernels are started through the server's own kernel manager, so they receive the
``JUPYTER_SCHED_URL`` / ``_TOKEN`` / ``_KERNEL_ID`` environment the extension injects, and they
talk to the server over loopback HTTP like any notebook kernel. The server listens on a random
port (pytest-jupyter's ``jp_http_port``) with tmp Jupyter dirs and a tmp SQLite store; the
inventory is the simulated default (this machine has no GPU).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from nb_harness import Kernel, sched_server_config
from pytest_jupyter.jupyter_server import *  # noqa: F403  (fixtures + async test hooks)


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    """Override in a test module to change ``c.SchedApp`` settings."""
    return {}


@pytest.fixture
def jp_server_config(tmp_path: Path, sched_settings: dict[str, Any]) -> dict[str, Any]:
    return sched_server_config(tmp_path, **sched_settings)


@pytest.fixture
def jp_base_url() -> str:
    return "/"


@pytest.fixture
def sched_app(jp_serverapp: Any, jp_asyncio_loop: asyncio.AbstractEventLoop, jp_web_app: Any,
              http_server: Any) -> Any:
    """The loaded SchedApp, started as ServerApp._post_start starts extensions; the HTTP server listens."""
    jp_asyncio_loop.run_until_complete(jp_serverapp.extension_manager.start_extension("jupyter_sched"))
    return next(iter(jp_serverapp.extension_manager.extension_apps["jupyter_sched"]))


@pytest.fixture
def start_kernel(sched_app: Any, jp_serverapp: Any,
                 jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Callable[..., Awaitable[Kernel]]]:
    """``await start_kernel(path="")`` → a :class:`Kernel` with the extension loaded; shut down afterwards."""
    kernels: list[Kernel] = []

    async def start(path: str = "", load: bool = True) -> Kernel:
        kernel = await Kernel.launch(jp_serverapp, path)
        kernels.append(kernel)
        if load:
            result = await kernel.run("%load_ext jupyter_sched")
            assert result.error is None, result.text
        return kernel

    yield start

    async def shutdown() -> None:
        for kernel in kernels:
            kernel.stop()
            if kernel.id in jp_serverapp.kernel_manager:
                await jp_serverapp.kernel_manager.shutdown_kernel(kernel.id, now=True)

    jp_asyncio_loop.run_until_complete(shutdown())
