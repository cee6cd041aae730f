"""hubadmin23 A12 addendum: ``jupyter-sched definitions list --all`` (an admin listing everyone's
definitions) printed ``d-…  nightly  At 02:00 every day (UTC)  paused`` — no owner, so whose is whose
could not be told. Now each ``--all`` line has its owner after the id; a user's own list is unchanged.

Real parts: a subprocess jupyter server with jupyter_sched (its owner is its admin), the CLI."""

from __future__ import annotations

import getpass
from pathlib import Path

from jupyter_sched.cli.main import EXIT_OK
from tests.definitions.test_definitions_cli import server  # noqa: F401  (the fixture: a real embedded server)
from tests.reliability.harness import EmbeddedServer


def test_s23_hubadmin23_a12_definitions_list_all_names_each_owner(server: EmbeddedServer, tmp_path: Path) -> None:  # noqa: F811
    """Failed before: the --all line was ``d-…  nightly  …`` with no owner."""
    script = tmp_path / "nightly.py"
    script.write_text("print('n')\n")
    code, out, err = server.cli("definitions", "create", str(script), "--cron", "0 2 * * *", "--name", "nightly",
                                "--gpus", "0")
    assert code == EXIT_OK, err
    definition_id = out.split()[1]
    code, everyone, err = server.cli("definitions", "list", "--all")
    assert code == EXIT_OK, err
    assert everyone.splitlines()[0].startswith(f"{definition_id}  {getpass.getuser()}  nightly  "), everyone
    code, mine, err = server.cli("definitions", "list")
    assert mine.splitlines()[0].startswith(f"{definition_id}  nightly  "), mine
