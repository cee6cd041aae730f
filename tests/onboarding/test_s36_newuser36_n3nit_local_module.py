"""newuser36 n3: the README's ``%%schedule`` cell ``import train; train.main()``, run in a folder with no train.py,
was told "its Python … has no train: check the spelling first; if it is right, install it into that Python — … -m pip
install train" — for a module the README says comes from a file beside the notebook, pip installs whatever PyPI has
under that name. The hint now says first that the folder first on the job's ``sys.path`` (the notebook's, for a cell)
has no train.py or train/, and only then the package's case.

Real parts: one real job through the local executor, run as a ``%%schedule`` cell is (the start-folder runner, by a
real venv's Python with the standard library only); the rest is the pure reading of a command's ``sys.path[0]``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outcome import first_on_path, missing_module_hint
from jupyter_sched.model import Allocation
from jupyter_sched.userfiles import start_folder_argv
from tests.onboarding.test_s33_newuser33_outcome import _env
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event


def test_newuser36_n3nit_a_cells_missing_module_is_said_missing_from_the_notebooks_folder_before_pip(
        tmp_path: Path) -> None:
    python = _env(tmp_path, ())
    notebook_folder = tmp_path / "work"
    (notebook_folder / ".jupyter_sched" / "cells").mkdir(parents=True)
    cell = notebook_folder / ".jupyter_sched" / "cells" / "0123456789.py"
    cell.write_text("import train; train.main()\n")
    ex = LocalExecutor(tmp_path / "jobs")
    job = make_job("j-n3nit", command=tuple(start_folder_argv(python, str(cell))), working_dir=str(notebook_folder))
    ex.start(job, Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 1, ended
    said = ended.message
    folder_first = (f"its Python, {python}, has no train, and {notebook_folder}, first on its sys.path, has no train.py "
                    f"or train/: a module of yours goes there; if train is a package, check the spelling first; if it "
                    f"is right, install it into that Python — {python} -m pip install train")
    assert folder_first in said, said
    assert said.index(f"{notebook_folder}, first on its sys.path") < said.index("pip install"), said


@pytest.mark.parametrize(("argv", "first"), [
    (["/v/bin/python3", "-c", "code", "cell.py"], "/w/nb"),  # a %%schedule cell, a carried script
    (["python", "-m", "jupyter_sched.executors.run_notebook", "nb.ipynb"], "/w/nb"),  # a notebook's kernel starts there
    (["python3.11", "sub/train.py", "--epochs", "3"], "/w/nb/sub"),  # python FILE: the file's folder
    (["python", "-u", "-W", "ignore", "/abs/t.py"], "/abs"),
    (["python", "-uc", "code"], "/w/nb"),
    (["python", "-I", "t.py"], None),  # isolated: nothing prepended
    (["python", "-P", "t.py"], None),
    (["bash", "run.sh"], None),  # no Python: no rule of its sys.path
    (["python"], "/w/nb"),
])
def test_newuser36_n3nit_the_folder_first_on_a_commands_sys_path(argv: list[str], first: str | None) -> None:
    assert first_on_path(argv, "/w/nb") == first


def test_newuser36_n3nit_known_packages_dotted_names_and_the_hubs_python_keep_their_fix() -> None:
    sklearn = missing_module_hint("ModuleNotFoundError: No module named 'sklearn'", "/p/python", folder="/w")
    assert sklearn is not None and "/w" not in sklearn and "pip install scikit-learn" in sklearn  # a package's name
    dotted = missing_module_hint("ModuleNotFoundError: No module named 'train.utils'", "/p/python", folder="/w")
    assert dotted is not None and "train.py" not in dotted  # train may well be there: not said
    hub = missing_module_hint("ModuleNotFoundError: No module named 'train'", "/opt/job/python", shared=True,
                              folder="/home/n36a")
    assert hub is not None and hub.startswith(
        "the hub's job Python, /opt/job/python, has no train, and /home/n36a, first on its sys.path, has no train.py or "
        "train/: a module of yours goes there; if train is a package, check the spelling first; if it is right, ask "
        "your hub admin"), hub
    assert missing_module_hint("ModuleNotFoundError: No module named 'train'", sys.executable) is not None


def test_newuser36_n3nit_a_cell_importing_what_neither_its_folder_nor_its_python_has_is_warned_at_submit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A real IPython shell in a notebook's folder, the ``%%schedule`` cell's path up to the submit (the submission
    itself is replaced: no server here). A module beside the notebook, the standard library's, an optional import
    in ``try`` are not warned of."""
    from IPython.core.interactiveshell import InteractiveShell

    from jupyter_sched.magics import core
    from jupyter_sched.magics.parsing import parse_schedule_line

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine_n36.py").write_text("def main(): pass\n")
    shell = InteractiveShell.instance()
    try:
        magics = core.SchedMagics(shell)
        magics._through_hub, magics._sends_mine = False, False
        sent: list[str] = []
        monkeypatch.setattr(magics, "_submit", lambda options, body, note=None: sent.append("j-1") or "j-1")
        magics._submit_cell(parse_schedule_line("--gpus 0", cell=True),
                            "import os, mine_n36\nimport train_n36nowhere.sub; train_n36nowhere.main()\n"
                            "try:\n    import optional_n36nowhere\nexcept ImportError:\n    pass\n")
        assert sent == ["j-1"]  # a warning, not a refusal
        err = capsys.readouterr().err
        assert (f"warning: this cell imports train_n36nowhere, found neither in {tmp_path} (the job's folder, first on "
                f"its sys.path) nor in this kernel's Python, {sys.executable}: the job will fail on it — put "
                f"train_n36nowhere.py (or a train_n36nowhere/ folder) there") in err, err
        assert "mine_n36" not in err and "optional_n36nowhere" not in err and " os" not in err, err
        magics._submit_cell(parse_schedule_line("--gpus 0", cell=True), "import json, mine_n36\nprint(1)\n")
        assert "warning" not in capsys.readouterr().err
    finally:
        InteractiveShell.clear_instance()
