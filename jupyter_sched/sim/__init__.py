"""Trace-driven evaluation over the production scheduling core (edge).

* :mod:`.simulator` — discrete-event simulator with a virtual clock driving ``run_cycle``;
* :mod:`.fgd_protocol` — the evaluation protocol of FGD (Weng et al., ATC'23) on the openb trace;
  :mod:`.reference` — the arrived pods repacked offline (best-fit decreasing), a yardstick for such a run;
* :mod:`.traces` — readers for openb, Tiresias and the published FGD results; :mod:`.fetch` —
  download them from their sources; :mod:`.scenario` — YAML scenario files;
* :mod:`.progress` — how simulated jobs report their progress (the traces have none);
* :mod:`.report` — plotly figures; :mod:`.cli` — ``jupyter-sched simulate`` / ``fetch-traces``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fgd_protocol import OUR_POLICIES, OUR_POLICY, PAPER_POLICIES, ReplayResult, arrival_order, replay
    from .progress import ProgressModel
    from .reference import repacking_reference
    from .scenario import Scenario, load_scenario, parse_scenario
    from .simulator import Activity, SimJob, SimResult, Simulator, simulate

__all__ = [
    "OUR_POLICIES", "OUR_POLICY", "PAPER_POLICIES", "Activity", "ProgressModel", "ReplayResult", "Scenario", "SimJob", "SimResult", "Simulator",
    "arrival_order", "load_scenario", "parse_scenario", "repacking_reference", "replay", "simulate",
]

_HOMES = {**dict.fromkeys(("OUR_POLICIES", "OUR_POLICY", "PAPER_POLICIES", "ReplayResult", "arrival_order", "replay"),
                          "fgd_protocol"),
          "ProgressModel": "progress", "repacking_reference": "reference",
          **dict.fromkeys(("Scenario", "load_scenario", "parse_scenario"), "scenario"),
          **dict.fromkeys(("Activity", "SimJob", "SimResult", "Simulator", "simulate"), "simulator")}
"""Each name of ``__all__`` and its module, imported when first read (PEP 562): importing this package — as
``jupyter-sched simulate --help`` imports :mod:`.cli` — loads no pandas/numpy (newuser29 n13: 2-3 s of wall
time before the help)."""


def __getattr__(name: str) -> Any:
    """``jupyter_sched.sim.NAME``: NAME from its module (:data:`_HOMES`).

    Raises:
        AttributeError: no such name.
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{home}", __name__), name)
