"""``c.SchedApp.leader_lease_ttl_s`` (session 34): how long the store's leader lease lasts without renewal was the
engine's fixed 15 s, which every test that SIGKILLs a server and restarts it waited out before the new server
scheduled again (the restart tests now run with 5 s). Default unchanged; a value the leader could not renew in
time (under 2 s, its renewal being every min(1 s, ttl / 4)) or not a number is refused naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets import TraitError

from jupyter_sched.extension.app import SchedApp
from jupyter_sched.services.config import build_services
from jupyter_sched.store import sqlite_url


def test_s34_speed_the_leader_lease_ttl_is_a_setting_with_the_old_default(tmp_path: Path) -> None:
    assert SchedApp().leader_lease_ttl_s == 15.0
    assert SchedApp(leader_lease_ttl_s=5).service_settings()["leader_lease_ttl_s"] == 5.0  # what the engine is built from
    for bad in (0, 1.5, -3, float("nan"), float("inf")):
        with pytest.raises(TraitError, match=r"c\.SchedApp\.leader_lease_ttl_s = .*must be 2\.\.3600 seconds"):
            SchedApp(leader_lease_ttl_s=bad)
    for settings, want in (({}, 15.0), ({"leader_lease_ttl_s": 5.0}, 5.0)):
        services = build_services({"db_url": sqlite_url(tmp_path / f"ttl{want:g}.sqlite"), "inventory_source": "simulated",
                                   "simulated_gpus": 1, "log_dir": str(tmp_path / "logs"), **settings})
        try:
            assert services.engine.lease_ttl_s == want and services.engine.leadership.ttl_s == want
        finally:
            services.store.close()
