"""newuser29 n11: ``definitions create`` past the per-user cap was refused tagged to ``--name:`` ("--name: n29b
already keeps 100 job definitions, …") — the name is not the problem, the count is: the refusal names no field
(the CLI then says it without a flag before it). Real parts: the definitions service on SQLite (def_builders)."""

from __future__ import annotations

from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import QuotaError

NOTEBOOK = {"notebook": "report.ipynb", "schedule": "0 3 1 1 *", "timezone": "UTC", "gpus": 0, "paused": True}


def test_newuser29_n11_the_definitions_cap_refusal_names_no_field(sqlite_db: str, tmp_path: Path) -> None:
    server = Server(sqlite_db, ManualClock(at("2026-12-06T01:00:00+00:00")), tmp_path / "jobs", limit_per_user=1)
    server.create({**NOTEBOOK, "name": "n0"}, user="mal")
    with pytest.raises(QuotaError) as refused:
        server.create({**NOTEBOOK, "name": "n1"}, user="mal")
    assert refused.value.message == "mal already keeps 1 job definition, the most this server allows per user"
    assert refused.value.field is None, refused.value.field
