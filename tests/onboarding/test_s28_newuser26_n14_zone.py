"""newuser26 n14: every time the CLI and the magics said was UTC, whatever TZ said (``TZ=Europe/Berlin
jupyter-sched queue`` → "ends by 19:47 UTC"): a Berlin user converted every ETA. Now they say the caller's zone
(TZ, else /etc/localtime) with its name — "ends by 20:47 CET" —, UTC where that is UTC; ``--utc`` forces UTC;
``--json`` stays the server's ISO UTC. The server's own words are UTC (the panel says the browser's zone)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.model.units import clock_text, shown_in
from tests.onboarding.test_cli_firsthour import module_server
from tests.onboarding.test_newuser27 import cli
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu26n14", USERS)


def test_newuser26_n14_clock_text_says_the_readers_zone_within_shown_in() -> None:
    at, now = datetime(2026, 12, 5, 19, 47, tzinfo=timezone.utc), datetime(2026, 12, 5, 19, 0, tzinfo=timezone.utc)
    assert clock_text(at, now) == "19:47 UTC"
    with shown_in("Europe/Berlin"):
        assert clock_text(at, now) == "20:47 CET"
        assert clock_text(datetime(2026, 12, 5, 23, 30, tzinfo=timezone.utc), now) == "Dec 6 00:30 CET"  # Berlin's day
        assert clock_text(at, now, zone="UTC") == "19:47 UTC"  # a zone given (a definition's) wins
    with shown_in(None), shown_in("Not/AZone"):
        assert clock_text(at, now) == "19:47 UTC"
    assert clock_text(at, now) == "19:47 UTC"  # left as it was


def test_newuser26_n14_the_cli_says_times_in_the_callers_zone(server: EmbeddedServer, tmp_path: Path) -> None:
    made = cli(server, {}, tmp_path, "submit", "--gpus", "0", "--time-limit", "30m", "--name", "zoned", "--",
               "sleep", "600")
    assert made.returncode == 0, made.stdout + made.stderr
    job_id = made.stdout.split()[1]
    try:
        berlin = cli(server, {"TZ": "Europe/Berlin"}, tmp_path, "jobs")
        assert berlin.returncode == 0, berlin.stderr
        assert " CET" in berlin.stdout and " UTC" not in berlin.stdout, berlin.stdout
        forced = cli(server, {"TZ": "Europe/Berlin"}, tmp_path, "jobs", "--utc")
        assert " UTC" in forced.stdout and " CET" not in forced.stdout, forced.stdout
        plain = cli(server, {"TZ": "UTC"}, tmp_path, "jobs")
        assert " UTC" in plain.stdout and " CET" not in plain.stdout, plain.stdout
        raw = cli(server, {"TZ": "Europe/Berlin"}, tmp_path, "status", job_id, "--json")
        assert json.loads(raw.stdout)["submitted_at"].endswith("Z"), raw.stdout
    finally:
        cli(server, {}, tmp_path, "cancel", job_id)
