"""The layering holds: the pure core imports no I/O library and no edge package (STYLE §1)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jupyter_sched"
PURE = ["model", "scheduling", "queues", "quota", "placement", "preemption", "backfill", "reclaim", "admission"]
FORBIDDEN = {"tornado", "sqlalchemy", "subprocess", "pynvml", "kubernetes", "jupyter_server", "psutil",
             "httpx", "requests", "socket", "asyncio", "time"}
EDGE = {"engine", "store", "executors", "extension", "inventory", "telemetry", "client", "magics", "cli"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.add(node.module)
            elif node.level >= 2 and node.module:  # from ..engine import x
                found.add("jupyter_sched." + node.module)
    return found


@pytest.mark.parametrize("package", PURE)
def test_pure_package_imports_no_io_and_no_edge(package: str) -> None:
    offenders = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            inner = name.split(".")[1] if name.startswith("jupyter_sched.") and name.count(".") >= 1 else ""
            if top in FORBIDDEN or inner in EDGE:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not offenders, "pure core must not do I/O:\n" + "\n".join(offenders)


def test_import_linter_contract_holds() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed in this environment (pip install import-linter)")
    result = subprocess.run([str(lint)], cwd=PACKAGE.parent, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("package", ["engine", "extension"])
def test_engine_and_extension_modules_stay_under_500_lines(package: str) -> None:
    # issue 15 / STYLE §13: size by concept; a module that grows past 500 lines holds two concepts
    long = [f"{p.relative_to(PACKAGE)}: {n} lines" for p in sorted((PACKAGE / package).rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > 500]
    assert not long, "split these by concept:\n" + "\n".join(long)
