"""hubadmin25 B19: a month's job history. ``jupyter-sched jobs --all`` took ``--state`` and ``--limit`` (at
most 1000) only, and REST ``GET jobs`` had no ``team``, ``since`` or ``until``: "every failed job of nlp last
week" or "what did a leaver run" needed SQL. Now ``GET jobs`` filters by ``team`` and submit time (the
``Link: rel=next`` page keeps every filter), and ``jobs`` takes ``--user``, ``--team``, ``--since``/``--until``
(dates, times or durations) and reads page after page, saying when older jobs are left out and how to get them.

Real parts: the test server (tests/web/conftest.py: ivan a user, boss an admin), its store (finished jobs of
a past month written as the engine writes them), the REST route and the ``jupyter-sched`` program.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qs

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE
from jupyter_sched.extension.polled import jobs_headers
from jupyter_sched.model import JobState
from jupyter_sched.model.units import clock_text
from jupyter_sched.services.models import ListJobsRequest, ListJobsResponse
from jupyter_sched.services.models.jobs import JobsPage
from jupyter_sched.store import JobRecord
from tests.runtime.builders import make_job

from .conftest import BOSS_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)

NOV = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _history(sched_app: Any) -> dict[str, tuple[str, str, str, int]]:
    """Eight finished jobs of November: id → (user, team, state, day)."""
    rows = {"j-h1": ("ann", "nlp", "failed", 3), "j-h2": ("ann", "nlp", "succeeded", 10),
            "j-h3": ("bo", "nlp", "failed", 12), "j-h4": ("bo", "vision", "failed", 13),
            "j-h5": ("cy", "vision", "succeeded", 20), "j-h6": ("ann", "nlp", "failed", 24),
            "j-h7": ("cy", "nlp", "failed", 25), "j-h8": ("bo", "nlp", "failed", 28)}
    store = sched_app.services.store
    for job_id, (user, team, state, day) in rows.items():
        at = NOV.replace(day=day, hour=9)
        job = make_job(job_id, user=user, team=team, state=JobState(state), submitted_at=at)
        store.insert_job(JobRecord(job=replace(job, started_at=at, finished_at=at.replace(hour=10), exit_code=1
                                               if state == "failed" else 0)))
    return rows


async def test_hubadmin25_b19_rest_jobs_filter_by_team_and_submit_time_and_page_with_every_filter(
        sched_app: Any, api: Any) -> None:
    rows = _history(sched_app)
    query = {"all": "true", "team": "nlp", "state": "failed", "since": "2026-11-10T00:00:00Z",
             "until": "2026-12-01T00:00:00+00:00", "limit": "2"}
    status, first = await api("GET", "jobs", token=BOSS_TOKEN, params=query)
    assert status == 200, first
    assert [j["id"] for j in first] == ["j-h8", "j-h7"], first
    # the next page keeps team, since and until (before: only state/kind/user/all were carried)
    page = JobsPage(jobs=ListJobsResponse([]), next_cursor="c1")
    ((name, link),) = jobs_headers(page, ListJobsRequest.model_validate(query), "/api/sched/jobs")
    assert name == "Link" and parse_qs(link[link.index("?") + 1:link.index(">")]) == {
        **{k: [v] for k, v in query.items()}, "cursor": ["c1"]}, link
    everyone = [j["id"] for j in (await api("GET", "jobs", token=BOSS_TOKEN, params={**query, "limit": "1000"}))[1]]
    assert everyone == ["j-h8", "j-h7", "j-h6", "j-h3"], everyone
    assert all(rows[i][1] == "nlp" and rows[i][2] == "failed" for i in everyone)
    status, bad = await api("GET", "jobs", token=BOSS_TOKEN, params={"all": "true", "since": "last week"})
    assert status == 400 and bad["error"]["field"] == "since", bad
    status, swapped = await api("GET", "jobs", token=BOSS_TOKEN, params={"all": "true", "since": "2026-12-01T00:00:00Z",
                                                                          "until": "2026-11-01T00:00:00Z"})
    assert status == 400 and swapped["error"]["field"] == "until", swapped
    # a user's own list takes the filters too; another team's work stays invisible to them
    status, own = await api("GET", "jobs", params={"team": "nlp"})
    assert status == 200 and own == [], own


async def test_hubadmin25_b19_jobs_all_user_team_period_and_no_silent_cap(sched_app: Any, cli: Any) -> None:  # noqa: F811
    _history(sched_app)
    admin = ("--token", BOSS_TOKEN)
    week = await cli("jobs", "--all", "--team", "nlp", "--state", "failed", "--since", "2026-11-20",
                     "--until", "2026-11-27", *admin)
    assert week.code == EXIT_OK, week.err
    assert [line.split()[0] for line in week.out.splitlines()[1::2]] == ["j-h7", "j-h6"], week.out
    assert week.out.splitlines()[0].split() == ["ID", "USER", "STATE", "PRIO", "GPUS", "NAME"], week.out
    leaver = await cli("jobs", "--user", "bo", "--limit", "100", *admin)
    assert [line.split()[:2] for line in leaver.out.splitlines()[1::2]] == [
        ["j-h8", "bo"], ["j-h4", "bo"], ["j-h3", "bo"]], leaver.out
    # more than --limit: said, with the way to the next ones; following it lists them
    head = await cli("jobs", "--all", "--team", "nlp", "--limit", "2", *admin)
    assert head.code == EXIT_OK, head.err
    oldest = clock_text(datetime(2026, 11, 25, 9, tzinfo=timezone.utc), datetime.now(timezone.utc))  # newuser28 n7
    assert head.out.splitlines()[-1] == (
        f"Older jobs are not shown (the oldest shown was submitted {oldest}): --limit 4 shows more, or "
        "--until 2026-11-25T09:00:00Z the next ones; --since, --state, --team and --user narrow it."), head.out
    rest = await cli("jobs", "--all", "--team", "nlp", "--until", "2026-11-25T09:00:00Z", *admin)
    assert [line.split()[0] for line in rest.out.splitlines()[1::2]] == ["j-h6", "j-h3", "j-h2", "j-h1"], rest.out
    assert "Older jobs" not in rest.out
    # a duration is that long ago (none of November's jobs is in the last 7 days of this run)
    recent = await cli("jobs", "--all", "--team", "nlp", "--since", "7d", *admin)
    # said in clock words since newuser36 n5 ("since Nov 30 05:45 UTC"), never raw ISO
    assert recent.code == EXIT_OK and recent.out.startswith("No jobs of anyone in team nlp submitted since "), recent.out
    assert recent.out.rstrip().endswith(" UTC.") and not re.search(r"\d{4}-\d\d-\d\dT", recent.out), recent.out
    wrong = await cli("jobs", "--since", "last week")
    assert wrong.code == EXIT_USAGE and "--since: 'last week' is no date or time" in wrong.err, wrong.err
    refused = await cli("jobs", "--user", "bo")
    assert refused.err.strip() == ("jupyter-sched jobs: --user: only admins may list another user's jobs — leave out "
                                   "--user to list your own [forbidden]"), refused.err


async def test_verify26_v10_all_with_a_user_lists_that_users_jobs(sched_app: Any, api: Any) -> None:
    """verify26 V10: ``GET jobs?all=true&user=U`` (``jobs --all --user U``) ignored U and listed everyone's."""
    rows = _history(sched_app)
    status, bos = await api("GET", "jobs", token=BOSS_TOKEN, params={"all": "true", "user": "bo", "limit": "1000"})
    assert status == 200 and sorted(j["id"] for j in bos) == sorted(i for i, r in rows.items() if r[0] == "bo"), bos
    status, nobody = await api("GET", "jobs", token=BOSS_TOKEN, params={"all": "true", "user": "nosuchuser"})
    assert status == 200 and nobody == [], nobody
