"""Issue 20's CLI bar (0.5 s on a loaded 2-core machine; newuser32's measurement): each call is a new
process, so what a command does not need must be neither built nor imported. ``--version`` built every
subcommand's parser (0.33 s of its 0.41 s: 379 ``add_argument`` calls and the modules they import);
``status``, ``queue``, ``cancel``, ``logs`` imported :mod:`jupyter_sched.cli.admin_views` (usage, audit,
quotas) through ``cli/commands.py``. Checked by the modules a fresh interpreter loaded (no timings: speed
lives in ``benchmarks/cli_bench.py``); no server is needed, the paths are walked up to discovery, which
finds none in an empty runtime folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.cli.main import ADMIN_VIEW_NAMES, COMMAND_NAMES, EXIT_NO_SERVER, EXIT_OK, main

ROOT = Path(__file__).resolve().parents[2]

_PROBE = ("import sys\n"
          "from jupyter_sched.cli.main import main\n"
          "rc = main(sys.argv[1:])\n"
          "print(rc, ' '.join(sorted(m for m in sys.modules if m.startswith('jupyter_sched.'))), file=sys.stderr)\n")


def _run(tmp_path: Path, *argv: str) -> tuple[int, set[str], str]:
    """``(exit code, jupyter_sched modules loaded, stdout)`` of ``main(argv)`` in a fresh interpreter,
    with no server to find (an empty runtime folder, no JUPYTER_SCHED_* in the environment)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env.update({"PYTHONPATH": str(ROOT), "JUPYTER_RUNTIME_DIR": str(tmp_path)})
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    rc, _, modules = done.stderr.strip().splitlines()[-1].partition(" ")
    return int(rc), set(modules.split()), done.stdout


def test_clifast32_version_builds_no_subcommand_and_imports_none_of_their_modules(tmp_path: Path) -> None:
    rc, modules, out = _run(tmp_path, "--version")
    assert rc == EXIT_OK and out.startswith("jupyter-sched ")
    cli = {m for m in modules if m.startswith("jupyter_sched.cli.")}
    assert cli == {"jupyter_sched.cli.main", "jupyter_sched.cli.aliases"}, cli
    assert not {m for m in modules if m.startswith(("jupyter_sched.wording", "jupyter_sched.client"))}


@pytest.mark.parametrize("argv", [["status"], ["queue"], ["cancel", "j-x"], ["logs", "j-x"]],
                         ids=["status", "queue", "cancel", "logs"])
def test_clifast32_everyday_commands_import_no_admin_views(tmp_path: Path, argv: list[str]) -> None:
    rc, modules, _ = _run(tmp_path, *argv)
    assert rc == EXIT_NO_SERVER  # the command's modules are loaded before the server is looked for
    assert "jupyter_sched.cli.commands" in modules
    assert "jupyter_sched.cli.admin_views" not in modules


def test_clifast32_help_and_a_mistyped_command_still_list_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The lazy paths change nothing a user reads: ``--help`` lists every command (admin views too), a
    mistyped one gets the whole list with its did-you-mean, and ``usage`` typed parses as before."""
    assert main(["--help"]) == EXIT_OK
    listed = capsys.readouterr().out
    for name in (*COMMAND_NAMES, *ADMIN_VIEW_NAMES):
        assert f"\n    {name} " in listed or f"\n    {name}\n" in listed, name
    assert main(["qeue"]) == 2
    said = capsys.readouterr().err
    assert "did you mean queue?" in said and all(name in said for name in ADMIN_VIEW_NAMES), said
    assert main(["usage", "--bye", "team"]) == 2
    assert "jupyter-sched usage" in capsys.readouterr().err
