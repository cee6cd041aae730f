"""New user 13, N19: one refusal, one sentence on every surface — the REST field said as the option
of the surface that sent it (``gpus`` → ``--gpus`` / ``N``, ``env.X`` → ``--env X``, ``priority`` →
``--priority``, ``team`` → ``--team``), once, by the one renderer the CLI and the magics share
(:func:`jupyter_sched.wording.flags.in_surface_terms`). Against a real embedded server (simulated
GPUs): REST, the installed ``jupyter-sched`` command, and the magics with a real client."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.magics.core import MagicError
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu13flags", USERS)


@dataclass(frozen=True)
class Refusal:
    """One bad request as each surface writes it, and how its sentence must open there."""

    id: str
    body: dict[str, object]  # REST
    options: tuple[str, ...]  # `jupyter-sched submit OPTIONS -- true` and `%%schedule OPTIONS`
    rest_opens: str  # the server's own words (the REST field)
    opens: str  # CLI and %%schedule
    gpu_line: str | None = None  # `%gpu LINE`, when %gpu request can say it
    gpu_opens: str | None = None
    hint_has: str = ""
    hint_lacks: str = ""


CASES = [
    # %gpu request N: the server's words after the magic's name, once (new user 16: "N 0.05" named a placeholder)
    Refusal("a share below the smallest is said as --gpus, and after its name by %gpu request N",
            {"gpus": 0.05}, ("--gpus", "0.05"), "gpus 0.05 is below", "--gpus 0.05 is below",
            gpu_line="request 0.05 --no-wait", gpu_opens="%gpu request: gpus 0.05 is below"),
    Refusal("a class not granted is said as --priority",
            {"gpus": 1, "priority": "high"}, ("--gpus", "1", "--priority", "high"),
            "priority 'high' is not granted", "--priority 'high' is not granted",
            gpu_line="request 1 --priority high --no-wait", gpu_opens="--priority 'high' is not granted"),
    Refusal("a team the caller is not in is said as --team, in the hint too",
            {"gpus": 1, "team": "nosuch"}, ("--gpus", "1", "--team", "nosuch"),
            "ann may not charge team 'nosuch'", "--team: ann may not charge team 'nosuch'",
            hint_has="leave --team out", hint_lacks="leave team out"),
    Refusal("a refused variable is said as --env NAME, not env.NAME: env NAME",
            {"gpus": 1, "env": {"NVIDIA_VISIBLE_DEVICES": "all"}},
            ("--gpus", "1", "--env", "NVIDIA_VISIBLE_DEVICES=all"),
            "env NVIDIA_VISIBLE_DEVICES is read by", "--env NVIDIA_VISIBLE_DEVICES is read by",
            hint_has="ask for GPUs with --gpus N", hint_lacks="gpus (--gpus N)"),
]


def _as_sentences(cli_line: str) -> str:
    """``jupyter-sched submit: what — how [code]`` as the magics say it: ``What. How.``"""
    body = re.fullmatch(r"jupyter-sched submit: (.*) \[\w+\]", cli_line)
    assert body, cli_line
    what, _, how = body.group(1).partition(" — ")
    return f"{what}. {how[:1].upper()}{how[1:]}." if how else f"{what}."


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_newuser13_n19_one_refusal_reads_the_same_on_every_surface(server: EmbeddedServer, tmp_path: Path,
                                                                    case: Refusal) -> None:
    """N19: ``%gpu request 0.05`` said ``N: gpus 0.05 is below …`` (the field twice), ``%%schedule
    --gpus 0.05`` ``gpus 0.05 …`` (no option), the CLI ``--gpus 0.05 …``; the magics said ``priority
    'high'`` and ``leave team out`` where the CLI said ``--priority`` and ``--team``; ``--env
    NVIDIA_VISIBLE_DEVICES=all`` read ``env.NVIDIA_VISIBLE_DEVICES: env NVIDIA_VISIBLE_DEVICES … gpus
    (--gpus N)``. Now the CLI's line and the magics' sentences are the same words."""
    rest = api(server, "tok-ann").post("jobs", json={**case.body, "command": ["true"]})
    assert rest.status_code in (400, 403, 422), rest.text
    assert rest.json()["error"]["message"].startswith(case.rest_opens), rest.text  # REST keeps its field names

    said = _cli(_env(tmp_path, server), "submit", *case.options, "--", "true")
    # bad input (400) is 2, a refusal of a well-formed request (403, 422) 1, whoever found it (newuser38 n2)
    want = EXIT_USAGE if rest.status_code == 400 else EXIT_REFUSED
    assert said.returncode == want, said.stdout + said.stderr
    cli_line = said.stderr.strip().splitlines()[-1]
    assert cli_line.startswith(f"jupyter-sched submit: {case.opens}"), cli_line

    magics = _magics(server)
    with pytest.raises((MagicError, UsageError)) as cell:
        magics.schedule(" ".join(case.options), "print('never runs')")
    assert str(cell.value) == _as_sentences(cli_line), (str(cell.value), cli_line)

    for text in (cli_line, str(cell.value)):
        said_lower = text.lower()  # the magics start the hint's sentence with a capital
        assert case.hint_has.lower() in said_lower, text
        assert not case.hint_lacks or case.hint_lacks.lower() not in said_lower, text
        assert ".NVIDIA" not in text and f"{case.rest_opens.split(' ')[0]}: " not in text, text
    if case.gpu_line:
        with pytest.raises((MagicError, UsageError)) as gpu:
            magics.gpu(case.gpu_line)
        assert str(gpu.value).startswith(str(case.gpu_opens)), gpu.value
        rest_of_it = str(gpu.value)[len(str(case.gpu_opens)):]
        assert rest_of_it == str(cell.value)[len(case.opens):], (str(gpu.value), str(cell.value))
