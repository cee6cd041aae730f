"""The ``idle_*`` server settings (``SchedApp`` traits) → :class:`IdlePolicies` (pure).

The settings speak the admin's words: work that stays idle for ``idle_window_s`` gets a warning,
and ``idle_grace_s`` later it is reclaimed. Those two numbers stay two numbers in the policy
(``window_s`` and ``grace_s``), so a warning says ``GPU < 5 % for 60 min`` and ``limit 60 + 15
min`` — never ``75 min``, a number nobody set (case 013).

Keys (all optional; :class:`IdlePolicy` defaults otherwise):

- ``idle_window_s`` (s; 0 turns idle reclamation off), ``idle_grace_s`` (s), ``idle_threshold_percent``;
- ``idle_busy_kernel_window_s`` (s; 0 = off; kept >= window + grace), ``idle_keepalive_max_s``,
  ``idle_max_gap_s``;
- ``idle_lease_action`` / ``idle_busy_kernel_action`` / ``idle_job_action`` /
  ``idle_service_action``: ``release`` | ``requeue`` | ``stop`` | ``notify`` (services default to
  ``notify``: reported as low efficiency, never stopped);
- ``idle_policy``: a JSON object in the ``PUT idle-policy`` shape (``by_priority``, ``by_kind``,
  see :mod:`.codec`) merged on top — per-kind and per-class thresholds, windows and actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ValidationError
from .codec import idle_policies_from_dict
from .policy import IdlePolicies, IdlePolicy, ReclaimMode

__all__ = ["idle_policies_from_settings"]


def _mode(settings: Mapping[str, Any], key: str, default: ReclaimMode) -> ReclaimMode:
    value = settings.get(key)
    if value in (None, ""):
        return default
    try:
        return ReclaimMode(str(value))
    except ValueError:
        raise ValidationError(f"unknown idle action {value!r}", field=key,
                              hint="use release, requeue, stop or notify") from None


def _seconds(settings: Mapping[str, Any], key: str, default: float) -> float:
    value = settings.get(key, default)
    try:
        number = float(value if value is not None else default)
    except (TypeError, ValueError):
        raise ValidationError(f"{key} must be a number of seconds (got {value!r})", field=key,
                              hint="e.g. 3600 for 1 h") from None
    if number != number or number < 0:
        raise ValidationError(f"{key} must be >= 0 s (got {value!r})", field=key, hint="e.g. 3600 for 1 h")
    return number


def idle_policies_from_settings(settings: Mapping[str, Any]) -> IdlePolicies:
    """Map the ``idle_*`` settings to :class:`IdlePolicies` (module docstring).

    Raises:
        ValidationError: an unusable value, naming the setting (``idle_job_action``,
            ``idle.by_kind.<kind>`` ...).
    """
    base = IdlePolicy()
    window = _seconds(settings, "idle_window_s", 1800.0)
    grace = _seconds(settings, "idle_grace_s", 600.0)
    if window <= 0:
        return IdlePolicies(default=IdlePolicy(enabled=False))
    busy = settings.get("idle_busy_kernel_window_s")
    busy_s: float | None
    if busy == 0:
        busy_s = None
    else:
        wanted = _seconds(settings, "idle_busy_kernel_window_s", base.busy_kernel_window_s or window)
        busy_s = max(window, wanted - grace)  # the setting is the whole limit; the grace follows the window
    threshold = float(settings.get("idle_threshold_percent", base.threshold_pct) or base.threshold_pct)
    policy = IdlePolicy(
        threshold_pct=threshold, window_s=window, warning_s=0.0, grace_s=grace, busy_kernel_window_s=busy_s,
        lease_mode=_mode(settings, "idle_lease_action", base.lease_mode),
        busy_kernel_mode=_mode(settings, "idle_busy_kernel_action", base.busy_kernel_mode),
        job_mode=_mode(settings, "idle_job_action", base.job_mode),
        service_mode=_mode(settings, "idle_service_action", base.service_mode),
        max_gap_s=_seconds(settings, "idle_max_gap_s", base.max_gap_s) or base.max_gap_s,
        keepalive_max_s=_seconds(settings, "idle_keepalive_max_s", base.keepalive_max_s))
    policies = IdlePolicies(default=policy)
    overrides = settings.get("idle_policy")
    if overrides:
        policies = idle_policies_from_dict(overrides, base=policies)
    return policies
