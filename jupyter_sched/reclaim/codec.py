"""JSON wire shape of the idle policy (``GET|PUT api/sched/idle-policy``; pure, no I/O).

Shape::

    {"default": POLICY, "by_priority": {"high" | "normal" | "low": POLICY},
     "by_kind": {"lease" | "training" | "inference": POLICY + {"by_priority": {class: POLICY}}}}

    POLICY = {"enabled": bool, "threshold_pct": % in (0, 100], "window_s": s > 0 (0 in a change: enabled false),
              "warning_s": s in [0, window_s), "grace_s": s >= 0,
              "busy_kernel_window_s": s >= window_s | null,
              "lease_mode" | "busy_kernel_mode" | "job_mode" | "service_mode":
                  "release" | "requeue" | "stop" | "notify",
              "max_gap_s": s > 0, "keepalive_max_s": s >= 0}

Reading is a *merge*: a key left out keeps its value in ``base`` (the current policy) — the
``default`` block merges into ``base.default``; a priority block merges into the new default (so
``{"by_priority": {"low": {"window_s": 1800}}}`` gives low-priority work a shorter window and
everything else of the default); a kind block merges into the new default too, and a kind's
``by_priority`` block into that kind's policy. ``by_priority`` / ``by_kind`` left out keep the
current ones. Which policy applies to a job: :meth:`IdlePolicies.for_job` (most specific wins).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from ..errors import ValidationError, shown
from ..model import JobKind, PriorityClass
from ..model.validation import fold_priority
from .policy import IdlePolicies, IdlePolicy, ReclaimMode, warning_example

__all__ = ["idle_policies_from_dict", "idle_policies_to_dict", "idle_policy_from_dict", "idle_policy_to_dict",
           "longest_idle_window_s"]

_NUMBERS = ("threshold_pct", "window_s", "warning_s", "grace_s", "max_gap_s", "keepalive_max_s")
_MODES = ("lease_mode", "busy_kernel_mode", "job_mode", "service_mode")
_KNOWN = tuple(f.name for f in fields(IdlePolicy))
_EXAMPLE = '{"default": {"window_s": 7200, "warning_s": 900}, "by_priority": {"low": {"window_s": 1800}}}'


def idle_policy_to_dict(policy: IdlePolicy) -> dict[str, Any]:
    """One policy as JSON (every field; modes as their string values; seconds as floats)."""
    out: dict[str, Any] = {}
    for name in _KNOWN:
        value = getattr(policy, name)
        out[name] = value.value if isinstance(value, ReclaimMode) else value
    return out


def idle_policies_to_dict(policies: IdlePolicies) -> dict[str, Any]:
    """``{"default": POLICY, "by_priority": {class: POLICY}, "by_kind": {kind: POLICY + by_priority}}``
    (classes and kinds sorted by name; a kind without its own policy but with class overrides
    shows the default's fields)."""
    by_kind: dict[str, Any] = {}
    for kind in sorted(set(policies.by_kind) | set(policies.by_kind_priority)):
        block = idle_policy_to_dict(policies.by_kind.get(kind, policies.default))
        per_class = policies.by_kind_priority.get(kind, {})
        if per_class:
            block["by_priority"] = {k: idle_policy_to_dict(v) for k, v in sorted(per_class.items())}
        by_kind[kind] = block
    return {"default": idle_policy_to_dict(policies.default),
            "by_priority": {k: idle_policy_to_dict(v) for k, v in sorted(policies.by_priority.items())},
            "by_kind": by_kind}


def idle_policy_from_dict(data: Any, *, base: IdlePolicy, where: str) -> IdlePolicy:
    """Merge the JSON object ``data`` into ``base``; ``where`` prefixes error fields (``idle.default``).

    Raises:
        ValidationError: not an object, an unknown key, a value of the wrong type or out of range;
            ``field`` is ``<where>.<key>`` (e.g. ``idle.normal.window_s``) and the hint says the fix.
    """
    if not isinstance(data, Mapping):
        raise ValidationError(f"{where} must be an object", field=where,
                              hint='e.g. {"window_s": 7200, "warning_s": 900}')
    unknown = sorted(str(k) for k in data if k not in _KNOWN)
    if unknown:
        raise ValidationError(f"{where}.{unknown[0]} is not an idle-policy field", field=f"{where}.{unknown[0]}",
                              hint="known fields: " + ", ".join(_KNOWN))
    changes: dict[str, Any] = {}
    for key, value in data.items():
        field = f"{where}.{key}"
        if key == "window_s" and _is_zero(value):
            # 0 turns idle reclamation off, as c.SchedApp.idle_window_s = 0 does (new user 17, N18: the
            # trait's "0 disables" was a 400 here); the window itself stays what it was
            if data.get("enabled") is True:
                raise ValidationError(f"{field} 0 turns idle reclamation off, and {where}.enabled is true",
                                      field=field, hint="give a window, e.g. 7200 for 2 h, or leave enabled out")
            changes["enabled"] = False
        elif key == "enabled":
            if not isinstance(value, bool):
                raise ValidationError(f"{field} must be true or false (got {value!r})", field=field,
                                      hint="false turns idle reclamation off for this class")
            changes[key] = value
        elif key in _MODES:
            try:
                changes[key] = ReclaimMode(value) if isinstance(value, str) else ReclaimMode("?")
            except ValueError:
                raise ValidationError(f"{field} must be release, requeue, stop or notify (got {value!r})",
                                      field=field, hint="e.g. notify: tell the user and admins, free nothing"
                                      ) from None
        elif key == "busy_kernel_window_s" and value is None:
            changes[key] = None
        else:
            if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
                raise ValidationError(f"{field} must be a number of {'%' if key == 'threshold_pct' else 'seconds'} "
                                      f"(got {value!r})", field=field,
                                      hint="e.g. 5" if key == "threshold_pct" else "e.g. 7200 for 2 h")
            changes[key] = float(value)
    merged = {name: changes.get(name, getattr(base, name)) for name in _KNOWN}
    _check(merged, where)
    try:
        return replace(base, **changes)
    except ValidationError as err:  # IdlePolicy's own checks (names idle.<key>): point at this block
        name = (err.field or "").rpartition(".")[2] or "window_s"
        raise ValidationError(err.message, field=f"{where}.{name}", hint=err.hint) from None


def _is_zero(value: Any) -> bool:
    """``0`` or ``0.0`` (not ``false``, which is a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


def _check(values: Mapping[str, Any], where: str) -> None:
    """Range checks with the field named, before :class:`IdlePolicy` sees the values."""
    window = values["window_s"]
    rules: list[tuple[str, bool, str, str]] = [
        ("grace_s", values["grace_s"] >= 0, "must be at least 0", "e.g. 900 for 15 min after the window; 0 for none"),
        ("threshold_pct", 0 < values["threshold_pct"] <= 100, "must be a percentage above 0 and at most 100", "e.g. 5"),
        # 0 is accepted before this check (it turns reclamation off), so the rule says it (new user 20, N19)
        ("window_s", window > 0, "must be 0 (off) or more seconds", "e.g. 7200 for 2 h; 0 (or enabled false) turns idle "
                                                                      "reclamation off"),
        ("warning_s", 0 <= values["warning_s"] < window, f"must be at least 0 and less than window_s ({window:g} s)",
         warning_example(window)),
        ("busy_kernel_window_s", values["busy_kernel_window_s"] is None or values["busy_kernel_window_s"] >= window,
         f"must be at least window_s ({window:g} s), or null", "a busy kernel gets at least as long as an idle one"),
        ("max_gap_s", values["max_gap_s"] > 0, "must be more than 0", "e.g. 600"),
        ("keepalive_max_s", values["keepalive_max_s"] >= 0, "must be at least 0", "e.g. 7200; 0 disables keepalive"),
    ]
    for key, ok, what, hint in rules:
        if not ok:
            value = values[key]
            value = int(value) if isinstance(value, float) and value.is_integer() else value
            raise ValidationError(f"{where}.{key} {what} (got {shown(value)})", field=f"{where}.{key}", hint=hint)


def idle_policies_from_dict(data: Any, *, base: IdlePolicies | None = None) -> IdlePolicies:
    """Read ``{"default": POLICY, "by_priority": {...}, "by_kind": {...}}`` merged into ``base``
    (module docstring).

    Raises:
        ValidationError: a bad shape or value; ``field`` is ``idle``, ``idle.default.<key>``,
            ``idle.by_priority``, ``idle.<priority class>.<key>``, ``idle.by_kind``,
            ``idle.<kind>.<key>`` or ``idle.<kind>.<priority class>.<key>``.
    """
    base = base if base is not None else IdlePolicies()
    if not isinstance(data, Mapping):
        raise ValidationError("the idle policy must be a JSON object", field="idle", hint=f"e.g. {_EXAMPLE}")
    unknown = sorted(str(k) for k in data if k not in ("default", "by_priority", "by_kind"))
    if unknown:  # the field as the body has it, not under an "idle." the body does not have (hubadmin22 H4)
        key = unknown[0][:80]
        hint = "known fields: default, by_priority, by_kind"
        if key in {f.name for f in fields(IdlePolicy)}:  # a policy's own key at the top: it goes under "default"
            value = data[unknown[0]]
            said = json.dumps(value) if isinstance(value, (int, float, str, bool)) and len(str(value)) <= 40 else "…"
            hint = f'a policy\'s {key} goes under "default": send {{"default": {{"{key}": {said}}}}}' + \
                "; by_priority and by_kind take it too"
        raise ValidationError(f"{key} is not a field of the idle policy", field=key, hint=hint)
    default = base.default if "default" not in data else idle_policy_from_dict(
        data["default"], base=base.default, where="idle.default")
    by_priority = (dict(base.by_priority) if "by_priority" not in data
                   else _per_class(data["by_priority"], base=default, where="idle"))
    if "by_kind" not in data:
        return IdlePolicies(default=default, by_priority=by_priority, by_kind=dict(base.by_kind),
                            by_kind_priority={k: dict(v) for k, v in base.by_kind_priority.items()})
    raw = data["by_kind"]
    if not isinstance(raw, Mapping):
        raise ValidationError("idle.by_kind must be an object keyed by job kind", field="idle.by_kind",
                              hint='e.g. {"inference": {"service_mode": "notify"}}')
    kinds = [k.value for k in JobKind]
    by_kind: dict[str, IdlePolicy] = {}
    by_kind_priority: dict[str, dict[str, IdlePolicy]] = {}
    for name, block in raw.items():
        if name not in kinds:
            raise ValidationError(f"idle.by_kind has an unknown job kind {name!r}", field=f"idle.by_kind.{name}",
                                  hint="use " + ", ".join(kinds))
        if not isinstance(block, Mapping):
            raise ValidationError(f"idle.{name} must be an object", field=f"idle.{name}",
                                  hint='e.g. {"window_s": 3600, "by_priority": {"low": {"window_s": 1800}}}')
        own = {k: v for k, v in block.items() if k != "by_priority"}
        policy = idle_policy_from_dict(own, base=default, where=f"idle.{name}")
        by_kind[str(name)] = policy
        if "by_priority" in block:
            by_kind_priority[str(name)] = _per_class(block["by_priority"], base=policy, where=f"idle.{name}")
    return IdlePolicies(default=default, by_priority=by_priority, by_kind=by_kind, by_kind_priority=by_kind_priority)


def _per_class(raw: Any, *, base: IdlePolicy, where: str) -> dict[str, IdlePolicy]:
    """``{class: POLICY}`` merged into ``base``; fields named ``<where>.<class>.<key>``."""
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where}.by_priority must be an object keyed by priority class",
                              field=f"{where}.by_priority", hint='e.g. {"low": {"window_s": 1800}}')
    classes = [p.value for p in PriorityClass]
    out: dict[str, IdlePolicy] = {}
    for name, block in raw.items():
        folded = fold_priority(name)  # "Low" is low, as everywhere a class is named (new user 20, N27)
        if folded not in classes:
            raise ValidationError(f"{where}.by_priority has an unknown priority class {name!r}",
                                  field=f"{where}.by_priority.{name}", hint="use " + ", ".join(classes))
        if folded in out:
            raise ValidationError(f"{where}.by_priority names class {folded} twice (as {name!r} too)",
                                  field=f"{where}.by_priority.{name}", hint="give each class once")
        out[folded] = idle_policy_from_dict(block, base=base, where=f"{where}.{name}")
    return out


def longest_idle_window_s(policies: IdlePolicies) -> float:
    """The longest lookback any policy needs, seconds: ``max(window_s, busy_kernel_window_s) + grace_s``."""
    return float(max(max(p.window_s, p.busy_kernel_window_s or 0.0) + p.grace_s for p in policies.all()))

