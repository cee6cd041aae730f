"""hubadmin25 B10: ``jupyter-sched audit`` said nothing when ``--limit`` cut the answer (10,000 rows printed,
more matching, silently), had no CSV and no actor filter. Now a line says more match and how to read them,
``--csv`` prints the rows as CSV, and ``--actor`` (GET audit ``actor``) keeps one actor's own acts. Real
parts: the program against a real Jupyter server with the extension (ivan a user, boss an admin).
"""

from __future__ import annotations

import csv
import io
import sys
from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_hubadmin25_b10_a_cut_answer_says_more_match_csv_and_actor(cli: Any) -> None:  # noqa: F811
    for name in ("b10-a", "b10-b"):
        run = await cli("submit", "--gpus", "0", "--name", name, "--", sys.executable, "-c", "print(1)")
        assert run.code == EXIT_OK, run.err
    boss = await cli("--token", BOSS_TOKEN, "submit", "--gpus", "0", "--name", "b10-boss", "--", sys.executable, "-c",
                     "print(1)")
    assert boss.code == EXIT_OK, boss.err

    cut = await cli("audit", "--action", "submit", "--limit", "2", "--token", BOSS_TOKEN)
    assert cut.code == EXIT_OK, cut.err
    last = cut.out.splitlines()[-1]
    assert last.startswith("2 rows shown, the newest; more match — older ones with --until "), cut.out
    whole = await cli("audit", "--action", "submit", "--limit", "3", "--token", BOSS_TOKEN)
    assert "more match" not in whole.out, whole.out  # all three shown: nothing more said

    table = await cli("audit", "--action", "submit", "--csv", "--token", BOSS_TOKEN)
    assert table.code == EXIT_OK, table.err
    rows = list(csv.DictReader(io.StringIO(table.out)))
    assert [r["action"] for r in rows] == ["submit"] * 3 and set(rows[0]) == {
        "id", "at", "actor", "action", "user", "job_id", "message", "details"}

    mine = await cli("audit", "--actor", "boss", "--action", "submit", "--token", BOSS_TOKEN)
    lines = mine.out.splitlines()[1:]
    assert len(lines) == 1 and " boss " in lines[0] and "b10-boss" in lines[0], mine.out
