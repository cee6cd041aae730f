"""newuser33 N1 and N2: what a failed job's reason says.

N1: a job failing on ``import nump`` was told to ``pip install nump`` — a typo-squat's bait — though numpy was
installed in that very Python. The hint now reads the names that Python can import from its folders (never running
it) and asks "did you mean numpy?" with no install line; with no near name it says to check the spelling first.

N2: every surface led a Python failure's reason with "last lines: Traceback (most recent call last): | File …", and
the panel's toast (140 characters) cut off the one line saying what went wrong. The reason now leads with the error
and where it was raised: ``exited with code 1: KeyError: 'missing' (crash.py, line 2); last lines: …``.

Real parts: a real virtual environment (:mod:`venv`, no pip) whose ``site-packages`` holds the packages named, and
one real job through the local executor run by that environment's Python; the rest are the outcome and wording
functions on log text as Python writes it.
"""

from __future__ import annotations

import difflib
import os
import sys
import venv
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.module_names import importable_names
from jupyter_sched.executors.outcome import describe_exit, describe_termination, missing_module_hint, python_error
from jupyter_sched.model import Allocation
from jupyter_sched.wording.jobs import job_line
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event

NUMP = "ModuleNotFoundError: No module named 'nump'"
TOAST_CHARS = 140
"""The panel's toast (labextension/src/notify.ts): ``<name> failed: <message>``, cut by JupyterLab at this length."""


def _env(tmp_path: Path, packages: tuple[str, ...] = ("numpy", "torch")) -> str:
    """A real venv (symlinked to this Python, no pip) whose site-packages has ``packages``; its python's path."""
    root = tmp_path / "venv"
    venv.EnvBuilder(symlinks=True, with_pip=False).create(root)
    site = root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    for name in packages:
        (site / name).mkdir()
        (site / name / "__init__.py").write_text("")
    (site / "numpy-2.0.0.dist-info").mkdir()  # a distribution's record: not a module
    return str(root / "bin" / "python")


def _traceback(file: str, line: int, code: str, error: str) -> str:
    return f'Traceback (most recent call last):\n  File "{file}", line {line}, in <module>\n    {code}\n{error}\n'


def _said(tmp_path: Path, text: str, python: str | None = None, **kw: object) -> str:
    log = tmp_path / "output.log"
    log.write_text(text, encoding="utf-8")
    return describe_exit(1, log=log, python=python, **kw)  # type: ignore[arg-type]


def test_newuser33_n1_a_misspelled_import_is_asked_about_and_never_offered_to_pip(tmp_path: Path) -> None:
    python = _env(tmp_path)
    said = _said(tmp_path, _traceback("/w/typo.py", 1, "import nump", "ModuleNotFoundError: No module named 'nump'"),
                 python)
    assert said.startswith(f"exited with code 1: ModuleNotFoundError: No module named 'nump' (typo.py, line 1) — did "
                           f"you mean numpy? its Python, {python}, has numpy (and no nump) — check the spelling; last "
                           "lines: "), said
    assert "pip" not in said, said
    torchh = missing_module_hint("ModuleNotFoundError: No module named 'torchh'", python)
    assert torchh == f"did you mean torch? its Python, {python}, has torch (and no torchh) — check the spelling", torchh
    # a package it has, a submodule it has not: the package is not offered to pip either
    sub = missing_module_hint("ModuleNotFoundError: No module named 'numpy.linalgg'", python)
    assert sub == f"its Python, {python}, has numpy but no numpy.linalgg — check the spelling", sub
    # a standard library name is near too (no site folder of this Python lists it)
    assert "did you mean collections?" in str(missing_module_hint("ModuleNotFoundError: No module named 'colections'", python))
    # the hub's job Python: no admin asked to install a typo
    shared = missing_module_hint("ModuleNotFoundError: No module named 'nump'", python, shared=True)
    assert shared == f"did you mean numpy? the hub's job Python, {python}, has numpy (and no nump) — check the spelling"


def test_newuser33_n1_with_no_near_name_the_spelling_is_checked_before_the_install_line(tmp_path: Path) -> None:
    python = _env(tmp_path)
    hint = missing_module_hint("ModuleNotFoundError: No module named 'transformers'", python)
    assert hint == (f"its Python, {python}, has no transformers: check the spelling first; if it is right, install it "
                    f"into that Python — {python} -m pip install transformers (in a notebook on that Python's kernel: "
                    "%pip install transformers); a package's install name may differ from its import name"), hint
    # a Python whose folders are not known (not a path; a notebook's kernel): the same, never a guess
    assert "check the spelling first; if it is right, install" in str(missing_module_hint(NUMP, "python"))
    kernel = missing_module_hint("cell 2 raised ModuleNotFoundError: No module named 'nump'", None, kernel=True)
    assert str(kernel).startswith("its kernel's Python has no nump: check the spelling first; if it is right"), kernel
    # a known install name is spelled right: its install line, as before
    assert missing_module_hint("ModuleNotFoundError: No module named 'sklearn'", python) == (
        f"its Python, {python}, has no sklearn: install it into that Python — {python} -m pip install scikit-learn "
        "(in a notebook on that Python's kernel: %pip install scikit-learn)")


def test_newuser33_n1_names_are_read_only_where_the_jobs_account_may_and_never_by_running_it(tmp_path: Path) -> None:
    python = _env(tmp_path)
    site = Path(python).parent.parent / "lib"
    os.chmod(site, 0o700)  # root's, not another account's to list
    assert importable_names(python) is not None  # the service's own account (a personal lab) lists it
    assert importable_names(python, owner_uid=65534) is None  # a job of another account: not listed for it
    assert "did you mean" not in str(missing_module_hint(NUMP, python, owner_uid=65534))
    # never run: a "python" that is a shell script writing a file, its venv's pyvenv.cfg a FIFO no writer opens
    fake = tmp_path / "fake" / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\n")
    fake.chmod(0o755)
    os.mkfifo(fake.parent.parent / "pyvenv.cfg")
    assert importable_names(str(fake)) is None
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("log, want", [
    pytest.param('starting\nTraceback (most recent call last):\n  File "/w/mywork/crash.py", line 2, in <module>\n'
                 '    x = {}["missing"]\n        ~~^^^^^^^^^^^\nKeyError: \'missing\'\n',
                 ("KeyError: 'missing'", "crash.py, line 2"), id="the error and the user's frame"),
    pytest.param('Traceback (most recent call last):\n  File "/w/train.py", line 9, in <module>\n    np.load(p)\n'
                 '  File "/v/lib/python3.11/site-packages/numpy/lib/npyio.py", line 427, in load\n    fid = open(f)\n'
                 "FileNotFoundError: [Errno 2] No such file or directory: 'data.npy'\n",
                 ("FileNotFoundError: [Errno 2] No such file or directory: 'data.npy'", "train.py, line 9"),
                 id="a package's frame below the user's: the user's line"),
    pytest.param('Traceback (most recent call last):\n  File "/w/a.py", line 3, in <module>\n    d["k"]\nKeyError: \'k\'\n\n'
                 'During handling of the above exception, another exception occurred:\n\nTraceback (most recent call '
                 'last):\n  File "/w/a.py", line 5, in <module>\n    raise ValueError("no k")\nValueError: no k\n'
                 'cleanup done\n', ("ValueError: no k", "a.py, line 5"), id="a chained error: the last; output after it"),
    pytest.param('  File "/w/typo.py", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n',
                 ("SyntaxError: invalid syntax", "typo.py, line 1"), id="a syntax error: no header"),
    pytest.param('Traceback (most recent call last):\n  File "/home/a/nb/.jupyter_sched/cells/3f2a.py", line 2, in '
                 '<module>\n    1/0\nZeroDivisionError: division by zero\n',
                 ("ZeroDivisionError: division by zero", "the cell, line 2"), id="a %%schedule cell"),
    pytest.param("loading\nValueError: bad input\n", None, id="no traceback: none"),
    pytest.param('Traceback (most recent call last):\n  File "/w/a.py", line 3, in <module>\n    get()\n'
                 "TimeoutError: timed out\nretrying\nretry 2\nretry 3\nretry 4\ngave up after 4 retries\n", None,
                 id="a traceback logged and gone on from: not why it ended"),
    pytest.param('print  File "x", line 1\nnot an error line\n', None, id="a frame-like line and no error: none"),
])
def test_newuser33_n2_the_error_and_where_of_a_pythons_traceback(log: str, want: tuple[str, str] | None) -> None:
    assert python_error(log.splitlines()) == want


def test_newuser33_n2_a_python_failure_leads_every_surface_with_its_error(tmp_path: Path) -> None:
    deep = "".join(f'  File "/w/crash.py", line {n}, in f\n    f()\n' for n in range(10, 400))  # past 5 lines, 16 KiB
    said = _said(tmp_path, 'starting\nTraceback (most recent call last):\n' + deep +
                 '  File "/w/crash.py", line 2, in f\n    x = {}["missing"]\nKeyError: \'missing\'\n')
    assert said.startswith("exited with code 1: KeyError: 'missing' (crash.py, line 2); last lines: "), said
    assert said.endswith("| KeyError: 'missing'"), said  # the last lines as before
    # the panel's toast, cut at 140 characters, holds it
    assert "KeyError: 'missing' (crash.py, line 2)" in f"pcrash failed: {said}"[:TOAST_CHARS]
    # the CLI's `wait`/`status` line and the magics' (one renderer): the error first; after `logs -f`, it alone
    job = {"id": "j-1", "name": "pcrash", "state": "failed", "exit_code": 1, "message": said}
    assert job_line(job, None).startswith("job j-1 (pcrash): failed, exit code 1 — KeyError: 'missing' (crash.py, "
                                          "line 2); last lines: "), job_line(job, None)
    assert job_line(job, None, log_shown=True) == ("job j-1 (pcrash): failed, exit code 1 — KeyError: 'missing' "
                                                   "(crash.py, line 2)")
    # a Kubernetes container's end, from its termination message: the same shape
    assert describe_termination(1, 'Traceback (most recent call last):\n  File "t.py", line 4, in <module>\n'
                                   "    boom()\nRuntimeError: boom\n").startswith(
        "exited with code 1: RuntimeError: boom (t.py, line 4); last lines: Traceback")
    # output that is no traceback: its error line first too (newuser34 N2)
    assert _said(tmp_path, "ValueError: bad input\n") == "exited with code 1: ValueError: bad input"


def test_newuser33_n1_n2_a_real_job_on_a_typo_is_asked_about_its_spelling_first(tmp_path: Path) -> None:
    """One real job through the local executor, run by a real venv's Python that has numpy (a stand-in package)."""
    python = _env(tmp_path, ("numpy",))
    (tmp_path / "typo.py").write_text("import nump\n")
    ex = LocalExecutor(tmp_path / "jobs")
    job = make_job("j-1", command=(python, "typo.py"), working_dir=str(tmp_path))
    ex.start(job, Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 1
    assert ended.message.startswith(
        f"exited with code 1: ModuleNotFoundError: No module named 'nump' (typo.py, line 1) — did you mean numpy? its "
        f"Python, {python}, has numpy (and no nump) — check the spelling; last lines: Traceback"), ended.message
    assert "pip" not in ended.message


@pytest.mark.parametrize("outcome, style, fill", [
    ("success", "success", 1.0), ("danger", "danger", 1.0), ("warning", "warning", 0.4)])
def test_newuser33_n3_the_wait_bar_ends_in_the_colour_of_how_it_ended(outcome: str, style: str, fill: float) -> None:
    """newuser33 n3: ``%schedule wait`` ended its bar full and green beside "failed" (and a ``--for`` that ran out).
    Green and full only for what ended as asked; red and full for a failure; orange, as far as it got, for a
    ``--for`` that ran out with the work still going. Real ipywidgets in a real IPython shell."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from jupyter_sched.magics.display import Progress, wait_outcome, widgets_enabled
    from jupyter_sched.wording import WaitProgress

    if not widgets_enabled():
        pytest.skip("the wait's progress bar is an ipywidget and ipywidgets is not installed here: pip install '.[widgets]' (the test extra brings it)")
    InteractiveShell.instance()
    with capture_output() as shown:
        bar = Progress("job j-1 (uicell)")
        bar.show(WaitProgress(0.4, "running on vm · 3s", "running"), 3.0)
        bar.finish(4.2, outcome)  # type: ignore[arg-type]
    assert (bar._bar.bar_style, bar._bar.value) == (style, fill)
    assert shown.outputs[-1].data["text/plain"] == "job j-1 (uicell): waited 4s"
    # the magics' callers: a job that succeeded (or a lease given back) is green, any other end red
    assert (wait_outcome(True), wait_outcome(False)) == ("success", "danger")


class _Ending:
    """GET jobs/{id} answers as the server's (wire form): ``running``, then ``states`` one by one (a client stand-in:
    the magics' loop is what is checked, and a real server cannot be made to end a job between two polls)."""

    def __init__(self, *states: str) -> None:
        self.states = ["running", *states]

    def job_named(self, ref: str, command: str = "") -> object:
        from jupyter_sched.client._wire import NamedJob

        return NamedJob(ref)

    def job(self, job_id: str) -> dict[str, object]:
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        ended = state not in ("running",)
        return {"id": job_id, "name": "uicell", "state": state, "kind": "training", "resources": {"gpus": 1},
                "exit_code": (1 if state == "failed" else 0) if ended else None,
                "started_at": "2026-12-06T09:00:00Z", "finished_at": "2026-12-06T09:00:05Z" if ended else None}


@pytest.mark.parametrize("states, line, style", [
    (("failed",), "wait j-9 --no-raise-error", "danger"),
    (("succeeded",), "wait j-9", "success"),
    (("running",), "wait j-9 --for 0.2s", "warning"),
], ids=["a failed job: red", "a job that succeeded: green", "--for ran out: orange"])
def test_newuser33_n3_schedule_wait_colours_its_bar_by_the_jobs_end(monkeypatch: pytest.MonkeyPatch, states: tuple[str, ...],
                                                                    line: str, style: str) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from jupyter_sched.magics import core
    from jupyter_sched.magics.display import Progress, widgets_enabled

    if not widgets_enabled():
        pytest.skip("the wait's progress bar is an ipywidget and ipywidgets is not installed here: pip install '.[widgets]' (the test extra brings it)")
    bars: list[Progress] = []

    class Recorded(Progress):
        def __init__(self, title: str) -> None:
            super().__init__(title)
            bars.append(self)

    monkeypatch.setattr(core, "Progress", Recorded)
    InteractiveShell.instance()
    with capture_output():
        core.SchedMagics(None, client_factory=lambda: _Ending(*states)).schedule(line)  # type: ignore[arg-type,return-value]
    assert [bar._bar.bar_style for bar in bars] == [style]


def test_red33_r5_a_swapped_site_folder_lists_nothing_of_another_account(monkeypatch: pytest.MonkeyPatch) -> None:
    """red33 R5: the module look checked a folder by its path, then listed it by the path again, as root: a link the
    job's owner swapped between the two showed a name in another account's private folder (2 of 40 jobs). The folder
    is now opened once, and access decided on what was opened. The swap is made certain here: the path check (the old
    one resolved the link with os.path.realpath) is shown the allowed folder while the link names the private one.
    Real folders under /tmp (uniquely named: the job's account, 65534, must be able to reach the allowed one)."""
    import shutil
    import tempfile

    from jupyter_sched.executors import module_names

    base = Path(tempfile.mkdtemp(prefix="s33-red33-r5-", dir="/tmp"))
    try:
        base.chmod(0o755)
        (base / "ok" / "secret_plan_y").mkdir(parents=True)
        private = base / "private"
        private.mkdir(mode=0o700)
        (private / "site" / "secret_plan_x").mkdir(parents=True)
        link = base / "link"
        link.symlink_to(private / "site")
        real = os.path.realpath
        monkeypatch.setattr(module_names.os.path, "realpath",
                            lambda p, **kw: str(base / "ok") if str(p) == str(link) else real(p, **kw))
        assert module_names.AccountReader(65534).names(str(link)) == []
        assert module_names.AccountReader(None).names(str(link)) == ["secret_plan_x"]  # the service's own account: its own
        link.unlink()
        link.symlink_to(base / "ok")
        assert module_names.AccountReader(65534).names(str(link)) == ["secret_plan_y"]  # a folder it may list: listed
    finally:
        shutil.rmtree(base)


def test_newuser33_n1_a_script_job_is_told_which_python_ran_it(tmp_path: Path) -> None:
    """newuser33's re-check: a ``--script`` job (the panel's Script field: the panel's only way) was told "the Python
    it ran has no nump: … python -m pip install nump with that Python": its record names no program, and the hint
    could not look. It ran the service's Python (the one given to the executor): that one is named and looked in.
    One real job through the local executor, the executor's Python a real venv's (standard library only runs it)."""
    python = _env(tmp_path, ("numpy",))
    (tmp_path / "typo.py").write_text("import nump\n")
    ex = LocalExecutor(tmp_path / "jobs", python=python)
    job = make_job("j-2", command=(), script=str(tmp_path / "typo.py"), working_dir=str(tmp_path))
    ex.start(job, Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 1, ended
    assert f"— did you mean numpy? its Python, {python}, has numpy (and no nump) — check the spelling; last lines: " \
        in ended.message, ended.message


def test_red34_r1_the_near_name_look_is_bounded_whatever_names_the_owner_plants(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """red34 R1: the job owner chooses both the missing name and the names in their Python's site folders, and the
    look runs on the engine's thread at the job's end: 60,000 planted names of ~120 alike characters held every
    start and end on the hub for four minutes. The work is bounded by what is compared, whatever is planted: a
    missing name past MAX_NAME is never compared, planted names past it never are, and at most MAX_COMPARED of the
    rest (counted: every difflib ratio taken), while a real typo is still found among a real folder's names."""
    from jupyter_sched.executors import module_names

    taken: list[str] = []
    ratio = difflib.SequenceMatcher.ratio

    def counted(self: difflib.SequenceMatcher[str]) -> float:
        taken.append(str(self.a))
        return ratio(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counted)
    python = _env(tmp_path)
    site = next(Path(folder) for folder in module_names._folders(python, module_names.AccountReader(None))
                if folder.endswith("site-packages"))
    for i in range(3_000):  # planted: alike and long, alike and short enough
        (site / ("a" * 111 + f"{i:09d}.py")).touch()
        (site / ("a" * 30 + f"{i:09d}.py")).touch()
    long_said = missing_module_hint(f"ModuleNotFoundError: No module named '{'a' * 111}zzzzzzzzz'", python)
    assert taken == [] and "check the spelling first" in str(long_said), long_said  # too long to be typed: no look
    said = missing_module_hint(f"ModuleNotFoundError: No module named '{'a' * 30}00000001z'", python)
    assert 0 < len(taken) <= module_names.MAX_COMPARED, len(taken)
    assert all(len(name) <= module_names.MAX_NAME for name in taken)
    assert said is not None and said.startswith("did you mean a"), said  # a near one found within the bound
    assert missing_module_hint(NUMP, python) is not None and "did you mean numpy?" in str(missing_module_hint(NUMP, python))


def test_red34_r1_residual_a_pythons_names_are_listed_again_only_when_its_site_folders_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """red34 R1's residual: each failed job of the same planted venv listed its 60,000 names again (~0.4 s of the
    engine's thread per job). The names are kept per Python and account while its site folders are as they were
    (counted: folder listings), and read again once an entry is added (a package installed)."""
    from jupyter_sched.executors import module_names

    python = _env(tmp_path)
    first = importable_names(python)
    listings: list[str] = []
    listing = module_names.AccountReader.listing

    def counted(self: module_names.AccountReader, folder: str) -> list[str] | None:
        listings.append(folder)
        return listing(self, folder)

    site = next(Path(folder) for folder in module_names._folders(python, module_names.AccountReader(None))
                if folder.endswith("site-packages"))
    monkeypatch.setattr(module_names.AccountReader, "listing", counted)
    assert importable_names(python) == first and str(site) not in listings, listings  # the small lib/ looks only
    (site / "pandas").mkdir()
    again = importable_names(python)
    assert str(site) in listings and again is not None and "pandas" in again
    assert first is not None and "pandas" not in first
