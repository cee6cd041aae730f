"""Hub admin 22's wrong-token probe, the definitions' side: while the hub refuses the service's token (or
is down), a due firing cannot tell who its owner is and waits (BusyError). Each engine tick logged a
traceback for it ("firing failed; retried at the next tick", ERROR with exc_info, twice a second); now one
WARNING per definition says why it waits, again only when the reason changes or after it fired."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import BusyError


def test_s23_hubadmin22_a_firing_that_waits_on_the_hub_says_so_once_not_a_traceback_a_tick(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(at("2026-12-05T06:00:30+00:00"))
    svc = Server(f"sqlite:///{tmp_path / 'sched.sqlite'}", clock, tmp_path / "jobs")
    d = svc.create({"name": "minutely", "script": "tick.py", "schedule": "* * * * *", "gpus": 0,
                    "overlap": "allow"}, user="fay")

    def refused(user: str) -> Any:
        raise BusyError(f"the hub refuses this service's token looking up {user}", hint="fix JUPYTERHUB_API_TOKEN")

    svc.definitions.owner_caller = refused
    caplog.set_level(logging.INFO, logger="jupyter_sched.definitions.firing")
    for second in range(1, 11):                                   # ten ticks, a second apart
        clock.set(at(f"2026-12-05T06:01:{second:02d}+00:00"))
        assert svc.fire_due().created == []
    said = [r for r in caplog.records if r.name == "jupyter_sched.definitions.firing"]
    assert [r.levelno for r in said] == [logging.WARNING], [r.getMessage() for r in said]
    assert said[0].exc_info is None
    assert said[0].getMessage() == (f"definition {d['id']}: not fired now: the hub refuses this service's token "
                                    "looking up fay (fix JUPYTERHUB_API_TOKEN); retried at every tick")

    svc.definitions.owner_caller = lambda user: svc.services.caller(user, admin=False)
    clock.set(at("2026-12-05T06:01:20+00:00"))
    assert len(svc.fire_due().created) == 1                       # fixed: the waiting firing runs, on time
    svc.definitions.owner_caller = refused
    clock.set(at("2026-12-05T06:02:01+00:00"))
    svc.fire_due()
    said = [r for r in caplog.records if r.name == "jupyter_sched.definitions.firing"]
    assert len(said) == 2, "a new wait after a firing is said again"
