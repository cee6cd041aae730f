"""Session 22, issue 20 (verify21, N27 nit): the panel wrote a definition's firings with the browser's
zone name (Asia/Kolkata → ``Dec 7 08:15 GMT+5:30``) where the CLI and the magics wrote the tz
database's (``Dec 7 08:15 IST``).

One rule now (:func:`jupyter_sched.model.units.zone_label`): the tz database's letters where it has
them, else the offset as ``UTC+4``; the server sends that name with every zoned time of a definition
(``next_run_zone``, ``upcoming_zones``, ``scheduled_zone``, ``next_zones``) and the panel shows it as
given (labextension/test/definitions.test.ts, test_s22_words_zone_names_agree_with_the_cli). Here:
the rule, and that every answer's name is the one the CLI prints for the same time.

Real parts: the definitions service on a SQLite store with a manual clock (def_builders.Server).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from def_builders import Server

from jupyter_sched.cli.definitions import _clock
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.model.units import clock_text, zone_label
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import PreviewScheduleRequest
from jupyter_sched.store import sqlite_url

NOW = datetime(2026, 12, 5, 6, 0, tzinfo=timezone.utc)
AT = datetime(2026, 12, 7, 8, 15, tzinfo=timezone.utc)


@pytest.mark.parametrize("zone, want", [
    ("Asia/Kolkata", "IST"),           # the browser said GMT+5:30
    ("Asia/Tokyo", "JST"),             # the browser said GMT+9
    ("Europe/Berlin", "CET"),
    ("America/New_York", "EST"),
    ("Asia/Dubai", "UTC+4"),           # the tz database's "+04": no letters
    ("Asia/Kathmandu", "UTC+5:45"),    # "+0545"
    ("America/Sao_Paulo", "UTC-3"),    # "-03"
    ("UTC", "UTC"),
    ("Not/AZone", "UTC"),
], ids=lambda v: str(v))
def test_s22_words_zone_label_is_the_tz_databases_letters_else_the_utc_offset(zone: str, want: str) -> None:
    assert zone_label(AT, zone) == want
    assert clock_text(AT, NOW, zone=zone).endswith(f" {want}"), clock_text(AT, NOW, zone=zone)


@pytest.mark.parametrize("zone", ["Asia/Kolkata", "Asia/Dubai", "Europe/Berlin", "America/Sao_Paulo"])
def test_s22_words_definition_answers_carry_the_zone_name_the_cli_prints(tmp_path: Path, zone: str) -> None:
    # before: no name was sent; the panel made its own from the browser (GMT+5:30, GMT+4, GMT-3)
    clock = ManualClock(NOW)
    server = Server(sqlite_url(tmp_path / "s.sqlite"), clock, tmp_path / "jobs")
    try:
        made = server.create({"name": "daily", "notebook": "daily.ipynb", "schedule": "15 8 * * *", "timezone": zone,
                              "gpus": 1}, user="ana")

        def printed(iso: str) -> str:  # the zone name the CLI prints for this time (`definitions` / `show`)
            return str(_clock(iso, zone).rsplit(" ", 1)[1])

        assert made["next_run_zone"] == printed(made["next_run_at"]) == zone_label(AT, zone), made
        listed = server.list(user="ana")[0]
        assert listed["next_run_zone"] == made["next_run_zone"], listed
        detail = server.get(made["id"], user="ana")
        assert len(detail["upcoming_zones"]) == len(detail["upcoming"]) == 5, detail
        assert detail["upcoming_zones"] == [printed(t) for t in detail["upcoming"]], detail
        preview = server.definitions.preview(server.caller("ana"), parse(PreviewScheduleRequest, {
            "schedule": "15 8 * * *", "timezone": zone})).to_wire()
        assert preview["next_zones"] == [printed(t) for t in preview["next"]], preview
        clock.set(datetime.fromisoformat(made["next_run_at"].replace("Z", "+00:00")))
        assert server.fire_due().created, "the 08:15 firing made a run"
        run = server.get(made["id"], user="ana")["runs"][0]
        assert run["scheduled_zone"] == printed(run["scheduled_for"]), run
        # the run's job name says the zone the same way (it said "daily @ 2026-12-07 08:15 +04")
        fired = datetime.fromisoformat(run["scheduled_for"].replace("Z", "+00:00")).astimezone(ZoneInfo(zone))
        assert run["job"]["name"] == f"daily @ {fired:%Y-%m-%d} 08:15 {zone_label(fired)}", run["job"]["name"]
    finally:
        server.store.close()
