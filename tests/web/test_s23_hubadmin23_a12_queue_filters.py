"""hubadmin23 A12 (part): an admin's terminal at twenty users — ``queue --all`` was a 77-line wall with no
``--user``/``--team`` filter; ``--all`` meant "every pending job" on ``queue`` and "every user" on
``cancel`` with no help saying so; /metrics counted a quota ``reclaim`` in ``preemptions_total`` while
``reclaims_total`` stayed 0, and no HELP line said which reclaim each counts. Now ``queue --user U`` /
``--team T`` list that work with its place in the whole queue, both helps say what ``--all`` means, and
the two HELP lines say which reclaim each counts.

Real parts: the ``jupyter-sched`` program as a subprocess against a real Jupyter server with the
scheduler extension (tests/web/conftest.py: ivan a user, boss an admin, 4 simulated GPUs); GET metrics.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.cli.queue_summary import team_rows

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_s23_hubadmin23_a12_queue_user_and_team_filters_and_all_said(cli: Any) -> None:  # noqa: F811
    """Failed before: ``--user``/``--team`` unknown arguments (rc 2); helps silent on --all's two meanings."""
    hold = [sys.executable, "-c", "import time; time.sleep(60)"]
    ids = []
    for who in ((), ("--token", BOSS_TOKEN)):
        run = await cli("submit", "--gpus", "1", "--name", "a12", *who, "--", *hold)
        assert run.code == EXIT_OK, run.err
        ids.append((who, run.out.split()[1].rstrip(":")))
    try:
        everyone = json.loads((await cli("queue", "--json")).out)
        teams = {row["id"]: row["team"] for row in everyone}
        ivans = await cli("queue", "--user", "ivan", "--token", BOSS_TOKEN)
        assert ivans.code == EXIT_OK, ivans.err
        assert ids[0][1] in ivans.out and ids[1][1] not in ivans.out, ivans.out
        team = teams[ids[0][1]]
        by_team = await cli("queue", "--team", team, "--json")
        assert {row["team"] for row in json.loads(by_team.out)} == {team}, by_team.out
        nobody = await cli("queue", "--team", "no-such-team")  # hubadmin25 B14: an unknown team is said so
        assert nobody.code == 2 and nobody.err.strip().startswith("jupyter-sched queue: --team: no team no-such-team "
                                                                  "(teams: "), nobody
        both = await cli("queue", "--user", "nobody-here", "--team", team)
        assert both.out.strip() == f"User nobody-here in team {team} has nothing pending or running.", both
    finally:
        for who, job_id in ids:
            assert (await cli("cancel", job_id, "--yes", *who)).code == EXIT_OK
    queue_help = " ".join((await cli("queue", "--help")).out.split())
    assert "--all lists every pending job, not only the first 50" in queue_help, queue_help
    assert "it is not 'all users' as in cancel --all and jobs --all" in queue_help, queue_help
    cancel_help = " ".join((await cli("cancel", "--help")).out.split())
    assert "every user's pending and running jobs (admins only; queue --all means every pending job instead)" \
        in cancel_help, cancel_help


async def test_s23_hubadmin23_a12_metrics_help_says_which_reclaim_each_counts(api: Any) -> None:
    """Failed before: "Preemption events since server start" / "Idle reclaims that freed GPUs since server start"."""
    status, text = await api("GET", "metrics")
    assert status == 200
    helps = {family.name: family.documentation for family in text_string_to_metric_families(text)}
    assert "quota reclaim" in helps["jupyter_sched_preemptions"], helps["jupyter_sched_preemptions"]
    assert "not idle reclaim (jupyter_sched_reclaims)" in helps["jupyter_sched_preemptions"]
    assert helps["jupyter_sched_reclaims"].startswith("Idle reclaims since server start"), helps
    assert "quota reclaims are counted in jupyter_sched_preemptions" in helps["jupyter_sched_reclaims"], helps


async def test_s23_hubadmin23_a12_queue_summary_one_line_per_team(cli: Any) -> None:  # noqa: F811
    """Failed before: ``--summary`` an unknown argument (rc 2): the admin counted rows."""
    hold = [sys.executable, "-c", "import time; time.sleep(60)"]
    ids = []
    for gpus in ("4", "1"):  # 4 simulated GPUs: the second waits
        run = await cli("submit", "--gpus", gpus, "--name", f"a12-{gpus}", "--", *hold)
        assert run.code == EXIT_OK, run.err
        ids.append(run.out.split()[1].rstrip(":"))
    try:
        team = json.loads((await cli("queue", "--json")).out)[0]["team"]
        said = await cli("queue", "--summary", "--token", BOSS_TOKEN)
        assert said.code == EXIT_OK, said.err
        lines = said.out.splitlines()
        assert lines[0].split() == ["TEAM", "RUNNING", "GUARANTEE", "LIMIT", "BORROWED", "PENDING", "PENDING", "GPUS",
                                    "OLDEST", "WAIT"], said.out
        (row,) = [line.split() for line in lines[1:] if line.split()[:1] == [team]]
        # no quota lines: nothing guaranteed, nothing borrowed ("-", newuser30 n17: "4" read as a debt)
        assert row[1:7] == ["4", "-", "-", "-", "1", "1"], said.out
        assert lines[-1].startswith("GPUs now: RUNNING held by admitted and running work (a GPU only a team's shares hold counts whole);"), said.out
        data = json.loads((await cli("queue", "--summary", "--team", team, "--json")).out)
        assert [(t["team"], t["running"], t["pending"], t["pending_gpus"]) for t in data] == [(team, 4.0, 1, 1.0)], data
    finally:
        for job_id in ids:
            assert (await cli("cancel", job_id, "--yes")).code == EXIT_OK


def test_s23_hubadmin23_a12_team_rows_guarantee_limit_borrowed() -> None:
    now = datetime(2026, 12, 5, 9, 0, tzinfo=timezone.utc)
    queue = [{"team": "cv", "state": "running", "resources": {"gpus": 3}},
             {"team": "cv", "state": "pending", "resources": {"gpus": 2, "workers": 2},
              "submitted_at": "2026-12-05T08:48:00Z"},
             {"team": "nlp", "state": "admitted", "resources": {"gpus": 1, "gpu_milli": 500}}]
    quotas = {"quotas": [{"team": "cv", "user": None, "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 1},
                         {"team": "cv", "user": "ana", "guaranteed": 5, "borrowing_limit": None},  # a user's line
                         {"team": "ops", "user": None, "guaranteed": 1, "borrowing_limit": None}]}
    rows = {r["team"]: r for r in team_rows(queue, quotas, now)}
    assert (rows["cv"]["running"], rows["cv"]["guaranteed"], rows["cv"]["limit"], rows["cv"]["borrowed"],
            rows["cv"]["pending"], rows["cv"]["pending_gpus"], rows["cv"]["oldest_wait_s"]) == (3, 2, 1, 1, 1, 4, 720)
    assert (rows["nlp"]["running"], rows["nlp"]["guaranteed"], rows["nlp"]["borrowed"]) == (0.5, None, 0.5)
    assert (rows["ops"]["running"], rows["ops"]["unlimited"], rows["ops"]["limit"]) == (0, True, None)
