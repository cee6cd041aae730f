"""hubadmin25 B8: a month's chargeback needs usage by team and user (who in each team ran up its bill) and by
team and GPU model (priced per model). REST ``usage/report?by=team,user`` gave it; the CLI's ``--by`` took one
key and answered ``--by: 'team,user' is not one of user, team, gpu_model — did you mean user?``. Now ``usage
--by`` takes several keys (``model`` for ``gpu_model``; ``kind``, ``job_id`` and ``period`` too), as a table
with a column per key and as the REST route's own CSV.

Real parts: the test server (tests/web/conftest.py: boss an admin), its store (November's usage intervals,
written as the engine writes them), the report route and the ``jupyter-sched`` program.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)

NOV = datetime(2026, 11, 2, 9, tzinfo=timezone.utc)
A100, L40S = "A100-80GB", "L40S"


def _november(sched_app: Any) -> None:
    """ann (nlp) 2 h on an A100; bo 1 h on an L40S in nlp and 3 h on an A100 in vision."""
    rows = (("j-c1", "ann", "nlp", "GPU-c0", A100, 2), ("j-c2", "bo", "nlp", "GPU-c1", L40S, 1),
            ("j-c3", "bo", "vision", "GPU-c2", A100, 3))
    with sched_app.services.store.transaction() as tx:
        for job_id, user, team, uuid, model, hours in rows:
            tx.open_usage(job_id=job_id, attempt=1, user=user, team=team, kind="training", gpus=[(uuid, model, 1.0)],
                          started_at=NOV)
            tx.close_usage(job_id, NOV.replace(hour=9 + hours))


async def test_hubadmin25_b8_usage_by_team_and_user_or_model_as_table_and_the_routes_csv(
        sched_app: Any, api: Any, cli: Any) -> None:  # noqa: F811
    _november(sched_app)
    admin = ("--month", "2026-11", "--token", BOSS_TOKEN)
    sheet = await cli("usage", "--by", "team,user", "--csv", *admin)
    assert sheet.code == EXIT_OK, sheet.err
    status, csv = await api("GET", "usage/report", token=BOSS_TOKEN, params={
        "by": "team,user", "all": "true", "format": "csv", "since": "2026-11-01T00:00:00Z", "until": "2026-12-01T00:00:00Z"})
    assert status == 200 and sheet.out.rstrip("\n") == csv.rstrip("\n"), (sheet.out, csv)
    lines = sheet.out.splitlines()
    assert lines[0].startswith("team,user,allocated_gpu_seconds,allocated_gpu_hours,"), lines[0]
    assert sorted([*line.split(",")[:2], line.split(",")[3]] for line in lines[1:]) == [
        ["nlp", "ann", "2.0"], ["nlp", "bo", "1.0"], ["vision", "bo", "3.0"]], sheet.out

    by_model = await cli("usage", "--by", "team,model", *admin)
    assert by_model.code == EXIT_OK, by_model.err
    table = [line.split() for line in by_model.out.splitlines()]
    assert table[0][:5] == ["TEAM", "GPU", "MODEL", "GPU-HOURS", "UTILIZED"], by_model.out
    assert sorted(tuple(row[:3]) for row in table[1:4]) == [
        ("nlp", A100, "2.000"), ("nlp", L40S, "1.000"), ("vision", A100, "3.000")], by_model.out

    daily = await cli("usage", "--by", "period", "--period", "day", "--json", *admin)
    assert daily.code == EXIT_OK, daily.err
    assert '"period": "2026-11-02T00:00:00+00:00"' in daily.out, daily.out
    wrong = await cli("usage", "--by", "team,nosuch", *admin)
    assert wrong.code == EXIT_USAGE and "--by: 'nosuch' is not one of user, team, gpu_model, kind, job_id, period " \
        "(model for gpu_model) — one, or several comma separated, e.g. team,user" in wrong.err, wrong.err
    lone = await cli("usage", "--by", "team", "--period", "day", *admin)
    assert lone.code == EXIT_USAGE and "--period goes with --by period" in lone.err, lone.err
