"""Traitlets configuration of idle reclamation: :class:`IdleConfig` (one concern of :mod:`.config`'s split).

Set as ``c.SchedApp.idle_*`` (:class:`~jupyter_sched.extension.app.SchedApp` inherits it); each trait's help gives
its unit, its default and why, and admins may override the configured policy at run time (``PUT
api/sched/idle-policy``).
"""

from __future__ import annotations

from typing import Any

from traitlets import Enum, Float, validate
from traitlets.config import Configurable

from .config import config_error, positive

__all__ = ["IDLE_SETTINGS", "IdleConfig"]

IDLE_SETTINGS = ("idle_threshold_percent", "idle_window_s", "idle_grace_s", "idle_warning_s",
                 "idle_busy_kernel_window_s", "idle_keepalive_max_s", "idle_lease_action", "idle_busy_kernel_action",
                 "idle_job_action")
"""The traits of :class:`IdleConfig` the engine's settings carry, by the same names."""


_IDLE_API_NOTE = """ Admins may change the idle policy at run time (PUT api/sched/idle-policy, audited);
        the newest policy set that way overrides all idle_* traits, now and at later starts, until
        an admin sets another or these settings change (a changed setting replaces it at the next start)."""


class IdleConfig(Configurable):
    """When a GPU allocation counts as idle and what happens then (DESIGN: idle reclamation).

    These traits are the *configured* policy: the newest one an admin set through
    ``PUT api/sched/idle-policy`` (an ``idle_policy_set`` audit record) overrides them at start until they change.
    """

    idle_threshold_percent = Float(
        5.0,
        config=True,
        help="""GPU utilization in % under which an allocation counts as idle. Default: 5 %:
        above background noise, below any real work. Held memory alone is not activity.""" + _IDLE_API_NOTE,
    )

    idle_window_s = Float(
        1800.0,
        config=True,
        help="""Seconds an allocation may stay idle — utilization under the threshold over a trailing
        window (and, for leases, the kernel idle) — before its GPUs are reclaimed. Its owner is warned
        idle_warning_s before. Default: 1800 s (30 min), so a pause to read results is not punished.
        0 turns idle reclamation off, as "window_s": 0 or "enabled": false in PUT idle-policy do.""" + _IDLE_API_NOTE,
    )

    idle_warning_s = Float(
        None,
        allow_none=True,
        config=True,
        help="""Seconds before the end of idle_window_s at which the owner is warned (panel toast,
        kernel message, API event, `jupyter-sched status`). Default (unset): 600 s (10 min), at most
        half the window; with idle_grace_s set, unset means the warning comes when the window ends.
        Must be shorter than idle_window_s.""" + _IDLE_API_NOTE,
    )

    idle_grace_s = Float(
        0.0,
        config=True,
        help="""Extra seconds AFTER idle_window_s before the GPUs are reclaimed; the warning then comes
        when the window ends, and users are told "limit 30 + 10 min". Default: 0 (none): work idle for
        idle_window_s is reclaimed then, after the warning idle_warning_s earlier.""" + _IDLE_API_NOTE,
    )

    idle_busy_kernel_window_s = Float(
        14400.0,
        config=True,
        help="""The bound on a kernel's "busy": for a lease whose kernel is said to be busy while its
        GPUs stay idle (GPU utilization under idle_threshold_percent, valid samples only), seconds
        before that counts as idle too, then idle_busy_kernel_action applies (warned first, as any
        idle work). Default: 14400 s (4 h; kept >= idle_window_s + idle_grace_s) so a kernel loading
        data for an hour is never reclaimed. A kernel's state is its server's word — in hub mode the
        user's own server reports it, and the user's code holds the same credentials — so the GPU's
        own utilization is the only evidence a user cannot forge: this bound is what keeps "busy"
        from holding idle GPUs for ever. 0 turns the busy-kernel rule off (a busy kernel then
        keeps idle GPUs as long as it says it is busy).""" + _IDLE_API_NOTE,
    )

    idle_keepalive_max_s = Float(
        7200.0,
        config=True,
        help="""Longest extension in seconds a user may ask for once per idle period
        (POST leases/{id}/keepalive with {"seconds": n}). Default: 7200 s (2 h): enough for a
        meeting, not enough to park GPUs overnight.""" + _IDLE_API_NOTE,
    )

    idle_lease_action = Enum(
        ["release", "requeue", "stop", "notify"],
        default_value="release",
        config=True,
        help="""What reclaiming an idle lease does. Default: "release" (its GPUs are freed; a kernel
        still on its GPU is shut down or holds it: idle_kernel_action). "notify" only warns.""" + _IDLE_API_NOTE,
    )

    idle_busy_kernel_action = Enum(
        ["release", "requeue", "stop", "notify"],
        default_value="notify",
        config=True,
        help="""What the busy-kernel rule does once a lease's GPUs stayed idle under a busy kernel for
        idle_busy_kernel_window_s. Default by mode: hub ("jupyter-sched serve", users who do not
        trust each other): "release" — a kernel's busy state is its user's word (red39 R8: a
        report of "busy" kept a parked GPU from every other user), so it defers reclaim only for
        that bound; the owner is warned first, and the kernel keeps running (a kernel still on the
        GPU then: idle_kernel_action). Embedded (one user's own server and GPUs): "notify" — the
        server's own kernel manager says busy, which nobody else can forge, so it is reported
        and nothing is freed. Either can be set. Default: "release" under JupyterHub (jupyter-sched
        serve); "notify" on a single-user server (jupyter lab).""" + _IDLE_API_NOTE,
    )

    idle_job_action = Enum(
        ["release", "requeue", "stop", "notify"],
        default_value="notify",
        config=True,
        help="""What reclaiming an idle batch job does. Default: "notify" (jobs are usually
        preprocessing, not parked); "requeue" or "stop" for stricter sites.""" + _IDLE_API_NOTE,
    )

    def idle_settings(self) -> dict[str, Any]:
        """The ``idle_*`` traits as the engine's settings take them (``{"idle_window_s": 1800.0, ...}``)."""
        return {name: getattr(self, name) for name in IDLE_SETTINGS}

    @validate("idle_busy_kernel_window_s")
    def _check_busy_window(self, proposal: dict[str, Any]) -> float:
        return positive("idle_busy_kernel_window_s", float(proposal["value"]), allow_zero=True)

    @validate("idle_keepalive_max_s")
    def _check_keepalive_max(self, proposal: dict[str, Any]) -> float:
        return positive("idle_keepalive_max_s", float(proposal["value"]), allow_zero=True)

    @validate("idle_threshold_percent")
    def _check_threshold(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0 <= value <= 100:
            raise config_error("idle_threshold_percent", value, "must be 0..100 %", "set e.g. 5")
        return value

    @validate("idle_window_s")
    def _check_window(self, proposal: dict[str, Any]) -> float:
        return positive("idle_window_s", float(proposal["value"]), allow_zero=True)

    @validate("idle_grace_s")
    def _check_idle_grace(self, proposal: dict[str, Any]) -> float:
        return positive("idle_grace_s", float(proposal["value"]), allow_zero=True)
