"""SchedApp configuration: every knob documented; bad values stop loading with field and fix."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
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
    BadValue("a negative job log cap (red-team 15, R12)", "max_log_mib", -1, ">= 0 (MiB)"),
    BadValue("verify27 V3: a negative total of one user's job logs", "max_user_log_mib", -1, ">= 0 (MiB)"),
    BadValue("a negative free-space floor of the log disk (hubadmin25 B15)", "min_log_free_mib", -1, ">= 0 (MiB)"),
    BadValue("a job process cap too small for the wrapper (red-team 15, R9)", "job_pids_max", 5, "or a number >= 16"),
    BadValue("a negative job process cap (red-team 15, R9)", "job_pids_max", -1, ">= 0 (processes)"),
    BadValue("a job memory default below the wrapper's own (red-team 15, R9)", "job_memory_mib", 10, ">= 64 (MiB)"),
    BadValue("a negative GIL switch interval", "gil_switch_interval_ms", -1.0, "0 = Python's own"),
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


def test_placement_policy_names_are_read_without_case() -> None:
    assert SchedApp(placement_policy=" FGD-Balanced").placement_policy == "fgd-balanced"


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


@pytest.mark.parametrize("setting, want", [
    ('c.SchedApp.placement_policy = "tetris"', "c.SchedApp.placement_policy = 'tetris'"),
    ('c.SchedApp.cycle_interval = 0', "c.SchedApp.cycle_interval"),
    ('c.SchedApp.inventory_file = "{inventory}"', "nodes[0].cpus: inventory file {inventory}: nodes[0].cpus"),
    ('c.SchedApp.profiles = {{"bert": {{"gpus": 4, "mem_per_gpu": "40 gigs"}}}}',
     "c.SchedApp.profiles.bert.mem_per_gpu: cannot parse memory size '40 gigs'. Fix: use e.g. 20GiB"),
], ids=["an unknown placement policy", "a zero cycle interval", "an inventory file with negative cores",
        "a profile value no submission could use (new user 4, finding 15)"])
def test_a_real_server_with_a_bad_value_exits_with_one_line_and_no_traceback(
        tmp_path: Path, setting: str, want: str) -> None:
    """Without reraise_server_extension_failures (what users run), Jupyter Server would log a
    traceback and serve on with default settings; the extension ends the process instead."""
    conf = tmp_path / "config"
    conf.mkdir()
    inventory = tmp_path / "nodes.yaml"
    inventory.write_text("nodes:\n  - {name: n, gpu_count: 1, gpu_model: A100, gpu_memory: 80GiB, cpus: -4}\n")
    setting, want = setting.format(inventory=inventory), want.format(inventory=inventory)
    (conf / "jupyter_server_config.py").write_text(
        f'c.SchedApp.db_url = "sqlite:///{tmp_path / "mine.sqlite"}"\n{setting}\n', encoding="utf-8")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(conf), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    done = subprocess.run([sys.executable, "-m", "jupyter_server", "--no-browser", "--port=0",
                           f"--ServerApp.root_dir={tmp_path}", "--IdentityProvider.token=t", "--allow-root"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert f"jupyter_sched: bad configuration, not starting: {want}" in done.stderr and "Fix:" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data" / "jupyter_sched" / "sched.sqlite").exists()  # nothing ran on a default store
