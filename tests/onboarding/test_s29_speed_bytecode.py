"""Session 29, CI speed: the test run's processes load jupyter_sched as bytecode, not from source.

This machine's environment (and so CI's) sets ``PYTHONDONTWRITEBYTECODE``; pip compiles what it installs but
not an editable install's sources. So every jupyter server, hub service and CLI run the tests started
compiled the ~350 modules of jupyter_sched it imports anew (``import jupyter_sched.extension.app``: 1.9-2.3 s
CPU from source, 1.5-1.6 s from bytecode), and so did every process of the other OS accounts, which cannot
write bytecode into the root-owned run-as copy (tests/runas_env.py) at all. ``scripts/test-all`` compiles the
clone once before the tests; the run-as copy is compiled where it lies, by the interpreter the accounts run.

Real parts: a throw-away package, the copy the hub tests make, ``python -v`` saying where each module came from.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.runas_env import _copy_checkout

ROOT = Path(__file__).resolve().parents[2]


def test_s29_speed_the_runas_copy_is_bytecode_named_where_it_runs(tmp_path: Path) -> None:
    repo, site = tmp_path / "repo", tmp_path / "site"
    (repo / "jupyter_sched" / "inner").mkdir(parents=True)
    site.mkdir()
    (repo / "jupyter_sched" / "__init__.py").write_text('__version__ = "0.1.0"\n')
    (repo / "jupyter_sched" / "inner" / "__init__.py").write_text("")
    (repo / "jupyter_sched" / "inner" / "mod.py").write_text("def f() -> int:\n    return 1\n")
    _copy_checkout(site, repo)
    target = site / "jupyter_sched"
    for source in (target / "__init__.py", target / "inner" / "mod.py", target / "_build_commit.py"):
        if not source.exists():  # no git here: no commit file written
            continue
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached.is_file(), f"{source} has no bytecode beside it"
        code = marshal.loads(cached.read_bytes()[16:])
        assert code.co_filename == str(source)  # compiled after the move: tracebacks name the files run
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(site)}
    run = subprocess.run([sys.executable, "-v", "-c", "import jupyter_sched.inner.mod"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    loaded = [line for line in run.stderr.splitlines() if line.startswith("# code object from") and str(site) in line]
    assert len(loaded) == 3 and all(line.endswith(".pyc'") for line in loaded), loaded  # none compiled from source


def test_s29_speed_test_all_compiles_the_clone_before_the_python_tests() -> None:
    script = (ROOT / "scripts" / "test-all").read_text(encoding="utf-8")
    body = re.search(r"^python_environment\(\) \{\n(.*?)^\}", script, flags=re.M | re.S)
    assert body is not None
    assert re.search(r'^\s*"\$PY" -m compileall .*\bjupyter_sched\b', body.group(1), flags=re.M), body.group(1)
    stages = re.findall(r'^\s*stage "([^"]+)"', script, flags=re.M)
    assert stages.index("python environment") < stages.index("venv for other accounts") < stages.index("python tests")
    durations = re.search(r"--durations=(\d+)", script)
    assert durations is not None and int(durations[1]) >= 60  # the next CI run names where its minutes go
