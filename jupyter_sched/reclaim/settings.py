"""The ``idle_*`` server settings (``SchedApp`` traits) → :class:`IdlePolicies` (pure).

The settings speak the admin's words: work that stays idle for ``idle_window_s`` is reclaimed
then, and its owner is warned ``idle_warning_s`` before (default :data:`DEFAULT_WARNING_S`, at
most half the window). Only an admin who sets ``idle_grace_s`` adds time after the window: the
warning then comes when the window ends and the reclaim ``idle_grace_s`` later. The two numbers
stay two numbers in the policy (``window_s`` and ``grace_s``), so a warning says ``GPU < 5 % for
60 min`` and ``limit 60 + 15 min`` — never ``75 min``, a number nobody set (case 013); and with
no grace set, no grace is added or said (new user 4: a 1-minute window was reclaimed 11 minutes
in, from a 600 s grace default the admin never set).

Keys (all optional; :class:`IdlePolicy` defaults otherwise):

- ``idle_window_s`` (s; 0 turns idle reclamation off), ``idle_grace_s`` (s, default 0),
  ``idle_warning_s`` (s; None: the default above), ``idle_threshold_percent``;
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

__all__ = ["DEFAULT_WARNING_S", "idle_policies_from_settings"]

DEFAULT_WARNING_S = 600.0
"""Seconds before an idle reclaim its owner is warned, when the admin set neither ``idle_warning_s``
nor a grace: 10 minutes, enough to come back to a notebook (at most half the window)."""


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
    grace = _seconds(settings, "idle_grace_s", 0.0)
    if window <= 0:
        return IdlePolicies(default=IdlePolicy(enabled=False))
    if settings.get("idle_warning_s") is None:
        # the notice is the grace when one is set (warned as the window ends), else a warning inside it
        warning = 0.0 if grace > 0 else min(DEFAULT_WARNING_S, window / 2.0)
    else:
        warning = _seconds(settings, "idle_warning_s", 0.0)
        if warning >= window:
            raise ValidationError(f"idle_warning_s ({warning:g} s) must be shorter than idle_window_s ({window:g} s): "
                                  "the warning comes that long before the window ends", field="idle_warning_s",
                                  hint=f"set it below {window:g}, or leave it out ({DEFAULT_WARNING_S:g} s, at most "
                                       "half the window); idle_grace_s adds time after the window instead")
    busy = settings.get("idle_busy_kernel_window_s")
    busy_s: float | None
    if busy == 0:
        busy_s = None
    else:
        wanted = _seconds(settings, "idle_busy_kernel_window_s", base.busy_kernel_window_s or window)
        busy_s = max(window, wanted - grace)  # the setting is the whole limit; the grace follows the window
    threshold = float(settings.get("idle_threshold_percent", base.threshold_pct) or base.threshold_pct)
    policy = IdlePolicy(
        threshold_pct=threshold, window_s=window, warning_s=warning, grace_s=grace, busy_kernel_window_s=busy_s,
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
