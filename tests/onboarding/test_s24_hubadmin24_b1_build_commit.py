"""Hubadmin24 B1: a README install (a non-editable wheel) said version ``0.1.0`` and no commit, before and
after an upgrade — the checkout's commit (hubadmin23 A7) needs a checkout. The build hook now records
the commit (``jupyter_sched/_build_commit.py``, git-ignored, carried by wheel and sdist) and
:func:`jupyter_sched.buildinfo.version_string` says it where there is no checkout. Real parts: git on
this checkout, and the package copied where no checkout is, imported by a fresh interpreter.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.panel_build import record_commit

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs git and a git checkout of the project")


def test_s24_hubadmin24_b1_the_build_records_the_checkouts_commit(tmp_path: Path) -> None:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    target = tmp_path / "_build_commit.py"
    commit = record_commit(ROOT, target)
    assert commit is not None and head.startswith(commit.removesuffix("-dirty")), (commit, head)
    assert f'COMMIT = "{commit}"' in target.read_text()
    assert record_commit(tmp_path, tmp_path / "none.py") is None and not (tmp_path / "none.py").exists()


def test_s24_hubadmin24_b1_an_install_without_a_checkout_says_the_recorded_commit(tmp_path: Path) -> None:
    """Failed before the fix: ``0.1.0`` (the recorded commit was never read)."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "jupyter_sched", site / "jupyter_sched",
                    ignore=shutil.ignore_patterns("__pycache__", "labextension", "_build_commit.py"))
    (site / "jupyter_sched" / "_build_commit.py").write_text('COMMIT = "abc1234"\n')
    said = subprocess.run([sys.executable, "-c", "from jupyter_sched.buildinfo import version_string; "
                           "print(version_string())"], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip().endswith("+gabc1234"), said.stdout
