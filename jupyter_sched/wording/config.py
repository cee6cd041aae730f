"""A configuration error of ``jupyter-sched serve`` / the extension as one line naming the setting
and the fix (new user 9, N5: a list setting given on the command line stopped the service with
traitlets' raw "The 'quotas' trait of a HubSchedApp instance contains a Dict of a List which
expected a dict, not the str …")."""

from __future__ import annotations

import re

__all__ = ["CONFIG_FILE", "config_error_text", "no_quota_warning"]

CONFIG_FILE = "jupyter_sched_serve_config.py"
"""The file ``jupyter-sched serve`` reads its settings from, in any Jupyter config folder
(``$JUPYTER_CONFIG_DIR``, default ``~/.jupyter``; ``jupyter --paths`` lists them), or ``--config=FILE``."""

_RAW = re.compile(r"The '(?P<name>\w+)' trait of an? (?P<cls>\w+) instance .*?expected (?P<want>.+?), not the "
                  r"(?P<got>\w+) (?P<value>.*)", re.S)


def config_error_text(message: str) -> str:
    """``message`` as it is, or — traitlets' type error of a setting given as text — which setting,
    what it needs and where to put it."""
    raw = _RAW.match(message.strip())
    if raw is None:
        return message
    cls = "SchedApp" if raw["cls"] == "HubSchedApp" and raw["name"] not in _HUB_ONLY else raw["cls"]
    value = raw["value"].strip().rstrip(".")
    shown = value if len(value) <= 80 else value[:77] + "…"
    return (f"c.{cls}.{raw['name']}: expected {raw['want']}, got the {raw['got']} {shown}. Fix: a list or dict "
            f"setting cannot be given as text on the command line; put `c.{cls}.{raw['name']} = …` (Python) in "
            f"{CONFIG_FILE} in your Jupyter config folder (~/.jupyter, or $JUPYTER_CONFIG_DIR) or pass "
            "--config=FILE (jupyter-sched serve --help)")


_HUB_ONLY = frozenset({"gpu_prices", "run_as_accounts", "run_as_ids", "run_as_default_ids", "run_as_denied_accounts"})


def no_quota_warning(default_time_limit_s: float | None) -> str:
    """What ``jupyter-sched serve`` (and ``doctor``, on a shared store) says at start-up when no quota
    is configured: with the shipped defaults one user may take every GPU for as long as they like
    (red team 15, R4); the settings that prevent it. ``default_time_limit_s``: the configured default
    time limit (0 or None: none)."""
    limit = "" if default_time_limit_s else (", for as long as they like (jobs that give no time limit get none: "
                                             "c.SchedApp.default_time_limit_s = 0)")
    fix = "" if default_time_limit_s else ", and c.SchedApp.default_time_limit_s (e.g. 86400) for jobs that give none"
    return (f"no quotas are configured: one user may hold every GPU{limit}, while the queue is ordered only by what "
            f"each user and team holds now. Set c.SchedApp.quotas in {CONFIG_FILE} (or PUT api/sched/quotas as an "
            f"admin) to give each team a guarantee and a borrowing limit{fix}")
