"""JupyterHub spawn form whose GPU profiles follow the cluster's GPU capacity (case 027 Z).

On a cluster without GPU nodes a GPU profile used to start a pod that waited until the spawn
timed out (operate-first/support#70). :class:`GpuProfiles` asks the central service (``GET
inventory``) each time the form is shown or submitted, so a GPU node that joins makes the
options available without restarting the hub or the service. In ``jupyterhub_config.py``::

    from jupyter_sched.hub.spawn_form import GpuProfiles

    profiles = GpuProfiles(
        service_url="http://127.0.0.1:10101/services/jupyter-sched/",  # the service's own URL
        token=os.environ["JUPYTER_SCHED_FORM_TOKEN"],  # a hub service token allowed to access it
        profiles=[{"name": "cpu", "display_name": "CPU only", "gpus": 0},
                  {"name": "gpu-small", "display_name": "1 GPU", "gpus": 1}])
    c.Spawner.options_form = profiles.options_form
    c.Spawner.options_from_form = profiles.options_from_form
    c.Spawner.apply_user_options = profiles.apply_user_options  # JupyterHub >= 5.3: API spawns too

The chosen profile reaches the spawner as ``user_options = {"profile": name, "gpus": n}``.
When the service does not answer, GPU profiles stay offered with a note (the service still
refuses a GPU job at submit when there are no GPUs).

``user_options`` is user input: a user's own token may start their server through the REST API
(``POST /hub/api/users/{name}/server`` with any ``user_options``), which never passes through
``options_from_form``. :meth:`GpuProfiles.apply_user_options` is what JupyterHub runs for every
spawn, form or API: it checks the profile again, takes its GPUs from the configured profile
(never from the request) and rewrites ``spawner.user_options`` to that; give ``apply=`` to
set the spawner's GPU resources from the checked profile (red-team 3 finding 1).

Importing this module imports nothing from JupyterHub; the refusal is a ``tornado.web.HTTPError``
(400) whose ``jupyterhub_message`` JupyterHub shows above the form.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tornado import web

from ..client.aio import AsyncSchedClient
from ..client.discovery import Connection
from ..errors import SchedError

__all__ = ["NO_GPU_NODES", "GpuCapacity", "GpuProfiles", "SpawnProfile", "gpu_capacity", "render_form"]

NO_GPU_NODES = "this cluster has no GPU nodes"
"""Why GPU profiles are disabled on a Kubernetes cluster without GPUs (case 027's wording)."""


@dataclass(frozen=True, slots=True)
class SpawnProfile:
    """One choice of the spawn form.

    Attributes:
        name: the value submitted (``user_options["profile"]``); letters, digits, ``-`` ``_`` ``.``.
        display_name: the label shown.
        gpus: whole GPUs the profile's server asks for (0: a CPU profile, always offered).
        description: one line shown under the label ("" for none).
    """

    name: str
    display_name: str
    gpus: int = 0
    description: str = ""

    @classmethod
    def of(cls, value: SpawnProfile | Mapping[str, Any]) -> SpawnProfile:
        """A profile from a ``{"name", "display_name", "gpus", "description"}`` mapping (or itself).

        Raises:
            ValueError: a missing or bad field, named.
        """
        if isinstance(value, SpawnProfile):
            return value
        name = str(value.get("name") or "")
        if not name or not all(ch.isalnum() or ch in "-_." for ch in name):
            raise ValueError(f"spawn profile name {name!r}: use letters, digits, '-', '_' or '.'")
        gpus = value.get("gpus", 0)
        if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 0:
            raise ValueError(f"spawn profile {name}: gpus must be a whole number >= 0, got {gpus!r}")
        return cls(name=name, display_name=str(value.get("display_name") or name), gpus=gpus,
                   description=str(value.get("description") or ""))


@dataclass(frozen=True, slots=True)
class GpuCapacity:
    """What the service's inventory says about GPUs.

    Attributes:
        known: False when the service did not answer (``why`` says what happened).
        gpus: GPUs in the inventory (whole GPUs and MIG-mode parents, healthy or not).
        why: the sentence shown beside a disabled GPU profile, or the note when ``known`` is False.
    """

    known: bool
    gpus: int = 0
    why: str = ""

    @property
    def gpu_profiles_allowed(self) -> bool:
        """False only when the service said there are no GPUs."""
        return not self.known or self.gpus > 0


def gpu_capacity(inventory: Mapping[str, Any]) -> GpuCapacity:
    """Read a ``GET inventory`` answer: how many GPUs, and why GPU profiles are off when none."""
    nodes = inventory.get("nodes") or ()
    gpus = sum(len(node.get("gpus") or ()) for node in nodes if isinstance(node, Mapping))
    if gpus:
        return GpuCapacity(known=True, gpus=gpus)
    if inventory.get("source") == "kubernetes":
        return GpuCapacity(known=True, why=NO_GPU_NODES)
    nvml = inventory.get("nvml") if isinstance(inventory.get("nvml"), Mapping) else None
    cause = f" ({nvml['error']})" if nvml and nvml.get("error") else ""
    return GpuCapacity(known=True, why=f"the scheduler has no GPUs{cause}")


class GpuProfiles:
    """``options_form`` / ``options_from_form`` for ``c.Spawner`` (module docstring).

    Args:
        service_url: the central service's base URL, ending in ``/`` (``{url}api/sched/`` is its API).
        token: a hub token whose scopes include ``access:services!service=<the service>``.
        profiles: the choices, in order (:class:`SpawnProfile` or mappings).
        timeout_s: seconds to wait for the service before showing GPU profiles with a note.
        apply: ``apply(spawner, profile)`` (may be async), run by :meth:`apply_user_options` with
            the checked profile: where the admin sets the spawner's GPU resources, e.g.
            ``spawner.extra_resource_limits = {"nvidia.com/gpu": str(profile.gpus)}``.

    Raises:
        ValueError: no profiles, a bad profile, or two with one name.
    """

    def __init__(self, service_url: str, token: str, profiles: Iterable[SpawnProfile | Mapping[str, Any]], *,
                 timeout_s: float = 5.0,
                 apply: Callable[[Any, SpawnProfile], Awaitable[None] | None] | None = None) -> None:
        self.connection = Connection(url=service_url if service_url.endswith("/") else service_url + "/", token=token)
        self.profiles: tuple[SpawnProfile, ...] = tuple(SpawnProfile.of(p) for p in profiles)
        if not self.profiles:
            raise ValueError("GpuProfiles needs at least one profile")
        names = [p.name for p in self.profiles]
        if len(set(names)) != len(names):
            raise ValueError(f"spawn profile names must differ: {', '.join(names)}")
        self.timeout_s = timeout_s
        self.apply = apply

    async def capacity(self) -> GpuCapacity:
        """The service's GPU capacity now (asked on every call: a node that joins counts at once)."""
        try:
            async with AsyncSchedClient(self.connection, timeout_s=self.timeout_s) as sched:
                return gpu_capacity(await sched.inventory())
        except SchedError as exc:
            return GpuCapacity(known=False, why=f"GPU availability unknown: the scheduler did not answer ({exc})")

    async def options_form(self, spawner: Any = None) -> str:
        """The form's HTML: one radio button per profile; GPU profiles disabled, with the reason,
        when the cluster has no GPUs. ``spawner`` is JupyterHub's (unused: the answer is the same
        for every user)."""
        capacity = await self.capacity()
        return render_form(self.profiles, capacity)

    async def options_from_form(self, formdata: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """``{"profile": name, "gpus": n}`` for the submitted profile (default: the first offered).

        Raises:
            tornado.web.HTTPError: 400 for an unknown profile, or a GPU profile while the cluster
                has no GPUs (the message says so and what to do; JupyterHub shows it on the form).
        """
        profile = self._checked((formdata.get("profile") or [""])[0], await self.capacity())
        return {"profile": profile.name, "gpus": profile.gpus}

    async def apply_user_options(self, spawner: Any, user_options: Mapping[str, Any] | None) -> None:
        """``c.Spawner.apply_user_options`` (JupyterHub >= 5.3 runs it for every spawn, form or
        REST API): check ``user_options["profile"]`` as the form is checked, set
        ``spawner.user_options`` to ``{"profile": name, "gpus": n}`` with the configured
        profile's GPUs (a ``gpus`` sent with the request is ignored), then run ``apply``.

        Raises:
            tornado.web.HTTPError: 400 for a profile that is not a name, an unknown profile, or a
                GPU profile while the cluster has no GPUs (JupyterHub answers the spawn request with it).
        """
        chosen: Any = (user_options or {}).get("profile") or ""
        if isinstance(chosen, list) and len(chosen) == 1:  # passthrough form data: a list of one value
            chosen = chosen[0]
        if not isinstance(chosen, str):
            raise _refusal(f"profile must be a profile name (got {type(chosen).__name__}); "
                           f"choose one of: {', '.join(p.name for p in self.profiles)}")
        profile = self._checked(chosen, await self.capacity())
        spawner.user_options = {"profile": profile.name, "gpus": profile.gpus}
        if self.apply is not None:
            result = self.apply(spawner, profile)
            if result is not None:
                await result

    def _checked(self, chosen: str, capacity: GpuCapacity) -> SpawnProfile:
        """The profile named ``chosen`` (empty: the first offered) if it may start now.

        Raises:
            tornado.web.HTTPError: 400 for an unknown profile or a GPU profile while the cluster has no GPUs.
        """
        if not chosen:
            chosen = next((p.name for p in self.profiles if p.gpus == 0 or capacity.gpu_profiles_allowed),
                          self.profiles[0].name)
        profile = next((p for p in self.profiles if p.name == chosen), None)
        if profile is None:
            shown = chosen if len(chosen) <= 80 else chosen[:80] + "…"  # user input: echoed short
            raise _refusal(f"unknown profile {shown!r}; choose one of: {', '.join(p.name for p in self.profiles)}")
        if profile.gpus and not capacity.gpu_profiles_allowed:
            raise _refusal(f"{capacity.why}: profile {profile.name} asks for {profile.gpus} "
                           f"GPU{'s' if profile.gpus != 1 else ''}; choose a CPU profile, or ask an admin to add "
                           "a GPU node pool")
        return profile


def render_form(profiles: Sequence[SpawnProfile], capacity: GpuCapacity) -> str:
    """The form's HTML for ``profiles`` under ``capacity`` (every value escaped)."""
    allowed = capacity.gpu_profiles_allowed
    first = next((p.name for p in profiles if p.gpus == 0 or allowed), "")
    rows = []
    for p in profiles:
        enabled = p.gpus == 0 or allowed
        label = html.escape(p.display_name)
        note = "" if enabled else f' <span class="text-muted">({html.escape(capacity.why)})</span>'
        description = f'<div class="text-muted small">{html.escape(p.description)}</div>' if p.description else ""
        rows.append(
            f'<div class="radio{"" if enabled else " disabled"}"><label>'
            f'<input type="radio" name="profile" value="{html.escape(p.name)}"'
            f'{" checked" if p.name == first else ""}{"" if enabled else " disabled"}'
            f' data-gpus="{p.gpus}"> {label}{note}</label>{description}</div>')
    heading = ""
    if not allowed:
        heading = f'<p class="alert alert-warning">GPU profiles are unavailable: {html.escape(capacity.why)}.</p>'
    elif not capacity.known:
        heading = f'<p class="text-muted">{html.escape(capacity.why)}</p>'
    return f'<div class="jupyter-sched-profiles">{heading}{"".join(rows)}</div>'


def _refusal(message: str) -> web.HTTPError:
    error = web.HTTPError(400, "%s", message)
    error.jupyterhub_message = message  # type: ignore[attr-defined]  # what JupyterHub shows on the form
    return error
