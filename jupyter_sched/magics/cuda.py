"""Is CUDA already initialised in this process? (case 017)

CUDA reads ``CUDA_VISIBLE_DEVICES`` once, when the runtime initialises in the process
(vllm#571, pytorch#80876, pytorch#23544). Setting it later silently does nothing, so ``%gpu``
must check first. Cheap checks only — none of them initialises CUDA itself:

- ``torch``: ``torch.cuda.is_initialized()`` when ``torch`` is already in ``sys.modules``;
- ``jax``: a ``cuda``/``gpu`` backend in ``jax._src.xla_bridge._backends`` (created lazily on first use);
- ``tensorflow``: the eager context handle exists (``tensorflow.python.eager.context``);
- ``cupy``: a CUDA device was touched (``cupy.cuda.runtime`` reports a current context via the
  memory pool having allocated blocks);
- NVML: this process's PID in any device's compute/graphics process list (works for every
  framework, needs the driver).

Frameworks that are imported but not initialised are reported separately: the variable can still
take effect, but some versions read it at import (torch 1.12, pytorch#80876), so the magic warns.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["FRAMEWORKS", "GPU_NOTICE_ENV", "CudaState", "announce_gpu_notice", "cuda_state"]

GPU_NOTICE_ENV = "JUPYTER_SCHED_GPU_NOTICE"
"""Set in a restarted kernel's launch environment by the server (case 029): what happened to its GPUs."""

FRAMEWORKS = ("torch", "tensorflow", "jax", "cupy")


@dataclass(frozen=True, slots=True)
class CudaState:
    """What this process has done with CUDA so far.

    Attributes:
        initialized_by: evidence that CUDA is initialised, e.g. ``("torch.cuda.is_initialized()",)``.
        imported: GPU frameworks imported but (as far as cheap checks see) not initialised.
    """

    initialized_by: tuple[str, ...] = ()
    imported: tuple[str, ...] = ()

    @property
    def initialized(self) -> bool:
        """True when any check saw an initialised CUDA context."""
        return bool(self.initialized_by)


def _torch(module: Any) -> bool:
    return bool(module.cuda.is_initialized())


def _jax(_module: Any) -> bool:
    bridge = sys.modules.get("jax._src.xla_bridge")
    backends = getattr(bridge, "_backends", None) or {}
    return any(name in ("cuda", "gpu", "rocm") for name in backends)


def _tensorflow(_module: Any) -> bool:
    context = sys.modules.get("tensorflow.python.eager.context")
    if context is None:
        return False
    ctx = getattr(context, "_context", None)
    return ctx is not None and getattr(ctx, "_context_handle", None) is not None


def _cupy(module: Any) -> bool:
    pool = module.get_default_memory_pool()
    return int(pool.total_bytes()) > 0


_CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "torch": ("torch.cuda.is_initialized()", _torch),
    "jax": ("jax GPU backend created", _jax),
    "tensorflow": ("tensorflow eager context created", _tensorflow),
    "cupy": ("cupy memory pool holds GPU memory", _cupy),
}


def _nvml_has_pid(pid: int) -> bool:
    """True when NVML lists ``pid`` with a context on any GPU; False when NVML is unavailable."""
    try:
        import pynvml
    except ImportError:
        return False
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    try:
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            for getter in (pynvml.nvmlDeviceGetComputeRunningProcesses,
                           pynvml.nvmlDeviceGetGraphicsRunningProcesses):
                try:
                    if any(int(p.pid) == pid for p in getter(handle)):
                        return True
                except pynvml.NVMLError:
                    continue
        return False
    except pynvml.NVMLError:
        return False
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def cuda_state(*, use_nvml: bool = True) -> CudaState:
    """Inspect this process (see the module docstring for the checks); never initialises CUDA.

    Args:
        use_nvml: also look for this PID in NVML's process lists (needs the NVIDIA driver).
    """
    initialized: list[str] = []
    imported: list[str] = []
    for name in FRAMEWORKS:
        module = sys.modules.get(name)
        if module is None:
            continue
        evidence, check = _CHECKS[name]
        try:
            hit = check(module)
        except Exception:  # a stub or an odd version: treat as imported, not initialised
            hit = False
        (initialized if hit else imported).append(evidence if hit else name)
    if use_nvml and _nvml_has_pid(os.getpid()):
        initialized.append(f"NVML lists this kernel's PID {os.getpid()}")
    return CudaState(initialized_by=tuple(initialized), imported=tuple(imported))


def announce_gpu_notice(shell: Any) -> None:
    """Print the server's restart notice (``GPU-cccc re-attached (lease l-…)``) once in this kernel.

    The GPUs themselves were set in the launch environment before this process started (case
    029); this only tells the user. Loaded at kernel start (an admin's
    ``c.InteractiveShellApp.extensions``), the line appears in the output of the first cell run;
    loaded by ``%load_ext`` inside a cell, it appears there.
    """
    notice = os.environ.pop(GPU_NOTICE_ENV, "")
    if not notice:
        return
    if getattr(shell, "parent_header", None):  # inside a cell's execution: say it now
        print(notice, flush=True)
        return

    def first_cell(*_: Any) -> None:
        print(notice, flush=True)
        shell.events.unregister("pre_run_cell", first_cell)

    shell.events.register("pre_run_cell", first_cell)
