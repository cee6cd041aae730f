"""JSON wire shape of the idle policy (``GET|PUT api/sched/idle-policy``; pure, no I/O).

Shape::

    {"default": POLICY, "by_priority": {"high" | "normal" | "low": POLICY}}

    POLICY = {"enabled": bool, "threshold_pct": % in (0, 100], "window_s": s > 0,
              "warning_s": s in [0, window_s), "busy_kernel_window_s": s >= window_s | null,
              "lease_mode" | "busy_kernel_mode" | "job_mode": "release" | "requeue" | "stop" | "notify",
              "max_gap_s": s > 0, "keepalive_max_s": s >= 0}

Reading is a *merge*: a key left out keeps its value in ``base`` (the current policy) — the
``default`` block merges into ``base.default``; a priority block merges into the new default (so
``{"by_priority": {"low": {"window_s": 1800}}}`` gives low-priority work a shorter window and
everything else of the default); ``by_priority`` left out keeps ``base.by_priority``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from ..errors import ValidationError
from ..model import PriorityClass
from .policy import IdlePolicies, IdlePolicy, ReclaimMode

__all__ = ["idle_policies_from_dict", "idle_policies_to_dict", "idle_policy_from_dict", "idle_policy_to_dict",
           "longest_idle_window_s"]

_NUMBERS = ("threshold_pct", "window_s", "warning_s", "max_gap_s", "keepalive_max_s")
_MODES = ("lease_mode", "busy_kernel_mode", "job_mode")
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
    """``{"default": POLICY, "by_priority": {class: POLICY}}`` (classes sorted by name)."""
    return {"default": idle_policy_to_dict(policies.default),
            "by_priority": {k: idle_policy_to_dict(v) for k, v in sorted(policies.by_priority.items())}}


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
        if key == "enabled":
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


def _check(values: Mapping[str, Any], where: str) -> None:
    """Range checks with the field named, before :class:`IdlePolicy` sees the values."""
    window = values["window_s"]
    rules: list[tuple[str, bool, str, str]] = [
        ("threshold_pct", 0 < values["threshold_pct"] <= 100, "must be in (0, 100] %", "e.g. 5"),
        ("window_s", window > 0, "must be > 0", "e.g. 7200 for 2 h; to turn idle reclamation off set enabled false"),
        ("warning_s", 0 <= values["warning_s"] < window, f"must be >= 0 and < window_s ({window:g} s)",
         "e.g. 900 for 15 min"),
        ("busy_kernel_window_s", values["busy_kernel_window_s"] is None or values["busy_kernel_window_s"] >= window,
         f"must be >= window_s ({window:g} s) or null", "a busy kernel gets at least as long as an idle one"),
        ("max_gap_s", values["max_gap_s"] > 0, "must be > 0", "e.g. 600"),
        ("keepalive_max_s", values["keepalive_max_s"] >= 0, "must be >= 0", "e.g. 7200; 0 disables keepalive"),
    ]
    for key, ok, what, hint in rules:
        if not ok:
            raise ValidationError(f"{where}.{key} {what} (got {values[key]!r})", field=f"{where}.{key}", hint=hint)


def idle_policies_from_dict(data: Any, *, base: IdlePolicies | None = None) -> IdlePolicies:
    """Read ``{"default": POLICY, "by_priority": {...}}`` merged into ``base`` (module docstring).

    Raises:
        ValidationError: a bad shape or value; ``field`` is ``idle``, ``idle.default.<key>``,
            ``idle.by_priority`` or ``idle.<priority class>.<key>``.
    """
    base = base if base is not None else IdlePolicies()
    if not isinstance(data, Mapping):
        raise ValidationError("the idle policy must be a JSON object", field="idle", hint=f"e.g. {_EXAMPLE}")
    unknown = sorted(str(k) for k in data if k not in ("default", "by_priority"))
    if unknown:
        raise ValidationError(f"idle.{unknown[0]} is not a field of the idle policy", field=f"idle.{unknown[0]}",
                              hint="known fields: default, by_priority")
    default = base.default if "default" not in data else idle_policy_from_dict(
        data["default"], base=base.default, where="idle.default")
    if "by_priority" not in data:
        return IdlePolicies(default=default, by_priority=dict(base.by_priority))
    raw = data["by_priority"]
    if not isinstance(raw, Mapping):
        raise ValidationError("idle.by_priority must be an object keyed by priority class", field="idle.by_priority",
                              hint='e.g. {"low": {"window_s": 1800}}')
    classes = [p.value for p in PriorityClass]
    by_priority: dict[str, IdlePolicy] = {}
    for name, block in raw.items():
        if name not in classes:
            raise ValidationError(f"idle.by_priority has an unknown priority class {name!r}",
                                  field=f"idle.by_priority.{name}", hint="use " + ", ".join(classes))
        by_priority[str(name)] = idle_policy_from_dict(block, base=default, where=f"idle.{name}")
    return IdlePolicies(default=default, by_priority=by_priority)


def longest_idle_window_s(policies: IdlePolicies) -> float:
    """The longest lookback any class needs, seconds: ``max(window_s, busy_kernel_window_s)``."""
    items = [policies.default, *policies.by_priority.values()]
    return float(max(max(p.window_s, p.busy_kernel_window_s or 0.0) for p in items))
