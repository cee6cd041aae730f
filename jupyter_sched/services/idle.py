"""``IdlePolicyService``: the idle-reclamation policy in force (``GET`` / ``PUT idle-policy``).

The policy an admin sets through the API is stored as an ``idle_policy_set`` audit record (with
``details = {"old", "new"}``, the full policies), so it outlives restarts (:meth:`load` at start)
and is applied to the running engine at once. Other servers of a shared store pick it up when
they restart.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from typing import Any

from ..admission import Caller
from ..engine.telemetry import TelemetryMonitor
from ..errors import ValidationError
from .context import Context
from .models import GetIdlePolicyResponse, SetIdlePolicyRequest

__all__ = ["IDLE_RETENTION_MAX_S", "IdlePolicyService", "retention_s"]

log = logging.getLogger(__name__)

IDLE_RETENTION_MAX_S = 24 * 3600.0 + 180.0
"""Seconds of telemetry an idle-policy change through the API may grow the retention to (a day at
1 Hz: 2.7 MiB per device); longer windows are configured in ``SchedApp`` and need a restart."""


def retention_s(policies: Any) -> float:
    """Seconds of samples the monitor keeps for ``policies``: the longest idle lookback (every
    policy: per class, per kind, per kind and class; grace included) plus three minutes."""
    from ..reclaim import longest_idle_window_s

    return longest_idle_window_s(policies) + 180.0


def seed_monitor(monitor: TelemetryMonitor, store: Any, now: datetime | None = None) -> int:
    """Preload ``monitor``'s sample store with the minutes ``store`` already holds from the last
    ``monitor.retention_s`` seconds before ``now`` (default: the wall clock), so the idle periods
    under way before a restart go on from their start (hubadmin22 H11). Returns the device-minutes
    read. Those minutes are not written to history again (:meth:`SampleStore.preload`)."""
    from ..telemetry.seed import samples_from_rollups

    at = now or datetime.now(timezone.utc)
    rows = store.rollup_rows(since=at - timedelta(seconds=monitor.retention_s), until=at, limit=1_000_000)
    monitor.store.preload(samples_from_rollups(rows))
    return len(rows)


class IdlePolicyService:
    """The idle policy (see module docstring).

    Args:
        ctx: shared dependencies.
        policies: the configured :class:`~jupyter_sched.reclaim.IdlePolicies` (None = defaults, off).
        monitor: the telemetry monitor (None = telemetry off: no idle detection, the policy only
            bounds keepalives).
    """

    def __init__(self, ctx: Context, policies: Any, monitor: TelemetryMonitor | None) -> None:
        self.ctx = ctx
        self._policies = policies
        self.monitor = monitor

    @property
    def policies(self) -> Any:
        """The :class:`~jupyter_sched.reclaim.IdlePolicies` in force."""
        from ..reclaim import IdlePolicies

        return self._policies if self._policies is not None else IdlePolicies()

    def get(self) -> GetIdlePolicyResponse:
        """The policy in force, whether idle detection runs, and the samples kept (seconds)."""
        from ..reclaim import idle_policies_to_dict

        return GetIdlePolicyResponse.model_validate({
            **idle_policies_to_dict(self.policies), "active": self.monitor is not None,
            "retention_s": self.monitor.retention_s if self.monitor is not None else None})

    def set(self, caller: Caller, request: SetIdlePolicyRequest) -> GetIdlePolicyResponse:
        """Change the policy (admins; keys left out keep their value); audited old → new.

        A window longer than the telemetry retention grows the retention (memory: 32 B per sample
        per device) up to :data:`IDLE_RETENTION_MAX_S`; beyond it the change is refused.

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a bad value (``field`` names it, e.g. ``idle.normal.window_s``).
        """
        from ..reclaim import idle_policies_from_dict, idle_policies_to_dict

        self.ctx.admission.require_admin(caller, "changing the idle policy")
        current = self.policies
        new = idle_policies_from_dict(request.root, base=current)
        needed = retention_s(new)
        if self.monitor is not None and needed > max(self.monitor.retention_s, IDLE_RETENTION_MAX_S):
            named = [("default", new.default), *new.by_priority.items(), *new.by_kind.items(),
                     *((f"{kind}.{cls}", p) for kind, per in new.by_kind_priority.items() for cls, p in per.items())]
            name, policy = max(named, key=lambda item: max(item[1].window_s, item[1].busy_kernel_window_s or 0.0))
            key = "busy_kernel_window_s" if (policy.busy_kernel_window_s or 0.0) > policy.window_s else "window_s"
            raise ValidationError(
                f"idle.{name}.{key} needs {needed:g} s of telemetry; the server keeps {self.monitor.retention_s:g} s "
                f"and grows it at run time to at most {IDLE_RETENTION_MAX_S:g} s", field=f"idle.{name}.{key}",
                hint=f"use at most {IDLE_RETENTION_MAX_S - 180:g} s, or configure the longer window in "
                     "c.SchedApp.idle_window_s / idle_busy_kernel_window_s and restart the server")
        old_dict, new_dict = idle_policies_to_dict(current), idle_policies_to_dict(new)
        with self.ctx.store.transaction() as tx:
            tx.add_event(actor=caller.user, action="idle_policy_set", message=f"idle policy changed by {caller.user}",
                         details={"old": old_dict, "new": new_dict})
        self.apply(new)
        return self.get()

    def load(self) -> bool:
        """Replace the configured policy with the newest ``idle_policy_set`` record's, if any (at
        start). A record that no longer reads as a policy is logged and skipped. True when applied."""
        from ..reclaim import IdlePolicies, idle_policies_from_dict

        events = self.ctx.store.list_events(action="idle_policy_set", limit=1, newest_first=True)
        if not events:
            return False
        stored = (events[0].details or {}).get("new")
        try:
            policies = idle_policies_from_dict(stored, base=IdlePolicies())
        except ValidationError as err:
            log.warning("jupyter_sched: ignoring the stored idle policy (audit record %s): %s", events[0].id, err)
            return False
        self.apply(policies)
        return True

    def apply(self, policies: Any) -> None:
        """Use ``policies`` from now on: keepalives, and (with telemetry) the engine's idle
        detection, after growing the sample retention to cover the longest window."""
        self._policies = policies
        if self.monitor is not None:
            self.monitor.grow_retention(retention_s(policies))
            self.ctx.engine.idle_policies = policies
        self.ctx.kick()
