"""SchedApp configuration: every knob documented; bad values stop loading with field and fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from traitlets import TraitError

from jupyter_sched import _jupyter_labextension_paths, _jupyter_server_extension_points
from jupyter_sched.extension import SchedApp


@dataclass(frozen=True)
class BadValue:
    id: str
    trait: str
    value: Any
    want_fix: str


BAD_VALUES = [
    BadValue("a negative simulated GPU count", "simulated_gpus", -1, "Fix:"),
    BadValue("an absurd simulated GPU count", "simulated_gpus", 100_000, "0 to model a host without GPUs"),
    BadValue("zero simulated GPU memory", "simulated_gpu_memory_mib", 0, "81920"),
    BadValue("a cycle interval of zero", "cycle_interval", 0.0, "set e.g. 5"),
    BadValue("a database path that is not a URL", "db_url", "/tmp/sched.sqlite", "sqlite:////"),
    BadValue("an inventory file that does not exist", "inventory_file", "/no/such/inventory.yaml", "existing YAML"),
    BadValue("a time zone that does not exist", "time_zone", "Mars/Olympus", "Europe/Berlin"),
    BadValue("an idle threshold above 100 %", "idle_threshold_percent", 150.0, "set e.g. 5"),
    BadValue("a negative preemption grace", "preemption_grace_s", -5.0, ">= 0"),
    BadValue("an empty default team", "default_team", " ", '"default"'),
    BadValue("an event queue of zero", "events_queue_size", 0, "256"),
    BadValue("an unknown inventory source", "inventory_source", "gpu-cloud", ""),
    BadValue("an unknown placement policy", "placement_policy", "tetris", '"fgd-balanced"'),
]


@pytest.mark.parametrize("case", BAD_VALUES, ids=[c.id for c in BAD_VALUES])
def test_a_bad_config_value_names_the_field_and_the_fix(case: BadValue) -> None:
    with pytest.raises(TraitError) as caught:
        SchedApp(**{case.trait: case.value})
    message = str(caught.value)
    assert case.trait in message
    assert case.want_fix in message


def test_every_config_trait_has_help_with_its_default() -> None:
    undocumented = []
    for name, trait in SchedApp.class_traits(config=True).items():
        if trait.this_class.__module__.startswith("jupyter_sched") and "Default" not in (trait.help or ""):
            undocumented.append(name)
    assert not undocumented, undocumented


def test_traits_are_settable_as_c_schedapp() -> None:
    from traitlets.config import Config

    config = Config()
    config.SchedApp.simulated_gpus = 2
    config.SchedApp.cycle_interval = 1.5
    app = SchedApp(config=config)
    assert (app.simulated_gpus, app.cycle_interval) == (2, 1.5)


def test_extension_points_name_the_app_and_the_labextension() -> None:
    (point,) = _jupyter_server_extension_points()
    assert point["app"] is SchedApp and SchedApp.name == "jupyter_sched"
    assert _jupyter_labextension_paths() == [{"src": "labextension", "dest": "@jupyter-sched/labextension"}]
