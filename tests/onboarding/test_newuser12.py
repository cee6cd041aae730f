"""New user 12's findings of branch nu12-fix (/work/coord/notes/newuser12.md, steps 1, 2, 3 and 6:
install, CLI, notebook/magics, messages/panel) and the leftovers of new user 11 it took (the team's
quota line in ``%gpu``), each its own test, against a real embedded server (simulated GPUs), the
installed ``jupyter-sched`` command and the magics driven in this process with a real client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK
from tests.onboarding.test_cli_firsthour import api, clear, module_server, wait_state
from tests.onboarding.test_newuser10 import _env  # the same CLI environment as new user 10's tests
from tests.onboarding.test_newuser11 import (  # the same CLI and magics drivers and quota set-up as new user 11's
    _cli,
    _magics,
    team_quota_and_a_lease_of_bobs,
)
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu12", USERS)


# ---- new user 11, N21 (leftover): the team's quota in %gpu, as in `jupyter-sched status` -------------------

def test_newuser11_n21_gpu_shows_the_same_quota_line_as_status(server: EmbeddedServer, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``jupyter-sched status`` gained a quota line (guaranteed, borrowing limit, the team's GPUs in
    use and the caller's share) but ``%gpu`` — where a notebook user looks — had none. ``%gpu``
    prints the same line, from the same renderer (:func:`jupyter_sched.wording.quota.quota_text`)."""
    env = _env(tmp_path, server)
    with team_quota_and_a_lease_of_bobs(server) as team:
        expected = (f"team {team}: guaranteed 1 GPU, borrowing limit 1 GPU (at most 2 GPUs); 1 GPU in use by the team, "
                    "0 GPUs of them yours")
        capsys.readouterr()
        _magics(server).gpu("")
        shown = capsys.readouterr().out
        assert f"Quota: {expected}\n" in shown, shown
        assert "bob" not in shown.split("Quota:")[1].splitlines()[0]
        status = _cli(env, "status")
        assert status.returncode == EXIT_OK, status.stderr
        assert f"quota      {expected}\n" in status.stdout, status.stdout  # the same words in both
    _magics(server).gpu("status")
    assert f"Quota: team {team} has no GPUs set aside and no limit (no quota)" in capsys.readouterr().out


# ---- N1: a definition's run and delete name it; its run's jobs are written as every job is ---------------

def test_newuser12_n1_definition_messages_name_the_definition_and_jobs_keep_one_style(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """N1 (notebooks/definitions.ipynb): ``Started run j-… of d-…`` and ``Deleted d-…: it fires no
    more`` named the definition by id alone (Defined/Updated/Paused said ``d-… 'daily_report'``); the
    wait's progress line read ``job j-… · starting on vm`` with no name; the final line quoted the
    run's name, ``job j-… 'daily_report (run now)': succeeded``, apart from every other job line's
    ``j-… (name)``. Now one style, ``id (name)``, for definitions and jobs, in the magics and the CLI."""
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")  # the text progress line, printed without a notebook
    script = tmp_path / "nu12report.py"
    script.write_text("print('report')\n")
    magics = _magics(server)
    capsys.readouterr()
    definition = magics.schedule(f"define {script} --gpus 0 --name nu12report")
    assert isinstance(definition, str) and definition.startswith("d-")
    assert capsys.readouterr().out.startswith(f"Defined {definition} (nu12report): ")
    job_id = magics.schedule(f"define run {definition}")
    said = capsys.readouterr().out
    # "Queued run j-… (pending: …)" while it waits, "Started run j-…" once it runs (newuser34 N5 nit)
    assert said.startswith((f"Started run {job_id} of", f"Queued run {job_id} (pending")), said
    assert (f" of {definition} (nu12report) with parameters {{}}; %schedule wait {job_id} follows it."
            in said), said
    magics.schedule(f"wait {job_id}")
    waited = capsys.readouterr().out
    final = waited.strip().splitlines()[-1]
    assert final.startswith(f"job {job_id} (nu12report, run now): succeeded"), final
    assert "'nu12report" not in waited, waited  # never quoted apart
    progress = waited.split(final)[0]  # the progress line: titled with the name
    assert f"job {job_id} (nu12report, run now) · " in progress, waited
    magics.schedule(f"define delete {definition}")
    assert capsys.readouterr().out.startswith(f"Deleted {definition} (nu12report): it fires no more"), definition
    # the CLI writes the definition the same way when given its id
    env = _env(tmp_path, server)
    made = _cli(env, "definitions", "create", str(script), "--gpus", "0", "--name", "nu12cli")
    assert made.returncode == EXIT_OK, made.stderr
    cli_def = made.stdout.split()[1]
    ran = _cli(env, "definitions", "run", cli_def)
    assert ran.returncode == EXIT_OK and f" of {cli_def} (nu12cli) — " in ran.stdout, ran.stdout + ran.stderr
    gone = _cli(env, "definitions", "delete", cli_def)
    assert gone.stdout.startswith(f"deleted {cli_def} (nu12cli): it fires no more"), gone.stdout + gone.stderr


# ---- N4: `%schedule status` alone is the summary `jupyter-sched status` prints ------------------------------

def test_newuser12_n4_schedule_status_without_a_job_is_the_cli_status_summary(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """N4: ``%schedule status`` was ``UsageError: missing JOB`` while ``jupyter-sched status`` with no
    argument is the summary: one word, two meanings. Now the magic prints the CLI's lines (one
    renderer, :func:`jupyter_sched.wording.status.status_lines`); with a job it keeps its one line."""
    clear(server)  # an earlier test's job ending between the two reads would change the "my work" line
    capsys.readouterr()
    _magics(server).schedule("status")
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["server", "user", "gpus"], lines
    cli = _cli(_env(tmp_path, server), "status")
    assert cli.returncode == EXIT_OK, cli.stderr
    shown = cli.stdout.strip().splitlines()
    for key in ("user", "gpus", "my work", "quota"):  # the same words in both
        (mine,) = [line for line in lines if line.startswith(key)]
        assert mine in shown, (mine, shown)
    job_id = api(server, "tok-ann").post("jobs", json={"gpus": 0, "name": "nu12st", "command": ["true"]}).json()["id"]
    _magics(server).schedule(f"status {job_id}")
    assert capsys.readouterr().out.startswith(f"job {job_id} (nu12st): "), job_id
    from IPython.core.error import UsageError

    from jupyter_sched.magics.core import MagicError

    with pytest.raises((MagicError, UsageError)) as refused:  # logs and wait still need a job
        _magics(server).schedule("logs")
    assert "JOB" in str(refused.value)


# ---- N7: the CLI's NAME column keeps what tells leases apart --------------------------------------------------

def test_newuser12_n7_queue_and_jobs_keep_the_notebook_of_a_lease_name(server: EmbeddedServer, tmp_path: Path) -> None:
    """N7: ``jupyter-sched queue`` / ``jobs`` cut ``lease for /home/nu12amy/amy-private.ipynb`` to
    ``lease for /home/nu12amy…``: every lease of one home read the same. The column keeps a path's
    last part (:func:`jupyter_sched.wording.jobs.fit_name`)."""
    from jupyter_sched.wording.jobs import fit_name

    ann = api(server, "tok-ann")
    home = "/home/nu12ann/projects/experiments"
    made = [ann.post("leases", json={"gpus": 1, "kernel_notebook": f"{home}/{nb}"}).json()
            for nb in ("amy-private.ipynb", "amy-other.ipynb")]
    env = _env(tmp_path, server)
    try:
        for command in (("queue",), ("jobs",)):
            listed = _cli(env, *command)
            assert listed.returncode == EXIT_OK, listed.stderr
            rows = {line.split()[0]: line for line in listed.stdout.splitlines() if line.startswith("l-")}
            assert rows[made[0]["id"]].rstrip().endswith("…/amy-private.ipynb"), listed.stdout
            assert rows[made[1]["id"]].rstrip().endswith("…/amy-other.ipynb"), listed.stdout
    finally:
        for lease in made:
            ann.delete(f"leases/{lease['id']}")
    assert fit_name("lease for /tmp/nb.ipynb") == "lease for /tmp/nb.ipynb"  # short names stay whole
    assert fit_name("a-long-experiment-name-that-goes-on") == "a-long-experiment-name-…"
    assert fit_name("lease for /h/u/" + "n" * 40 + ".ipynb") == "…" + ("n" * 40 + ".ipynb")[-23:]


# ---- N8: a definition's path refusal offers what definitions take -------------------------------------------

def test_newuser12_n8_a_definitions_notebook_refusal_does_not_offer_notebook_json(server: EmbeddedServer) -> None:
    """N8: ``POST definitions`` with an unreadable notebook was told "…or send its text as
    notebook_json" — the jobs route's hint; definitions answer that field with "unknown field". The
    definitions route's hint names only what it takes; ``POST jobs`` keeps offering the text."""
    ann = api(server, "tok-ann")
    body = {"name": "nu12n8", "notebook": "/nonexistent/nu12/private.ipynb", "schedule": "0 7 * * *", "gpus": 0}
    refused = ann.post("definitions", json=body)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "notebook" and "notebook_json" not in error["hint"], error
    assert "a definition keeps the path" in error["hint"], error
    # the notebook's folder is where it starts (newuser26 N10): the notebook is named, not a working_dir never given
    assert error["message"].startswith("notebook '/nonexistent/nu12/private.ipynb' is in a folder that does not exist"), error
    followed = ann.post("definitions", json={**body, "notebook_json": "{}"})  # what the old hint said to do
    assert followed.status_code == 400 and followed.json()["error"]["field"] == "notebook_json"
    job = ann.post("jobs", json={"gpus": 0, "notebook": "/nonexistent/nu12/private.ipynb"})
    assert job.status_code == 400 and "notebook_json" in job.json()["error"]["hint"], job.text  # the jobs route takes it
    script = ann.post("definitions", json={**body, "notebook": None, "script": "/nonexistent/nu12/x.py"})
    assert script.status_code == 400 and "source" not in script.json()["error"]["hint"], script.text


# ---- N9: an unknown field is named before a missing one -------------------------------------------------------

def test_newuser12_n9_an_unknown_field_is_reported_before_a_missing_one(server: EmbeddedServer) -> None:
    """N9: ``POST definitions {"notebook": …, "cron": …}`` answered "name is required"; once a name was
    added, "unknown field 'cron' … did you mean 'schedule'?" — a second round for one typo. The
    unknown field comes first (it is most often the misspelt one), on every route's model."""
    ann = api(server, "tok-ann")
    said = ann.post("definitions", json={"notebook": "x.ipynb", "cron": "0 7 * * *", "gpus": 0})
    assert said.status_code == 400, said.text
    error = said.json()["error"]
    assert error["field"] == "cron" and "schedule" in error["hint"], error
    lease = ann.post("leases", json={"gpu": 1, "timeout": "10m"})  # two unknown fields: the first named
    assert lease.status_code == 400 and lease.json()["error"]["field"] in ("gpu", "timeout"), lease.text
    missing = ann.post("definitions", json={"notebook": "x.ipynb", "schedule": "0 7 * * *", "gpus": 0})
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "name", missing.text  # alone: still said


# ---- N10: one wording for another user's job on every route ----------------------------------------------------

def test_newuser12_n10_every_route_words_another_users_job_alike(server: EmbeddedServer) -> None:
    """N10: ``GET jobs/{id}/notebook`` of amy's job said "no job 'j-…' visible to you" while GET,
    DELETE and logs said "… is another user's job". Both are one rule, by the job's state: a job in
    the shared queue (live) is "another user's job"; a finished one is not shown to others at all, on
    every route alike — and the hint now says so, identically for an id that never existed."""
    ann, bob = api(server, "tok-ann"), api(server, "tok-bob")
    live = bob.post("jobs", json={"gpus": 0, "name": "nu12live", "command": ["sleep", "60"]}).json()["id"]
    done = bob.post("jobs", json={"gpus": 0, "name": "nu12done", "command": ["true"]}).json()["id"]
    try:
        wait_state(server, "tok-bob", done, "succeeded")
        for route in ("jobs/{}", "jobs/{}/logs", "jobs/{}/notebook"):
            seen = ann.get(route.format(live))
            assert seen.status_code == 403 and "is another user's job" in seen.json()["error"]["message"], (route, seen.text)
            gone = ann.get(route.format(done))
            never = ann.get(route.format("j-1m8y00000-nosuch"))
            assert gone.status_code == never.status_code == 404, (route, gone.text)
            assert gone.json()["error"]["message"] == never.json()["error"]["message"].replace("j-1m8y00000-nosuch", done), route
            assert gone.json()["error"]["hint"] == never.json()["error"]["hint"], route
            assert "finished jobs of other users" in gone.json()["error"]["hint"], gone.json()
    finally:
        bob.delete(f"jobs/{live}")
