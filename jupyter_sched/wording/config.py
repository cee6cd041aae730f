"""A configuration error of ``jupyter-sched serve`` / the extension as one line naming the setting
and the fix (new user 9, N5: a list setting given on the command line stopped the service with
traitlets' raw "The 'quotas' trait of a HubSchedApp instance contains a Dict of a List which
expected a dict, not the str …")."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CONFIG_FILE", "SHAPE_EXAMPLES", "config_error_text", "no_quota_warning", "setting_shape", "takeable_port_refusal",
           "takeable_port_warning"]

CONFIG_FILE = "jupyter_sched_serve_config.py"
"""The file ``jupyter-sched serve`` reads its settings from, in any Jupyter config folder
(``$JUPYTER_CONFIG_DIR``, default ``~/.jupyter``; ``jupyter --paths`` lists them), or ``--config=FILE``."""

_RAW = re.compile(r"The '(?P<name>\w+)' trait of an? (?P<cls>\w+) instance .*?expected (?P<want>.+?), not the "
                  r"(?P<got>\w+) (?P<value>.*)", re.S)


def config_error_text(message: str, *, config_name: str | None = CONFIG_FILE.removesuffix(".py"),
                      shape: str | None = None, command_line: bool | None = None) -> str:
    """``message`` as it is, or — traitlets' type error of a setting — which setting, what it needs
    and how to set it, for the app that is starting (``config_name``: its ServerApp's
    ``config_file_name``, ``jupyter_sched_serve_config`` for ``jupyter-sched serve``,
    ``jupyter_server_config`` for ``jupyter lab``, also when None or ""; new user 16, N10: a bad ``--SchedApp.gpu_sharing=sometimes``
    on ``jupyter lab`` was told a list or dict cannot be given on the command line, and to edit
    ``jupyter-sched serve``'s file). A choice (an ``Enum`` trait) names its choices and the option
    that sets one; only a list or dict setting is sent to the config file.

    Args:
        shape: the setting's whole shape with an example (:func:`setting_shape`), said instead of
            traitlets' words for one element (newuser38 n5: ``time_limits``, a list of rules, was
            "expected a dict, got the str '8h'").
        command_line: where the value came from — True the command line, False a config file
            (newuser38 n5: a value in ``jupyter_server_config.py`` was told "cannot be given as text on
            the command line" and sent to the file it was in), None not known (both are named).
    """
    raw = _RAW.match(message.strip())
    if raw is None:
        return message
    config_name = str(config_name or "jupyter_server_config")
    config_file, serve = f"{config_name}.py", config_name == CONFIG_FILE.removesuffix(".py")
    cls = "SchedApp" if raw["cls"] == "HubSchedApp" and raw["name"] not in _HUB_ONLY else raw["cls"]
    setting = f"{cls}.{raw['name']}"
    value = raw["value"].strip().rstrip(".")
    shown = value if len(value) <= 80 else value[:77] + "…"
    got = f"the {_GOT.get(raw['got'], raw['got'])} {shown}"
    where = f"in {config_file} in your Jupyter config folder (~/.jupyter, or $JUPYTER_CONFIG_DIR)"
    choices = _choices(raw["want"])
    if choices and command_line is False:
        return f"c.{setting} = {shown}: must be one of {', '.join(choices)}. Fix: c.{setting} = {choices[0]!r} in the config file"
    if choices:
        return (f"c.{setting} = {shown}: must be one of {', '.join(choices)}. Fix: --{setting}={choices[0]} on the "
                f"command line, or c.{setting} = {choices[0]!r} {where}")
    if shape is None and not _COLLECTION.search(raw["want"]) and command_line is False:
        want = _WANT.get(raw["want"], raw["want"])
        return f"c.{setting}: expected {want}, got {got}. Fix: write it as {want} in the config file"
    if shape is None and not _COLLECTION.search(raw["want"]):
        return (f"c.{setting}: expected {raw['want']}, got {got}. Fix: --{setting}=VALUE with "
                f"such a value on the command line, or c.{setting} = … {where}")
    want, example = (shape or raw["want"]), _example(shape)
    tip = _TIPS.get(raw["name"], "")
    if command_line is False:  # in a config file (doctor reads only files): fix it there, in its shape
        return f"c.{setting}: expected {want}, got {got}. Fix: write c.{setting} = {example} in the config file{tip}"
    helped = " (jupyter-sched serve --help)" if serve else ""
    if command_line:
        return (f"c.{setting} (on the command line): expected {want}, got {got}. Fix: a list or dict setting "
                f"cannot be given as text on the command line; put c.{setting} = {example} (Python) {where} or "
                f"pass --config=FILE{helped}{tip}")
    return (f"c.{setting}: expected {want}, got {got}. Fix: write c.{setting} = {example} (Python) in the config "
            f"file that sets it ({config_file} in your Jupyter config folder, or --config=FILE{helped}); a list or "
            f"dict setting cannot be given as text on the command line{tip}")


_GOT = {"str": "text", "int": "number", "float": "number", "bool": "true/false value", "NoneType": "None"}
"""traitlets' Python type names of a wrong value, in an admin's words (newuser38 n5: "got the str '8h'")."""

_WANT = {"a float": "a number, e.g. 28800", "an int": "a whole number, e.g. 4", "a boolean": "True or False",
         "a unicode string": "text in quotes"}
"""traitlets' words of what a scalar setting takes, in an admin's."""

SHAPE_EXAMPLES = {
    "time_limits": '[{"team": "ml", "default_s": 14400, "max_s": 86400}]',
    "quotas": '[{"team": "ml", "guaranteed": 4, "borrowing_limit": 2}]',
    "user_teams": '{"ana": "ml"}',
    "priority_grants": '{"teams": {"vision": ["high"]}, "users": {"ana": ["high"]}}',
    "profiles": '{"bert-finetune": {"gpus": 4}}',
    "kubernetes": '{"namespace": "jupyter-sched-work", "default_image": "python:3.12"}',
    "gpu_prices": '{"NVIDIA H100 80GB HBM3": 4.0, "*": 1.5}',
    "run_as_accounts": '{"alice@example.org": "alice"}',
    "run_as_ids": '{"alice": [1001, 1001]}',
    "run_as_default_ids": "[1000, 100]",
    "run_as_denied_accounts": '["nfsnobody", "nobody"]',
    "admin_users": '{"ana", "bo"}',
    "hub_uids": "[1001]",
    "hub_service_uids": "[1001]",
    "db_server_uids": "[1001]",
    "telemetry_uids": "[1001]",
}
"""A right value of each list, set or dict setting of ``SchedApp``/``HubSchedApp``, as docs/admin.md
writes them: the fix of a wrong one shows it (newuser38 n5). A setting missing here is described by
its trait alone (:func:`setting_shape`); each example is checked against its trait by the tests."""

_TIPS = {"time_limits": "; for one limit for everyone, c.SchedApp.default_time_limit_s = 28800 (seconds) instead"}
"""What a wrong value of a setting most likely meant (``time_limits = "8h"``: one limit for all)."""


def setting_shape(name: str, trait: Any) -> str | None:
    """The whole shape of the list, set or dict setting ``name`` (its traitlets ``trait``), with an
    example: ``a list of rules (dicts), e.g. [{"team": "ml", …}]``; None for any other setting.
    traitlets says only what one element expected (``expected a dict`` of ``time_limits``, newuser38 n5)."""
    kind = type(trait).__name__
    if kind not in ("List", "Set", "Tuple", "Dict"):
        return None
    inner = type(getattr(trait, "_trait", None)).__name__
    items = {"Dict": "dicts", "Int": "whole numbers", "Unicode": "names", "Float": "numbers"}.get(inner, "values")
    what = "a dict" if kind == "Dict" else f"a {kind.lower()} of {'rules (dicts)' if inner == 'Dict' else items}"
    example = SHAPE_EXAMPLES.get(name)
    return f"{what}, e.g. {example}" if example else what


def _example(shape: str | None) -> str:
    """The example a :func:`setting_shape` carries, else ``…``."""
    return shape.split(", e.g. ", 1)[1] if shape and ", e.g. " in shape else "…"


_COLLECTION = re.compile(r"\b(list|dict|set|tuple)\b", re.I)
"""Words of traitlets' ``expected …`` for a container trait (``a dict``, ``a List``)."""


def _choices(want: str) -> list[str]:
    """The choices of traitlets' ``any of ['team', 'any', 'none']`` (an Enum trait), else []."""
    import ast

    if not want.startswith("any of "):
        return []
    try:
        values = ast.literal_eval(want[len("any of "):].strip())
    except (ValueError, SyntaxError):
        return []
    return [str(v) for v in values] if isinstance(values, (list, tuple)) else []


_HUB_ONLY = frozenset({"gpu_prices", "gpu_price_unit", "run_as_accounts", "run_as_ids", "run_as_default_ids", "run_as_denied_accounts"})


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


def takeable_port_warning(ip: str, port: int, first_unprivileged: int) -> str:
    """What ``jupyter-sched serve`` says at start in hub mode with the local executor when it listens on
    a port any local account may bind (``port`` >= ``first_unprivileged``, the kernel's
    ``net.ipv4.ip_unprivileged_port_start``): while the service is down, a user who takes it receives
    the users' servers' requests (red team 25, R5)."""
    where = f"[{ip}]:{port}" if ":" in ip else f"{ip or '*'}:{port}"
    return (f"this service listens on {where}, a port any local account may take while the service is down (a "
            "crash, an upgrade, a restart) and then receive what users' servers send it. Give it a port below "
            f"{first_unprivileged}, which only root may bind: the service's url in jupyterhub_config.py (e.g. "
            "http://127.0.0.1:1010) and JUPYTER_SCHED_HUB_URL to match (server/jupyterhub_config.py). Users' "
            "servers send nothing to a loopback port another account holds (c.SchedApp.hub_service_uids)")


def takeable_port_refusal(ip: str, port: int, first_unprivileged: int) -> str:
    """Why ``jupyter-sched serve`` (hub mode, local executor) does not start on a port any local account may bind
    unless ``c.HubSchedApp.allow_unprivileged_port`` says so (verify25 V7: while it is down, whoever takes the port
    receives the calls the hub's proxy forwards, each with its user's token), and the fixes."""
    where = f"[{ip}]:{port}" if ":" in ip else f"{ip or '*'}:{port}"
    return (f"not starting on {where}, a port any local account may take while the service is down (a crash, an "
            "upgrade, a restart): whoever takes it then receives the calls the hub's proxy forwards to the service "
            "(/services/…), each with its user's token, and what users' servers send it. Fix: give it a port below "
            f"{first_unprivileged}, which only root may bind: the service's url in jupyterhub_config.py (e.g. "
            "http://127.0.0.1:1010) and JUPYTER_SCHED_HUB_URL to match (server/jupyterhub_config.py); or listen on a "
            "unix socket in a root-owned folder (--ServerApp.sock=/run/jupyter-sched/sched.sock); or, with "
            "JupyterHub's internal_ssl on (the proxy checks the service's certificate) or no untrusted account on "
            "this host, allow it: c.HubSchedApp.allow_unprivileged_port = True (or --allow-unprivileged-port)")
