"""hubadmin26 B20: every service the hub tests started said ``jupyter_sched 0.1.0+gce5d0c5`` while the code run
was current: the run-as venv's copy of the package (tests/runas_env.py) carried the checkout's git-ignored
``_build_commit.py`` from a panel build hours before, and a copy without ``.git`` reads its version from it.

Real parts: git, a throw-away checkout with a stale ``_build_commit.py``, the copy the hub tests make."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from jupyter_sched.buildinfo import checkout_commit
from tests.runas_env import _copy_checkout

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
                                reason="needs git")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def _recorded(site: Path) -> str:
    text = (site / "jupyter_sched" / "_build_commit.py").read_text()
    scope: dict[str, object] = {}
    exec(compile(text, "_build_commit.py", "exec"), scope)  # a file this test's copy wrote
    return str(scope["COMMIT"])


def test_hubadmin26_b20_the_runas_copy_says_the_checkouts_commit_now(tmp_path: Path) -> None:
    repo, site = tmp_path / "repo", tmp_path / "site"
    (repo / "jupyter_sched").mkdir(parents=True)
    site.mkdir()
    (repo / "jupyter_sched" / "__init__.py").write_text('__version__ = "0.1.0"\n')
    (repo / "jupyter_sched" / "_build_commit.py").write_text('COMMIT = "ce5d0c5"\n')  # a panel build long ago
    (repo / ".gitignore").write_text("jupyter_sched/_build_commit.py\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    _copy_checkout(site, repo)
    first = checkout_commit(repo)
    assert first is not None and _recorded(site) == first != "ce5d0c5"
    (repo / "notes.txt").write_text("a commit that changes no package file\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "two")
    _copy_checkout(site, repo)
    assert _recorded(site) == checkout_commit(repo) != first
