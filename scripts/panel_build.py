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


def build(target_name: str, version: str, **kwargs: Any) -> None:
    """hatch-jupyter-builder's build function: ``npm_builder`` when :func:`stale`, else nothing."""
    from hatch_jupyter_builder import npm_builder  # present in the build environment only

    if stale():
        npm_builder(target_name, version, force=True, **kwargs)
