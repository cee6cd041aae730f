"""Which variables a job's ``env`` may set (one place: the request check, the local executor and the
Kubernetes manifest builder all read it).

A job's ``env`` is the user's own process environment, as in Slurm (``--export``) and Kubernetes
(``container.env``): ``PATH``, ``PYTHONPATH``, ``LD_LIBRARY_PATH``, ``LD_PRELOAD``, ``BASH_ENV`` change
only the user's own process, which runs as the user's account (the wrapper around it starts with
``python -I``, which reads no ``PYTHON*`` variable; set-uid programs ignore ``LD_*``), so they are
accepted. Refused (400 ``env.<KEY>``, audited, matched whatever the case):

- the scheduler's and the hub's own variables (``JUPYTER_SCHED_*``, ``JUPYTERHUB_*``, ``JPY_*``:
  credentials, identity, the job marker; new user 9), except a client's connection
  (:data:`ACCEPTED_OWN`): one rule for the family (new user 11, N9: ``JUPYTER_SCHED_JOB_ID`` and
  ``_GPU_MILLI`` were accepted with a note while ``_JOB_MARKER`` was refused) — the ones the
  scheduler sets in every job are refused like the rest, their value would never be used;
- the variables that choose the devices a job sees — what the NVIDIA (and AMD) container runtime
  reads (``NVIDIA_VISIBLE_DEVICES``…: a 0-GPU pod given ``NVIDIA_VISIBLE_DEVICES=all`` sees every
  GPU of its node, new user 10, N4) and what the GPU libraries read (``CUDA_VISIBLE_DEVICES``,
  ROCm's ``ROCR_VISIBLE_DEVICES`` / ``HIP_VISIBLE_DEVICES`` / ``GPU_DEVICE_ORDINAL``, oneAPI's
  ``ZE_AFFINITY_MASK`` / ``ONEAPI_DEVICE_SELECTOR``: ``CUDA_VISIBLE_DEVICES=0,1,2,3`` on a 0-GPU
  job was silently replaced while the ROCm ones passed, red team 15, R1) — the GPUs a job gets are
  its allocation's, nothing else: the local executor sets the CUDA, ROCR and HIP ones to it and
  fences the others' device files (:mod:`jupyter_sched.executors.limits`);
- the account's identity (``HOME``, ``USER``, ``LOGNAME``): the scheduler sets them to the account
  the job runs as; ``USER=<another user>`` made a job's log and ``getpass.getuser()`` name someone
  else (new user 10, N5).
"""

from __future__ import annotations

__all__ = ["ACCEPTED_OWN", "device_variable", "refused_variable", "refused_variables", "refused_why"]

_OWN_PREFIXES = ("JUPYTER_SCHED_", "JUPYTERHUB_", "JPY_")
ACCEPTED_OWN = frozenset({"JUPYTER_SCHED_URL", "JUPYTER_SCHED_TOKEN"})
"""Of the scheduler's own names, the ones accepted (as spelled): the client's connection (a job that
submits work or holds a kernel's lease passes the caller's). Every other ``JUPYTER_SCHED_*`` is
refused, the ones the executor sets in each job (``JOB_ID``, ``GPU_MILLI``) included."""

_DEVICE_NAMES = frozenset({
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_MIG_CONFIG_DEVICES",
    "NVIDIA_MIG_MONITOR_DEVICES", "NVIDIA_IMEX_CHANNELS", "NVIDIA_GDS", "NVIDIA_MOFED", "NVIDIA_NVSWITCH",
    "NVIDIA_GDRCOPY", "NVIDIA_FABRIC_MANAGER", "AMD_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK",
    "ONEAPI_DEVICE_SELECTOR",
})
_DEVICE_PREFIXES = ("NVIDIA_REQUIRE_",)
"""What nvidia-container-toolkit (and the AMD container toolkit) read from a container's environment
to expose devices and driver libraries, and what CUDA, ROCm and oneAPI read to choose the devices
a process sees. Other ``NVIDIA_*`` / ``CUDA_*`` names (``NVIDIA_TF32_OVERRIDE``,
``CUDA_DEVICE_ORDER``) are the libraries' own settings and stay accepted."""

_IDENTITY = frozenset({"HOME", "USER", "LOGNAME"})


def device_variable(name: str) -> bool:
    """Whether ``name`` is read by a GPU runtime (container runtime, CUDA, ROCm, oneAPI) to choose
    the devices a container or process sees."""
    upper = name.upper()
    return upper in _DEVICE_NAMES or upper.startswith(_DEVICE_PREFIXES)


_WORDS = {
    "scheduler": ("is the scheduler's own variable", "are the scheduler's own variables",
                  ": of JUPYTER_SCHED_*, a job may set only JUPYTER_SCHED_URL and JUPYTER_SCHED_TOKEN (a client's "
                  "connection, for a job that submits work); the scheduler sets the others in every job itself",
                  "the job reads JUPYTER_SCHED_JOB_ID, JUPYTER_SCHED_GPU_MILLI and CUDA_VISIBLE_DEVICES as the "
                  "scheduler sets them"),
    "hub": ("is the hub's own variable", "are the hub's own variables",
            ": a job sets none of JUPYTERHUB_* or JPY_* (the hub's identity and credentials)",
            "the scheduler runs the job as your account"),
    "device": ("is read", "are read", " by the GPU runtime (the container runtime, CUDA, ROCm or oneAPI) to choose the "
               "devices a job sees: a job gets the GPUs of its allocation only",
               "ask for GPUs with gpus (--gpus N) and the scheduler exposes those (CUDA_VISIBLE_DEVICES, "
               "ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES are set for you)"),
    "identity": ("names the account", "name the account",
                 ": the scheduler sets HOME, USER and LOGNAME to the account the job runs as",
                 "to move caches or config use e.g. XDG_CACHE_HOME, HF_HOME or TORCH_HOME"),
}
"""Per kind of refused variable: what one is, what several are, why, and what to do instead."""


def _kind(name: str) -> str | None:
    upper = name.upper()
    if upper.startswith("JUPYTER_SCHED_") and name not in ACCEPTED_OWN:
        return "scheduler"
    if upper.startswith(_OWN_PREFIXES[1:]):
        return "hub"
    if device_variable(name):
        return "device"
    return "identity" if upper in _IDENTITY else None


def refused_variable(name: str) -> tuple[str, str] | None:
    """``(message, hint)`` when a job's ``env`` may not set ``name``; None when it may."""
    kind = _kind(name)
    if kind is None:
        return None
    one, _, why, instead = _WORDS[kind]
    return f"env {name} {one}{why}", f"remove {name}; {instead}"


_WHY = {"scheduler": "the scheduler's own variable (a job may set only JUPYTER_SCHED_URL and JUPYTER_SCHED_TOKEN)",
        "hub": "the hub's own variable (identity and credentials)",
        "device": "read by the GPU runtime to choose the devices a job sees (the scheduler sets them from the allocation)",
        "identity": "names the account (the scheduler sets it to the account the job runs as)"}
"""Per kind of refused variable, why in a few words: the keys of a refusal's ``details.why``, kept
whole on its audit record where the message is cut at 500 characters."""


def refused_why(names: list[str]) -> dict[str, list[str]]:
    """``{why: [names]}``: every name of ``names`` a job may not set, grouped by why (empty when all
    may be set)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if (kind := _kind(name)) is not None:
            groups.setdefault(_WHY[kind], []).append(name)
    return groups


def refused_variables(names: list[str]) -> tuple[str, str, str, list[str]] | None:
    """Every name of ``names`` a job may not set, in one refusal (new user 11, N9: they came one
    failed submit at a time), grouped by why: ``(field, message, hint, refused names)`` — the field
    the first one's, ``env.<KEY>``, as a single refusal reads — or None when all may be set. Each
    name's why in a few words: :func:`refused_why`."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if (kind := _kind(name)) is not None:
            groups.setdefault(kind, []).append(name)
    if not groups:
        return None
    refused = [name for group in groups.values() for name in group]
    parts = [f"{', '.join(group)} {_WORDS[kind][0] if len(group) == 1 else _WORDS[kind][1]}{_WORDS[kind][2]}"
             for kind, group in groups.items()]
    message = f"env {parts[0]}" if len(refused) == 1 else \
        f"env sets {len(refused)} variables a job may not set: " + "; ".join(parts)
    hint = "; ".join([f"remove {', '.join(refused)}", *(_WORDS[kind][3] for kind in groups)])
    return f"env.{refused[0]}", message, hint, refused
