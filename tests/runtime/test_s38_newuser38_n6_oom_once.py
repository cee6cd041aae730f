"""newuser38 n6: a hub service without CAP_SYS_RESOURCE said the oom_score_adj sentence twice per start — inside
the INFO ``local jobs:`` line ("no floor (this service lacks CAP_SYS_RESOURCE: …; fix: …)") and again as its own
WARNING (:func:`~jupyter_sched.executors.limits.oom_floor_warning`). Where the service warns it apart (the hub's,
``warns_oom_floor`` in its settings) the isolation line now points at that WARNING; a personal lab, which has no
such WARNING (newuser28 n11), keeps the whole sentence in its line.

Real parts: :func:`~jupyter_sched.services.build_services` on a SQLite store as this process (root, without
CAP_SYS_RESOURCE on this VM: skipped, naming why, where it holds it); its log records.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from jupyter_sched.executors.limits import OOM_FLOOR_FIX, oom_floor_warning
from jupyter_sched.services import build_services

POINTER = "oom_score_adj 500, no floor (the WARNING below says why and the fix)"


def _isolation_line(tmp_path: Path, caplog: pytest.LogCaptureFixture, **more: object) -> str:
    tmp_path.mkdir()
    settings = {"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "jobs"),
                "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off", **more}
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        services = build_services(settings)
    services.store.close()
    (line,) = [r.getMessage() for r in caplog.records if "local jobs: " in r.getMessage()]
    return line


@pytest.mark.skipif(oom_floor_warning() is None, reason="no oom floor WARNING here: not root, or CAP_SYS_RESOURCE held")
def test_newuser38_n6_the_hubs_isolation_line_points_at_its_oom_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Failed before: the hub's line held the whole CAP_SYS_RESOURCE sentence its WARNING says again."""
    hub = _isolation_line(tmp_path / "hub", caplog, warns_oom_floor=True)
    assert hub.endswith("; " + POINTER) and "CAP_SYS_RESOURCE" not in hub, hub
    lab = _isolation_line(tmp_path / "lab", caplog)
    assert "lacks CAP_SYS_RESOURCE" in lab and OOM_FLOOR_FIX in lab and POINTER not in lab, lab
