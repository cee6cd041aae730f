"""The panel's build hook rebuilds a stale panel (new user 6, F24): after ``git pull``, the
README's install command kept the old panel beside the new server, because hatch-jupyter-builder's
``skip-if-exists`` skipped the build whenever any build existed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from scripts.panel_build import BUILD, SOURCES, stale

ROOT = Path(__file__).resolve().parents[2]


def _tree(root: Path, files: dict[str, float]) -> None:
    for name, mtime in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
        os.utime(path, (mtime, mtime))


def test_newuser6_finding_24_a_source_newer_than_the_build_rebuilds_the_panel(tmp_path: Path) -> None:
    build, sources = tmp_path / "built", (tmp_path / "src", tmp_path / "style", tmp_path / "package.json")
    assert stale(build, sources)  # nothing built yet
    _tree(tmp_path, {"built/static/style.js": 2000, "built/package.json": 2000, "src/index.ts": 1000,
                     "style/base.css": 1000, "package.json": 1000})
    assert not stale(build, sources)  # built after its sources: the install does not rebuild
    for changed in ("style/base.css", "package.json", "src/index.ts"):  # a pull changes any one of them
        os.utime(tmp_path / changed, (3000, 3000))
        assert stale(build, sources), changed
        os.utime(tmp_path / changed, (1000, 1000))
    assert not stale(build, (tmp_path / "absent",))  # a wheel from an sdist: sources absent, build kept


def test_the_install_uses_the_staleness_hook_and_watches_every_source_of_the_panel() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    hook = text.split("[tool.hatch.build.hooks.jupyter-builder]", 1)[1].split("\n[", 1)[0]
    assert 'build-function = "scripts.panel_build.build"' in hook
    assert not any(line.startswith("skip-if-exists") for line in hook.splitlines())  # it skips before the hook looks
    package = json.loads((ROOT / "labextension" / "package.json").read_text())
    assert (ROOT / "labextension" / package["jupyterlab"]["outputDir"]).resolve() == (ROOT / BUILD).resolve()
    for source in SOURCES:
        assert (ROOT / source).exists(), source
    # everything the build reads is watched: a new source file or folder must join SOURCES
    not_read = {"node_modules", "lib", "tsconfig.tsbuildinfo", ".yarn", ".gitignore", "README.md", "test",
                "vitest.config.mts"}
    present = {p.name for p in (ROOT / "labextension").iterdir()} - not_read
    assert present <= {s.name for s in SOURCES}, present - {s.name for s in SOURCES}
