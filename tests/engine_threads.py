"""No test leaves an engine ticking into the next (session 37's run C: an engine thread one test started kept cycling
into later tests of the same xdist worker, and another test saw its cyclic-collector pause).

An :class:`~jupyter_sched.engine.runner.EngineRunner` ticks its engine on a thread named
:data:`~jupyter_sched.engine.runner.ENGINE_THREAD_NAME` (``jupyter-sched-engine_0``) from its ``start`` until its
``stop``; a leading engine's tick starts a job definitions' firing pass on a thread of its own (``definition-firing``,
:meth:`~jupyter_sched.services.definitions.DefinitionsService.on_leader_tick`), whose runs' admission runs a cycle too
— a service a test ticked in-process and closed leaves one going on into the next test. Both are "engine threads"
here. The root conftest asks this module, around each test:

* :func:`note_before` when its set-up begins: the engine threads running then (an earlier test's are not this one's);
* :func:`fixture_set_up` around each fixture's set-up: the threads a module/session-scoped fixture starts are that
  fixture's while it lives (they may run through many tests), and must be gone once it is finalized
  (:func:`fixture_finalized`);
* :func:`left_by` after its teardown: the engine threads still running that neither ran before it nor belong to a
  live wider fixture are joined (at most :data:`LEFT_WAIT_S` together: a firing pass, a stop in progress end in
  that), and the test fails naming those still running.

Cheap: one ``threading.enumerate()`` per test and per fixture set-up; a wait only where a thread is left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from jupyter_sched.engine.runner import ENGINE_THREAD_NAME

__all__ = ["ENGINE_WORK", "LEFT_WAIT_S", "engine_threads", "fixture_finalized", "fixture_set_up", "left_by", "note_before"]

LEFT_WAIT_S = 5.0
"""How long the threads left after a teardown are waited for, together, before the test is failed (a runner's stop
handed to another loop ends its thread soon after)."""

_wider: dict[int, tuple[str, frozenset[threading.Thread]]] = {}
"""id of a module/session-scoped fixture's definition → (its name, the engine threads its set-up started)."""
_fixture_leaks: list[str] = []
"""Wider fixtures finalized with their engine threads still running: told at the teardown in which it happened."""


ENGINE_WORK = (ENGINE_THREAD_NAME, "definition-firing")
"""Prefixes of the names of the threads that run engine work: a runner's ticks, a firing pass (its admissions)."""


def engine_threads() -> frozenset[threading.Thread]:
    """The live threads that run engine work (:data:`ENGINE_WORK`)."""
    return frozenset(t for t in threading.enumerate() if t.name.startswith(ENGINE_WORK) and t.is_alive())


def note_before() -> frozenset[threading.Thread]:
    """The engine threads running as a test's set-up begins (kept by the caller for :func:`left_by`)."""
    return engine_threads()


def fixture_set_up(fixture_id: int, name: str, scope: str, before: frozenset[threading.Thread]) -> None:
    """After a fixture's set-up: the engine threads it started belong to it when its scope is wider than a test's."""
    started = engine_threads() - before
    if started and scope != "function":
        _wider[fixture_id] = (name, started)


def fixture_finalized(fixture_id: int) -> None:
    """After a fixture's finalizer: the engine threads its set-up started must be gone."""
    held = _wider.pop(fixture_id, None)
    if held is None:
        return
    name, threads = held
    alive = _still_alive(threads)
    if alive:
        _fixture_leaks.append(f"fixture {name!r} left {_names(alive)} running after its finalizer")


def left_by(before: frozenset[threading.Thread]) -> str | None:
    """After a test's teardown: what it left running (None: nothing), in words for its failure."""
    said = list(_fixture_leaks)
    _fixture_leaks.clear()
    owned = frozenset(t for _, threads in _wider.values() for t in threads)
    alive = _still_alive(engine_threads() - before - owned)
    if alive:
        said.append(f"this test left {_names(alive)} running after its teardown")
    if not said:
        return None
    return ("; ".join(said) + " — an engine ticks on into later tests of this worker (its cycles pause the process's "
            "cyclic collector, its jobs start): stop it in the teardown (await service.stop(), "
            "runner.stop(), or the server's extension stopped)")


def _still_alive(threads: Iterable[threading.Thread]) -> list[threading.Thread]:
    deadline = time.monotonic() + LEFT_WAIT_S
    alive = []
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            alive.append(thread)
    return alive


def _names(threads: Iterable[threading.Thread]) -> str:
    names = sorted(t.name for t in threads)
    return f"engine thread{'s' if len(names) != 1 else ''} {', '.join(names)}"
