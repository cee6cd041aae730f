"""newuser32 n12: ``%schedule submit train.py --gpus 1`` (the CLI's word) was "unknown subcommand 'submit'" with no
pointer to ``run``; n11: the README said the toolbar's "Run on GPUs" *submits* the notebook, while it opens the Submit
form, checked against the free GPUs, and nothing runs until Submit is pressed (so did its tooltip)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_schedule_line

ROOT = Path(__file__).resolve().parents[2]


def test_newuser32_n12_the_clis_submit_in_a_notebook_points_at_run() -> None:
    with pytest.raises(ValidationError) as refused:
        parse_schedule_line("submit train.py --gpus 1")
    assert refused.value.field == "subcommand"
    assert "'submit' is the CLI's word — in a notebook: %schedule run SCRIPT [ARGS] --gpus N" in refused.value.message
    with pytest.raises(ValidationError) as typo:
        parse_schedule_line("qeue")
    assert "did you mean queue?" in typo.value.message  # typos keep their did-you-mean


def test_newuser32_n11_run_on_gpus_is_said_to_open_the_submit_form_not_to_submit() -> None:
    readme = (ROOT / "README.md").read_text()
    assert '"Run on GPUs" submits' not in readme
    assert "nothing runs until you press Submit" in readme
    source = (ROOT / "labextension" / "src" / "index.ts").read_text()
    assert "Submit this notebook as a GPU job" not in source
    assert "Open this notebook in the GPUs Submit form" in source
