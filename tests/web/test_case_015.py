"""Case 015 through the API: a host without NVML starts, reports no GPUs, rejects local GPU jobs at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import server_config


def _nvml_missing() -> bool:
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return True
    pynvml.nvmlShutdown()
    return False


pytestmark = pytest.mark.skipif(not _nvml_missing(), reason="this host has a working NVML; case 015 needs one without")


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    # auto: no inventory file, NVML missing -> simulated inventory of 0 GPUs, NVML status attached.
    return server_config(tmp_path, inventory_source="auto", simulated_gpus=0)


async def test_case_015_server_starts_and_inventory_reports_no_gpus_with_the_nvml_error(sched_app: Any,
                                                                                       api: Any) -> None:
    status, inv = await api("GET", "inventory")
    assert status == 200
    assert inv["gpus"] == []
    assert inv["nvml"]["available"] is False
    assert "NVML shared library not found" in inv["nvml"]["error"]


async def test_case_015_local_gpu_job_is_rejected_immediately(sched_app: Any, api: Any) -> None:
    status, body = await api("POST", "jobs", {"gpus": 1, "command": ["true"]})
    assert status == 422, body
    assert "local executor has 0 GPUs" in body["error"]["message"], body
    assert "NVML shared library not found" in body["error"]["message"]
    assert body["error"]["field"] == "gpus" and body["error"]["hint"]
    _, listing = await api("GET", "jobs")
    assert listing == []

