"""Inventory changes reach push clients: a GPU going unhealthy in the inventory file (read by the
engine at every cycle) arrives as an ``inventory`` event while the stream is open, for every user.

Owned by i21-panel (the panel folds these events into its inventory view).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import JUDY_TOKEN, server_config
from .test_events import open_stream


def inventory_yaml(healthy: bool) -> str:
    gpu1: dict[str, Any] = {"uuid": "GPU-ui-1", "model": "A100-80GB", "memory": "80GiB"}
    if not healthy:
        gpu1.update(healthy=False, health_reason="Xid 79: GPU fell off the bus")
    return yaml.safe_dump({"nodes": [{"name": "node-a", "gpus": [
        {"uuid": "GPU-ui-0", "model": "A100-80GB", "memory": "80GiB"}, gpu1]}]})


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "inventory.yaml"
    path.write_text(inventory_yaml(healthy=True))
    return server_config(tmp_path, inventory_source="static", inventory_file=str(path), cycle_interval=0.2,
                         inventory_refresh_s=0.2)


async def test_a_gpu_going_unhealthy_is_pushed_as_an_inventory_event(sched_app: Any, api: Any, http_server_port: Any,
                                                                     jp_base_url: str, tmp_path: Path) -> None:
    status, inventory = await api("GET", "inventory", token=JUDY_TOKEN)
    assert status == 200 and [g["health"] for g in inventory["gpus"]] == ["healthy", "healthy"]
    reader, writer = await open_stream(http_server_port[1], jp_base_url, JUDY_TOKEN)
    try:
        assert " 200 " in (await reader.readline()).decode()
        await asyncio.sleep(0.5)  # a few cycles on the healthy file: the publisher's baseline
        (tmp_path / "inventory.yaml").write_text(inventory_yaml(healthy=False))
        started = time.monotonic()
        event_type = ""
        while True:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
            if line.startswith("event: "):
                event_type = line[len("event: "):]
            elif line.startswith("data: ") and event_type == "inventory":
                data = json.loads(line[len("data: "):])
                break
        print(f"inventory event {time.monotonic() - started:.2f} s after the file changed")
        assert data["source"] == "static"
        [change] = data["changes"]
        assert change["kind"] == "gpu" and change["what"] == "health"
        assert change["gpu"]["uuid"] == "GPU-ui-1" and change["gpu"]["health"] == "unhealthy"
        assert change["gpu"]["health_reason"] == "Xid 79: GPU fell off the bus"
    finally:
        writer.close()
