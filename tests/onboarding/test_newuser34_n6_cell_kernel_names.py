"""newuser34 N6: a ``%%schedule`` cell that reads a variable of the kernel (``lr = 0.01`` in an earlier cell,
``print(lr * 2)`` in the scheduled one) failed after the GPU wait with ``NameError: name 'lr' is not defined
(cell-f50ef667bf.py, line 1)`` and no word why. At submit the magic now warns, naming the names (never their
values); and the failure's words call the file this cell and say a job does not see the kernel's variables."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from jupyter_sched.executors.outcome import describe_exit
from jupyter_sched.magics import core
from jupyter_sched.magics.cellnames import free_names
from jupyter_sched.magics.parsing import parse_schedule_line


def test_newuser34_n6_free_names_are_read_never_bound() -> None:
    source = ("import os\nfrom math import pi\nx = 1\nfor i in range(3): pass\nwith open(os.devnull) as fh: pass\n"
              "def f(a):\n    global g\n    g = a\n    return x + y + a + pi\n"
              "class C: pass\nprint(lr * 2, [v for v in w], C, f, g, i, fh, __name__, len)\n")
    assert free_names(source) == ["lr", "w", "y"]  # the cell's own scope first, then its functions'
    assert free_names("from m import *\nprint(lr)\n") == []  # a star import may bind anything: no guess
    assert free_names("print(lr\n") == []  # the job's SyntaxError says it


def test_newuser34_n6_a_cell_using_a_kernel_variable_is_warned_at_submit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A real IPython shell: ``lr`` set by an earlier cell, the ``%%schedule`` cell's path up to the submit."""
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("lr = 0.01734\nimport json\n")
        magics = core.SchedMagics(shell)
        magics._through_hub, magics._sends_mine = False, False
        sent: list[str] = []
        monkeypatch.setattr(magics, "_submit", lambda options, body, note=None: sent.append("j-1") or "j-1")
        magics._submit_cell(parse_schedule_line("--gpus 0 --name usesvar", cell=True),
                            "import os\nprint(lr * 2, json.dumps(1), os.sep, undefined_anywhere)\n")
        assert sent == ["j-1"]  # a warning, not a refusal
        err = capsys.readouterr().err
        assert "this cell uses lr, json, defined in your kernel but not in the cell: the job will not see them" in err
        assert "--env LR=…" in err and "0.01734" not in err, err  # never a value
        assert "undefined_anywhere" not in err and " os," not in err, err
        magics._submit_cell(parse_schedule_line("--gpus 0", cell=True), "lr = 2\nprint(lr)\n")
        assert "warning" not in capsys.readouterr().err
    finally:
        InteractiveShell.clear_instance()


@pytest.mark.parametrize("path", ["/tmp/h/jobs/users/u/j-1/cell-f50ef667bf.py", "/home/u/.jupyter_sched/cells/f50ef667bf.py"],
                         ids=["a hub cell", "a local cell"])
def test_newuser34_n6_a_cells_name_error_says_the_job_lacks_the_kernels_variables(tmp_path: Path, path: str) -> None:
    """The end half: the failure's one renderer (what panel, magics and CLI show) calls the file this cell, names
    the file it was saved as, and says why and the fix; another file's NameError keeps its plain words."""
    log = tmp_path / "job.log"
    lines = ["Traceback (most recent call last):", f'  File "{path}", line 1, in <module>', "    print(lr * 2)",
             "          ^^", "NameError: name 'lr' is not defined"]
    log.write_text("\n".join(lines) + "\n")
    said = describe_exit(1, log=log)
    assert "NameError: name 'lr' is not defined (the cell, line 1) — this cell ran as its own Python file (saved as " \
           f"{path.rsplit('/', 1)[-1]}), and a job does not see the kernel's variables: if lr was set in an earlier " \
           "cell, set it in this cell, pass it with --env LR=…" in said, said
    log.write_text("\n".join(lines).replace(path, "/home/u/train.py") + "\n")
    assert "kernel's variables" not in describe_exit(1, log=log)
