"""Session 37 run C: an engine thread one test started kept cycling into later tests of the same xdist worker (another
test saw its cyclic-collector pause). The root conftest now fails the test that leaves an engine ticking after its
teardown (:mod:`tests.engine_threads`), and lets a module-scoped fixture keep one through its tests as long as its
finalizer stops it.

Checked on an inner pytest run of a small test file loaded with the suite's root conftest (``-p tests.conftest``): a
real :class:`~jupyter_sched.engine.runner.EngineRunner` ticking a counting engine on an event loop of a thread of its
own (as a server's would), one test leaving it running, one stopping it, a module fixture holding one across two tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

INNER = '''
import asyncio
import threading
import types

import pytest

from jupyter_sched.engine.runner import EngineRunner


class CountingEngine:
    cycle_gap_s = 0.0

    def __init__(self):
        self.ticks = 0
        self.writer = types.SimpleNamespace(settle_s=None)

    def tick(self):
        self.ticks += 1

    def wait_hint_s(self, default_s):
        return default_s

    def kick(self, *args):
        pass

    def resign(self):
        pass


class Ticking:
    """A runner started on a loop that runs on in a thread of its own (as a server's loop does)."""

    def __init__(self):
        self.engine = CountingEngine()
        self.runner = EngineRunner(self.engine, poll_interval_s=0.01, courteous=False)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self.runner.start(), self.loop).result(30)
        while self.engine.ticks < 2:
            threading.Event().wait(0.01)

    def stop(self):
        asyncio.run_coroutine_threadsafe(self.runner.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)


LEAKED = []


def test_a_leaves_its_engine_ticking():
    LEAKED.append(Ticking())  # never stopped


def test_b_runs_after_it():
    pass


def test_c_stops_its_engine():
    Ticking().stop()


@pytest.fixture(scope="module")
def shared():
    ticking = Ticking()
    yield ticking
    ticking.stop()


def test_d_a_module_fixture_keeps_one_across_tests(shared):
    assert shared.runner.running


def test_e_and_still_has_it(shared):
    assert shared.runner.running


def test_f_leaves_a_firing_pass_that_ends_soon():
    threading.Thread(target=threading.Event().wait, args=(0.5,), name="definition-firing", daemon=True).start()


def test_g_never_sees_it():
    assert not [t for t in threading.enumerate() if t.name == "definition-firing"]
'''


UNSTOPPED = INNER.replace("    yield ticking\n    ticking.stop()\n", "    yield ticking\n")
"""The same tests, with the module fixture's finalizer leaving its engine ticking."""


@pytest.fixture(scope="module")
def inner_out(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One inner pytest run of both files, ``test_inner.py`` (:data:`INNER`) then ``test_inner_unstopped.py``
    (:data:`UNSTOPPED`) — s41 speed: one start of the suite's root conftest, not one per test."""
    where = tmp_path_factory.mktemp("inner")
    (where / "test_inner.py").write_text(INNER)
    (where / "test_inner_unstopped.py").write_text(UNSTOPPED)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           "-p", "no:xdist", "-p", "no:randomly", "--rootdir", str(where), "test_inner.py",
                           "test_inner_unstopped.py", "-rA"],
                          cwd=where, env=env, capture_output=True, text=True, timeout=240, check=False)
    return done.stdout + done.stderr


def _of(out: str, module: str) -> str:
    """The ``-rA`` summary lines of ``module``'s tests (``PASSED test_inner.py::…``, ``ERROR …``)."""
    return "\n".join(line for line in out.splitlines() if line.split(" ", 1)[-1].startswith(f"{module}::"))


def test_s38_edges_a_test_that_leaves_an_engine_ticking_fails_and_its_neighbours_do_not(inner_out: str) -> None:
    """Failed before (no check: all passed, A's engine ticking through B to G, and F's firing pass into G). Now A
    errors at its teardown naming the engine thread and what to do; B, C, the module fixture's D and E pass, and a
    firing pass F leaves is joined at F's teardown, so G never sees it."""
    out = inner_out
    assert "ERROR at teardown of test_a_leaves_its_engine_ticking" in out, out
    assert "this test left engine thread jupyter-sched-engine_0 running after its teardown" in out, out
    assert "stop it in the teardown" in out, out
    for passed in ("test_b_runs_after_it", "test_c_stops_its_engine", "test_d_a_module_fixture_keeps_one_across_tests",
                   "test_e_and_still_has_it", "test_f_leaves_a_firing_pass_that_ends_soon", "test_g_never_sees_it"):
        assert f"PASSED test_inner.py::{passed}" in out, out  # G: F's firing pass was joined at F's teardown
    mine = _of(out, "test_inner.py").splitlines()  # the file's own count: "1 error" and "7 passed" of a run of it alone
    assert sum(line.startswith("ERROR ") for line in mine) == 1, out
    assert sum(line.startswith("PASSED ") for line in mine) == 7, out


def test_s38_edges_a_module_fixture_finalized_with_its_engine_ticking_fails_the_test_it_ended_after(
        inner_out: str) -> None:
    """A module-scoped fixture may keep an engine through its tests, but not past its own finalizer."""
    out = inner_out
    assert "ERROR test_inner_unstopped.py::test_g_never_sees_it" in out, out  # the module's last test: its fixture ends there
    assert "fixture 'shared' left engine thread" in out and "running after its finalizer" in out, out
    assert "PASSED test_inner_unstopped.py::test_d_a_module_fixture_keeps_one_across_tests" in out, out
    assert "ERROR test_inner.py::test_g_never_sees_it" not in out, out  # the stopping fixture of test_inner.py: no error
