"""Profiles: named request templates defined by admins (the design documents' template library).

Example: ``bert-finetune`` → 4 GPUs of at least 40 GiB with NVLink, priority normal, 12 h.
A submission naming a profile starts from its defaults; fields the user gives override them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import SchedError, UnschedulableError, ValidationError

__all__ = ["Profile", "from_profile", "profiles_from_config", "profiles_past_the_nodes"]

_PROFILE_KEYS = frozenset({
    "gpus", "model", "gpu_models", "mem_per_gpu", "min_memory_mib", "mig_profile", "nvlink",
    "cpu", "memory", "priority", "time_limit", "team", "kind", "image", "workers", "env",
})


@dataclass(frozen=True, slots=True)
class Profile:
    """A named request template.

    Attributes:
        name: the name users type (``--profile bert-finetune``).
        description: one line shown in listings.
        defaults: request fields (the keys of a submission body) the template fills in.
    """

    name: str
    description: str = ""
    defaults: Mapping[str, Any] = field(default_factory=dict)


def from_profile(err: SchedError, body: Mapping[str, Any], profiles: Mapping[str, Profile] | None) -> SchedError:
    """``err`` (can never fit the inventory) said of the profile when the value it refuses came from the profile
    named in ``body``, not from the body itself (newuser38 n28: ``--profile bert`` of a 99-GPU profile was "--gpus: needs 99 GPUs … ask for
    at most 4 GPUs", blaming an option never typed): field ``profile``, the message opening with the profile's
    name and the value it sets, the hint naming the admin's fix and the override. Changed in place (class,
    details and audit mark stay); ``err`` as it is otherwise."""
    name = body.get("profile")
    profile = (profiles or {}).get(name) if isinstance(name, str) else None
    nested = body.get("resources")
    typed = {**(nested if isinstance(nested, Mapping) else {}), **body}
    field_ = err.field or ""
    if not isinstance(err, UnschedulableError) or profile is None or field_ not in profile.defaults or \
            typed.get(field_) is not None:
        return err  # a quota's refusal is the caller's, whatever asked the GPUs (case 030: one decision)
    value = profile.defaults[field_]
    said = f"profile {name!r} sets {field_} {value}"
    err.details = {**(err.details or {}), "from_profile": said}  # a client re-rendering details.reason keeps it
    err.message = f"{said}: {err.message}"
    err.hint = (f"ask an admin to fix c.SchedApp.profiles[{name!r}], or give {field_} yourself to override it"
                + (f" ({err.hint})" if err.hint else ""))
    err.field = "profile"
    err.args = (err.message,)
    return err


def profiles_past_the_nodes(profiles: Mapping[str, Profile], largest_node_gpus: int) -> list[str]:
    """One sentence per profile whose GPUs per worker are more than the largest node has (newuser38 n28: a
    99-GPU profile on a 4-GPU host was taken silently, and every ``--profile`` of it refused): said at start.
    ``largest_node_gpus``: the GPUs of the largest node (0: no GPUs here; nothing is said then — the start says so)."""
    said = []
    for name, profile in sorted(profiles.items()):
        gpus = profile.defaults.get("gpus")
        if largest_node_gpus < 1 or isinstance(gpus, bool) or not isinstance(gpus, (int, float)) or \
                gpus <= largest_node_gpus:
            continue
        said.append(f"c.SchedApp.profiles[{name!r}] asks for {gpus:g} GPUs per worker but the largest node has "
                    f"{largest_node_gpus}: every job of --profile {name} is refused until it asks for at most "
                    f"{largest_node_gpus} (or the job gives gpus itself)")
    return said


def profiles_from_config(raw: Mapping[str, Any]) -> dict[str, Profile]:
    """Build profiles from config ``{name: {"description": ..., "gpus": 4, ...}}``.

    Raises:
        ValidationError: a profile is not an object or uses an unknown key.
    """
    out: dict[str, Profile] = {}
    for name, body in raw.items():
        if not isinstance(body, Mapping):
            raise ValidationError(f"profile {name!r} must be an object", field=f"profiles.{name}",
                                  hint='e.g. {"gpus": 4, "mem_per_gpu": "40GiB"}')
        defaults = {k: v for k, v in body.items() if k != "description"}
        unknown = sorted(set(defaults) - _PROFILE_KEYS)
        if unknown:
            raise ValidationError(f"profile {name!r}: unknown key {unknown[0]!r}",
                                  field=f"profiles.{name}.{unknown[0]}",
                                  hint="known keys: " + ", ".join(sorted(_PROFILE_KEYS)))
        profile = Profile(name=name, description=str(body.get("description", "")), defaults=defaults)
        _check_values(profile)
        out[name] = profile
    return out


def _check_values(profile: Profile) -> None:
    """Refuse, at start, a profile whose values no submission could use (new user 4: ``"mem_per_gpu":
    "40 gigs"`` started fine, then every ``--profile bert`` user was told to fix a --mem-per-gpu
    they never typed, and the admin heard nothing).

    Raises:
        ValidationError: field ``profiles.<name>.<key>``, the value's own message and fix.
    """
    from .validation import spec_from_request  # validation imports this module

    body: dict[str, Any] = {"profile": profile.name}
    if not {"command", "script", "notebook"} & set(profile.defaults):
        body["command"] = ["true"]  # what to run is the submission's; only the template is checked
    try:
        spec_from_request(body, user="profile-check", profiles={profile.name: profile})
    except ValidationError as exc:
        key = (exc.field or "").split(".")[0].split("[")[0]
        if key not in profile.defaults:
            return  # what the submission must add (an inference service's port…), not the template's fault
        message = exc.message[len(key) + 2:] if exc.message.startswith(f"{key}: ") else exc.message
        raise ValidationError(message, field=f"profiles.{profile.name}.{key}", hint=exc.hint) from None
