"""Placement (pure): the per-cycle capacity ledger, filter and score plugins, NVLink-aware GPU choice.

Shape of a placement: :class:`Placer` walks the :class:`ClusterState` index, filters with
:data:`FILTERS` plugins, scores with weighted :data:`SCORES` plugins (``binpack`` default,
``spread``, ``topology``; FGD after Weng et al. ATC'23 in :mod:`.fgd`, our FGD-Balanced in
:mod:`.balanced` and FGD-Planned in :mod:`.planned` (its cutting-stock fill plan in
:mod:`.fill_plan`), the paper's baselines in :mod:`.paper_policies`), and picks GPUs with
:func:`.topology.choose_gpus`. Reasons for "does not fit" are in :mod:`.reasons`.
"""

from .filters import FILTERS, Filter, Status, model_matches
from .placer import Flavor, Placement, PlacementConfig, Placer
from .scores import SCORES, Score
from .state import ClusterState, Holding, Trial

__all__ = [
    "FILTERS", "SCORES", "ClusterState", "Filter", "Flavor", "Holding", "Placement", "PlacementConfig", "Placer",
    "Score", "Status", "Trial", "model_matches",
]
