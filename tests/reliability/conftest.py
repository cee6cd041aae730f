"""Fixtures of the reliability tests: stray-process cleanup (PostgreSQL comes from tests/conftest.py).

The tests here start real ``jupyter server`` subprocesses (``harness.EmbeddedServer``); each
test kills, at its end, every process whose command line names its tmp dir, so a failing run
never leaves servers or jobs behind.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # ``tests.reliability`` importable however pytest started
    sys.path.insert(0, str(ROOT))

from tests.reliability.harness import kill_strays  # noqa: E402


@pytest.fixture(autouse=True)
def _no_strays(tmp_path: Path) -> Iterator[None]:
    yield
    kill_strays(tmp_path)
