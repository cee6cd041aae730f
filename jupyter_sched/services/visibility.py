"""What a caller may see of other users' work, decided in one place (issue 15: hub users share GPUs).

- Job, lease and warning events carry their owner (``data.user``): a user sees their own, an
  admin everyone's; a team's budget warning (``data.team``, no user) goes to that team's members
  and admins (red team 6: it went to every user); events without an owner (inventory) go to everyone.
- GPU samples (``GET telemetry`` and ``telemetry`` events) show process lists and pod names only
  for GPUs the caller holds (admins: all); utilization and memory stay visible to everyone (the
  panel charts the cluster).
- The foreign-process alerts (processes on GPUs the scheduler did not hand out, case 014) and the
  idle list of other users' work are for admins only.
- A job or lease event carries its reason in words for the one receiving it (``reason.text``,
  as a REST answer does; its owner reads what of their own blocks it).

Pure functions over plain dicts: the services and the event fan-out call them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..admission import Caller
from .models.jobs import job_in_words

__all__ = ["HOLDERS_KEY", "event_for", "redact_samples", "telemetry_for"]

HOLDERS_KEY = "_holders"
"""Key of a ``telemetry`` event's data mapping GPU uuid → users holding it (never sent to a client)."""

_PRIVATE_SAMPLE_FIELDS: dict[str, Any] = {"processes": [], "pod": None, "namespace": None, "container": None}


def _held(sample: Mapping[str, Any], held: Collection[str]) -> bool:
    return sample.get("gpu_uuid") in held or (sample.get("mig_uuid") or "") in held


def redact_samples(samples: Iterable[Mapping[str, Any]], held: Collection[str]) -> list[dict[str, Any]]:
    """``samples`` with process lists and pod names removed on GPUs not in ``held`` (uuids, MIG too)."""
    return [dict(s) if _held(s, held) else {**s, **_PRIVATE_SAMPLE_FIELDS} for s in samples]


def telemetry_for(caller: Caller, body: Mapping[str, Any], held: Collection[str],
                  own_jobs: Collection[str]) -> dict[str, Any]:
    """A ``GET telemetry`` answer as ``caller`` may see it (``held``: GPU uuids of their work;
    ``own_jobs``: their job ids)."""
    if caller.admin:
        return dict(body)
    out = dict(body)
    out["foreign"] = []
    out["idle"] = [item for item in body.get("idle", ()) if item.get("job_id") in own_jobs]
    out["gpus"] = [{**gpu, "current": redact_samples([gpu["current"]], held)[0] if gpu.get("current") else None,
                    "recent": redact_samples(gpu.get("recent", ()), held)} for gpu in body.get("gpus", ())]
    return out


def event_for(caller: Caller, event: Mapping[str, Any]) -> dict[str, Any] | None:
    """``event`` as ``caller`` may receive it, or None when it is not theirs to see."""
    kind, data = event.get("type"), event.get("data")
    if kind == "telemetry" and isinstance(data, Mapping):
        holders: Mapping[str, Collection[str]] = data.get(HOLDERS_KEY) or {}
        public = {k: v for k, v in data.items() if k != HOLDERS_KEY}
        if not caller.admin:
            held = {uuid for uuid, users in holders.items() if caller.user in users}
            public["gpus"] = redact_samples(public.get("gpus", ()), held)
        return {"type": kind, "data": public}
    owner = data.get("user") if isinstance(data, Mapping) else None
    if not caller.admin and owner is not None and owner != caller.user:
        return None
    if (kind == _BUDGET_EVENT and not caller.admin and isinstance(data, Mapping)
            and data.get("team") not in caller.teams):
        return None
    if kind in _JOB_EVENTS and isinstance(data, Mapping):
        return {**event, "data": job_in_words(dict(data), viewer=caller.user)}
    return dict(event)


_BUDGET_EVENT = "budget_warning"
"""Event type of a budget warning (:data:`jupyter_sched.hub.budgets.BUDGET_ACTION`): a team's
spending, for its members and admins only."""

_JOB_EVENTS = frozenset({"job", "lease", "preempted"})
"""Event types whose data is one job or lease (``job_to_dict``)."""
