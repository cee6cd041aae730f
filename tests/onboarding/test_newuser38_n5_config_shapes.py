"""newuser38 n5: ``jupyter-sched doctor`` with ``c.SchedApp.time_limits = "8h"`` in ``jupyter_server_config.py`` said
``expected a dict, got the str '8h'. Fix: a list or dict setting cannot be given as text on the command line; put
c.SchedApp.time_limits = … in jupyter_server_config.py`` — the value was in that file, not on a command line, and
``time_limits`` is a *list* of rules. Now the line names where the value came from (a config file, the command line)
and shows the setting's whole shape with an example, for every list, set and dict setting.

Real parts: the extension's app classes and their traitlets, config files loaded by traitlets' own loader, the
doctor's main in a real Jupyter config folder."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config
from traitlets.config.loader import DeferredConfigString, PyFileConfigLoader

from jupyter_sched.extension.app import SchedApp
from jupyter_sched.extension.config_check import config_problems
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.wording.config import SHAPE_EXAMPLES, setting_shape
from tests.onboarding.test_newuser29_n4_config_check import _doctor, config_folders

TIME_LIMITS = '[{"team": "ml", "default_s": 14400, "max_s": 86400}]'
CONTAINERS = ("List", "Set", "Tuple", "Dict")


def _containers(app_class: type) -> list[str]:
    return sorted(n for n, t in app_class.class_traits(config=True).items()
                  if type(t).__name__ in CONTAINERS and n not in ("handlers", "settings", "static_paths",
                                                                   "template_paths", "logging_config"))


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    return config_folders(tmp_path, monkeypatch)


def _file_config(text: str, folder: Path) -> Config:
    (folder / "jupyter_server_config.py").write_text(text, encoding="utf-8")
    return PyFileConfigLoader("jupyter_server_config.py", path=str(folder)).load_config()


def test_newuser38_n5_doctor_names_the_file_and_the_list_shape_of_time_limits(folders: SimpleNamespace) -> None:
    """The newcomer's own steps: ``c.SchedApp.time_limits = "8h"`` in the config file, then ``doctor``."""
    where = folders.conf / "jupyter_server_config.py"
    where.write_text('c.SchedApp.time_limits = "8h"\n', encoding="utf-8")
    code, out, err = _doctor()
    assert code != 0, (out, err)
    at = out.index(f"config: {where}: 1 setting to fix")
    line = out[at:].splitlines()[1].strip()
    assert line == (f"c.SchedApp.time_limits: expected a list of rules (dicts), e.g. {TIME_LIMITS}, got the text "
                    f"'8h'. Fix: write c.SchedApp.time_limits = {TIME_LIMITS} in the config file; for one limit for "
                    "everyone, c.SchedApp.default_time_limit_s = 28800 (seconds) instead"), line
    assert "command line" not in line and "expected a dict" not in line and "the str" not in line


def test_newuser38_n5_a_value_on_the_command_line_is_said_to_be_there(folders: SimpleNamespace) -> None:
    """The same wrong value typed as ``--SchedApp.time_limits=8h`` (traitlets keeps it as a deferred string until
    the app reads it): the line says the command line, and where the list goes instead."""
    config = Config()
    config.SchedApp.time_limits = DeferredConfigString("8h")
    (line,) = config_problems(config, SchedApp, config_name="jupyter_server_config").refused
    assert line.startswith("c.SchedApp.time_limits (on the command line): expected a list of rules (dicts), e.g. "
                           f"{TIME_LIMITS}, got the text '8h'. Fix: a list or dict setting cannot be given as text on "
                           f"the command line; put c.SchedApp.time_limits = {TIME_LIMITS} (Python) in "
                           "jupyter_server_config.py"), line


@pytest.mark.parametrize("app_class", [SchedApp, HubSchedApp], ids=["SchedApp", "HubSchedApp"])
def test_newuser38_n5_every_list_set_and_dict_setting_shows_its_whole_shape(app_class: type,
                                                                            folders: SimpleNamespace) -> None:
    """Every container setting of each app, given the text "8h" in a config file: its line shows the setting's
    own shape and an example (a list of numbers, a dict …), never traitlets' words for one element or the
    command line; and each example is a value its trait takes."""
    names = _containers(app_class)
    assert {"time_limits", "quotas", "user_teams", "admin_users", "telemetry_uids"} <= set(names), names
    for name in names:
        trait = app_class.class_traits()[name]
        example = SHAPE_EXAMPLES.get(name)
        assert example is not None, f"{name}: no example of its shape in wording.config.SHAPE_EXAMPLES"
        probe = app_class()
        setattr(probe, name, ast.literal_eval(example))  # the example is right (TraitError otherwise)
        shape = setting_shape(name, trait)
        assert shape is not None and shape.endswith(f", e.g. {example}"), (name, shape)
    text = "".join(f"c.{app_class.__name__}.{n} = 8\n" for n in names)
    lines = config_problems(_file_config(text, folders.conf), app_class).refused
    by_name = {line.split(":", 1)[0].split(" ", 1)[0].rsplit(".", 1)[1]: line for line in lines}
    for name in names:
        line = by_name.get(name)
        assert line is not None, (name, lines)
        assert f", e.g. {SHAPE_EXAMPLES[name]}, got the number 8. Fix: write c." in line, line
        assert "command line" not in line, line
