"""hubadmin23 A15: at twenty users the admin's ``jupyter-sched audit`` was ~80 % ``eta_moved`` rows, with
no way to leave an action out or bound the time (``--action`` took one action; no ``--since``/``--until``
/``--exclude``), and its TIME column had no zone. Now ``--exclude A`` (repeatable, or ``A,B``; the REST
``exclude``, applied in the store query so ``--limit`` counts the rows kept), ``--since``/``--until``
(a plain date is its midnight UTC, as ``usage`` reads it) and TIME as the CLI says clocks
(``09:57:08 UTC``).

Real parts: the ``jupyter-sched`` program as a subprocess against a real Jupyter server with the
scheduler extension (tests/web/conftest.py: ivan a user, boss an admin), its SQLite store.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


def _actions(out: str) -> list[str]:  # TIME is "09:42:59 UTC": ACTION is the fourth word
    # the rows only: a cut answer ends with "N rows shown, the newest; more match …" (hubadmin25 B10)
    return [line.split()[3] for line in out.splitlines()[1:] if line.strip() and " rows shown" not in line
            and " row shown" not in line]


async def test_s23_hubadmin23_a15_exclude_since_until_and_times_in_utc(cli: Any) -> None:  # noqa: F811
    """Failed before: ``--exclude``/``--since`` unknown arguments (rc 2); TIME ``2026-12-05 09:57:08``."""
    run = await cli("submit", "--gpus", "1", "--name", "a15", "--", sys.executable, "-c", "print('a15')")
    assert run.code == EXIT_OK, run.err
    job_id = run.out.split()[1].rstrip(":")
    assert (await cli("wait", job_id)).code == EXIT_OK

    everything = await cli("audit", "--user", "ivan", "--token", BOSS_TOKEN)
    assert everything.code == EXIT_OK, everything.err
    seen = _actions(everything.out)
    assert "submit" in seen and len(set(seen)) >= 2, everything.out
    first = everything.out.splitlines()[1]
    assert re.match(r"\d\d:\d\d:\d\d UTC  ", first), first  # today's record: the clock and its zone

    left_out = await cli("audit", "--user", "ivan", "--exclude", "submit", "--exclude", "admit,started",
                         "--token", BOSS_TOKEN)
    assert left_out.code == EXIT_OK, left_out.err
    kept = _actions(left_out.out)
    assert kept and not {"submit", "admit", "started"} & set(kept), left_out.out
    assert kept == [a for a in seen if a not in ("submit", "admit", "started")], (kept, seen)
    one = await cli("audit", "--user", "ivan", "--exclude", "submit", "--limit", "1", "--token", BOSS_TOKEN)
    assert _actions(one.out) == kept[:1], one.out  # the limit counts the rows kept

    tomorrow = (datetime.now(timezone.utc).date() + timedelta(days=1)).isoformat()
    today = datetime.now(timezone.utc).date().isoformat()
    later = await cli("audit", "--since", tomorrow, "--token", BOSS_TOKEN)
    assert later.code == EXIT_OK and later.out.strip() == "no audit rows match", later
    bounded = await cli("audit", "--user", "ivan", "--since", today, "--until", tomorrow, "--token", BOSS_TOKEN)
    assert _actions(bounded.out) == seen, bounded.out

    too_many = await cli("audit", "--exclude", ",".join(f"a{i}" for i in range(500)), "--token", BOSS_TOKEN)
    assert too_many.code != EXIT_OK and "exclude" in too_many.err and "e.g. eta_moved,admit" in too_many.err, too_many
