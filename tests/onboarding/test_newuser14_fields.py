"""New user 14's findings of branch nu14-fix (/work/coord/notes/newuser14.md, N1 N2 N3 N4 N5 N16 N17: how a
job's fields are read and refused over REST, in the CLI and in the magics), each its own test, against a
real embedded server (2 simulated GPUs of 81920 MiB), the installed ``jupyter-sched`` command and the
magics driven in this process with a real client. The rules live in ``jupyter_sched.model.validation``
and ``model.units``; the words in ``wording``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.magics.core import MagicError
from jupyter_sched.model.units import parse_memory_mib
from jupyter_sched.wording.reasons import memory_texts
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
GPUS_HINT = "use a whole number such as 1 or 4, or a fraction below 1 such as 0.5"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu14", USERS)


def _rest(server: EmbeddedServer, body: dict[str, object], status: int = 400) -> dict[str, str]:
    answer = api(server, "tok-ann").post("jobs", json=body)
    assert answer.status_code == status, (body, answer.text)
    error: dict[str, str] = answer.json()["error"]
    return error


def _cli_line(server: EmbeddedServer, tmp_path: Path, *argv: str, code: int = EXIT_USAGE) -> str:
    """The refusal's line; exit 2 for bad input, 1 for a refusal of the cluster (newuser38 n2)."""
    said = _cli(_env(tmp_path, server), "submit", *argv)
    assert said.returncode == code, (argv, said.stdout, said.stderr)
    return said.stderr.strip().splitlines()[-1]


def _magic(server: EmbeddedServer, kind: str, line: str) -> str:
    magics = _magics(server)
    with pytest.raises((MagicError, UsageError)) as refused:
        magics.gpu(line) if kind == "gpu" else magics.schedule(line, "print('never runs')")
    return str(refused.value)


# ---- N1: a path of the other kind is said to be that, not missing ------------------------------------------

def test_newuser14_n1_a_file_named_as_working_dir_is_said_to_be_a_file(server: EmbeddedServer, tmp_path: Path) -> None:
    """N1: ``working_dir`` /etc/passwd was refused "directory '/etc/passwd' does not exist" — it exists, as a
    file; a user who checks with ``ls`` was told something false. Now REST and the CLI say what it is and
    offer its folder; a script or a command naming a directory likewise."""
    afile = tmp_path / "data.csv"
    afile.write_text("x\n")
    error = _rest(server, {"gpus": 0, "command": ["true"], "working_dir": str(afile)})
    assert error["field"] == "working_dir", error
    assert error["message"] == f"working_dir: '{afile}' is a file, not a directory", error
    assert error["hint"].startswith(f"give the folder to start in (e.g. {tmp_path})"), error
    line = _cli_line(server, tmp_path, "--gpus", "0", "--workdir", str(afile), "--", "true")
    assert line.startswith(f"jupyter-sched submit: --workdir: '{afile}' is a file, not a directory — give the "
                           f"folder to start in (e.g. {tmp_path})"), line
    assert "does not exist" not in line
    script = _rest(server, {"gpus": 0, "script": str(tmp_path)})
    assert script["message"] == f"script: '{tmp_path}' is a directory, not a file", script
    program = _rest(server, {"gpus": 0, "command": [str(tmp_path)]})
    assert program["message"] == f"command: '{tmp_path}' is a directory, not a file", program
    missing = _rest(server, {"gpus": 0, "command": ["true"], "working_dir": str(tmp_path / "nothere")})
    assert missing["message"] == f"working_dir: directory '{tmp_path / 'nothere'}' does not exist on this server"


# ---- N2: priority, one rule and one sentence on every surface -----------------------------------------------

def test_newuser14_n2_a_wrong_priority_reads_the_same_on_rest_cli_and_magics(server: EmbeddedServer,
                                                                             tmp_path: Path) -> None:
    """N2: ``urgent`` was refused three ways — REST "must be 'high', 'normal' or 'low'" (hint ``e.g.
    "normal"``), the CLI's argparse "'urgent' is not one of high, normal, low — usage: …" (the whole usage
    line as the fix), the magics "… Use --priority high, normal or low" (the list twice). One rule now
    (``model.validation.parse_priority``), one sentence and one hint."""
    error = _rest(server, {"gpus": 0, "command": ["true"], "priority": "urgent"})
    assert (error["field"], error["message"], error["hint"]) == (
        "priority", "priority must be high, normal or low (got 'urgent')",
        "leave priority out for normal; high needs an admin's grant"), error
    line = _cli_line(server, tmp_path, "--gpus", "0", "--priority", "urgent", "--", "true")
    assert line == ("jupyter-sched submit: --priority must be high, normal or low (got 'urgent') — leave --priority "
                    "out for normal; high needs an admin's grant [validation_error]"), line
    want = "--priority must be high, normal or low (got 'urgent'). Leave --priority out for normal; high needs an " \
           "admin's grant."
    assert _magic(server, "schedule", "--gpus 0 --priority urgent") == want
    assert _magic(server, "gpu", "request 1 --priority urgent --no-wait") == want


# ---- N3: the gpus rule, two wordings (handed case 019's) ----------------------------------------------------

@pytest.mark.parametrize("typed, got", [
    ("two", '"two"'), ("nan", '"nan"'), ("1e400", "1e400"),
], ids=["a word", "nan", "an infinite number"])  # 1.5: its own rule (new user 16, N2: test_newuser16_n2)
def test_newuser14_n3_every_count_that_is_not_one_reads_the_same(server: EmbeddedServer, tmp_path: Path,
                                                                 typed: str, got: str) -> None:
    """N3: ``1e400``/``nan`` said "must be a finite number", ``1.5`` "must be a whole number or a fraction
    below 1" (hint "use e.g. 1, 2 or 0.5"), a word "must be an integer", ``%gpu request two`` "%gpu
    request: N must be a number of GPUs": four wordings of "not a number of GPUs". Now handed case 019 b3's
    words for all, with the one hint that names fractions, on REST, the CLI, %%schedule and %gpu request."""
    sent = 1.5 if typed == "1.5" else typed  # REST takes a number as a JSON number (new user 15, N3)
    error = _rest(server, {"gpus": sent, "command": ["true"]})
    assert (error["message"], error["hint"]) == (f"gpus must be an integer (got {got})", GPUS_HINT), error
    line = _cli_line(server, tmp_path, "--gpus", typed, "--", "true")
    assert line == f"jupyter-sched submit: --gpus must be an integer (got {got}) — {GPUS_HINT} [validation_error]"
    sentence = f"must be an integer (got {got}). {GPUS_HINT[:1].upper()}{GPUS_HINT[1:]}."
    assert _magic(server, "schedule", f"--gpus {typed}") == f"--gpus {sentence}"
    # after the magic's name, not "N" (new user 15 N12 / 16: a placeholder nobody typed)
    assert _magic(server, "gpu", f"request {typed} --no-wait") == f"%gpu request: gpus {sentence}"


def test_newuser14_n3_a_count_out_of_range_says_the_bound_and_the_clusters_number(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N3: the range was said ``>= 0`` (CLI, REST) but ``above 0`` (%gpu request), a tiny share "fraction
    too small", a huge count "is implausibly large … request at most the GPUs of your cluster" (no number,
    while 99 was answered "ask for at most 2 GPUs"). One shape now, ``must be <op> <bound> (got …)``, and
    the huge count's hint says this cluster's largest node."""
    huge = "99999999999999999999"
    error = _rest(server, {"gpus": int(huge), "command": ["true"]})
    assert (error["message"], error["hint"]) == (
        f"gpus must be <= 2 (got {huge})", "the largest node here has 2 GPUs: ask for at most 2 per worker"), error
    # one bound, the real one (new user 17, N1: "must be <= 4096" beside "ask for at most 4 GPUs")
    line = _cli_line(server, tmp_path, "--gpus", huge, "--", "true")
    assert line.startswith(f"jupyter-sched submit: --gpus must be <= 2 (got {huge}) — the largest node here has 2 GPUs"), line
    assert _magic(server, "gpu", f"request {huge} --no-wait").startswith(
        f"%gpu request: gpus must be <= 2 (got {huge}). The largest node here has 2 GPUs")
    assert _rest(server, {"gpus": 0.0001, "command": ["true"]})["message"] == "gpus must be >= 0.001 (got 0.0001)"
    assert _rest(server, {"gpus": -1, "command": ["true"]})["message"] == "gpus must be >= 0 (got -1)"  # case 019 b2
    assert _magic(server, "gpu", "request -1 --no-wait").startswith("%gpu request: gpus must be > 0 (got -1). Ask for 1 or more GPUs")


# ---- N4: one shape for the magics' refusals ------------------------------------------------------------------

def test_newuser14_n4_magic_refusals_open_with_the_option_never_a_second_prefix(server: EmbeddedServer) -> None:
    """N4: ``%gpu request two`` opened "%gpu request: N …" while ``%gpu request -1`` opened "N …", and
    ``--mem-per-gpu -5GiB`` read "%gpu request: --mem-per-gpu: expected one argument" (two prefixes). A
    refusal of an option's value now always opens with the option."""
    for line, opens in (("request two --no-wait", '%gpu request: gpus must be an integer (got "two")'),
                        # a negative value is said to be negative at once (new user 23, N1), not "expected one argument"
                        ("request 1 --mem-per-gpu -5GiB --no-wait", "--mem-per-gpu: must not be negative (got -5GiB)"),
                        ("request 1 --mem-per-gpu 20XB --no-wait", "--mem-per-gpu: cannot parse memory size '20XB'")):
        said = _magic(server, "gpu", line)
        # one prefix: the option typed, or the magic's name before the count's rule (new user 16: not "N")
        assert said.startswith(opens) and said.count("%gpu request:") <= opens.count("%gpu request:"), said


# ---- N5: a missing program, said after "--" with the hint that helps -------------------------------------------

def test_newuser14_n5_a_missing_program_is_said_after_the_double_dash_with_its_fix(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N5: ``-- nosuchprogram`` was prefixed with the example "-- python train.py:" (never typed), and
    the REST hint (give its full path) was replaced by the generic "say what to run"."""
    line = _cli_line(server, tmp_path, "--gpus", "0", "--", "nosuchprogram")
    # the CLI sends the caller's PATH (newuser27 N2): the hint names it, not "the server's" (newuser28 n1)
    first = next(part for part in os.environ["PATH"].split(":") if part)
    # opening with the program as typed, not "--:" (verify30 V1: the separator is no field name)
    assert line == ("jupyter-sched submit: 'nosuchprogram' is not a program on the job's PATH on this server — "
                    f"give its full path, or check the spelling: the job runs with the PATH sent with it ({first} "
                    f"first, {len([p for p in os.environ['PATH'].split(':') if p])} folders) and none of its folders "
                    "holds it [validation_error]"), line
    assert "python train.py" not in line


# ---- N16: a refusal never rounds the amount asked to the limit -------------------------------------------------

def test_newuser14_n16_memory_one_mib_above_the_limit_says_two_different_figures(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N16: 81921 MiB asked of GPUs of 81920 read "asks for 80 GiB …; the most any GPU here has is 80 GiB".
    Figures that would print the same are said in MiB, exact; the bound in the hint is exact too."""
    for body in ({"mem_per_gpu": 81921}, {"min_memory_mib": 81921}, {"mem_per_gpu": "81921Mi"}):
        error = _rest(server, {"gpus": 1, "command": ["true"], **body}, 422)
        assert error["message"] == ("asks for 81921 MiB of memory per GPU; the most any GPU here has is 81920 MiB"), \
            error
        assert error["hint"].startswith("ask for at most 80 GiB per GPU"), error
    line = _cli_line(server, tmp_path, "--gpus", "1", "--mem-per-gpu", "81921", "--", "true",
                     code=EXIT_REFUSED)  # no GPU here has that much: refused, not bad input
    assert "asks for 81921 MiB of memory per GPU; the most any GPU here has is 81920 MiB" in line, line
    assert _rest(server, {"gpus": 1, "command": ["true"], "mem_per_gpu": "200GiB"}, 422)["message"] == (
        "asks for 200 GiB of memory per GPU; the most any GPU here has is 80 GiB")
    assert memory_texts(81000) == ("81000 MiB",)  # "79.1 GiB" would read back as 81001 MiB, above the bound
    assert memory_texts(1536, 81920) == ("1.5 GiB", "80 GiB")


# ---- N17: memory suffixes follow Kubernetes' quantities ----------------------------------------------------------

def test_newuser14_n17_memory_suffixes_are_kubernetes_quantities(server: EmbeddedServer, tmp_path: Path) -> None:
    """N17: ``20G`` was binary (20480 MiB) but ``20GB`` decimal, and ``1e3`` was "cannot parse". As in
    Kubernetes (whose executor this project has): G = GB = 10^9 bytes, Gi = GiB = 2^30; exponents parse;
    the refusal of a size it cannot read says the convention."""
    assert parse_memory_mib("20G", field="m") == parse_memory_mib("20gb", field="m") == 19073
    assert parse_memory_mib("20Gi", field="m") == parse_memory_mib("20GiB", field="m") == 20480
    assert parse_memory_mib("1e3", field="m") == 1000 and parse_memory_mib("2M", field="m") == 2
    made = api(server, "tok-ann").post("dryrun", json={"gpus": 1, "command": ["true"], "mem_per_gpu": "20G"})
    assert made.status_code == 200, made.text
    error = _rest(server, {"gpus": 1, "command": ["true"], "mem_per_gpu": "20XB"})
    assert "20GiB or 20Gi (20480 MiB), 20G or 20GB (10^9 bytes each: 19073 MiB)" in error["hint"], error
    said = _magic(server, "gpu", "request 1 --mem-per-gpu 20XB --no-wait")
    assert "20G or 20GB (10^9 bytes each: 19073 MiB)" in said, said
