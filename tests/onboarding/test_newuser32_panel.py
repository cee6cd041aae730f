"""New user 32's panel and wording findings of branch s32-panel (/work/coord/notes/newuser32.md): N2 (submit's own
options typed in the panel's Arguments field went to the script unsaid) and n1 (99 GPUs said in several shapes),
against one real embedded server (2 simulated GPUs), the installed ``jupyter-sched`` command and the magics driven
in this process with a real client. The panel's side of each is pinned in
labextension/test/s32_newuser32_panel.test.ts, on the answers this server gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED
from jupyter_sched.magics.core import MagicError
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu32panel", USERS)


# ---- n1: a request that can never fit, one sentence shape ---------------------------------------------------

NEVER = "needs 99 GPUs of any model on one node but the largest node has 2 — ask for at most 2 GPUs"


def test_newuser32_n1_99_gpus_reads_one_shape_on_cli_and_magics_refusals_and_dry_runs(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """n1: the CLI said "… has 4 — ask for at most 4 GPUs", the magics "… has 4. Ask for at most 4 GPUs.", the dry
    runs "… has 4. Ask for …" and the panel "— Ask for …" (its Check fit no fix at all). Now every surface says what
    blocks it, a dash and the fix as a clause (wording.reasons.refusal_line); the panel's twin is pinned in vitest
    on the reason this server sends (the same text, checked here)."""
    rest = api(server, "tok-ann").post("jobs", json={"gpus": 99, "command": ["true"]})
    assert rest.status_code == 422, rest.text
    text = rest.json()["error"]["details"]["reason"]["text"]
    # what the panel joins (labextension/test/s32_newuser32_panel.test.ts pins its sentence on these words)
    assert (text["summary"], text["unblock"]) == (NEVER.split(" — ")[0] + ".", "Ask for at most 2 GPUs."), text
    env = _env(tmp_path, server)
    refused = _cli(env, "submit", "--gpus", "99", "--", "true")
    assert refused.returncode == EXIT_REFUSED, refused
    assert refused.stderr.strip().splitlines()[-1] == f"jupyter-sched submit: --gpus: {NEVER} [unschedulable]"
    dry = _cli(env, "submit", "--dry-run", "--gpus", "99", "--", "true")
    assert dry.returncode == EXIT_OK and dry.stdout.splitlines()[0] == f"Would never start here: {NEVER}", dry
    magics = _magics(server)
    with pytest.raises(MagicError) as cell:
        magics.schedule("--gpus 99", "print('never runs')")
    assert str(cell.value) == f"--gpus: {NEVER}.", cell.value
    with pytest.raises(MagicError) as lease:
        magics.gpu("request 99 --no-wait")
    assert str(lease.value) == f"%gpu request: {NEVER}.", lease.value
    capsys.readouterr()
    magics.schedule("dryrun --gpus 99", None)
    assert capsys.readouterr().out.splitlines()[0] == f"Would never start here: {NEVER}"


# ---- N2: submit's own options among a job's arguments are said, not taken silently ---------------------------

def test_newuser32_n2_submits_options_among_the_arguments_are_noted_where_the_job_got_otherwise(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N2: the panel's Arguments ``3 --time-limit 2m`` (Time limit empty) and ``3 --gpus 2`` (GPUs 1) went to
    train.py with nothing said; Check fit said "Would start now". Now the server's answer (submit and dry run
    alike) notes each of submit's options — or a typo of one — among the script's arguments whose value the job did
    not get; an option the job got as written (``--gpus 1`` on a 1-GPU job) or a value naming no GPU model here
    (``--model resnet50``) is the script's own business, unsaid. The CLI prints it as its other notes."""
    from tests.onboarding.test_cli_firsthour import clear

    script = tmp_path / "train.py"
    script.write_text("pass\n")
    ann = api(server, "tok-ann")

    def notes(path: str, body: dict[str, object]) -> list[str]:
        answer = ann.post(path, json={"gpus": 1, "script": str(script), **body})
        assert answer.status_code in (200, 201), answer.text
        return [w for w in answer.json().get("warnings") or () if "in the arguments" in w]

    limit = "'--time-limit 2m' in the arguments goes to train.py, not to the scheduler: this job has no time limit"
    assert notes("jobs", {"args": ["3", "--time-limit", "2m"]}) == [limit]
    assert notes("dryrun", {"args": ["3", "--time-limit", "2m"]}) == [limit]  # Check fit says it too
    gpus = "'--gpus 2' in the arguments goes to train.py, not to the scheduler: this job asks for 1 GPU"
    assert notes("dryrun", {"args": ["3", "--gpus", "2"], "time_limit": "1m"}) == [gpus]
    assert notes("dryrun", {"args": ["--gpu=2"]}) == [
        "'--gpu=2' in the arguments goes to train.py, not to the scheduler (did you mean --gpus?): this job asks for 1 GPU"]
    assert notes("dryrun", {"args": ["--gpus", "1", "--model", "resnet50", "--time-limit", "1m"], "time_limit": "60"}) == []
    assert notes("dryrun", {"args": ["--model", "simulated"]}) == [
        "'--model simulated' in the arguments goes to train.py, not to the scheduler: this job runs on any GPU model"]
    command = ann.post("dryrun", json={"gpus": 1, "command": ["python", str(script), "--priority", "high"]}).json()
    assert "'--priority high' in the arguments goes to train.py, not to the scheduler: this job has priority normal" \
        in command["warnings"], command["warnings"]
    said = _cli(_env(tmp_path, server), "submit", "--gpus", "1", "--time-limit", "1m", "--script", str(script),
                "--", "3", "--gpus", "2")
    assert said.returncode == EXIT_OK, said
    assert f"jupyter-sched submit: note: {gpus}" in said.stderr.splitlines(), said.stderr
    clear(server)


# ---- n4: the server's duplicate-name note names no one surface's command -----------------------------------------

def test_newuser32_n4_the_same_name_note_names_no_surfaces_cancel_command() -> None:
    """n4: a re-run ``%schedule run`` was told "`jupyter-sched cancel j-1` (%schedule cancel j-1) cancels the older" —
    the CLI's command first, in a notebook. The note is the server's, said by the CLI, the magics and the panel alike,
    so it names the job to cancel and leaves how to each (test_newuser26_n2 checks it through the magics and the CLI)."""
    from datetime import datetime, timezone

    from jupyter_sched.wording.jobs import same_name_note

    now = datetime(2026, 12, 6, 16, 0, tzinfo=timezone.utc)
    said = same_name_note("train", [("j-1", "running", now)], now)
    assert said.endswith("this is another one — if re-running it was a slip, cancel the older, j-1"), said
    assert "jupyter-sched" not in said and "%schedule" not in said, said


# ---- n2: a typed token refused by a server found on this machine: leave it out -----------------------------------

def test_newuser32_n2_a_refused_typed_token_for_a_server_of_this_account_is_told_to_leave_it_out(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """n2: ``--url URL --token deadbeef status`` for this account's own lab was told "set JUPYTER_SCHED_TOKEN=TOKEN …
    or give --token-file FILE"; a stale JUPYTER_SCHED_TOKEN was told the one-step fix, to leave it out. A typed
    token (``--token``, or in the ``--url``) refused by a server whose runtime file holds its own is told the same."""
    from tests.onboarding.test_cli_firsthour import runtime_file

    env = runtime_file(tmp_path / "runtime", server, "tok-ann")
    typed = _cli(env, "--url", server.url, "--token", "deadbeef", "status")
    assert typed.returncode == EXIT_REFUSED, typed
    assert typed.stderr.splitlines()[-1] == (
        f"jupyter-sched status: the server at {server.url} refused the token given with --token (an older server's?) "
        "— leave --token out: this server's own token is found without it, in its runtime file [forbidden]")
    in_url = _cli(env, "--url", f"{server.url}lab?token=deadbeef", "status")
    assert in_url.returncode == EXIT_REFUSED, in_url
    assert "refused the token in the --url (an older server's?) — leave the token out of the --url: this server's " \
        "own token is found without it" in in_url.stderr, in_url.stderr
    assert _cli(env, "--url", server.url, "status").returncode == EXIT_OK  # as it says: left out, it works
