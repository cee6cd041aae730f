"""Argument parsing of %gpu / %schedule without a server: bad input names the argument in one line."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import (
    JobOptions,
    check_model,
    job_body,
    lease_body,
    parse_gpu_line,
    parse_schedule_line,
)


@dataclass(frozen=True)
class Bad:
    magic: str  # "gpu", "schedule" or "cell"
    line: str
    want_field: str
    want_words: str = ""  # what the one line must say when it names the field otherwise ("" = want_field)


BAD_LINES = [  # %gpu request N: field N (the usage's placeholder, new user 8, N6); the line says "gpus", REST's
    # and the CLI's name for the count (newuser15 N12, b4f2391)
    pytest.param(Bad("gpu", "request -1", "N", "gpus must be"), id="negative GPUs are refused"),
    pytest.param(Bad("gpu", "request two", "N", "gpus must be"), id="a GPU count spelled as a word is refused"),
    pytest.param(Bad("gpu", "request 1.5", "N", "gpus must be"), id="a fraction above one GPU is refused"),
    pytest.param(Bad("gpu", "request 0", "N", "gpus must be"), id="a lease of zero GPUs is refused"),
    pytest.param(Bad("gpu", "request 1 --timeout 2hh", "--timeout"), id="an unparseable duration is refused"),
    pytest.param(Bad("gpu", "request 1 --priority urgent", "--priority"), id="an unknown priority is refused"),
    pytest.param(Bad("gpu", "request 1 --mem-per-gpu 20XB", "--mem-per-gpu"), id="a bad memory size is refused"),
    pytest.param(Bad("gpu", "request 1 --gpu-count 2", "--gpu-count"), id="an unknown flag is refused"),
    pytest.param(Bad("gpu", "request 1 --model", "--model"), id="a flag without its value is refused"),
    pytest.param(Bad("gpu", "frobnicate", "subcommand"), id="an unknown %gpu subcommand is refused"),
    pytest.param(Bad("gpu", "release now", "now"), id="release takes no arguments"),
    pytest.param(Bad("gpu", "watch --seconds soon", "--seconds"), id="watch needs a duration"),
    pytest.param(Bad("gpu", "request 2 --gpus 3", "--gpus"), id="the GPU count given twice is refused"),
    pytest.param(Bad("schedule", "wait", "JOB"), id="wait without a job id is refused"),
    pytest.param(Bad("schedule", "logs", "JOB"), id="logs without a job id is refused"),
    pytest.param(Bad("schedule", "cancel", "JOB"), id="cancel without a job id is refused"),
    pytest.param(Bad("schedule", "run", "SCRIPT"), id="run without a script is refused"),
    pytest.param(Bad("schedule", "run --bogus train.py", "--bogus"), id="an unknown flag before the script is refused"),
    pytest.param(Bad("schedule", "notebook analysis.py", "NOTEBOOK"), id="notebook needs an .ipynb file"),
    pytest.param(Bad("schedule", "serve app.py --gpus 1", "--port"), id="serve without a port is refused"),
    pytest.param(Bad("schedule", "serve app.py --port 99999", "--port"), id="a port out of range is refused"),
    pytest.param(Bad("schedule", "serve app.py --port http", "--port"), id="a port that is no number is refused"),
    pytest.param(Bad("schedule", "wait 7 --timeout 0", "--timeout"), id="a zero timeout is refused"),
    pytest.param(Bad("schedule", "queue everything", "everything"), id="queue takes no arguments"),
    pytest.param(Bad("schedule", "launch x.py", "subcommand"), id="an unknown %schedule subcommand is refused"),
    pytest.param(Bad("schedule", "", "subcommand"), id="%schedule alone asks for a subcommand"),
    pytest.param(Bad("schedule", 'run "train.py', "arguments"), id="unbalanced quotes are refused"),
    pytest.param(Bad("cell", "--gpus -2", "--gpus"), id="a cell with negative GPUs is refused"),
    pytest.param(Bad("cell", "--time-limit 2hh", "--time-limit"), id="a cell with a bad time limit is refused"),
    pytest.param(Bad("cell", "--name ''", "--name"), id="an empty name is refused"),
    pytest.param(Bad("cell", "--frob 1", "--frob"), id="a cell with an unknown flag is refused"),
]


def _parse(bad: Bad) -> object:
    if bad.magic == "gpu":
        return parse_gpu_line(bad.line)
    return parse_schedule_line(bad.line, cell=bad.magic == "cell")


@pytest.mark.parametrize("bad", BAD_LINES)
def test_bad_input_names_the_argument_in_one_line(bad: Bad) -> None:
    with pytest.raises(ValidationError) as info:
        _parse(bad)
    assert info.value.field == bad.want_field
    text = str(info.value)
    assert "\n" not in text
    assert (bad.want_words or bad.want_field) in text or bad.want_field in ("subcommand", "arguments")


GOOD_GPU = [
    pytest.param("", "status", JobOptions(), True, id="bare %gpu shows the status"),
    pytest.param("1", "request", JobOptions(gpus=1), True, id="%gpu N is shorthand for request"),
    pytest.param("request", "request", JobOptions(gpus=1), True, id="request defaults to one GPU"),
    pytest.param("request 0.5", "request", JobOptions(gpus=0.5), True, id="half a GPU is a shared lease"),
    pytest.param(
        "request 2 --model A100 --mem-per-gpu 20GiB --priority high --timeout 10m", "request",
        JobOptions(gpus=2, model="A100", min_memory_mib=20480, mem_per_gpu="20GiB", priority="high", timeout_s=600.0), True,
        id="every request option is parsed with units"),
]


@pytest.mark.parametrize(("line", "want_action", "want_options", "want_wait"), GOOD_GPU)
def test_gpu_lines_parse(line: str, want_action: str, want_options: JobOptions, want_wait: bool) -> None:
    cmd = parse_gpu_line(line)
    assert (cmd.action, cmd.options, cmd.wait) == (want_action, want_options, want_wait)


def test_watch_takes_seconds_and_interval() -> None:
    cmd = parse_gpu_line("watch --seconds 1m --interval 2")
    assert (cmd.action, cmd.seconds, cmd.interval_s) == ("watch", 60.0, 2.0)


def test_run_passes_unknown_options_and_everything_after_double_dash_to_the_script() -> None:
    cmd = parse_schedule_line("run --gpus 1 train.py --epochs 3 --queue team-a -- --gpus 7")
    assert cmd.target == "train.py"
    assert cmd.args == ("--epochs", "3", "--gpus", "7")
    assert cmd.options == JobOptions(gpus=1, team="team-a")


def test_cell_header_parses_all_submission_options() -> None:
    cmd = parse_schedule_line("--gpus 2 --model A100 --name bert-ft --priority low --time-limit 2h "
                              "--queue team-a --profile small", cell=True)
    assert cmd.options == JobOptions(gpus=2, model="A100", priority="low", time_limit_s=7200.0,
                                     name="bert-ft", team="team-a", profile="small")


@pytest.mark.parametrize("flag", ["--team", "--queue"], ids=["--team as in REST and the CLI", "--queue, the old spelling"])
def test_the_cell_magic_takes_the_team_like_rest_and_the_cli(flag: str) -> None:
    """Issue 20: ``%%schedule`` had no ``--team`` although REST and ``jupyter-sched submit`` do."""
    cmd = parse_schedule_line(f"--gpus 1 {flag} research", cell=True)
    assert cmd.options.team == "research"
    assert job_body(cmd.options, command=["x"])["team"] == "research"


def test_serve_and_logs_parse() -> None:
    serve = parse_schedule_line("serve app.py --workers 2 --port 8000 --gpus 1")
    assert (serve.target, serve.args, serve.port, serve.options.gpus) == ("app.py", ("--workers", "2"), 8000, 1)
    logs = parse_schedule_line("logs job-7 -f")
    assert (logs.job_id, logs.follow) == ("job-7", True)


def test_bodies_carry_only_what_the_user_gave() -> None:
    options = JobOptions(gpus=2, model="A100", min_memory_mib=20480, time_limit_s=60.0, team="team-a")
    # no name: the server calls it "notebook lease", never after the kernel id (new user 10, N11)
    assert lease_body(JobOptions(gpus=1), kernel_id="k-1") == {"gpus": 1, "kernel_id": "k-1"}
    # the notebook the kernel serves travels as the lease's private kernel_notebook (left open from #15)
    assert lease_body(JobOptions(gpus=1), kernel_id="k-1", notebook="nb/a.ipynb")["kernel_notebook"] == "nb/a.ipynb"
    assert "kernel_notebook" not in lease_body(JobOptions(gpus=1), kernel_id=None, notebook="nb/a.ipynb")
    assert job_body(options, command=["/py", "t.py"], working_dir="/w") == {
        "gpus": 2, "model": "A100", "min_memory_mib": 20480, "time_limit_s": 60.0, "team": "team-a",
        "command": ["/py", "t.py"], "working_dir": "/w"}
    assert job_body(JobOptions(profile="small"), command=["x"]) == {"profile": "small", "command": ["x"]}


def test_an_unknown_model_lists_the_models_that_exist() -> None:
    inventory = {"gpus": [{"model": "NVIDIA A100-SXM4-80GB"}, {"model": "Tesla T4"}]}
    check_model("a100", inventory)
    with pytest.raises(ValidationError) as info:
        check_model("H100", inventory)
    assert info.value.field == "--model"
    assert "Tesla T4" in str(info.value.hint)


@pytest.mark.parametrize(("line", "want_topic"), [
    pytest.param("--help", "", id="%gpu --help is the whole help"),
    pytest.param("help", "", id="%gpu help too"),
    pytest.param("help request", "request", id="%gpu help request"),
    pytest.param("request --help", "request", id="%gpu request --help"),
    pytest.param("request 2 -h", "request", id="-h after other options"),
    pytest.param("release --help", "release", id="%gpu release --help"),
])
def test_gpu_help_is_asked_the_argparse_way(line: str, want_topic: str) -> None:
    """New user 5, finding 1: ``%gpu --help`` was "unknown subcommand '--help'"."""
    cmd = parse_gpu_line(line)
    assert (cmd.action, cmd.topic) == ("help", want_topic)


@pytest.mark.parametrize(("line", "want"), [
    pytest.param("--help", ("help", ""), id="%schedule --help"),
    pytest.param("help run", ("help", "run"), id="%schedule help run"),
    pytest.param("run --help", ("help", "run"), id="%schedule run --help was 'missing SCRIPT'"),
    pytest.param("run --gpus 2 --help x.py", ("help", "run"), id="--help among our options before the script"),
    pytest.param("run x.py --help", ("run", ("--help",)), id="after the script it is the script's own --help"),
    pytest.param("queue --help", ("help", "queue"), id="%schedule queue --help"),
    pytest.param("cancel -h", ("help", "cancel"), id="%schedule cancel -h"),
])
def test_schedule_help_is_asked_the_argparse_way(line: str, want: tuple[str, object]) -> None:
    cmd = parse_schedule_line(line)
    assert (cmd.action, cmd.topic if cmd.action == "help" else cmd.args) == want
    assert parse_schedule_line("--gpus 1 --help", cell=True).topic == "cell"


def test_help_of_a_subcommand_is_its_usage_and_examples_from_the_magics_own_help() -> None:
    from jupyter_sched.magics.core import SchedMagics
    from jupyter_sched.magics.parsing import help_text

    request = help_text(SchedMagics.gpu.__doc__ or "", "%gpu", "request")
    assert request.startswith("%gpu request N [--model M]") and "%gpu request 1 --no-wait" in request
    assert "%gpu release" not in request and request.endswith("%gpu? shows the whole help.")
    run = help_text(SchedMagics.schedule.__doc__ or "", "%schedule", "run")
    assert run.startswith("%schedule run SCRIPT [ARGS...] [options]") and "%schedule notebook" not in run
    assert help_text(SchedMagics.gpu.__doc__ or "", "%gpu") == inspect.cleandoc(SchedMagics.gpu.__doc__ or "")
    assert help_text(SchedMagics.schedule.__doc__ or "", "%schedule", "cell").startswith("%%schedule [--gpus N]")


def test_help_is_printed_by_the_magics_themselves_with_no_server() -> None:
    """``%gpu --help`` and ``%schedule run --help`` print help, in a shell that reaches no server."""
    import os
    import subprocess
    import sys

    script = ("from IPython.core.interactiveshell import InteractiveShell\n"
              "shell = InteractiveShell.instance()\n"
              "shell.run_line_magic('load_ext', 'jupyter_sched')\n"
              "shell.run_line_magic('gpu', '--help')\n"
              "print('=====')\n"
              "shell.run_line_magic('schedule', 'run --help')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_"))}
    env["JUPYTER_SCHED_URL"] = "http://127.0.0.1:9/"  # nothing listens: help must not need it
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    whole, run = done.stdout.split("=====")
    assert "Interactive GPUs for this kernel." in whole and "%gpu release" in whole, done.stdout + done.stderr
    assert run.strip().startswith("%schedule run SCRIPT") and "UsageError" not in done.stdout + done.stderr
