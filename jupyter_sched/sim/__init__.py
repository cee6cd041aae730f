"""Trace-driven evaluation over the production scheduling core (edge).

* :mod:`.simulator` — discrete-event simulator with a virtual clock driving ``run_cycle``;
* :mod:`.fgd_protocol` — the evaluation protocol of FGD (Weng et al., ATC'23) on the openb trace;
  :mod:`.reference` — the arrived pods repacked offline (best-fit decreasing), a yardstick for such a run;
* :mod:`.traces` — readers for openb, Tiresias and the published FGD results; :mod:`.fetch` —
  download them from their sources; :mod:`.scenario` — YAML scenario files;
* :mod:`.progress` — how simulated jobs report their progress (the traces have none);
* :mod:`.report` — plotly figures; :mod:`.cli` — ``jupyter-sched simulate`` / ``fetch-traces``.
"""

from .fgd_protocol import OUR_POLICIES, OUR_POLICY, PAPER_POLICIES, ReplayResult, arrival_order, replay
from .progress import ProgressModel
from .reference import repacking_reference
from .scenario import Scenario, load_scenario, parse_scenario
from .simulator import Activity, SimJob, SimResult, Simulator, simulate

__all__ = [
    "OUR_POLICIES", "OUR_POLICY", "PAPER_POLICIES", "Activity", "ProgressModel", "ReplayResult", "Scenario", "SimJob", "SimResult", "Simulator",
    "arrival_order", "load_scenario", "parse_scenario", "repacking_reference", "replay", "simulate",
]
