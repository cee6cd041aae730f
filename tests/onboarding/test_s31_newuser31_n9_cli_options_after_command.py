"""newuser31 N9 (the CLI twin of N1): ``jupyter-sched submit --gpus 1 python train.py --time-limit 2m`` — a command
given without ``--`` — gave the job no time limit and ``train.py`` the words ``--time-limit 2m``; ``--gpus 2`` there
left the job at 1 GPU. Submit's own options (or a typo or prefix of one) after such a command are now refused,
naming the option and the line that says it; with ``--`` before the command, every word after it is the command's.
The installed ``jupyter-sched`` against a real embedded server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.onboarding.test_cli_firsthour import USERS, api, cli, module_server
from tests.reliability.harness import EmbeddedServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu31n9", USERS)


@pytest.mark.parametrize(("words", "flag", "fixed"), [
    # the whole line re-ordered (newuser32 N5); an option said again after the command is the one meant
    (("--time-limit", "2m"), "--time-limit", "--gpus 1 --time-limit 2m -- python train.py"),
    (("--gpu", "2"), "--gpu", "--gpus 2 -- python train.py;"),
    (("--time-limt=2m",), "--time-limt", "--gpus 1 --time-limit=2m -- python train.py"),
], ids=["an option of submit", "a prefix of one", "a typo of one"])
def test_newuser31_n9_submits_options_after_a_command_without_dashes_are_refused(
        server: EmbeddedServer, words: tuple[str, ...], flag: str, fixed: str) -> None:
    before = {j["id"] for j in api(server, "tok-ann").get("jobs").json()}
    run = cli(server, "tok-ann", "submit", "--gpus", "1", "python", "train.py", *words)
    assert run.code != 0, run.out
    assert f"jupyter-sched submit: {flag} after the command python would go to it as its argument" in run.err, run.err
    assert f"jupyter-sched submit {fixed}" in run.err, run.err
    assert {j["id"] for j in api(server, "tok-ann").get("jobs").json()} == before, "nothing was submitted"


def test_newuser31_n9_after_dashes_the_words_are_the_commands(server: EmbeddedServer) -> None:
    run = cli(server, "tok-ann", "submit", "-q", "--gpus", "0", "--time-limit", "1m", "--", "python", "-c",
              "import sys; print(sys.argv)", "--time-limit", "2m")
    assert run.code == 0, run.err
    job = next(j for j in api(server, "tok-ann").get("jobs").json() if j["command"][-2:] == ["--time-limit", "2m"])
    assert job["time_limit_s"] == 60
    api(server, "tok-ann").delete(f"jobs/{job['id']}")


@pytest.mark.parametrize(("words", "flag"), [
    (("--dry-run",), "--dry-run"),
    (("--gpus", "1", "--time-limit", "1m", "--dry-run"), "--gpus"),
    (("--time-limt", "5m"), "--time-limt"),
], ids=["dry run", "options", "a typo of one"])
def test_newuser32_n3_submits_options_among_a_scripts_arguments_are_refused_and_nothing_runs(
        server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory, words: tuple[str, ...], flag: str) -> None:
    """newuser32 N3: ``submit --script train.py 3 --gpus 1 --time-limit 1m --dry-run`` (the usage's own form
    ``--script FILE [ARGS ...]``) submitted a REAL, unlimited job with those words as train.py's arguments."""
    script = tmp_path_factory.mktemp("nu32n3") / "train.py"
    script.write_text("print('ran')\n")
    before = {j["id"] for j in api(server, "tok-ann").get("jobs").json()}
    run = cli(server, "tok-ann", "submit", "--script", str(script), "3", *words)
    assert run.code != 0, run.out
    assert f"jupyter-sched submit: {flag} " in run.err, run.err
    assert f"after --script {script} would go to {script} as its argument" in run.err, run.err
    assert f"put jupyter-sched submit's options before --script: jupyter-sched submit {flag.replace('limt', 'limit')}" \
        in run.err, run.err
    assert f"write -- before its arguments: --script {script} -- 3 {' '.join(words)}" in run.err, run.err
    assert {j["id"] for j in api(server, "tok-ann").get("jobs").json()} == before, "nothing was submitted"


def test_newuser32_n3_the_schedule_magic_has_no_dry_run_and_says_which_does() -> None:
    """The magics' twin: ``%schedule run train.py 3 --dry-run`` ran a real job with ``--dry-run`` as the script's."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.magics.parsing import parse_schedule_line

    for line in ("run train.py 3 --dry-run", "run train.py 3 --dryrun --gpus 1", "run --dry-run train.py"):
        with pytest.raises(ValidationError) as refused:
            parse_schedule_line(line)
        assert refused.value.field == "--dry-run", line
        assert "%schedule dryrun" in (refused.value.hint or "") and "goes after --" in (refused.value.hint or "")
    assert parse_schedule_line("run train.py -- 3 --dry-run").args == ("3", "--dry-run")  # the script's own


def test_newuser32_n5_the_line_offered_is_the_users_whole_request_reordered(
        server: EmbeddedServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    """newuser32 N5: the fix offered kept only the first misplaced option — ``--gpus 2``, ``--model``, ``--name``
    (typed before the command) and ``--dry-run`` (after) were gone, so the pasted line ran a real job on 1 GPU."""
    script = tmp_path_factory.mktemp("nu32n5") / "train.py"
    script.write_text("print('ran')\n")
    before = {j["id"] for j in api(server, "tok-ann").get("jobs").json()}
    run = cli(server, "tok-ann", "submit", "--gpus", "2", "--model", "Simulated GPU 80GB", "python", "train.py", "3",
              "--time-limit", "2m", "--dry-run")
    assert run.code != 0, run.out
    assert "--time-limit (and --dry-run) after the command python would go to it as its argument" in run.err, run.err
    assert ("jupyter-sched submit --gpus 2 --model 'Simulated GPU 80GB' --time-limit 2m --dry-run -- python train.py 3;"
            in run.err), run.err
    run = cli(server, "tok-ann", "submit", "--gpus", "2", "--name", "x", "--script", str(script), "3",
              "--time-limit", "1m", "--dry-run")
    assert run.code != 0, run.out
    assert (f"jupyter-sched submit --time-limit 1m --dry-run --gpus 2 --name x --script {script} 3;" in run.err), run.err
    assert {j["id"] for j in api(server, "tok-ann").get("jobs").json()} == before, "nothing was submitted"
