"""Issue 16, session 28: the full cycle made faster decides and says exactly what it did before.

The golden file (``cycle_golden.json``) holds, per seeded world of :mod:`cycle_golden` and per cycle,
digests of everything ``run_cycle`` returned — admissions (nodes, GPUs, scores, backfill, predicted
starts, limits), preemptions, pending reasons (words, details, ETAs), rejections, nominations, audit
records, planned preemptions and projected ends — written by the tree before the session's speed-ups
(main at e5b80158; first written at 39e19c12). A change meant to decide or say something differently rewrites it
(``PYTHONPATH=$PWD .venv/bin/python tests/core/cycle_golden.py --write``) and says so in its commit.
"""

from __future__ import annotations

import json

import pytest
from cycle_golden import GOLDEN, PROFILES, WORLDS, cycles, digest, world

_GOLDEN = json.loads(GOLDEN.read_text())


@pytest.mark.parametrize(("seed", "n_nodes", "n_jobs", "quota_kind", "profile"), WORLDS,
                         ids=[f"seed{w[0]}-{w[4]}" for w in WORLDS])
def test_s28_cycle_decides_and_says_what_the_golden_cycle_did(seed: int, n_nodes: int, n_jobs: int,
                                                              quota_kind: str, profile: str) -> None:
    name = f"seed{seed}-{n_nodes}n-{n_jobs}j-{quota_kind}-{profile}"
    found = [digest(r) for r in cycles(world(seed, n_nodes, n_jobs, quota_kind), PROFILES[profile], seed)]
    expected = _GOLDEN[name]
    for i, (got, want) in enumerate(zip(found, expected, strict=True)):
        differ = {part: (want[part], got[part]) for part in want if got[part] != want[part]}
        assert not differ, (f"{name}, cycle {i + 1}: these parts differ from the golden cycle's (golden, now): {differ}; "
                            "if the change means to decide or say this differently, rewrite the golden file: "
                            "PYTHONPATH=$PWD .venv/bin/python tests/core/cycle_golden.py --write")


def test_s28_golden_worlds_reach_every_kind_of_decision() -> None:
    """The worlds exercise what the digests guard: admissions, preemptions, pending reasons,
    rejections, nominations and projected ends, in both cycles."""
    sizes: dict[str, int] = {}
    for cycles_of in _GOLDEN.values():
        for part, value in ((p, v) for c in cycles_of for p, v in c.items()):
            sizes[part] = sizes.get(part, 0) + int(value.split("/")[1])
    assert all(sizes[p] > 0 for p in ("admits", "preemptions", "pending", "rejects", "nominations", "projected"))
