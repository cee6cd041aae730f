"""Build hook of the JupyterLab panel: rebuild it whenever any of its sources is newer than the build.

``pip install '.[all]'`` (the README's install command) runs this through hatch-jupyter-builder.
Its own ``skip-if-exists`` skips the build once any build exists, so after ``git pull`` a
reinstall kept the old panel beside the new server (new user 6, F24); its ``source_dir`` /
``build_dir`` pair watches one folder only. Here the build is stale when any file of
:data:`SOURCES` is newer than the newest file of the build: the TypeScript, the styles, the
settings schema, the compiler's settings and the package's dependencies (``package.json``,
``yarn.lock``, ``.yarnrc.yml``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

BUILD = Path("jupyter_sched/labextension")
"""What ``jlpm build`` writes (``labextension/package.json``: ``jupyterlab.outputDir``)."""

SOURCES = tuple(Path("labextension", name) for name in
                ("src", "style", "schema", "package.json", "yarn.lock", ".yarnrc.yml", "tsconfig.json"))
"""What the build is made from."""


def _mtimes(path: Path) -> list[float]:
    if path.is_file():
        return [path.stat().st_mtime]
    return [(Path(folder) / name).stat().st_mtime for folder, _, names in os.walk(path) for name in names]


def stale(build: Path = BUILD, sources: tuple[Path, ...] = SOURCES) -> bool:
    """True when there is no build, or a source file is newer than the build's newest file.
    Sources that are absent (a wheel built from an sdist that carries only the build) count as
    not newer."""
    built = _mtimes(build) if build.exists() else []
    if not built:
        return True
    newest = max(built)
    return any(t > newest for source in sources if source.exists() for t in _mtimes(source))


COMMIT_FILE = Path("jupyter_sched/_build_commit.py")
"""Where the checkout's commit is recorded at build time (git-ignored; carried by the wheel and the sdist)."""


def record_commit(root: Path = Path("."), target: Path = COMMIT_FILE) -> str | None:
    """Write ``COMMIT = "<short commit>[-dirty]"`` to ``target`` from the git checkout at ``root``,
    so an installed wheel says which commit it was built from (hubadmin24 B1: a README install said
    ``0.1.0`` and nothing more). Returns the commit, or None (no git, not a checkout — a wheel
    built from an sdist keeps the file the sdist carries)."""
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return None
    try:
        done = subprocess.run([git, "-C", str(root), "describe", "--always", "--dirty", "--abbrev=7",
                               "--match", "no-tag-matches-this"], capture_output=True, text=True, timeout=10.0,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    if done.returncode != 0 or not commit or not all(c.isalnum() or c == "-" for c in commit):
        return None
    target.write_text(f'"""Written by scripts/panel_build.py at build time; not in git."""\n\nCOMMIT = "{commit}"\n')
    return commit


def build(target_name: str, version: str, **kwargs: Any) -> None:
    """hatch-jupyter-builder's build function: records the commit (:func:`record_commit`), then
    ``npm_builder`` when :func:`stale`, else nothing."""
    from hatch_jupyter_builder import npm_builder  # present in the build environment only

    record_commit()
    if stale():
        npm_builder(target_name, version, force=True, **kwargs)
