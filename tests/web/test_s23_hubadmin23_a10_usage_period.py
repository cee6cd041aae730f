"""hubadmin23 A10 / newuser23 N10: ``jupyter-sched usage --by team --since 2026-12-01`` — the README's
and ``usage --help``'s own example — was refused ("a date without a time and a UTC offset"); there was
no ``--until`` (November's bill could not be made from the CLI), and neither the table nor the CSV said
the period it covers (UTILIZED had no unit). Now a plain date is its midnight UTC, ``--until`` and
``--month YYYY-MM`` bound the period, the footer says it (``Dec 1 00:00 UTC → now``) with the columns'
units, and every CSV row carries ``since`` and ``until`` as its two last columns (one header row, no
comment line: what a spreadsheet or ``pandas.read_csv`` reads as is).

Real parts: the ``jupyter-sched`` program as a subprocess against a real Jupyter server with the
scheduler extension (tests/web/conftest.py: ivan a user, boss an admin); the CSV writer of
``build_services`` on SQLite.
"""

from __future__ import annotations

import csv
import io
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE
from jupyter_sched.services import build_services
from jupyter_sched.services.models import GetUsageReportRequest

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_s23_hubadmin23_a10_a_plain_date_until_and_month_and_the_period_said(cli: Any) -> None:  # noqa: F811
    """Failed before: ``--since 2026-12-01`` rc 1 ``[invalid_timestamp]``; ``--until``/``--month``
    unknown arguments; the footer said no period, the CSV had no since/until columns."""
    run = await cli("submit", "--gpus", "1", "--name", "a10", "--", sys.executable, "-c", "print('a10')")
    assert run.code == EXIT_OK, run.err
    job_id = run.out.split()[1].rstrip(":")
    assert (await cli("wait", job_id)).code == EXIT_OK

    now = datetime.now(timezone.utc)
    today, tomorrow = now.date().isoformat(), (now.date() + timedelta(days=1)).isoformat()
    as_readme = await cli("usage", "--by", "team", "--since", today, "--token", BOSS_TOKEN)
    assert as_readme.code == EXIT_OK, as_readme.err
    footer = as_readme.out.splitlines()[-1]
    assert footer.startswith("everyone's usage, 00:00 UTC → now;"), footer  # today's midnight, UTC
    assert "UTILIZED in GPU-hours" in footer, footer

    bounded = await cli("usage", "--since", today, "--until", tomorrow, "--csv")
    assert bounded.code == EXIT_OK, bounded.err
    table = list(csv.reader(io.StringIO(bounded.out)))
    assert table[0][-2:] == ["since", "until"] and len(table) == 2, table
    assert table[1][table[0].index("user")] == "ivan", table
    # an until after now is now: the figures end at the report time, and so does the period said (hubadmin24 B9)
    said_until = datetime.fromisoformat(table[1][-1].replace("Z", "+00:00"))
    assert table[1][-2] == f"{today}T00:00:00Z" and abs(said_until - datetime.now(timezone.utc)) < timedelta(minutes=1), \
        table[1]

    last_month = (now.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
    month = await cli("usage", "--month", last_month)
    assert month.code == EXIT_OK, month.err
    first = datetime.strptime(last_month + "-01", "%Y-%m-%d")
    assert month.out.strip() == (f"no usage recorded (ivan's usage, {first:%b} 1 00:00 UTC → "
                                 f"{now:%b} 1 00:00 UTC (not included))"), month.out

    models = await cli("usage", "--by", "gpu_model", "--since", today)  # newuser23 N10: was "not one of user, team"
    assert models.code == EXIT_OK and models.out.splitlines()[0].split()[:3] == ["GPU", "MODEL", "GPU-HOURS"], models
    assert "Simulated" in models.out.splitlines()[1], models.out

    for bad, said in ((("--month", "2026-13"), "--month: '2026-13' is not a month — write YYYY-MM"),
                      (("--since", "2026-02-30"), "--since: '2026-02-30' is no calendar date"),
                      (("--month", last_month, "--until", tomorrow), "--month is a whole month by itself")):
        refused = await cli("usage", *bad)
        assert refused.code == EXIT_USAGE and said in refused.err, (bad, refused)


def test_s23_hubadmin23_a10_csv_without_since_says_from_the_first_record_to_the_report_time(tmp_path: Path) -> None:
    """REST ``format=csv`` with no window: the one usage period (s23-acct: the 7 days up to the report's
    time; was from the first record) — the export still says its period. Failed before: no such columns."""
    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"})
    try:
        start = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=3)
        with services.store.transaction(now=start) as tx:
            tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training",
                          gpus=[("GPU-0", "A100", 1.0)], started_at=start)
            tx.close_usage("j-1", start + timedelta(hours=2))
        boss = services.caller("boss", admin=True)
        before = datetime.now(timezone.utc).replace(microsecond=0)
        request = GetUsageReportRequest(all=True, by="team", format="csv")  # type: ignore[call-arg]
        header, row = csv.reader(io.StringIO(services.accounting.report_csv(
            services.accounting.report(boss, request), request)))
        assert header[0] == "team" and header[-2:] == ["since", "until"], header
        until = datetime.fromisoformat(row[-1].replace("Z", "+00:00"))
        since = datetime.fromisoformat(row[-2].replace("Z", "+00:00"))
        # the report's time rounded up to the second: work that ended in the current second is in the period
        latest = datetime.now(timezone.utc) + timedelta(seconds=1)
        assert row[0] == "ml" and until - since == timedelta(days=7) and before <= until <= latest, row
    finally:
        services.store.close()
