"""Red team 19, R8, for definitions: a definition giving ``team`` and ``queue`` naming different
teams is refused 400 naming both (before: saved with both, a later firing or edit reading one of
them); an edit giving ``queue`` replaces the stored ``team`` instead of conflicting with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import ValidationError

BODY = {"notebook": "report.ipynb", "schedule": "0 3 * * *", "timezone": "UTC", "gpus": 0}


def _server(sqlite_db: str, tmp_path: Path) -> Server:
    (tmp_path / "report.ipynb").write_text("{}")
    server = Server(sqlite_db, ManualClock(at("2026-12-04T10:00:30+00:00")), tmp_path / "jobs")
    server.services.quotas.set_members("boss", {"ann": ("vision", "nlp")})  # as PUT quotas sets them (N21)
    return server


def test_red19_r8_a_definition_with_team_and_queue_naming_different_teams_is_refused(
        sqlite_db: str, tmp_path: Path) -> None:
    server = _server(sqlite_db, tmp_path)
    with pytest.raises(ValidationError) as err:
        server.create({**BODY, "name": "d", "team": "vision", "queue": "nlp"}, user="ann")
    assert err.value.field == "queue" and "team 'vision', queue 'nlp'" in err.value.message, err.value
    assert server.list(user="ann") == [], "nothing saved"
    assert server.create({**BODY, "name": "same", "team": "vision", "queue": "vision"}, user="ann")["id"]


def test_red19_r8_an_edit_giving_queue_replaces_the_stored_team(sqlite_db: str, tmp_path: Path) -> None:
    server = _server(sqlite_db, tmp_path)
    d = server.create({**BODY, "name": "d", "team": "vision"}, user="ann")
    edited = server.update(d["id"], {"queue": "nlp"}, user="ann")
    assert edited["job"].get("team") is None and edited["job"]["queue"] == "nlp", edited["job"]
    assert edited["team"] == "nlp", edited
