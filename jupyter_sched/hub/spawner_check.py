"""Whether this hub's spawner fences users' notebook servers, said plainly at the service's start
(new user 22: the start-up line "user servers are fenced where the hub's spawner is
…FencedLocalProcessSpawner" was logged on a hub whose spawner was the stock one — a condition the
reader took for "are fenced").

The service cannot read the hub's configuration, but the hub says its spawner class in ``GET info``
(scope ``read:hub``, in the service role of ``server/jupyterhub_config.py``). Three answers:

- the spawner is :data:`FENCED_SPAWNER` (or a class of that name): the servers are fenced;
- another spawner: they are **not** fenced, with the setting that fences them;
- no answer (no ``read:hub``, the hub down): it says it cannot tell, and both cases.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..executors.server_fence import NOT_FENCED
from .hubapi import HubClient, HubLookupError

__all__ = ["FENCED_SPAWNER", "spawner_fence_line", "spawner_fence_said"]

FENCED_SPAWNER = "jupyter_sched.hub.fence.FencedLocalProcessSpawner"
"""The spawner class that puts each server in its account's devices group (:mod:`.fence`)."""

_WHAT = ("each account's notebook server and kernels open no GPU but those of its granted kernel leases "
         "(devices group jupyter_sched/servers/u<uid>)")
_OPEN = "any hub user's notebook server or kernel on this host can open any GPU"


def spawner_fence_line(spawner: str | None, why_unknown: str = "") -> tuple[bool, str]:
    """``(warn, line)`` for a host that can fence servers, given the hub's spawner class.

    Args:
        spawner: ``GET info``'s ``spawner.class`` (None: not known).
        why_unknown: why it is not known (said when ``spawner`` is None).

    Returns:
        Whether the line is a warning (not fenced, or not known), and the line.
    """
    if spawner is not None and (spawner == FENCED_SPAWNER or spawner.endswith(".FencedLocalProcessSpawner")):
        return False, (f"user servers are fenced: this hub's spawner is {spawner}: {_WHAT} "
                       "(unless c.FencedLocalProcessSpawner.fence_gpus = False, which the hub's log says per spawn)")
    if spawner is not None:
        return True, (f"{NOT_FENCED}: this hub's spawner is {spawner}, not {FENCED_SPAWNER}: {_OPEN} — set "
                      f'c.JupyterHub.spawner_class = "{FENCED_SPAWNER}" in the hub\'s config to fence them')
    return True, (f"user servers may not be fenced: this service cannot tell the hub's spawner ({why_unknown}); "
                  f"they are fenced only where c.JupyterHub.spawner_class is {FENCED_SPAWNER}, else {_OPEN} — "
                  "give the service's role the scope read:hub to have this said plainly")


async def spawner_fence_said(hub: HubClient) -> tuple[bool, str]:
    """:func:`spawner_fence_line` for the hub ``hub`` answers for (``GET info``); never raises."""
    try:
        info = await hub.request("GET", "info")
    except HubLookupError as exc:
        why = ("its role lacks the scope read:hub, which GET info needs" if exc.status == 403 else
               f"GET info: {exc}")
        return spawner_fence_line(None, why)
    spawner = info.get("spawner") if isinstance(info, Mapping) else None
    name = spawner.get("class") if isinstance(spawner, Mapping) else None
    if not isinstance(name, str) or not name:
        return spawner_fence_line(None, "GET info named no spawner class")
    return spawner_fence_line(name[:200])
