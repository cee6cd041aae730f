"""``jupyter-sched definitions …`` against a real server (a subprocess jupyter server with jupyter_sched)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, main
from tests.reliability.harness import EmbeddedServer, no_strays, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    with no_strays(tmp_path):
        s = EmbeddedServer.start(tmp_path, definition_min_interval_s=1.0)
        try:
            yield s
        finally:
            s.terminate()


def cli(server: EmbeddedServer, *argv: str) -> tuple[int, str, str]:
    """The CLI in-process, the token in a file (a --token is noted on stderr, which these compare)."""
    token = Path(server.workdir) / "cli-token"
    token.write_text(server.token, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["--url", server.url, "--token-file", str(token), *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_whole_life_of_a_definition_from_the_terminal(server: EmbeddedServer, tmp_path: Path) -> None:
    script = tmp_path / "prep.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\n")
    code, out, err = cli(server, "definitions", "create", str(script), "--cron", "0 6 * * *", "--tz", "Asia/Tokyo",
                         "-p", "day=mon", "--gpus", "0")
    assert code == EXIT_OK, err
    assert out.startswith("defined d-") and "At 06:00 every day (Asia/Tokyo)" in out
    definition_id = out.split()[1]
    assert cli(server, "definitions")[1].startswith(definition_id)
    assert cli(server, "definitions", "pause", definition_id)[1].startswith("paused " + definition_id)
    assert "paused" in cli(server, "definitions", "list")[1]
    assert cli(server, "definitions", "resume", definition_id)[0] == EXIT_OK
    code, out, _ = cli(server, "definitions", "run", definition_id, "-p", "day=fri")
    assert code == EXIT_OK and out.startswith("started run j-")
    job_id = out.split()[2]

    def finished() -> bool:
        state = json.loads(cli(server, "--json", "definitions", "runs", definition_id)[1])["runs"][0]["job"]["state"]
        return bool(state == "succeeded")

    wait_until(finished, "the run succeeds", timeout_s=60)
    runs = cli(server, "definitions", "runs", definition_id)[1]
    assert job_id in runs and "manual" in runs and "succeeded" in runs
    code, out, _ = cli(server, "logs", job_id)
    assert "args ['--day', 'fri']" in out
    edited = cli(server, "definitions", "edit", definition_id, "--no-schedule")[1]
    assert edited.startswith("edited ") and "no schedule (run now only)" in edited
    assert cli(server, "definitions", "delete", definition_id)[0] == EXIT_OK
    code, _, err = cli(server, "definitions", "show", definition_id)
    assert code == EXIT_REFUSED and "not_found" in err


def test_a_bad_schedule_is_one_line_naming_the_option(server: EmbeddedServer, tmp_path: Path) -> None:
    nb = tmp_path / "x.ipynb"
    nb.write_text("{}")
    code, _, err = cli(server, "definitions", "create", str(nb), "--cron", "0 12 * *")
    assert code == EXIT_REFUSED
    assert err.count("\n") == 1 and "5 fields" in err and "Traceback" not in err


def test_newuser6_finding_10_a_parameter_the_notebook_does_not_set_is_said(server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 6, F10: `definitions create daily_report.ipynb -p regoin=eu` was accepted silently and
    every run used the default region. The CLI says so at create (it can read the notebook here),
    and each run's log says it, whoever created the definition."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("region = 'us'\ndays = 7", metadata={"tags": ["parameters"]}),
                             new_code_cell("print('report for', region, days)")])
    path = tmp_path / "daily_report.ipynb"
    nbformat.write(nb, str(path))
    code, out, err = cli(server, "definitions", "create", str(path), "--cron", "0 6 * * *", "--paused", "-p", "regoin=eu",
                         "--gpus", "0")
    assert code == EXIT_OK, err
    assert err == ("note: parameter 'regoin' is not in daily_report.ipynb's parameters cell (region, days) — did you "
                   "mean 'region'? It is injected anyway; the notebook's own value of any name it sets is what runs.\n")
    definition_id = out.split()[1]
    code, out, err = cli(server, "definitions", "run", definition_id)
    assert code == EXIT_OK and err == "", err
    job_id = out.split()[2]
    code, out, err = cli(server, "wait", job_id, "--for", "120s")
    assert code == EXIT_OK, (out, err)
    log = cli(server, "logs", job_id)[1]
    assert "[jupyter_sched] warning: parameter 'regoin' is not in daily_report.ipynb's parameters cell" in log, log
    assert "report for us 7" in log
    code, _, err = cli(server, "definitions", "run", definition_id, "-p", "region=eu")
    assert code == EXIT_OK and err == "", err  # a name the cell sets: nothing to say
