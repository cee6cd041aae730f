"""Shorter garbage-collector pauses and shorter interpreter turns in a scheduler server (issue 17).

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

Once per process: a test session that starts many servers in one process freezes only the first.

:func:`shorter_gil_turns`, called at the same moment: a thread that computes (the engine's full
cycle, tens to hundreds of milliseconds of Python) keeps the interpreter for CPython's switch
interval, 5 ms, each time another thread asks for it — and a request wants it back several times
(the event loop reads it, hands it to a request thread, that thread runs its service call, the
loop writes the answer), so each of those waits could be 5 ms while a cycle ran. At 1 ms the
request's turns come five times as often; the engine's cycle, which loses the interpreter only
when someone asks, pays a few more switches. Measured (``/tmp`` A/B of four interleaved servers
over the same 20,000-job store, 5,000 pending, a full cycle every second, five submitters,
``jupyter-sched status`` sampled 400 times each, load 7-9 on 2 CPUs): status p50 64/74 -> 52/44 ms,
p95 197/154 -> 116/100 ms, p99 298/203 -> 161/143 ms.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["GIL_SWITCH_INTERVAL_S", "YOUNG_THRESHOLD", "settle_heap", "shorter_gil_turns"]

GIL_SWITCH_INTERVAL_S = 0.001
"""Seconds a thread may keep the interpreter while another waits for it (CPython's default: 0.005)."""

YOUNG_THRESHOLD = 10_000
"""Net allocations between two collections of the youngest generation (CPython's default: 700)."""

_settled = False


def settle_heap() -> bool:
    """Freeze the start-up heap and raise the young generation's threshold (see module docstring);
    never lowers a threshold the process already set higher. True when it did so (the first call)."""
    global _settled
    if _settled:
        return False
    _settled = True
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    if young and young < YOUNG_THRESHOLD:  # 0: collection disabled by the process, left so
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    return True


def shorter_gil_turns() -> bool:
    """Hand the interpreter to a waiting thread after :data:`GIL_SWITCH_INTERVAL_S` (see module
    docstring); never lengthens an interval the process already set shorter. True when it shortened it."""
    if sys.getswitchinterval() <= GIL_SWITCH_INTERVAL_S:
        return False
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    return True
