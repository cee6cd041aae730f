"""The names a ``%%schedule`` cell uses but never binds, and which of them only the kernel has (newuser34 N6).

A cell runs as its own Python file in a job, so a variable set in an earlier cell of the kernel is not
there: the newcomer's first ``%%schedule`` nearly always used one and failed with ``NameError`` after the
GPU wait. Pure: source and the kernel's names in, names out; read with :mod:`symtable` (no regexes)."""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Collection, Iterable

_JOB_NAMES = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__loader__",
                                         "__package__", "__builtins__", "__cached__", "__annotations__"}
"""Bound in every Python file a job runs, whatever the kernel has."""


def _tables(table: symtable.SymbolTable) -> Iterable[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


def free_names(source: str) -> list[str]:
    """The module-level names ``source`` reads and never binds (by assignment, import, def, class, for, with,
    ``global`` in a function), builtins excluded, the module scope's first, then nested scopes'; [] when it does not compile (the job's
    own SyntaxError then says so) or star-imports."""
    try:
        top = symtable.symtable(source, "<cell>", "exec")
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    if any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) for node in ast.walk(tree)):
        return []  # `from m import *` may bind any name: no guess
    bound: set[str] = set()
    read: dict[str, None] = {}
    for table in _tables(top):
        module = table is top
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if module and (symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()):
                bound.add(name)
            elif not module and symbol.is_declared_global() and symbol.is_assigned():
                bound.add(name)  # `global x; x = 1` in a function binds the module's x
            if symbol.is_referenced() and (module or symbol.is_global()):
                read.setdefault(name, None)
    return [name for name in read if name not in bound and name not in _JOB_NAMES]


def kernel_only_names(source: str, kernel: Collection[str], hidden: Collection[str] = ()) -> list[str]:
    """The :func:`free_names` of ``source`` that ``kernel`` (the kernel's ``user_ns`` keys) defines, less
    ``hidden`` (IPython's own: ``In``, ``Out``, ``get_ipython`` …) and ``_``-led names (its output history)."""
    return [name for name in free_names(source)
            if name in kernel and name not in hidden and not name.startswith("_")]


def kernel_names_warning(names: list[str]) -> str:
    """One line for :func:`kernel_only_names` (never the values: a variable may hold a secret), or ""."""
    if not names:
        return ""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    one = names[0]
    return (f"warning: this cell uses {shown}, defined in your kernel but not in the cell: the job will not see "
            f"{'it' if len(names) == 1 else 'them'} — set {'it' if len(names) == 1 else 'them'} in the cell "
            f"(import a module there), pass a value with --env {one.upper()}=… (read as os.environ[\"{one.upper()}\"]), "
            f"or save it to a file the cell reads. Submitted anyway: a module the job imports may define "
            f"{'it' if len(names) == 1 else 'them'}.")


MAX_IMPORTS = 20
"""Most module names of one cell looked up at submit (:func:`cell_imports`): each look is one pass over the kernel's
``sys.path`` finders, so a cell of a thousand imports costs no more than twenty."""


def cell_imports(source: str) -> list[str]:
    """The top-level names of the absolute imports at the module level of ``source`` (``import train.x`` →
    ``train``; ``from a.b import c`` → ``a``), in order, the first :data:`MAX_IMPORTS`; [] when it does not compile.
    Imports inside ``try``, ``if`` or a function are left out: they may be optional on purpose."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: dict[str, None] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.setdefault(alias.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.setdefault(node.module.split(".")[0], None)
    return list(names)[:MAX_IMPORTS]


def missing_imports_warning(names: list[str], folder: str, python: str) -> str:
    """One line for the :func:`cell_imports` neither ``folder`` (the job's working folder, first on its ``sys.path``)
    nor ``python`` (the kernel's, which runs the job) has (newuser36 n3: ``import train`` with no train.py beside the
    notebook was found out only after the GPU wait, and told to ``pip install train``), or ""."""
    if not names:
        return ""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    one = names[0]
    them = "it" if len(names) == 1 else "them"
    return (f"warning: this cell imports {shown}, found neither in {folder} (the job's folder, first on its sys.path) "
            f"nor in this kernel's Python, {python}: the job will fail on {them} — put {one}.py (or a {one}/ folder) "
            f"there if it is a module of yours, or install the package into this Python. Submitted anyway: this "
            f"kernel may differ from the job.")
