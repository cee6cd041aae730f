"""newuser39's small CLI findings (session 39, s39-nucli).

n3: ``jupyter-sched submit --notebook sub/rep.ipynb -p regoin=eu`` was accepted and said nothing: the note on a
parameter the notebook's parameters cell does not set (new user 6, F10) read the notebook at its folder joined
with the path again (``sub/sub/rep.ipynb``, no such file: no note), so a typo ran silently on the defaults. The
note reads the notebook the job runs. End to end through a real embedded server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK


def _notebook(path: Path) -> Path:
    cells = [{"cell_type": "code", "source": "region = 'us'\ndays = 7", "metadata": {"tags": ["parameters"]},
              "outputs": [], "execution_count": None},
             {"cell_type": "code", "source": "print('REPORT', region, days)", "metadata": {}, "outputs": [],
              "execution_count": None}]
    nb = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.reliability.harness import EmbeddedServer

    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu39nucli"))
    try:
        yield srv
    finally:
        srv.terminate()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["sub/rep.ipynb", "rep.ipynb"], ids=["in a subfolder", "here"])
def test_newuser39_n3_submit_says_a_misspelt_parameter_at_submit(server: Any, tmp_path: Path, where: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _notebook(tmp_path / where)
    monkeypatch.chdir(tmp_path)
    code, out, err = server.cli("submit", "--gpus", "0", "--notebook", where, "-p", "regoin=eu")
    assert code == EXIT_OK and out.startswith("submitted j-"), (out, err)  # still accepted, as papermill does
    assert ("jupyter-sched submit: note: parameter 'regoin' is not in rep.ipynb's parameters cell (region, days) — "
            "did you mean 'region'?") in err, err
    assert server.cli("wait", out.split()[1], "--for", "3m")[0] == EXIT_OK
