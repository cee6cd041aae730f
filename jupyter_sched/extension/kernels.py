"""Kernel integration: inject the scheduler's address into kernels; release leases of dead kernels.

jupyter_server's ``MappingKernelManager.start_kernel(kernel_id=None, path=None, **kwargs)``
passes ``env`` down to the kernel provisioner (which uses ``os.environ`` when none is given).
We wrap the *instance's* ``start_kernel`` — whatever ``kernel_manager_class`` is configured —
to choose the kernel id up front and add ``JUPYTER_SCHED_URL``, ``JUPYTER_SCHED_TOKEN`` and
``JUPYTER_SCHED_KERNEL_ID``, so ``%gpu`` in that kernel reaches this server with no setup.
The env survives kernel restarts (the kernel manager keeps its launch arguments).

Shutdown is observed through jupyter_server's own kernel-action events (schema
``kernel_actions/v1``, emitted by ``ServerKernelManager``), so idle-culled and shut-down kernels
release their leases. A restart (asked for, or the kernel manager's automatic restart after a
crash) goes through ``before_restart`` *before* the new process is launched: it decides the new
process's GPUs (case 029, :mod:`.kernel_gpus`), which are written into the kernel's launch
environment with ``KernelManager.update_env``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..reclaim.idle import KERNEL_MANAGER

__all__ = ["KERNEL_ACTIONS_SCHEMA", "install_kernel_hooks", "kernel_alive_elsewhere", "kernel_env", "kernel_states",
           "release_orphan_leases"]

log = logging.getLogger(__name__)

KERNEL_ACTIONS_SCHEMA = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
_RELEASING_ACTIONS = frozenset({"shutdown", "restart"})


def kernel_env(*, url: str, token: str, kernel_id: str) -> dict[str, str]:
    """The variables a kernel gets: ``JUPYTER_SCHED_URL`` / ``_TOKEN`` / ``_KERNEL_ID``.

    A server spawned by JupyterHub has no token of its own (its identity provider accepts hub
    tokens): the kernel then gets the server's own hub token, ``$JUPYTERHUB_API_TOKEN``, which it
    inherits anyway (the kernel is the owner's process) and which the server resolves to its owner.
    """
    token = token or os.environ.get("JUPYTERHUB_API_TOKEN", "")
    return {"JUPYTER_SCHED_URL": url, "JUPYTER_SCHED_TOKEN": token, "JUPYTER_SCHED_KERNEL_ID": kernel_id}


def kernel_states(kernel_manager: Any) -> dict[str, dict[str, Any]]:
    """The server's kernels as the engine's idle rules read them (case 012: busy is not idle).

    Returns:
        ``{kernel_id: {"execution_state": "busy"|"idle"|..., "last_activity": datetime (UTC) | None,
        "pid": int | None, "source": "this server's kernel manager"}}`` — the one source of an embedded
        server's kernel states (no ``PUT api/sched/kernels`` is taken here: red39 R8). Called from the engine's worker thread: it only reads a copy of the
        kernel table and each kernel's attributes, never awaits.
    """
    out: dict[str, dict[str, Any]] = {}
    for kernel_id in list(getattr(kernel_manager, "_kernels", {})):
        try:
            km = kernel_manager.get_kernel(kernel_id)
        except KeyError:
            continue  # shut down meanwhile
        process = getattr(getattr(km, "provisioner", None), "process", None)
        out[kernel_id] = {"execution_state": getattr(km, "execution_state", None),
                          "last_activity": getattr(km, "last_activity", None),
                          "pid": getattr(process, "pid", None), "source": KERNEL_MANAGER}
    return out


def install_kernel_hooks(
    serverapp: Any,
    *,
    env_for: Callable[[str], Mapping[str, str]] | None,
    release: Callable[[str, str], Awaitable[None] | None],
    before_restart: Callable[[str], Awaitable[Mapping[str, str]]] | None = None,
) -> None:
    """Wrap the server's kernel manager and listen to kernel actions.

    Args:
        serverapp: the jupyter_server ``ServerApp`` (uses ``kernel_manager`` and ``event_logger``).
        env_for: ``env_for(kernel_id) -> {name: value}`` added to each new kernel's env; None to skip.
        release: ``release(kernel_id, action)`` called after a successful shutdown (and restart,
            when there is no ``before_restart``).
        before_restart: ``await before_restart(kernel_id) -> {name: value}`` for the restarted
            process's launch environment (None: restarts release like shutdowns).
    """
    releasing = _RELEASING_ACTIONS if before_restart is None else frozenset({"shutdown"})
    km = getattr(serverapp, "kernel_manager", None)
    if env_for is not None and km is not None and not getattr(km, "_jupyter_sched_wrapped", False):
        original = km.start_kernel

        async def start_kernel(*args: Any, kernel_id: str | None = None, **kwargs: Any) -> Any:
            if kernel_id is None or kernel_id not in km:
                kernel_id = kernel_id or km.new_kernel_id()
                env = dict(kwargs.get("env") or os.environ)
                env.update(env_for(kernel_id))
                kwargs["env"] = env
            result = original(*args, kernel_id=kernel_id, **kwargs)
            result = await result if inspect.isawaitable(result) else result
            if before_restart is not None and kernel_id in km:
                _hook_restart(km.get_kernel(kernel_id), kernel_id, before_restart)
            return result

        km.start_kernel = start_kernel
        km._jupyter_sched_wrapped = True

    event_logger = getattr(serverapp, "event_logger", None)
    if event_logger is None:
        log.warning("jupyter_sched: no event logger on this server; leases of shut-down kernels are "
                    "released only by idle reclamation")
        return

    async def on_kernel_action(logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        kernel_id = data.get("kernel_id")
        action = data.get("action")
        if not kernel_id or action not in releasing or data.get("status") != "success":
            return
        try:
            outcome = release(str(kernel_id), str(action))
            if inspect.isawaitable(outcome):
                await outcome
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("jupyter_sched: releasing leases of kernel %s after %s failed", kernel_id, action)

    event_logger.add_listener(schema_id=KERNEL_ACTIONS_SCHEMA, listener=on_kernel_action)


def _hook_restart(kernel: Any, kernel_id: str, before_restart: Callable[[str], Awaitable[Mapping[str, str]]]) -> None:
    """Run ``before_restart`` ahead of every restart of ``kernel`` (one ``KernelManager``) and put
    its answer in the launch environment the restart reuses (``update_env``, jupyter_client >= 8)."""
    if getattr(kernel, "_jupyter_sched_restart_hooked", False):
        return
    original = kernel.restart_kernel

    async def restart_kernel(*args: Any, **kwargs: Any) -> Any:
        env = await before_restart(kernel_id)
        kernel.update_env(env=dict(env))
        result = original(*args, **kwargs)
        return await result if inspect.isawaitable(result) else result

    kernel.restart_kernel = restart_kernel
    kernel._jupyter_sched_restart_hooked = True


def kernel_alive_elsewhere(kernel_id: str, runtime_dir: str) -> bool:
    """True when another Jupyter server on this host runs ``kernel_id``: its connection file
    ``kernel-<id>.json`` is in ``runtime_dir`` and its shell port accepts a connection (a kernel
    that died with its server leaves the file, not the listener)."""
    import json
    import socket

    path = os.path.join(runtime_dir, f"kernel-{kernel_id}.json")
    try:
        with open(path, encoding="utf-8") as fh:
            info = json.load(fh)
        address = (str(info.get("ip") or "127.0.0.1"), int(info["shell_port"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if info.get("transport", "tcp") != "tcp":
        return os.path.exists(address[0])
    try:
        with socket.create_connection(address, timeout=0.5):
            return True
    except OSError:
        return False


def release_orphan_leases(service: Any, kernel_manager: Any, runtime_dir: str) -> list[str]:
    """Embedded, at start: release live leases whose kernel no longer runs; their ids.

    A restarted server has none of its earlier kernels (a ``kill -9`` skipped the releases of the
    shutdown hooks). A lease is kept when its kernel is one of this server's kernels or another
    server on this host runs it (:func:`kernel_alive_elsewhere`: servers sharing one store and
    one runtime dir). Leases not bound to a kernel are left alone.
    """
    mine = set(kernel_manager.list_kernel_ids()) if kernel_manager is not None else set()
    released: list[str] = []
    for lease in service.list_jobs(user=None, state="pending,admitted,running", kind="lease"):
        kernel_id = lease.get("kernel_id")
        if not kernel_id or kernel_id in mine or kernel_alive_elsewhere(str(kernel_id), runtime_dir):
            continue
        done = service.release_kernel(str(kernel_id), reason="its kernel was gone when the server started")
        released += [str(item["id"]) for item in done or ()]
    if released:
        log.info("jupyter_sched: released %d lease(s) whose kernel was gone at start: %s", len(released), released)
    return released

