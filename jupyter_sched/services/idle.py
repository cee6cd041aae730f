"""``IdlePolicyService``: the idle-reclamation policy in force (``GET`` / ``PUT idle-policy``).

The policy an admin sets through the API is stored as an ``idle_policy_set`` audit record (with
``details = {"old", "new"}``, the full policies), so it outlives restarts (:meth:`load` at start)
and is applied to the running engine at once. Other servers of a shared store pick it up when
they restart.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from ..admission import Caller
from ..engine.telemetry import TelemetryMonitor
from ..errors import ValidationError
from .context import Context
from .models import GetIdlePolicyResponse, SetIdlePolicyRequest

__all__ = ["IDLE_RETENTION_MAX_S", "IDLE_SOURCE", "IdlePolicyService", "idle_config", "retention_s"]

log = logging.getLogger(__name__)

IDLE_RETENTION_MAX_S = 24 * 3600.0 + 180.0
"""Seconds of telemetry an idle-policy change through the API may grow the retention to (a day at
1 Hz: 2.7 MiB per device); longer windows are configured in ``SchedApp`` and need a restart."""


IDLE_SOURCE = "idle_policy"
"""The ``quota_source`` row of the idle policy: who set the one in force, the config's digest last seen."""


def _window(policy: Any) -> str:
    """``600 s`` of a policy dict's default window (``?`` when it has none)."""
    window = (policy.get("default") or {}).get("window_s") if isinstance(policy, dict) else None
    return f"{window:g} s" if isinstance(window, (int, float)) else "?"


def _when(at: Any) -> str:
    from ..model.units import clock_text

    return clock_text(at, None)


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


def source_of(set_by: str, at: datetime | None) -> dict[str, Any]:
    """``{"set_by", "set_at" (ISO 8601 or None), "text"}`` of the idle policy in force, the shape of
    GET quotas' ``source`` (hubadmin23 A3): ``text`` is ``the config file (c.SchedApp.idle_*) at
    2026-12-05 08:31 UTC`` or ``PUT idle-policy by boss at 2026-12-05 08:41 UTC`` (no time: no ``at``)."""
    when = f" at {at.astimezone(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}" if at is not None else ""
    text = f"the config file (c.SchedApp.idle_*){when}" if set_by == "config" else f"PUT idle-policy by {set_by}{when}"
    return {"set_by": set_by, "set_at": at.isoformat() if at is not None else None, "text": text}


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
        self._source: dict[str, Any] = source_of("config", None)
        """Who set the policy in force (``config`` or an admin), when (ISO 8601; None: not known
        before :meth:`load`) and in words (:func:`source_of`)."""

    def configure(self, policies: Any) -> None:
        """Take ``policies`` (the ``c.SchedApp.idle_*`` settings) as the configured ones when the
        engine was given none because telemetry is off: :meth:`load` compares *them* with the
        stored digest (hubadmin23 A14: a default object nobody configured, 7200 s, was taken for a
        changed config and replaced an admin's PUT), and keepalives are bounded by them."""
        self._policies = policies

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
            "retention_s": self.monitor.retention_s if self.monitor is not None else None, "source": self._source})

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
            tx.note_quota_source(caller.user, name=IDLE_SOURCE)  # the config's digest stays: a change of it wins
        self._source = source_of(caller.user, self.ctx.clock.now())
        self.apply(new)
        return self.get()

    def load(self) -> bool:
        """At start: the policy in force is the newest ``idle_policy_set`` record's (an admin's PUT),
        unless the configured idle settings (``c.SchedApp.idle_*``) changed since the last start —
        then they replace it, as changed config quota lines replace PUT ones (hubadmin22 H4: an
        edited ``idle_window_s`` was ignored for ever, silently). Either way a configured policy
        that is not the one in force is said in one WARNING naming who set the one in force.
        The config's digest is kept in the ``quota_source`` row :data:`IDLE_SOURCE`. A record that
        no longer reads as a policy is logged and skipped. True when a stored policy was applied."""
        from ..reclaim import IdlePolicies, idle_policies_from_dict, idle_policies_to_dict
        from ..store.quota_source import CONFIG_ACTOR, config_digest

        configured = idle_policies_to_dict(self.policies)
        digest = config_digest([configured])
        source = self.ctx.store.quota_source(IDLE_SOURCE)
        self._say_off(configured)
        if source is not None and source.config_digest == config_digest([idle_policies_to_dict(IdlePolicies())]) \
                and digest != source.config_digest:
            # versions before hubadmin23 A14 noted the defaults' digest at a telemetry-off start, not the
            # config's: that digest says nothing of the config, so it is not a change of it (an admin's
            # PUT is never replaced on its account; the WARNING below names the config not applied)
            source = replace(source, config_digest=None)
        events = self.ctx.store.list_events(action="idle_policy_set", limit=1, newest_first=True)
        if not events or events[0].actor == CONFIG_ACTOR:
            if source is None or source.config_digest != digest:
                with self.ctx.store.transaction() as tx:
                    tx.note_quota_source(CONFIG_ACTOR, digest=digest, name=IDLE_SOURCE)
            self._source = self._config_source()
            return False
        event = events[0]
        try:
            policies = idle_policies_from_dict((event.details or {}).get("new"), base=IdlePolicies())
        except ValidationError as err:
            log.warning("jupyter_sched: ignoring the stored idle policy (audit record %s): %s", event.id, err)
            self._source = self._config_source()
            return False
        stored = idle_policies_to_dict(policies)
        if source is not None and source.config_digest is not None and source.config_digest != digest:
            log.warning("jupyter_sched: the configured idle policy changed since the last start (c.SchedApp.idle_*: "
                        "window %s): it replaces the one %s set with PUT idle-policy at %s (window %s); PUT "
                        "idle-policy to set another", _window(configured), event.actor, _when(event.at),
                        _window(stored))
            with self.ctx.store.transaction() as tx:
                tx.add_event(actor=CONFIG_ACTOR, action="idle_policy_set",
                             message=f"idle policy replaced by the changed config (was {event.actor}'s)",
                             details={"old": stored, "new": configured})
                tx.note_quota_source(CONFIG_ACTOR, digest=digest, name=IDLE_SOURCE)
            self._source = self._config_source()
            return False
        if source is None or source.config_digest is None:  # from now on a config change is seen
            with self.ctx.store.transaction() as tx:
                tx.note_quota_source(event.actor, digest=digest, at=event.at, name=IDLE_SOURCE)
        self._source = source_of(event.actor, event.at)
        if stored != configured:
            log.warning("jupyter_sched: the configured idle policy (c.SchedApp.idle_*: window %s) is not applied: the "
                        "one %s set with PUT idle-policy at %s is in force (window %s); PUT idle-policy to change it, "
                        "or change the config's idle settings (a changed setting replaces it at the next start)",
                        _window(configured), event.actor, _when(event.at), _window(stored))
        self.apply(policies)
        return True

    def _config_source(self) -> dict[str, Any]:
        """:func:`source_of` the config, at the time the store's row says it took effect."""
        row = self.ctx.store.quota_source(IDLE_SOURCE)
        return source_of("config", row.set_at if row is not None and row.set_by == "config" else None)

    def _say_off(self, configured: dict[str, Any]) -> None:
        """With telemetry off, one WARNING that idle reclaim is off while the config asks for it
        (hubadmin23 A14: said only as INFO "telemetry off"), naming the fix."""
        if self.monitor is not None or not (configured.get("default") or {}).get("enabled", True) \
                or _window(configured) in ("?", "0 s"):
            return
        log.warning("jupyter_sched: idle reclaim is off: telemetry is off (no collector for this inventory source), so "
                    "no idle policy is applied (the config's c.SchedApp.idle_* asks for a window of %s) — idle GPUs "
                    "are never reclaimed, only the length of a %%gpu keepalive is bounded; set "
                    "c.SchedApp.telemetry_source (\"nvml\" on the GPU host, \"dcgm\" or \"prometheus\" with "
                    "c.SchedApp.telemetry_url) to turn it on", _window(configured))

    def apply(self, policies: Any) -> None:
        """Use ``policies`` from now on: keepalives, and (with telemetry) the engine's idle
        detection, after growing the sample retention to cover the longest window."""
        self._policies = policies
        if self.monitor is not None:
            self.monitor.grow_retention(retention_s(policies))
            self.ctx.engine.idle_policies = policies
        self.ctx.kick()


def idle_config(services: Any, traits: Any) -> dict[str, Any]:
    """``GET config``'s ``idle``: the default policy *in force* (an admin's PUT idle-policy, or the
    config), not the ``c.SchedApp.idle_*`` traits alone (hubadmin22 H4: the two disagreed) —
    ``{"enabled", "threshold_percent" (%), "window_s", "grace_s", "keepalive_max_s" (seconds),
    "source": {"set_by", "set_at", "text"}}``; ``traits``: the app, read when no policy service runs."""
    idle = getattr(getattr(services, "services", services), "idle", None)  # the facade's, or the root's
    if not isinstance(idle, IdlePolicyService) or idle._policies is None:
        return {"enabled": traits.idle_window_s > 0, "threshold_percent": traits.idle_threshold_percent,
                "window_s": traits.idle_window_s, "grace_s": traits.idle_grace_s,
                "keepalive_max_s": traits.idle_keepalive_max_s,
                "source": idle._source if isinstance(idle, IdlePolicyService) else source_of("config", None)}
    policy = idle.policies.default
    return {"enabled": bool(policy.enabled) and policy.window_s > 0, "threshold_percent": policy.threshold_pct,
            "window_s": policy.window_s, "grace_s": policy.grace_s, "keepalive_max_s": policy.keepalive_max_s,
            "source": idle._source}
