"""Fixtures of the simulator tests: ``benchmarks/jct_loaded.py`` imported as a module (issue 16's loaded replay)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def jct_loaded() -> Iterator[ModuleType]:
    """``benchmarks/jct_loaded.py`` (the folder on ``sys.path`` while the module's tests run)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import jct_loaded as module
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))
