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
    (("--time-limit", "2m"), "--time-limit", "--time-limit 2m -- python train.py"),
    (("--gpu", "2"), "--gpu", "--gpus 2 -- python train.py"),
    (("--time-limt=2m",), "--time-limt", "--time-limit=2m -- python train.py"),
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
