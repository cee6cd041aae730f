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


# Every descriptor jupyter_sched opens goes through jupyter_sched.safefd.open_fd (O_NOCTTY | O_CLOEXEC | O_NONBLOCK, the
# kind checked before use): the service is root and, under systemd or JupyterHub, a session leader with no controlling
# terminal — a terminal it opened without O_NOCTTY would become its own, and whoever holds that terminal could stop it
# (red33 R1). Audited exceptions: a constant path (a literal, os.devnull: never a user's), and the wrapper, a standalone
# script (run as python -c / a sealed memfd, it imports nothing of jupyter_sched) whose every os.open names O_NOCTTY.
_OPENER = PACKAGE / "safefd.py"
_STANDALONE = {PACKAGE / "executors" / "wrapper.py"}
_TTY_LINKS = ("/fd/", "/cwd", "/root", "/exe", "/map_files/")  # /proc links that may lead anywhere, a terminal too


def _names(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} | \
        {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _constant_path(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or \
        (isinstance(node, ast.Attribute) and node.attr == "devnull" and isinstance(node.value, ast.Name))


def _proc_link(node: ast.expr) -> bool:
    """An f-string path under /proc/<pid>/ through a link (fd/N, cwd, root, exe)."""
    if not isinstance(node, ast.JoinedStr):
        return False
    text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return text.startswith("/proc/") and any(link in text for link in _TTY_LINKS)


def test_red33_r1_every_open_goes_through_open_fd() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == _OPENER:
            continue
        text = path.read_text()
        if "os.open(" not in text and "/proc/" not in text:
            continue
        tree = ast.parse(text, filename=str(path))
        no_tty = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and "O_NOCTTY" in _names(n.value)
                  for t in n.targets if isinstance(t, ast.Name)}  # flags = ... | os.O_NOCTTY | ...
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func, where = node.func, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            if isinstance(func, ast.Attribute) and func.attr == "open" and isinstance(func.value, ast.Name) \
                    and func.value.id == "os":
                if _constant_path(node.args[0]):
                    continue
                if path in _STANDALONE and len(node.args) > 1 and _names(node.args[1]) & {"O_NOCTTY", *no_tty}:
                    continue
                offenders.append(f"{where}: os.open (use jupyter_sched.safefd.open_fd)")
            elif isinstance(func, ast.Name) and func.id == "open" and _proc_link(node.args[0]):
                offenders.append(f"{where}: open() of a /proc link (use open_fd)")
    assert not offenders, "\n".join(offenders)
