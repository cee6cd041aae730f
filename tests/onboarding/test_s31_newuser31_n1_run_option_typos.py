"""newuser31 N1: ``%schedule run train.py --gpus 1 --time-limt 1h`` submitted a job with no time limit
and ``train.py --time-limt 1h`` as its command; ``%schedule run train.py --gpu 2`` one of 1 GPU with
``--gpu 2`` given to the script — unsaid, while the same words before the script were refused and
``jupyter-sched submit --gpu 2`` takes 2 GPUs. A word after the script that is a typo or a prefix of one
of the magic's own options is now refused, naming the option meant and how to give it to the script."""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_schedule_line


@pytest.mark.parametrize(("line", "typed", "meant"), [
    ("run train.py --gpus 1 --time-limt 1h", "--time-limt", "--time-limit"),
    ("run train.py 3 --gpu 2 --name typo-gpu", "--gpu", "--gpus"),
    ("run train.py --gpu=2", "--gpu", "--gpus"),
    ("run train.py --time 1h", "--time", "--time-limit"),
    ("run train.py --priorty high", "--priorty", "--priority"),
    ("serve app.py --prt 8000 --port 8000", "--prt", "--port"),
    ("notebook report.ipynb --nmae nightly", "--nmae", "--name"),
], ids=["typo", "gpu prefix", "gpu prefix with =", "time prefix", "priority typo", "serve port typo", "notebook"])
def test_newuser31_n1_a_near_option_after_the_script_is_refused_naming_the_option_meant(
        line: str, typed: str, meant: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_schedule_line(line)
    assert err.value.field == typed
    assert f"did you mean {meant}?" in str(err.value)
    target = line.split()[1]
    assert f"{typed} after {target} would go to {target} as its argument" in str(err.value)
    if line.startswith("notebook"):
        assert "-p NAME=VALUE" in (err.value.hint or "")
    else:  # how to give the script an option of that name: after --
        assert f"-- {typed}" in (err.value.hint or "")


@pytest.mark.parametrize(("line", "args"), [
    ("run train.py --epochs 3 --lr 0.1", ("--epochs", "3", "--lr", "0.1")),
    ("run train.py -- --gpu 2", ("--gpu", "2")),  # the script's own --gpu, after --
    ("run train.py --data /x --name n", ("--data", "/x")),
    ("run train.py --m 3", ("--m", "3")),  # a prefix of two options is no one option
], ids=["script options", "after --", "ours taken after the script", "ambiguous prefix"])
def test_newuser31_n1_the_scripts_own_options_still_go_to_the_script(line: str, args: tuple[str, ...]) -> None:
    assert parse_schedule_line(line).args == args
