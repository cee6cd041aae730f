"""Argument parsing of %gpu / %schedule without a server: bad input names the argument in one line."""

from __future__ import annotations

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


BAD_LINES = [
    pytest.param(Bad("gpu", "request -1", "--gpus"), id="negative GPUs are refused"),
    pytest.param(Bad("gpu", "request two", "--gpus"), id="a GPU count spelled as a word is refused"),
    pytest.param(Bad("gpu", "request 1.5", "--gpus"), id="a fraction above one GPU is refused"),
    pytest.param(Bad("gpu", "request 0", "--gpus"), id="a lease of zero GPUs is refused"),
    pytest.param(Bad("gpu", "request 1 --timeout 2hh", "--timeout"), id="an unparseable duration is refused"),
    pytest.param(Bad("gpu", "request 1 --priority urgent", "--priority"), id="an unknown priority is refused"),
    pytest.param(Bad("gpu", "request 1 --mem-per-gpu 20XB", "--mem-per-gpu"), id="a bad memory size is refused"),
    pytest.param(Bad("gpu", "request 1 --gpu-count 2", "--gpu-count"), id="an unknown flag is refused"),
    pytest.param(Bad("gpu", "request 1 --model", "--model"), id="a flag without its value is refused"),
    pytest.param(Bad("gpu", "frobnicate", "subcommand"), id="an unknown %gpu subcommand is refused"),
    pytest.param(Bad("gpu", "release now", "now"), id="release takes no arguments"),
    pytest.param(Bad("gpu", "watch --seconds soon", "--seconds"), id="watch needs a duration"),
    pytest.param(Bad("gpu", "request 2 --gpus 3", "--gpus"), id="the GPU count given twice is refused"),
    pytest.param(Bad("schedule", "status", "JOB"), id="status without a job id is refused"),
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
    assert bad.want_field in text or bad.want_field in ("subcommand", "arguments")


GOOD_GPU = [
    pytest.param("", "status", JobOptions(), True, id="bare %gpu shows the status"),
    pytest.param("1", "request", JobOptions(gpus=1), True, id="%gpu N is shorthand for request"),
    pytest.param("request", "request", JobOptions(gpus=1), True, id="request defaults to one GPU"),
    pytest.param("request 0.5", "request", JobOptions(gpus=0.5), True, id="half a GPU is a shared lease"),
    pytest.param(
        "request 2 --model A100 --mem-per-gpu 20GiB --priority high --timeout 10m", "request",
        JobOptions(gpus=2, model="A100", min_memory_mib=20480, priority="high", timeout_s=600.0), True,
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
    assert lease_body(JobOptions(gpus=1), kernel_id="k-1") == {"gpus": 1, "kernel_id": "k-1", "name": "kernel-k-1"}
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
