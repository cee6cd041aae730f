"""A per-user rate of definition firings (red team 15, R4's R2 addendum).

As red15b, 100 definitions firing every minute made the service start 107 jobs within one minute,
every minute, with nobody logged in. ``c.SchedApp.definition_max_firings_per_user_hour`` bounds the
scheduled firings of one user's definitions in any hour: a firing over it is skipped, without a
run since red team 17, R4, audited once per definition per hour. Real services on a
real store, a manual clock.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.services.models.definitions import ListDefinitionRunsRequest

EVERY_MINUTE = {"notebook": "report.ipynb", "schedule": "* * * * *", "timezone": "UTC", "gpus": 0,
                "overlap": "allow"}  # every firing a run: no engine cycle starts them here (the default skips behind a waiting run: newuser34 n1)


def test_red15_r2_definitions_firings_over_the_owners_rate_are_skipped_said_and_audited(
        db_url: str, tmp_path: Path) -> None:
    clock = ManualClock(at("2026-12-04T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs", max_firings_per_user_hour=5)
    ids = [server.create({**EVERY_MINUTE, "name": f"d{n}"}, user="red15b")["id"] for n in range(3)]
    other = server.create({**EVERY_MINUTE, "name": "mine"}, user="red15a")["id"]
    skipped = 0
    for _ in range(3):  # 10:01, 10:02, 10:03: 9 firings of red15b's three definitions, 3 of red15a's one
        clock.advance(60)
        skipped += server.fire_due().skipped
    caller = server.caller("red15b")
    runs = {d: server.definitions.runs(caller, d, ListDefinitionRunsRequest()).to_wire() for d in ids}
    rows = [run for d in ids for run in runs[d]]
    # red team 17, R4: a skipped firing writes no run (nor job); each definition's skips are audited once
    assert len(rows) == 5 and all(run["job"]["state"] == "pending" for run in rows)
    audited = server.store.list_events(action="definition_skipped")
    assert skipped == 4 and {e.user for e in audited} == {"red15b"}
    # one record per definition for the hour: its first skip; a second one is said in the next record
    assert len(audited) == len({e.details["definition_id"] for e in audited}) == 3
    assert all(e.details["skipped"] == 1 for e in audited)
    message = audited[0].message
    assert "skipped its firing of" in message and "red15b's definitions already fired 5 runs in the hour before" \
        in message, message
    assert "c.SchedApp.definition_max_firings_per_user_hour = 5" in message
    assert all(e.details["max_firings_per_user_hour"] == 5 for e in audited)
    # another user's definitions are counted apart: red15a's three firings all ran
    mine = server.definitions.runs(server.caller("red15a"), other, ListDefinitionRunsRequest()).to_wire()
    assert [run["job"]["state"] for run in mine] == ["pending"] * 3
    # an hour after the first firings, red15b's definitions fire again
    clock.set(at("2026-12-04T11:02:30+00:00"))
    server.fire_due()
    latest = [server.definitions.runs(caller, d, ListDefinitionRunsRequest(limit=1)).to_wire()[0] for d in ids]
    assert [run["job"]["state"] for run in latest].count("pending") >= 1


def test_red15_r2_definitions_the_rate_setting_is_validated() -> None:
    from traitlets import TraitError

    from jupyter_sched.extension.definitions_web import DefinitionsConfig

    assert DefinitionsConfig().definition_max_firings_per_user_hour == 60
    assert DefinitionsConfig(definition_max_firings_per_user_hour=0).definition_max_firings_per_user_hour == 0
    with pytest.raises(TraitError, match="definition_max_firings_per_user_hour"):
        DefinitionsConfig(definition_max_firings_per_user_hour=-1)
