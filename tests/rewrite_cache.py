"""Write pytest's rewritten-assert bytecode of every test module once, before a parallel run collects them.

pytest rewrites the ``assert`` statements of each test module and conftest it imports and caches the result in
``__pycache__/<name>.cpython-3X-pytest-<version>.pyc`` — but writes no cache where ``sys.dont_write_bytecode`` is set
(``PYTHONDONTWRITEBYTECODE``: this machine's environment sets it, and CI's checkout is fresh). So every pytest-xdist
worker rewrote all ~1,000 test modules anew while it collected: session 41's CI run began its first test 93 s into
the Python stage, three workers each collecting on two cores. Measured here (s42-speed, load 9-12): a whole
``--collect-only tests`` 37.8 s CPU without the cache, 12.6 s with it; writing the cache 13.6 s CPU in one process.

pytest reads a cache it finds whatever that flag says, and checks it against the source's hash (a stale or foreign
one is rewritten again, never used), so this writes it with pytest's own rewrite (``_rewrite_test`` with no config:
the config only switches ``enable_assertion_pass_hook``, which this project leaves off) and pytest's own pyc format,
the files split over the machine's cores. Private pytest API: where a pytest changes it, this step writes nothing
and says so — the run then rewrites as before. A file that does not parse is the run's to report, not this step's.

Usage (scripts/test-all, before the Python tests)::

    python -m tests.rewrite_cache [folder ...]     # default: tests/ of this checkout
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

__all__ = ["main", "rewrite_files", "collected_modules"]

ROOT = Path(__file__).resolve().parents[1]


def collected_modules(folders: Sequence[Path]) -> list[Path]:
    """What pytest rewrites when it collects ``folders``: its default test modules (``test_*.py``, ``*_test.py``)
    and the conftest files, sorted."""
    found: set[Path] = set()
    for folder in folders:
        for pattern in ("test_*.py", "*_test.py", "conftest.py"):
            found.update(p.resolve() for p in folder.rglob(pattern)
                         if "__pycache__" not in p.parts and "node_modules" not in p.parts)
    return sorted(found)


def rewrite_files(files: Sequence[Path]) -> int:
    """Write the rewritten-assert pyc of each of ``files`` where pytest looks for it; return how many were written.

    Written as pytest writes it: to a file named for this process, then renamed over the cache (atomic), so a
    pytest reading it meanwhile sees the old whole file or the new one."""
    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp, get_cache_dir

    written = 0
    for fn in files:
        try:
            source_hash, code = _rewrite_test(fn, None)  # type: ignore[arg-type]  # None: pytest's ini defaults
        except (OSError, SyntaxError, ValueError):
            continue  # the run reports it
        cache_dir = get_cache_dir(fn)
        pyc = cache_dir / (fn.name[:-3] + PYC_TAIL)
        partial = Path(f"{pyc}.{os.getpid()}")
        try:
            cache_dir.mkdir(exist_ok=True)
            with open(partial, "wb") as out:
                _write_pyc_fp(out, source_hash, code)
            os.replace(partial, pyc)
        except OSError:
            partial.unlink(missing_ok=True)
            continue
        written += 1
    return written


def main(argv: Sequence[str] | None = None) -> int:
    folders = [Path(a) for a in (sys.argv[1:] if argv is None else argv)] or [ROOT / "tests"]
    files = collected_modules(folders)
    parts = max(1, min(os.cpu_count() or 1, len(files)))
    try:
        if parts == 1:
            written = rewrite_files(files)
        else:
            with ProcessPoolExecutor(parts) as pool:
                written = sum(pool.map(rewrite_files, [files[i::parts] for i in range(parts)]))
    except (ImportError, TypeError, AttributeError) as changed:  # another pytest's private API
        print(f"tests/rewrite_cache.py: no cache written ({changed!r}); pytest rewrites while it collects",
              file=sys.stderr)
        return 0
    print(f"tests/rewrite_cache.py: rewritten asserts of {written} of {len(files)} test modules cached")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
