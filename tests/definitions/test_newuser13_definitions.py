"""New user 13, N20: ``jupyter-sched definitions`` wording — a definition with no schedule, the
unknown-parameter note's missing ". ", and a parameter whose value is not of the parameters cell's
type (accepted silently; the run failed inside the notebook at 07:00). The notes and the schedule
words have one wording each, used by the CLI, the magics and a run's log
(:func:`jupyter_sched.definitions.parameters.parameters_note`,
:func:`jupyter_sched.wording.definitions.schedule_text`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.client import connect
from jupyter_sched.definitions.parameters import parameters_note
from jupyter_sched.magics.core import SchedMagics
from tests.reliability.harness import EmbeddedServer

CELL = "region = 'eu'\ndays = 7\nrate = 0.5\nverbose = False\nlayers = [1, 2]\nseed = None\nstart = compute()"


def _notebook(source: str = CELL) -> dict[str, Any]:
    return {"cells": [{"cell_type": "code", "source": source, "metadata": {"tags": ["parameters"]}, "outputs": [],
                       "execution_count": None},
                      {"cell_type": "code", "source": "print(region, days + 1)", "metadata": {}, "outputs": [],
                       "execution_count": None}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


@dataclass(frozen=True)
class Given:
    id: str
    parameters: dict[str, Any]
    want: str  # "" for no note


TYPE_CASES = [
    Given("text where the cell has an int is noted", {"days": "notanumber"},
          "days is 7 (int) in r.ipynb's parameters cell; the value given, 'notanumber', is a str, and the notebook "
          "gets it as it is."),
    Given("a float where the cell has an int is noted", {"days": 1.5},
          "days is 7 (int) in r.ipynb's parameters cell; the value given, 1.5, is a float, and the notebook gets it "
          "as it is."),
    Given("true where the cell has an int is noted", {"days": True},
          "days is 7 (int) in r.ipynb's parameters cell; the value given, True, is a bool, and the notebook gets it "
          "as it is."),
    Given("an int where the cell has text is noted", {"region": 3},
          "region is 'eu' (str) in r.ipynb's parameters cell; the value given, 3, is an int, and the notebook gets "
          "it as it is. To pass it as text, quote it as a JSON string: -p 'region=\"…\"'."),  # newuser27 n10
    Given("an int where the cell has a float fits", {"rate": 1}, ""),
    Given("the same types fit", {"days": 3, "region": "us", "verbose": True, "layers": [4]}, ""),
    Given("null fits anything, anything fits a None default", {"days": None, "seed": 42}, ""),
    Given("a value the cell computes has no known type", {"start": "x"}, ""),
]


@pytest.mark.parametrize("case", TYPE_CASES, ids=[c.id for c in TYPE_CASES])
def test_newuser13_n20_a_value_not_of_the_parameters_cells_type_is_noted(case: Given) -> None:
    assert parameters_note(_notebook(), case.parameters, "r.ipynb") == case.want


def test_newuser13_n20_the_unknown_parameter_note_is_two_sentences() -> None:
    """``… parameters cell (region, days) It is injected anyway`` lacked its ". " when no name was close."""
    said = parameters_note(_notebook("region = 'eu'\ndays = 7"), {"nosuchparam": 1}, "r.ipynb")
    assert said == ("parameter 'nosuchparam' is not in r.ipynb's parameters cell (region, days). It is injected "
                    "anyway; the notebook's own value of any name it sets is what runs."), said
    both = parameters_note(_notebook("region = 'eu'\ndays = 7"), {"regoin": "x", "days": "x"}, "r.ipynb")
    assert both.startswith("parameter 'regoin' is not in r.ipynb's parameters cell (region, days) — did you mean "
                           "'region'? It is injected anyway;") and " days is 7 (int) " in both, both


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu13defs"), definition_min_interval_s=1.0)
    try:
        yield srv
    finally:
        srv.terminate()


@pytest.mark.slow
def test_newuser13_n20_definitions_from_the_terminal_and_the_magics_say_the_same(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """N20 as the tester met it: ``definitions create NB --name d2`` (no --cron) said ``no schedule (run
    now only) (UTC)  next -`` — a time zone and a next firing for something that never fires; ``-p
    days=notanumber`` against ``days = 7`` was accepted without a word, on create and on ``run``. The
    magics say the schedule in the same words (their own run command) and the same note."""
    nb = tmp_path / "daily_report.ipynb"
    nb.write_text(json.dumps(_notebook("region = 'eu'\ndays = 7")), encoding="utf-8")
    code, out, err = server.cli("definitions", "create", str(nb), "--name", "d2", "--gpus", "0")
    assert code == EXIT_OK, err
    d2 = out.split()[1]
    assert out == f"defined {d2}  d2  no schedule: runs only with `jupyter-sched definitions run d2`\n", out
    listed = server.cli("definitions")[1]
    assert f"{d2}  d2  no schedule: runs only with `jupyter-sched definitions run d2`\n" in listed, listed
    assert "(UTC)  next" in server.cli("definitions", "create", str(nb), "--name", "d3", "--gpus", "0",
                                 "--cron", "0 7 * * *")[1]  # a scheduled one keeps its zone and next firing

    code, out, err = server.cli("definitions", "create", str(nb), "--name", "d4", "--gpus", "0",
                          "--cron", "0 7 * * *", "-p", "days=notanumber")
    assert code == EXIT_OK, err
    note = ("days is 7 (int) in daily_report.ipynb's parameters cell; the value given, 'notanumber', is a str, and "
            "the notebook gets it as it is.")
    assert err == f"jupyter-sched definitions create: note: {note}\n", err  # the server's note, said once (newuser39 n3)
    code, out, err = server.cli("definitions", "run", "d4", "-p", "days=abc")
    assert code == EXIT_OK and "the value given, 'abc', is a str" in err, err
    d4 = json.loads(server.cli("--json", "definitions")[1])
    d4_id = next(d["id"] for d in d4 if d["name"] == "d4")

    magics = SchedMagics(None, client_factory=lambda: connect(server.url, server.token))
    capsys.readouterr()
    d5 = magics.schedule(f"define {nb} --name d5 --gpus 0")
    said = capsys.readouterr().out
    assert f"Defined {d5} (d5): no schedule: runs only with %schedule define run {d5}\n" in said, said
    assert "(UTC)" not in said and "next run" not in said, said
    magics.schedule(f"define run {d4_id} -p days=abc")
    said = capsys.readouterr().out
    assert "Note: days is 7 (int) in daily_report.ipynb's parameters cell; the value given, 'abc', is a str" in said, \
        said
