"""``%schedule define`` argument parsing (no server): bodies as the REST API takes them, errors naming the argument."""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.define import definition_body, parse_define


def test_a_notebook_definition_with_parameters_and_resources() -> None:
    cmd = parse_define(["report.ipynb", "--cron", "0 12 * * 1-5", "--tz", "Europe/Berlin", "-p", "region=eu",
                        "-p", "limit=10", "-p", "ratios=[0.5, 1]", "--gpus", "1", "--time-limit", "1h",
                        "--missed", "skip"])
    body = definition_body(cmd, target_path="/home/fay/report.ipynb")
    assert body == {"name": "report", "notebook": "/home/fay/report.ipynb", "working_dir": "/home/fay",
                    "schedule": "0 12 * * 1-5", "timezone": "Europe/Berlin", "missed": "skip",
                    "parameters": {"region": "eu", "limit": 10, "ratios": [0.5, 1]}, "gpus": 1, "time_limit": 3600.0}


def test_a_script_definition_keeps_its_arguments_after_the_double_dash() -> None:
    cmd = parse_define(["train.py", "--cron", "0 3 * * *", "--paused", "--", "--epochs", "3"])
    body = definition_body(cmd, target_path="/w/train.py")
    assert (body["script"], body["args"], body["paused"]) == ("/w/train.py", ["--epochs", "3"], True)


def test_edit_sends_only_what_changes() -> None:
    assert definition_body(parse_define(["edit", "d-1", "--cron", "30 6 * * *"])) == {"schedule": "30 6 * * *"}
    assert definition_body(parse_define(["edit", "d-1", "--no-schedule"])) == {"schedule": None}


@pytest.mark.parametrize(("tokens", "field"), [
    ([], "TARGET"),
    (["report.txt", "--cron", "0 1 * * *"], "TARGET"),
    (["report.ipynb", "-p", "region"], "-p"),
    (["report.ipynb", "--gpus", "-1"], "--gpus"),
    (["report.ipynb", "--missed", "always"], "--missed"),
    (["edit", "--cron", "0 1 * * *"], "DEF"),
    (["pause"], "DEF"),
    (["report.ipynb", "--", "x"], "x"),
    (["edit", "d-1", "--cron", "0 1 * * *", "--no-schedule"], "--cron"),
], ids=["nothing", "not a notebook or script", "parameter without a value", "negative GPUs",
        "unknown missed policy", "edit without an id", "pause without an id", "a notebook with arguments",
        "both a cron and no schedule"])
def test_bad_define_lines_name_the_argument(tokens: list[str], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_define(tokens)
    assert err.value.field == field


def test_s38_defs_5_define_takes_no_preempt_and_edit_preempt_undoes_it() -> None:
    """Session 38, item 5 on the magics: ``%schedule define`` had no ``--no-preempt`` (a usage error), then an edit
    could not undo it; create and edit send it, ``edit --preempt`` clears it (as the CLI's), never both at once."""
    made = definition_body(parse_define(["train.py", "--cron", "0 3 * * *", "--no-preempt"]), target_path="/w/train.py")
    assert made["no_preempt"] is True
    assert definition_body(parse_define(["edit", "d-1", "--no-preempt"])) == {"no_preempt": True}
    assert definition_body(parse_define(["edit", "d-1", "--preempt"])) == {"no_preempt": False}
    with pytest.raises(ValidationError):
        parse_define(["edit", "d-1", "--preempt", "--no-preempt"])
