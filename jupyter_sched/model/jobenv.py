"""Which variables a job's ``env`` may set (one place: the request check, the local executor and the
Kubernetes manifest builder all read it).

A job's ``env`` is the user's own process environment, as in Slurm (``--export``) and Kubernetes
(``container.env``): ``PATH``, ``PYTHONPATH``, ``LD_LIBRARY_PATH``, ``LD_PRELOAD``, ``BASH_ENV`` change
only the user's own process, which runs as the user's account (the wrapper around it starts with
``python -I``, which reads no ``PYTHON*`` variable; set-uid programs ignore ``LD_*``), so they are
accepted. Refused (400 ``env.<KEY>``, audited, matched whatever the case):

- the scheduler's and the hub's own variables (``JUPYTER_SCHED_*``, ``JUPYTERHUB_*``, ``JPY_*``:
  credentials, identity, the job marker; new user 9), except the few in :data:`ACCEPTED_OWN`;
- the variables the NVIDIA (and AMD) container runtime reads to choose the devices a container
  sees (``NVIDIA_VISIBLE_DEVICES``…): a 0-GPU pod given ``NVIDIA_VISIBLE_DEVICES=all`` sees every
  GPU of its node (new user 10, N4) — the GPUs a job gets are its allocation's, nothing else;
- the account's identity (``HOME``, ``USER``, ``LOGNAME``): the scheduler sets them to the account
  the job runs as; ``USER=<another user>`` made a job's log and ``getpass.getuser()`` name someone
  else (new user 10, N5).
"""

from __future__ import annotations

__all__ = ["ACCEPTED_OWN", "device_variable", "refused_variable"]

_OWN_PREFIXES = ("JUPYTER_SCHED_", "JUPYTERHUB_", "JPY_")
ACCEPTED_OWN = frozenset({"JUPYTER_SCHED_JOB_ID", "JUPYTER_SCHED_GPU_MILLI", "JUPYTER_SCHED_URL",
                          "JUPYTER_SCHED_TOKEN"})
"""Of the scheduler's own names, the ones accepted (as spelled): JOB_ID and GPU_MILLI the executor
sets from the allocation (the submit answer notes the value given is not used, new user 7 F18); URL
and TOKEN are the client's own (a job that submits work or holds a kernel's lease passes the caller's)."""

_DEVICE_NAMES = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_MIG_CONFIG_DEVICES",
    "NVIDIA_MIG_MONITOR_DEVICES", "NVIDIA_IMEX_CHANNELS", "NVIDIA_GDS", "NVIDIA_MOFED", "NVIDIA_NVSWITCH",
    "NVIDIA_GDRCOPY", "NVIDIA_FABRIC_MANAGER", "AMD_VISIBLE_DEVICES",
})
_DEVICE_PREFIXES = ("NVIDIA_REQUIRE_",)
"""What nvidia-container-toolkit (and the AMD container toolkit) read from a container's environment
to expose devices and driver libraries. Other ``NVIDIA_*`` names (``NVIDIA_TF32_OVERRIDE``) are the
libraries' own settings and stay accepted."""

_IDENTITY = frozenset({"HOME", "USER", "LOGNAME"})


def device_variable(name: str) -> bool:
    """Whether ``name`` is read by a GPU container runtime to choose the devices a container sees."""
    upper = name.upper()
    return upper in _DEVICE_NAMES or upper.startswith(_DEVICE_PREFIXES)


def refused_variable(name: str) -> tuple[str, str] | None:
    """``(message, hint)`` when a job's ``env`` may not set ``name``; None when it may."""
    upper = name.upper()
    if upper.startswith(_OWN_PREFIXES) and name not in ACCEPTED_OWN:
        return (f"env {name} is the scheduler's or the hub's own variable: a job may not set it",
                f"remove {name}; the scheduler sets what a job needs (JUPYTER_SCHED_JOB_ID, CUDA_VISIBLE_DEVICES) itself")
    if device_variable(name):
        return (f"env {name} is read by the GPU container runtime to choose the devices a container sees: a job "
                "gets the GPUs of its allocation only",
                f"remove {name}; ask for GPUs with gpus (--gpus N) and the scheduler exposes those "
                "(CUDA_VISIBLE_DEVICES is set for you)")
    if upper in _IDENTITY:
        return (f"env {name} names the account: the scheduler sets {upper} to the account the job runs as",
                f"remove {name}; to move caches or config use e.g. XDG_CACHE_HOME, HF_HOME or TORCH_HOME")
    return None
