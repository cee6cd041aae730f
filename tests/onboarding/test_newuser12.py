"""New user 12's findings of branch nu12-fix (/work/coord/notes/newuser12.md, steps 1, 2, 3 and 6:
install, CLI, notebook/magics, messages/panel) and the leftovers of new user 11 it took (the team's
quota line in ``%gpu``), each its own test, against a real embedded server (simulated GPUs), the
installed ``jupyter-sched`` command and the magics driven in this process with a real client."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.magics.core import SchedMagics
from tests.onboarding.test_cli_firsthour import api, clear, wait_state
from tests.onboarding.test_newuser10 import _env  # the same CLI environment as new user 10's tests
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu12"), users=USERS, admin_users=["boss"], simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)  # jobs outlive a killed server by design: stop this module's before killing it
        srv.kill()


def _cli(env: dict[str, str], *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120, cwd=cwd)


def _magics(server: EmbeddedServer, token: str = "tok-ann") -> SchedMagics:
    """The magics of a kernel of ``token``'s user (no IPython shell is needed for %schedule/%gpu lines)."""
    from jupyter_sched.client import connect

    return SchedMagics(None, client_factory=lambda: connect(server.url, token))


# ---- new user 11, N21 (leftover): the team's quota in %gpu, as in `jupyter-sched status` -------------------

def test_newuser11_n21_gpu_shows_the_same_quota_line_as_status(server: EmbeddedServer, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``jupyter-sched status`` gained a quota line (guaranteed, borrowing limit, the team's GPUs in
    use and the caller's share) but ``%gpu`` — where a notebook user looks — had none. ``%gpu``
    prints the same line, from the same renderer (:func:`jupyter_sched.wording.quota.quota_text`)."""
    boss, ann = api(server, "tok-boss"), api(server, "tok-ann")
    before = boss.get("quotas").json()
    team = ann.get("me").json()["team"]
    env = _env(tmp_path, server)
    try:
        assert boss.put("quotas", json={"quotas": [{"team": team, "gpu_model": "*", "guaranteed": 1,
                                                    "borrowing_limit": 1}]}).status_code == 200
        lease = api(server, "tok-bob").post("leases", json={"gpus": 1}).json()  # bob is in ann's team
        wait_state(server, "tok-bob", lease["id"], "running", "admitted")
        expected = (f"team {team}: guaranteed 1 GPU, borrowing limit 1 (at most 2); 1 GPU in use by the team, "
                    "0 GPUs of them yours")
        capsys.readouterr()
        _magics(server).gpu("")
        shown = capsys.readouterr().out
        assert f"Quota: {expected}\n" in shown, shown
        assert "bob" not in shown.split("Quota:")[1].splitlines()[0]
        status = _cli(env, "status")
        assert status.returncode == EXIT_OK, status.stderr
        assert f"quota      {expected}\n" in status.stdout, status.stdout  # the same words in both
    finally:
        boss.put("quotas", json={"quotas": before.get("quotas", []), "teams": before.get("teams", [])})
        clear(server)
        for row in api(server, "tok-bob").get("leases", params={"state": "pending,admitted,running"}).json():
            api(server, "tok-bob").delete(f"leases/{row['id']}")
    _magics(server).gpu("status")
    assert f"Quota: team {team} has no quota line: no GPUs guaranteed, no limit" in capsys.readouterr().out


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
    assert said.startswith(f"Started run {job_id} of {definition} (nu12report) with parameters {{}}; "
                           f"%schedule wait {job_id} follows it."), said
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
