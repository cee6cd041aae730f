"""Session 40 (s40-params): a misspelt notebook parameter is said by the server, wherever a request is answered.

newuser39 n3 (and its panel addendum): ``-p regoin=eu`` for a notebook whose parameters cell sets ``region, days``
was said only by the CLI's submit (it reads the file itself); the panel's Check fit (``POST dryrun``), its Submit
(``POST jobs``) and Scheduled notebooks (``POST definitions``, ``PATCH definitions/{id}``) said nothing. The server
reads the notebook there anyway — as the job would read it, to refuse a missing file or kernel — so it says the note
among the answer's ``warnings``, in the CLI's words (:func:`jupyter_sched.definitions.parameters.parameters_text_note`);
the CLI and the magics say theirs only where the answer did not (said once). A notebook of any JSON shape is read
without a 500; a parameters cell past 8 KiB is not parsed in the service's process (its GIL is every user's).

End to end through a real embedded server (REST, the CLI in process).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.definitions.parameters import NOTED_CELL_BYTES, parameters_note, parameters_text_note

MISSPELT = ("parameter 'regoin' is not in daily_report.ipynb's parameters cell (region, days) — did you mean 'region'? "
            "It is injected anyway; the notebook's own value of any name it sets is what runs.")
"""The note the panel's vitest (labextension/test/s40_params_executed.test.ts) gets from its fake server: this text."""


def _notebook(path: Path, parameters_cell: Any = "region = 'us'\ndays = 7", **cell: Any) -> Path:
    cells = [{"cell_type": "code", "source": parameters_cell, "metadata": {"tags": ["parameters"]}, "outputs": [],
              "execution_count": None, **cell},
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

    srv = EmbeddedServer.start(tmp_path_factory.mktemp("s40params"))
    try:
        yield srv
    finally:
        srv.terminate()


def test_newuser39_n3_the_wording_is_the_clis(tmp_path: Path) -> None:
    nb = json.loads(_notebook(tmp_path / "daily_report.ipynb").read_text())
    assert parameters_note(nb, {"regoin": "eu"}, "daily_report.ipynb") == MISSPELT
    assert parameters_text_note(json.dumps(nb), {"regoin": "eu"}, "/srv/x/daily_report.ipynb") == MISSPELT


@pytest.mark.slow
def test_newuser39_n3_check_fit_submit_and_a_definitions_save_say_a_misspelt_parameter(server: Any,
                                                                                        tmp_path: Path) -> None:
    nb = str(_notebook(tmp_path / "daily_report.ipynb"))
    body = {"notebook": nb, "gpus": 0, "parameters": {"regoin": "eu"}, "name": "n3", "time_limit": "5m"}
    with server.client() as api:
        dry = api.post("dryrun", json=body)  # the panel's Check fit
        assert dry.status_code == 200, dry.text
        assert dry.json()["fits"] and dry.json()["warnings"] == [MISSPELT], dry.json()
        right = api.post("dryrun", json={**body, "parameters": {"region": "eu", "days": 3}})
        assert right.status_code == 200 and right.json()["warnings"] == [], right.json()
        job = api.post("jobs", json=body)  # the panel's Submit
        assert job.status_code == 201 and MISSPELT in job.json()["warnings"], job.json()
        api.post(f"jobs/{job.json()['id']}/cancel")
        created = api.post("definitions", json={**body, "schedule": "0 6 * * *", "paused": True})  # Scheduled notebooks
        assert created.status_code == 201 and created.json()["warnings"] == [MISSPELT], created.json()
        edited = api.patch(f"definitions/{created.json()['id']}", json={"parameters": {"region": "eu", "dayz": 3}})
        assert edited.status_code == 200, edited.text
        assert edited.json()["warnings"] == [
            "parameter 'dayz' is not in daily_report.ipynb's parameters cell (region, days) — did you mean 'days'? It is "
            "injected anyway; the notebook's own value of any name it sets is what runs."], edited.json()
        fixed = api.patch(f"definitions/{created.json()['id']}", json={"parameters": {"region": "eu", "days": 3}})
        assert fixed.status_code == 200 and not fixed.json().get("warnings"), fixed.json()


@pytest.mark.slow
def test_newuser39_n3_the_cli_says_it_once(server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _notebook(tmp_path / "daily_report.ipynb")
    monkeypatch.chdir(tmp_path)
    code, out, err = server.cli("submit", "--gpus", "0", "--notebook", "daily_report.ipynb", "-p", "regoin=eu",
                                "--time-limit", "5m")
    assert code == EXIT_OK and out.startswith("submitted j-"), (out, err)
    assert err.count("did you mean 'region'?") == 1 and f"jupyter-sched submit: note: {MISSPELT}" in err, err
    server.cli("cancel", out.split()[1])
    code, out, err = server.cli("submit", "--gpus", "0", "--notebook", "daily_report.ipynb", "-p", "regoin=eu",
                                "--dry-run")
    assert code == EXIT_OK and err.count("did you mean 'region'?") == 1, (out, err)  # Check fit's twin
    code, out, err = server.cli("definitions", "create", "daily_report.ipynb", "--cron", "0 6 * * *", "--paused",
                                "--gpus", "0", "-p", "regoin=eu", "--name", "n3cli")
    assert code == EXIT_OK and err == f"jupyter-sched definitions create: note: {MISSPELT}\n", err
    code, out, err = server.cli("definitions", "edit", "n3cli", "-p", "dayz=3")
    # the whole set it now holds, as the server reads it: one note
    assert code == EXIT_OK and err.count("did you mean 'region' or 'days'?") == 1 and err.count("'regoin'") == 1, err


HOSTILE: dict[str, dict[str, Any]] = {
    "cells is an object": {"cells": {"a": 1}, "metadata": {}},
    "a cell is a number": {"cells": [1, "x", None], "metadata": {}},
    "metadata is a list": {"cells": [{"cell_type": "code", "source": "x = 1", "metadata": ["parameters"]}]},
    "tags hold objects": {"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {"tags": [{"a": 1}, 2]}}]},
    "source lines are numbers": {"cells": [{"cell_type": "code", "source": [1, 2],
                                            "metadata": {"tags": ["parameters"]}}]},
    "source is an object": {"cells": [{"cell_type": "code", "source": {"a": 1}, "metadata": {"tags": ["parameters"]}}]},
    "source holds a NUL": {"cells": [{"cell_type": "code", "source": "x = 1\x00", "metadata": {"tags": ["parameters"]}}]},
    "source nests deeply": {"cells": [{"cell_type": "code", "source": "x = " + "-" * 5000 + "1",
                                       "metadata": {"tags": ["parameters"]}}]},
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(HOSTILE), ids=list(HOSTILE))
def test_newuser39_n3_a_notebook_of_any_shape_is_read_without_a_500(server: Any, tmp_path: Path, shape: str) -> None:
    path = tmp_path / "odd.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, **HOSTILE[shape]}), encoding="utf-8")
    with server.client() as api:
        answer = api.post("dryrun", json={"notebook": str(path), "gpus": 0, "parameters": {"regoin": "eu"}})
    assert answer.status_code < 500, answer.text
    if answer.status_code == 200:  # a note is said only where the cell could be read: never a guess
        assert not any("did you mean" in w for w in answer.json()["warnings"]), answer.json()
    assert "Traceback" not in server.log_tail(20000)


@pytest.mark.slow
def test_newuser39_n3_the_service_bounds_what_it_parses_and_says(server: Any, tmp_path: Path) -> None:
    # a parameters cell past NOTED_CELL_BYTES is not parsed in the service's process (said by the CLI and the log)
    long_cell = "region = 'us'\ndays = 7\n" + "# " + "x" * NOTED_CELL_BYTES + "\n"
    big = str(_notebook(tmp_path / "big.ipynb", long_cell))
    # a 50 KiB set of misspelt names against the cell: five named, the rest counted, in one sentence
    many = {f"regoin{i:05d}": i for i in range(3000)}
    with server.client() as api:
        said = api.post("dryrun", json={"notebook": big, "gpus": 0, "parameters": {"regoin": "eu"},
                                         "time_limit": "5m"}).json()["warnings"]
        assert said == [], said
        nb = str(_notebook(tmp_path / "daily_report.ipynb"))
        said = api.post("dryrun", json={"notebook": nb, "gpus": 0, "parameters": many,
                                         "time_limit": "5m"}).json()["warnings"]
    assert len(said) == 1 and "'regoin00004' and 2995 more are not in daily_report.ipynb's parameters cell" in said[0], said
    assert len(said[0]) < 600, said
    # the CLI, reading the file in its own process, still says the long cell's note
    assert "did you mean 'region'?" in parameters_note(json.loads(Path(big).read_text()), {"regoin": "eu"}, "big.ipynb")
