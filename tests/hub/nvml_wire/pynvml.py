"""The fake NVML library (tests/hardware/fake_nvml.py) as the ``pynvml`` module of a *separate process*:
the hub's central service, started with this folder first on ``PYTHONPATH``. There is no GPU here.

One H200 whose compute process list is read, at each NVML call that lists it, from the JSON file named by
``$JUPYTER_SCHED_FAKE_NVML`` (``{"processes": [[pid, MiB], ...]}``), so a test sets what NVML lists — as
the driver would, while a process holds a CUDA context — from outside the service.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_REPO = str(_HERE.parents[2])
del sys.modules[__name__]  # the real nvidia-ml-py first: the fake uses its error classes
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
importlib.import_module("pynvml")
sys.path.append(_REPO)

from tests.hardware.fake_nvml import FakeDevice, FakeNvml  # noqa: E402

GPU = "GPU-5a21d0c6-7f3e-4b2a-9c1d-2e3f4a5b6c7d"


class _FileNvml(FakeNvml):
    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:
        try:
            listed = json.loads(Path(os.environ["JUPYTER_SCHED_FAKE_NVML"]).read_text()).get("processes", [])
        except (OSError, ValueError, KeyError):
            listed = []
        device = self.devices[0]
        device.processes = [(int(pid), float(mib), None) for pid, mib in listed]
        device.used_mib = sum(float(mib) for _, mib in listed)
        return super().nvmlDeviceGetComputeRunningProcesses(handle)


sys.modules[__name__] = _FileNvml([FakeDevice(uuid=GPU, name="NVIDIA H200", bus_id="00000000:10:00.0",  # type: ignore[assignment]
                                              total_mib=143771.0, used_mib=0.0, util_gpu=0.0)])
