"""Session 33 speed: a test hub (tests/hub/hub_harness.py) gives its central service 1 s to answer at the hub's
start, not JupyterHub 6's default 30 s.

JupyterHub 6 waits ``Service.timeout`` for each external service with a URL before it routes ``/hub/`` through
the proxy; the harness starts ``jupyter-sched serve`` after the hub (it needs the hub's API), so the wait always
ran out: every test hub (~30 starts a run) spent 30 s of its ~37 s start-up waiting for nothing (measured here:
the hub API answered after 37.5 s before, 5.8 s after). The hub routes the service either way.

No hub is started: the test reads the config the harness writes, as JupyterHub's config loader does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jupyterhub", reason="hub mode needs jupyterhub (pip install jupyterhub)")

from jupyterhub.services.service import Service
from traitlets.config import Config

from .hub_harness import SERVICE, Hub


def test_s33_speed_a_test_hub_waits_one_second_not_thirty_for_its_service_at_start(tmp_path: Path) -> None:
    hub = Hub(base=tmp_path, db_url="postgresql://unused/none", venv=Path(sys.prefix), admins=("carol",),
              groups={"vision": ["amy"]}, proxy_port=1, hub_port=2, service_port=3)
    config = Config()
    exec(compile(hub.config_text("configurable-http-proxy", 4), "jupyterhub_config.py", "exec"),
         {"get_config": lambda: config})
    (service,) = [spec for spec in config.JupyterHub.services if spec["name"] == SERVICE]
    assert service["url"] == "http://127.0.0.1:3", service
    inputs = {name for name, trait in Service.class_traits().items() if trait.metadata.get("input")}
    assert set(service) <= inputs, ("JupyterHub refuses a service field it does not have", set(service) - inputs)
    if "timeout" in inputs:  # JupyterHub 6+: the field exists, its default is 30 s
        assert service["timeout"] == 1, service
    else:  # JupyterHub 5 waits 1 s, fixed
        assert "timeout" not in service, service
