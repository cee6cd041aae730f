"""THE configuration check: every bad ``c.SchedApp`` setting of a config, all at once (newuser29 N4).

One function, :func:`config_problems`, used by both places that read an admin's configuration:

- the start (:meth:`.app.SchedApp._link_jupyter_server_extension`, and ``jupyter-sched serve``): a config
  with any problem ends the process naming every bad setting (as ``nginx -t`` / ``sshd -t``), not the
  first one per restart;
- ``jupyter-sched doctor``: the same lines, and a non-zero exit status, before the restart.

It checks, in order: a name that is no setting (traitlets warns and ignores it; said here with the
close name), each value by its own trait's validation (type, range: the words of
:func:`~jupyter_sched.wording.config.config_error_text`), then the settings the build reads together
(:func:`~jupyter_sched.services.config.settings_problems`: time limits, quota lines, idle rules …).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from traitlets import TraitError
from traitlets.config import Config
from traitlets.config.loader import DeferredConfig, LazyConfigValue

from ..errors import SchedError
from ..wording.config import config_error_text, setting_shape

__all__ = ["ConfigProblems", "UnknownSettingsSaidOnce", "config_problems", "setting_error_text"]


class ConfigProblems(NamedTuple):
    """What :func:`config_problems` found, one line each (``c.SchedApp.<field>…: what. Fix: …``)."""

    refused: list[str]
    """Settings the app refuses to start with (a bad value; settings that do not go together)."""
    ignored: list[str]
    """Names that are no setting of the app: traitlets warns and ignores them (said with the close name)."""

    def lines(self) -> list[str]:
        """Every line: the refused, then the ignored."""
        return [*self.refused, *self.ignored]


def setting_error_text(app: Any, err: SchedError) -> str:
    """``err`` (a setting the build refused) as the start's words: ``c.SchedApp.<field>: message. Fix: hint``.

    A ``SchedApp`` setting gets its ``c.SchedApp.`` name; a place inside a file it names (an inventory's
    ``nodes[1].cpus``) stays as it is, with the file in the message."""
    root = re.split(r"[.\[]", err.field or "", maxsplit=1)[0]
    field = f"c.SchedApp.{err.field}" if app.has_trait(root) else (err.field or "c.SchedApp")
    return f"{field}: {err.message}. Fix: {err.hint or 'see the trait help'}"


def config_problems(config: Config, app_class: type[Any], *, config_name: str | None = None) -> ConfigProblems:
    """Every bad setting of ``app_class`` (``SchedApp`` or ``HubSchedApp``) in ``config`` (a traitlets
    ``Config``: its ``SchedApp`` section, and the app's own class section, which wins), one line each:
    ``c.SchedApp.<field>…: what is wrong. Fix: …`` (:class:`ConfigProblems`; both lists empty when all is well).

    ``config_name`` is the config file's name without ``.py`` (``jupyter_server_config``,
    ``jupyter_sched_serve_config``) for the fix's words. Reads no file and no store; a probe instance of
    ``app_class`` takes the values (``service_settings`` names the default data folder)."""
    names = set(app_class.class_trait_names(config=True))
    values: dict[str, Any] = {}  # setting -> value (the app's own section after SchedApp's: it wins)
    problems: list[str] = []
    ignored: list[str] = []
    for section in dict.fromkeys(("SchedApp", app_class.__name__)):
        given = config.get(section) if section in config else None
        if not isinstance(given, Mapping):
            continue
        for name, value in given.items():
            if name in names:
                values[name] = value
            else:
                ignored.append(_unknown(section, name, names))
    probe = _probe_class(app_class)()
    bad: set[str] = set()
    for name, value in values.items():
        try:
            setattr(probe, name, _given(probe, name, value))
        except (TraitError, ValueError, TypeError) as exc:
            bad.add(name)
            problems.append(config_error_text(str(exc), config_name=config_name, shape=setting_shape(name, probe.traits()[name]),
                                              command_line=isinstance(value, DeferredConfig)))  # newuser38 n5
    from ..services.config import settings_problems

    together = [] if probe.hub_service_url else settings_problems(probe.service_settings())  # a hub client builds none
    for err in together:  # the settings read together, bad ones at their default
        if re.split(r"[.\[]", err.field or "", maxsplit=1)[0] not in bad:  # one fault, one line
            problems.append(setting_error_text(probe, err))
    return ConfigProblems(problems, ignored)


class UnknownSettingsSaidOnce:
    """A mixin of the app classes: traitlets' own warning of a name that is no setting (``Config option
    `idle_windw_s` not recognized by `SchedApp`. Did you mean …``) is left out — it came twice per start, the
    config being loaded twice, beside the start's own line with the fix (newuser38 n27); :func:`config_problems`
    says each such name once (``ignored``), the start logs it (``startup_checks.check_config``)."""

    def _load_config(self, cfg: Config, section_names: list[str] | None = None,
                     traits: dict[str, Any] | None = None) -> None:
        known = traits if traits is not None else self.traits(config=True)  # type: ignore[attr-defined]
        names = section_names if section_names is not None else self.section_names()  # type: ignore[attr-defined]
        quiet = cfg
        for section in names:
            given = cfg[section] if cfg._has_section(section) else None
            if not isinstance(given, Mapping):
                continue
            unknown = [k for k in given if k not in known and not k[:1].isupper() and not isinstance(given[k], Config)]
            if unknown:
                quiet = Config(quiet) if quiet is cfg else quiet  # a copy: the caller's config keeps its names
                quiet[section] = Config({k: v for k, v in given.items() if k not in unknown})
        super()._load_config(quiet, section_names, traits)  # type: ignore[misc]


def _given(probe: Any, name: str, value: Any) -> Any:
    """The value a setting takes, as traitlets loads it: a command line's string read by the trait
    (``DeferredConfig``), a ``.append``/``.update`` applied to the default (``LazyConfigValue``)."""
    if isinstance(value, DeferredConfig):
        return value.get_value(probe.traits()[name])
    if isinstance(value, LazyConfigValue):
        return value.get_value(getattr(probe, name))
    return value


def _probe_class(app_class: type[Any]) -> type[Any]:
    """``app_class`` under its own name (its trait errors name it), its data folder only named, never made: a
    check creates nothing (``jupyter-sched doctor`` never makes a folder, new user 13, N18)."""
    from jupyter_core.paths import jupyter_data_dir

    folder = property(lambda self: Path(jupyter_data_dir()) / "jupyter_sched")
    return type(app_class.__name__, (app_class,), {"sched_data_dir": folder, "__module__": app_class.__module__})


def _unknown(section: str, name: str, names: set[str]) -> str:
    """The line of ``c.<section>.<name>``, no setting of the app: traitlets only warns and ignores it."""
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
    guess = f" (did you mean {close[0]}?)" if close else ""
    fix = f"rename it to c.{section}.{close[0]}" if close else "remove it, or give the setting its right name"
    return f"c.{section}.{name}: no such setting{guess}; it would be ignored. Fix: {fix}"
