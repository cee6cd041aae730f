"""Shorter garbage-collector pauses and GIL waits in a scheduler server (issue 17).

A server process holds a large long-lived heap — jupyter_server and its extensions, the engine's
snapshot and reasons, decoded job rows — and answers many small requests, each allocating
thousands of short-lived objects (request models, rows, JSON). With CPython's default thresholds
(700, 10, 10) that allocation rate ran the collector some forty times a second and a full
collection every few seconds, each walking the whole heap: under ``benchmarks/status_bench.py``
(20,000 jobs stored, 50 pollers, 5 submitters) the server spent 2.5 s of 40 in full collections,
the longest 620 ms, during which it answered nothing — that, not the work of the requests, was
the tail of ``jupyter-sched status``.

:func:`settle_heap`, called once the server has started:

- ``gc.freeze()`` after one collection: what start-up built (modules, classes, configuration,
  the server, the extension and its services) lives as long as the process and is moved to the
  permanent generation, so later full collections never walk it again (the CPython docs
  recommend it for long-lived servers; objects frozen are still freed by reference counting);
- the youngest generation is collected every 10,000 net allocations instead of 700, so a
  request's temporaries mostly die by reference counting before any collection sees them, and
  the older generations fill (and are walked) accordingly less often.

- the interpreter's switch interval (``sys.setswitchinterval``) goes from CPython's 5 ms to
  ``c.SchedApp.gil_switch_interval_ms`` (0.5 ms). The engine decides on a thread of its own, in
  pure Python for up to a few hundred milliseconds per full cycle; a request thread or the event
  loop that gave the GIL up for a system call (every SQL statement and commit of a submit, every
  socket read and write, every hop between the loop and a request thread: fifteen to twenty per
  ``POST jobs``) then waited a whole interval to get it back, each time. Under
  ``benchmarks/submit_bench.py`` (100,000 jobs stored) the submits that overlapped an engine tick
  were the tail: p95 12 ms against 6 at p50. A thread waiting for the GIL now waits at most half
  a millisecond per system call; the engine, when nobody waits, runs as before (the interval
  only bounds how long a waiter waits).

Once per process: a test session that starts many servers in one process freezes only the first.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["YOUNG_THRESHOLD", "settle_heap"]

YOUNG_THRESHOLD = 10_000
"""Net allocations between two collections of the youngest generation (CPython's default: 700)."""

_settled = False


def settle_heap(switch_interval_ms: float = 0.0) -> bool:
    """Freeze the start-up heap and raise the young generation's threshold; shorten the
    interpreter's switch interval to ``switch_interval_ms`` (0: left as it is) — see module
    docstring. Never lowers a threshold, nor lengthens a switch interval, the process already set
    further. True when it did so (the first call)."""
    global _settled
    if _settled:
        return False
    _settled = True
    if 0 < switch_interval_ms / 1000 < sys.getswitchinterval():
        sys.setswitchinterval(switch_interval_ms / 1000)
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    if young and young < YOUNG_THRESHOLD:  # 0: collection disabled by the process, left so
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    return True
