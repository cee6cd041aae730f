"""Every property test of the suite draws the same examples on every run unless a hunt asks for more
(tests/conftest.py's hypothesis profile, session 41): CI failed on 45262b24 on a random draw that earlier runs
had not made, in a test the commit did not touch, and spent 190 s shrinking it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import settings

TESTS = Path(__file__).resolve().parent


@pytest.mark.skipif("JS_PROPERTY_EXAMPLES" in os.environ, reason="a hunt (JS_PROPERTY_EXAMPLES) draws at random on purpose")
def test_s41_every_property_test_draws_the_same_examples_on_every_run() -> None:
    # the profile every @settings inherits from: derandomized
    default = settings.default
    assert default is not None and default.derandomize is True
    assert settings().derandomize is True
    # and no property test turns it off for itself (only a hunt may)
    files = [p for p in sorted(TESTS.rglob("*.py"))
             if p.name != Path(__file__).name and "@given" in p.read_text(encoding="utf-8")]
    assert len(files) >= 8, files  # the memo, rules, scopes, ETA horizon, live-tail, bad input, fuzz ... tests
    own = []
    for path in files:
        for m in re.finditer(r"derandomize\s*=\s*([^,)\n]+)", path.read_text(encoding="utf-8")):
            if m.group(1).strip() != '"JS_PROPERTY_EXAMPLES" not in os.environ':
                own.append(f"{path.relative_to(TESTS)}: derandomize={m.group(1)}")
    assert own == []
