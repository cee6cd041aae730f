"""newuser29's nits (issue 20: a new user's first hour turns up nothing odd in the CLI's words, the magics, the
panel, the README). Each test failed before its fix and asserts what a new user now reads.

Real parts: the services over a real SQLite store, the CLI commands over a client double at the wire (``call(Req)
-> JSON``, the server's answers as they come), the wording renderers, the README.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def test_newuser29_n6_a_program_path_that_is_not_there_is_said_without_the_path_sentence(tmp_path: Path) -> None:
    """Failed before: ``submit -- ./noexec.sh`` (no such file; a name with a ``/``) was told "give its full path, or
    check the spelling: the job runs with the PATH sent with it (… first, 3 folders) and none of its folders holds
    it" — no PATH is searched for a name with a ``/``. Now the path's own words; a file there that cannot be run
    says chmod, neither names PATH; a bare name still says the PATH searched."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.services import build_services
    from jupyter_sched.services.models import SubmitJobRequest

    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off"})
    ana = services.caller("ana", admin=False)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "noexec.sh").write_text("echo hi\n")
    sent = {"PATH": "/usr/bin:/bin"}
    fix = ("check the path and its spelling: a program named with a / is run from that path (a relative one from the "
           "job's working directory), not looked up on PATH")
    try:
        for command, working_dir, shown in ((["./nosuch.sh"], str(proj), proj / "nosuch.sh"),
                                            ([str(tmp_path / "bin" / "tool"), "--x"], None, tmp_path / "bin" / "tool")):
            with pytest.raises(ValidationError) as told:
                services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=command, working_dir=working_dir, env=sent))
            assert told.value.field == "command", told.value
            assert told.value.message == f"command: '{shown}' does not exist on this server", told.value.message
            assert told.value.hint == fix, told.value.hint
        with pytest.raises(ValidationError) as told:  # there, not executable: chmod, by its kind
            services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["./noexec.sh"], working_dir=str(proj), env=sent))
        assert told.value.message == f"command: '{proj / 'noexec.sh'}' is not executable on this server", told.value.message
        assert told.value.hint.startswith("chmod +x it, or run it") and "PATH" not in told.value.hint, told.value.hint
        with pytest.raises(ValidationError) as told:  # a bare name: looked up on the PATH sent, said so
            services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["nosuchcmd-n6"], env=sent))
        assert told.value.hint == ("give its full path, or check the spelling: the job runs with the PATH sent with it "
                                   "(/usr/bin first, 2 folders) and none of its folders holds it"), told.value.hint
    finally:
        services.store.close()


class _UsageWire:
    """GET me and GET usage/report's answers, as ``client.call`` returns them; the params it was asked with."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.asked: dict[str, Any] = {}

    def config(self) -> dict[str, Any]:
        return {"features": {"hub": True}}

    def pages(self, req: Any) -> Any:  # the report is one page here (SchedClient.pages follows Link: red30 R8)
        yield self.call(req)

    def call(self, req: Any) -> Any:
        if req.path == "me":
            return {"user": "root", "is_admin": True}
        self.asked = dict(req.params or {})
        return self.rows


def _usage_row(period: str, hours: float, **keys: str) -> dict[str, Any]:
    """A row of GET usage/report by period, as the server sends it: the period keyed by its start."""
    return {**keys, "period": period, "allocated_gpu_hours": hours, "utilized_gpu_hours": hours / 2,
            "efficiency": 0.5, "cost": None, "jobs": 1, "since": "2026-07-01T00:00:00Z", "until": "2026-10-01T00:00:00Z"}


def _usage_table(rows: list[dict[str, Any]], *argv: str) -> list[list[str]]:
    import io

    from jupyter_sched.cli.admin_views import usage
    from jupyter_sched.cli.main import Streams, build_parser

    out, err = io.StringIO(), io.StringIO()
    wire = _UsageWire(rows)
    assert usage(wire, build_parser().parse_args(["usage", *argv]), Streams(out=out, err=err, stdin=io.StringIO())) == 0
    assert err.getvalue() == "", err.getvalue()
    assert wire.asked["since"] == "2026-07-01T00:00:00Z" and wire.asked["until"] == "2026-10-01T00:00:00Z", wire.asked
    return [line.split() for line in out.getvalue().splitlines()[1:-1]]


def test_newuser29_n10_usage_by_month_names_months_and_lists_the_unused_ones_as_0() -> None:
    """Failed before: ``usage --by period --period month --quarter 2026Q4`` said PERIOD ``2026-12-01T00:00:00+00:00``
    and listed December alone — October and November, unused, were no rows. Now ``2026-07`` … each month of the
    quarter asked, 0 where unused; by team, each team's months; a quarter as ``2026Q3`` (as --quarter takes it)."""
    quarter = ("--quarter", "2026Q3")
    august = _usage_row("2026-08-01T00:00:00+00:00", 0.471)
    assert _usage_table([august], "--by", "period", "--period", "month", *quarter) == [
        ["2026-07", "0.000", "0.000", "-", "-", "0"],
        ["2026-08", "0.471", "0.235", "50", "%", "-", "1"],
        ["2026-09", "0.000", "0.000", "-", "-", "0"]]
    teams = [_usage_row("2026-09-01T00:00:00+00:00", 1.0, team="ml"), _usage_row("2026-07-01T00:00:00+00:00", 2.0, team="cv"),
             _usage_row("2026-08-01T00:00:00+00:00", 1.0, team="ml")]
    assert [row[:3] for row in _usage_table(teams, "--by", "team,period", "--period", "month", *quarter)] == [
        ["cv", "2026-07", "2.000"], ["cv", "2026-08", "0.000"], ["cv", "2026-09", "0.000"],
        ["ml", "2026-07", "0.000"], ["ml", "2026-08", "1.000"], ["ml", "2026-09", "1.000"]]
    whole = _usage_row("2026-07-01T00:00:00+00:00", 3.0)
    assert [row[:2] for row in _usage_table([whole], "--by", "period", "--period", "quarter", *quarter)] == [
        ["2026Q3", "3.000"]]


_HELP_PROBE = """
import atexit, sys
atexit.register(lambda: print("heavy:", sorted(m for m in ("pandas", "numpy", "scipy", "plotly", "sqlalchemy",
                                                           "jupyter_server", "traitlets", "tornado") if m in sys.modules),
                              file=sys.stderr))
from jupyter_sched.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", ["simulate", "fetch-traces", "serve"])
def test_newuser29_n13_help_of_the_offline_and_service_commands_loads_no_heavy_library(command: str) -> None:
    """Failed before: ``jupyter-sched simulate --help`` / ``fetch-traces --help`` imported pandas and numpy (the
    ``jupyter_sched.sim`` package's ``__init__``), ``serve --help`` jupyter_server, traitlets and SQLAlchemy — 2-3 s
    of wall time on a loaded machine before the help, where ``status --help`` takes 0.2 s. Now argparse alone: the
    help is the same words, and the libraries come when a run needs them."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run([sys.executable, "-c", _HELP_PROBE, command, "--help"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run
    assert f"usage: jupyter-sched {command}" in run.stdout, run.stdout
    assert "heavy: []" in run.stderr, run.stderr


def test_newuser29_n15_a_cell_failing_on_a_missing_module_names_the_jobs_python_and_how_to_install(
        tmp_path: Path) -> None:
    """Failed before: a ``%%schedule`` cell's ``import torch`` failed "… | ModuleNotFoundError: No module named
    'torch'" and no more, where a job failing on ``import jupyter_sched`` names its Python and the fix (newuser28
    N3). Now any missing module names the Python the job ran (the kernel's, for a cell) and how to install into
    it; a notebook's failing cell says its kernel's; jupyter_sched keeps its own fix."""
    import sys

    from jupyter_sched.executors.local import _python_of
    from jupyter_sched.executors.outcome import describe_exit, write_outcome
    from jupyter_sched.model import JobSpec, ResourceRequest
    from jupyter_sched.userfiles import start_folder_argv

    cell = JobSpec(name="cell-1", user="ana", resources=ResourceRequest(gpus=0),
                   command=tuple(start_folder_argv(sys.executable, str(tmp_path / "cells" / "abc.py"))))
    python = _python_of(cell)
    assert python == sys.executable  # as %%schedule sends it: the kernel's interpreter
    log = tmp_path / "output.log"
    log.write_text("Traceback (most recent call last):\n  File \"abc.py\", line 1, in <module>\n    import torch.nn\n"
                   "ModuleNotFoundError: No module named 'torch'\n", encoding="utf-8")
    said = describe_exit(1, log=log, python=python)
    # the error first, its fix after it (newuser33 N2), and the spelling checked before pip (newuser33 N1)
    assert said.startswith(f"exited with code 1: ModuleNotFoundError: No module named 'torch' (abc.py, line 1) — its "
                           f"Python, {python}, has no torch: check the spelling first; if it is right, install it into "
                           f"that Python — {python} -m pip install torch (in a notebook on that Python's kernel: %pip "
                           "install torch); a package's install name may differ from its import name; last lines: "), said
    log.write_text("ModuleNotFoundError: No module named 'jupyter_sched'\n", encoding="utf-8")  # its own fix
    assert describe_exit(1, log=log, python=python).endswith(
        "has no jupyter_sched: activate the environment jupyter-sched is installed in before submitting, or give "
        "that environment's Python by its full path (-- /path/to/venv/bin/python …)")
    log.write_text("ValueError: bad input\n", encoding="utf-8")
    # a log with no traceback: its error line first (newuser34 N2)
    assert describe_exit(1, log=log, python=python) == "exited with code 1: ValueError: bad input"
    write_outcome(tmp_path, {"status": "failed", "reason": "cell 3 raised ModuleNotFoundError: No module named "
                                                            "'sklearn.linear_model' (cell starts: from sklearn …)"})
    assert describe_exit(1, job_dir=tmp_path, log=log) == (
        "cell 3 raised ModuleNotFoundError: No module named 'sklearn.linear_model' (cell starts: from sklearn …) — "
        "its kernel's Python has no sklearn: install it into that Python — python -m pip install scikit-learn with "
        "that Python (in a notebook on that Python's kernel: %pip install scikit-learn)")


def test_newuser29_n1_doctor_says_a_config_file_left_in_this_folder_is_not_read(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: a ``jupyter_server_config.py`` written in the project folder (where ``jupyter lab`` starts) is
    never read — Jupyter reads no config from the current folder — and ``jupyter-sched doctor`` run there said
    nothing of it (nor of any config: no file it reads sets c.SchedApp). Now a note names the file, where it goes
    and ``--config``; run in a folder Jupyter does read, no note."""
    import io

    from jupyter_sched.cli import doctor
    from jupyter_sched.store import Store, sqlite_url

    conf, data, proj = tmp_path / "config", tmp_path / "data", tmp_path / "proj"
    for folder in (conf, data / "jupyter_sched", proj):
        folder.mkdir(parents=True)
    for name in ("JUPYTER_SCHED_DB_URL", "JUPYTER_SCHED_DB_URL_FILE", "JUPYTER_SCHED_HUB_URL", "JUPYTER_SCHED_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(conf))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    Store(sqlite_url(data / "jupyter_sched" / "sched.sqlite")).close()
    note = (f"note: ./jupyter_server_config.py in this folder is not read: Jupyter reads no config from the folder it "
            f"starts in — move it to {conf} (jupyter --config-dir; jupyter --paths lists every config folder), or "
            "start with jupyter lab --config=./jupyter_server_config.py\n")
    for folder, said in ((proj, True), (conf, False)):
        (folder / "jupyter_server_config.py").write_text("c.SchedApp.idle_window_s = 60\n", encoding="utf-8")
        monkeypatch.chdir(folder)
        out, err = io.StringIO(), io.StringIO()
        assert doctor.main([], out=out, err=err) == doctor.EXIT_OK, (out.getvalue(), err.getvalue())
        assert (note in out.getvalue()) is said, out.getvalue()
        assert ("every c.SchedApp setting reads" in out.getvalue()) is not said, out.getvalue()  # read there
