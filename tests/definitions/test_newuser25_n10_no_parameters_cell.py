"""newuser25 N10: ``-p NAME=VALUE`` for a notebook with no cell tagged ``parameters`` was injected
silently (``submit --notebook``, ``definitions create``): the values go into a new first cell, so a
name the notebook sets itself keeps the notebook's value, and failures name cells one off. Now a
note names the file and says where the values go, as papermill warns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.definitions.parameters import parameters_note
from tests.reliability.harness import EmbeddedServer, no_strays

NOTE = ("nop.ipynb has no cell tagged 'parameters': the values given (x) go into a new first cell, before the "
        "notebook's own code, so a name the notebook sets itself keeps the notebook's value — tag the cell that "
        "sets the defaults 'parameters' to put them after it (papermill's convention).")


def test_newuser25_n10_the_note_for_a_notebook_without_a_parameters_cell() -> None:
    nb = {"cells": [{"cell_type": "code", "source": "x = 2\nprint(x)", "metadata": {}}]}
    assert parameters_note(nb, {"x": 1}, "nop.ipynb") == NOTE
    assert parameters_note(nb, {}, "nop.ipynb") == ""  # nothing given: nothing to say
    tagged = {"cells": [{"cell_type": "code", "source": "x = 2", "metadata": {"tags": ["parameters"]}}]}
    assert parameters_note(tagged, {"x": 1}, "nop.ipynb") == ""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    tmp = tmp_path_factory.mktemp("nu25n10")
    with no_strays(tmp):
        s = EmbeddedServer.start(tmp, definition_min_interval_s=1.0)
        try:
            yield s
        finally:
            s.terminate()


def test_newuser25_n10_submit_and_define_say_where_the_values_go(server: EmbeddedServer, tmp_path: Path) -> None:
    path = tmp_path / "nop.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("print('hi')")]), str(path))
    code, out, err = server.cli("submit", "--gpus", "0", "--workdir", str(tmp_path), "--notebook", "nop.ipynb",
                                "-p", "x=1", "--time-limit", "2m")
    assert code == EXIT_OK, err
    assert f"jupyter-sched submit: note: {NOTE}\n" in err, err
    assert server.cli("cancel", out.split()[1])[0] == EXIT_OK
    code, out, err = server.cli("definitions", "create", str(path), "--cron", "0 6 * * *", "--paused", "-p", "x=1",
                                "--gpus", "0")
    assert code == EXIT_OK, err
    assert f"note: {NOTE}\n" in err, err
