"""New user 14, N27: a one-off notebook job could not take parameters from the magic or the CLI.

``%schedule notebook daily_report.ipynb --gpus 0 -p days=3`` said ``unexpected argument '-p'. A
notebook takes no arguments.`` and ``jupyter-sched submit --gpus 0 --notebook daily_report.ipynb -p
days=3`` said ``-p: not an option of jupyter-sched submit``, while REST ``POST jobs {"notebook": …,
"parameters": {…}}`` and definitions (``%schedule define … -p``, ``definitions run DEF -p k=v``) took
them. Now both take ``-p NAME=VALUE`` (repeatable), read by the one parser definitions use
(:func:`jupyter_sched.definitions.parameters.parse_parameter_words`), with the same type note, and
``-p`` where the job has no parameters cell is refused naming the rule. The end-to-end tests run a
real notebook job with a parameter through the embedded server and read what the notebook printed.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE, _check_usage, build_parser, main
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.define import parse_define
from jupyter_sched.magics.parsing import parse_schedule_line

REPORT = "days = 7\nregion = 'us'"
"""The parameters cell of the tester's daily_report.ipynb (its defaults)."""


def _notebook(path: Path) -> Path:
    cells = [{"cell_type": "code", "source": REPORT, "metadata": {"tags": ["parameters"]}, "outputs": [],
              "execution_count": None},
             {"cell_type": "code", "source": "print('REPORT', days, type(days).__name__, region)", "metadata": {},
              "outputs": [], "execution_count": None}]
    nb = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


# --- the magic: %schedule notebook takes -p; where no notebook is the job, -p names the rule -------------

def test_newuser14_n27_schedule_notebook_takes_p_name_value_repeatable_json_where_it_parses() -> None:
    cmd = parse_schedule_line("notebook ../notebooks/daily_report.ipynb --gpus 0 -p days=3 -p region=eu "
                              "-p ratios='[0.5, 1]'")
    assert cmd.action == "notebook" and cmd.target == "../notebooks/daily_report.ipynb"
    assert dict(cmd.parameters) == {"days": 3, "region": "eu", "ratios": [0.5, 1]}
    assert cmd.options.gpus == 0 and cmd.args == ()
    assert dict(parse_schedule_line("notebook r.ipynb").parameters) == {}


@dataclass(frozen=True)
class Refused:
    line: str
    cell: bool
    want_message: str
    want_hint: str


REFUSED = [
    pytest.param(Refused("notebook r.ipynb days=3", False,
                         "%schedule notebook: unexpected argument 'days=3': a notebook takes no command-line arguments",
                         "give its parameters cell values with -p NAME=VALUE, e.g. -p days=3"),
                 id="a word after the notebook says where its values go (not 'a notebook takes no arguments')"),
    pytest.param(Refused("notebook r.ipynb -p days", False, "%schedule notebook: -p needs NAME=VALUE (got 'days')",
                         "e.g. -p region=eu -p days=3"), id="a -p without a value"),
    pytest.param(Refused("notebook r.ipynb -p days=3 -p days=4", False,
                         "%schedule notebook: -p days is given twice (days=3, days=4): give it once",
                         "keep the one you mean"), id="a name given twice"),
    pytest.param(Refused("--gpus 0 -p days=3", True,
                         "%%schedule: -p sets values of a notebook's parameters cell; a %%schedule cell has none, it "
                         "runs as a script",
                         "set the values in the cell itself, or run a notebook with them: %schedule notebook "
                         "report.ipynb -p days=3"), id="a %%schedule cell has no parameters cell"),
    pytest.param(Refused("run --gpus 0 -p days=3 train.py", False,
                         "%schedule run: -p sets values of a notebook's parameters cell; a script takes its own "
                         "arguments after its name",
                         "e.g. %schedule run train.py --days 3, or %schedule notebook report.ipynb -p days=3"),
                 id="-p before a script is ours: the rule"),
]


@pytest.mark.parametrize("case", REFUSED)
def test_newuser14_n27_magic_refusals_name_the_rule(case: Refused) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_schedule_line(case.line, cell=case.cell)
    assert (caught.value.message, caught.value.hint) == (case.want_message, case.want_hint)
    assert "takes no arguments" not in f"{caught.value.message} {caught.value.hint}"


def test_newuser14_n27_a_scripts_own_p_after_its_name_still_goes_to_the_script() -> None:
    cmd = parse_schedule_line("run train.py -p 3 --gpus 0")
    assert cmd.args == ("-p", "3") and dict(cmd.parameters) == {} and cmd.options.gpus == 0


def test_newuser14_n27_one_parser_the_magics_define_and_notebook_refuse_alike() -> None:
    """``%schedule define`` and ``%schedule notebook`` read -p with the same function: same rule, same words."""
    for line in ("-p days", "-p days=3 -p days=4"):
        with pytest.raises(ValidationError) as define:
            parse_define(["report.ipynb", "--cron", "0 7 * * *", *line.split()])
        with pytest.raises(ValidationError) as notebook:
            parse_schedule_line(f"notebook report.ipynb {line}")
        assert define.value.message.split(": ", 1)[1] == notebook.value.message.split(": ", 1)[1]
        assert define.value.hint == notebook.value.hint
    assert dict(parse_define(["report.ipynb", "-p", "days=3"]).parameters) == \
        dict(parse_schedule_line("notebook report.ipynb -p days=3").parameters) == {"days": 3}


# --- the CLI: submit --notebook takes -p; a command does not ----------------------------------------

def _usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    """The parsed submit (after the usage checks), or its exit status and the line said."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        _check_usage(parser, args)
    except SystemExit as stop:
        return stop.code, capsys.readouterr().err
    return args, ""


def test_newuser14_n27_submit_notebook_takes_p(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nb = str(_notebook(tmp_path / "daily_report.ipynb"))
    args, _ = _usage(["submit", "--gpus", "0", "--notebook", nb, "-p", "days=3", "--parameter", "region=eu"], capsys)
    assert args.parameters == {"days": 3, "region": "eu"}


@pytest.mark.parametrize(("argv", "want"), [
    pytest.param(["--notebook", "NB", "-p", "days"],
                 "jupyter-sched submit: -p needs NAME=VALUE (got 'days') — e.g. -p region=eu -p days=3 [usage_error]",
                 id="a -p without a value, in the words definitions say it"),
    pytest.param(["--notebook", "NB", "days=3"],
                 "jupyter-sched submit: unexpected argument 'days=3': a notebook takes no command-line arguments — "
                 "give its parameters cell values with -p NAME=VALUE, e.g. -p days=3 [usage_error]",
                 id="a word after the notebook: refused, not dropped"),
    pytest.param(["-p", "days=3", "--", "true"],
                 "jupyter-sched submit: -p sets values of a notebook's parameters cell (or a --script's --NAME "
                 "arguments); a command after -- takes its values as its own arguments — e.g. --notebook "
                 "report.ipynb -p days=3, or -- python train.py --days 3 [usage_error]",
                 id="a command has no parameters cell"),
])
def test_newuser14_n27_submit_refusals_name_the_rule(argv: list[str], want: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    nb = str(_notebook(tmp_path / "daily_report.ipynb"))
    code, said = _usage(["submit", "--gpus", "0", *[nb if a == "NB" else a for a in argv]], capsys)
    assert code == EXIT_USAGE and said == want + "\n", said


def test_newuser14_n27_cli_definitions_and_submit_read_p_alike(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``submit -p`` and ``definitions run/create -p`` are one parser: the same refusal, word for word."""
    nb = str(_notebook(tmp_path / "daily_report.ipynb"))
    token = tmp_path / "token"
    token.write_text("x", encoding="utf-8")

    def said(*argv: str) -> str:
        capsys.readouterr()  # no server: every one of these stops at its usage line (on stderr)
        try:
            code = main(["--url", "http://127.0.0.1:1/", "--token-file", str(token), *argv],
                        out=io.StringIO(), err=io.StringIO())
        except SystemExit as stop:  # `definitions` reads -p once it runs: its parser exits, as from a shell
            code = stop.code
        err = capsys.readouterr().err
        assert code == EXIT_USAGE, err
        return err.split(": ", 1)[1]

    for p in (["-p", "days=3", "-p", "days=4"], ["-p", "days"]):
        submitted = said("submit", "--gpus", "0", "--notebook", nb, *p)
        assert submitted == said("definitions", "run", "d-1", *p) == said("definitions", "create", nb, *p)
    assert submitted == "-p needs NAME=VALUE (got 'days') — e.g. -p region=eu -p days=3 [usage_error]\n"


# --- end to end: a real notebook job with parameters, through the embedded server --------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.reliability.harness import EmbeddedServer

    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu14n27"))
    try:
        yield srv
    finally:
        srv.terminate()


@pytest.mark.slow
def test_newuser14_n27_submit_notebook_p_reaches_the_notebook(server: Any, tmp_path: Path) -> None:
    nb = str(_notebook(tmp_path / "daily_report.ipynb"))
    code, out, err = server.cli("submit", "--gpus", "0", "--notebook", nb, "-p", "days=3", "-p", "region=eu")
    assert code == EXIT_OK and out.startswith("submitted j-"), (out, err)
    job_id = out.split()[1]
    assert server.cli("wait", job_id, "--for", "3m")[0] == EXIT_OK
    code, log, _ = server.cli("logs", job_id)
    assert "REPORT 3 int eu" in log, log  # the values given, typed as JSON reads them, after the defaults
    assert '[jupyter_sched] parameters injected: {"days": 3, "region": "eu"}' in log, log
    assert json.loads(server.cli("--json", "jobs", "--limit", "5")[1])[0]["parameters"] == {"days": 3, "region": "eu"}

    # the type note definitions print (new user 13, N20), for a one-off job too
    code, out, err = server.cli("submit", "--gpus", "0", "--notebook", nb, "-p", "days=abc")
    assert code == EXIT_OK, err
    assert ("jupyter-sched submit: note: days is 7 (int) in daily_report.ipynb's parameters cell; the value given, "
            "'abc', is a str, and the notebook gets it as it is.\n") in err, err
    assert server.cli("wait", out.split()[1], "--for", "3m")[0] == EXIT_OK


@pytest.mark.slow
def test_newuser14_n27_schedule_notebook_p_reaches_the_notebook(server: Any, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.client import connect
    from jupyter_sched.magics.core import SchedMagics

    nb = _notebook(tmp_path / "daily_report.ipynb")
    magics = SchedMagics(None, client_factory=lambda: connect(server.url, server.token))
    capsys.readouterr()
    job_id = magics.schedule(f"notebook {nb} --gpus 0 -p days=3 -p regoin=eu")
    said = capsys.readouterr().out
    assert 'With parameters {"days": 3, "regoin": "eu"}, assigned after the notebook\'s cell tagged "parameters".' \
        in said, said
    assert ("Note: parameter 'regoin' is not in daily_report.ipynb's parameters cell (days, region) — did you mean "
            "'region'?") in said, said  # the note `definitions run -p` prints
    assert server.cli("wait", job_id, "--for", "3m")[0] == EXIT_OK
    log = server.cli("logs", job_id)[1]
    assert "REPORT 3 int us" in log, log
