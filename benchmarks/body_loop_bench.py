"""How long one big request body holds the event loop, before and after red38 R1, in the same run.

red38 R1: ``SchedHandler.json_value`` decoded every body on the loop — ``json.loads`` with the duplicate-key hook,
then the out-of-range-number and lone-surrogate walks — before any field was checked; a 16 MiB body of tiny objects
held it ~4.6 s. Now a body past ``ON_LOOP_BYTES`` is handled on a request thread (:func:`decoded_body`: its JSON
items counted at C speed first, refused 413 past ``MAX_BODY_ITEMS``).

For each body: an asyncio loop runs a 1 ms heartbeat while the body is handled — ``before``: the old decode called
on the loop; ``after``: :func:`decoded_body` on a thread, as the handler awaits it. Printed: the loop's longest
stall (the largest gap between heartbeats past their 1 ms) and the body's handling time (wall), in ms; and the
answer (decoded, or the refusal's code).

Run: ``.venv/bin/python benchmarks/body_loop_bench.py [--mib 16]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_sched.errors import SchedError  # noqa: E402
from jupyter_sched.extension.body_bounds import decoded_body  # noqa: E402
from jupyter_sched.extension.duplicate_keys import unique_object  # noqa: E402
from jupyter_sched.extension.surrogates import lone_surrogate  # noqa: E402
from jupyter_sched.model.validation import out_of_range_number  # noqa: E402


def old_decode(raw: bytes) -> Any:
    """What ``json_value`` did on the loop before red38 R1 (its errors left out: the bodies here decode)."""
    value = json.loads(raw, object_pairs_hook=unique_object)
    out_of_range_number(value)
    lone_surrogate(value)
    return value


def bodies(mib: int) -> dict[str, bytes]:
    size = mib << 20
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = [1, {'a': \"b\"}]  # a, b\n"] * 40}
    notebook = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell] * 4500})
    return {
        "red38 tiny objects": b'{"command":["true"],"x":[' + b"{}," * (size // 3) + b"{}]}",
        "red38 empty arrays": b'{"command":["true"],"x":[' + b"[]," * (size // 3) + b"[]]}",
        "red38 numbers": b'{"command":["true"],"x":[' + b"1," * (size // 2) + b"1]}",
        "carried notebook": json.dumps({"gpus": 0, "notebook": "a.ipynb", "notebook_json": notebook}).encode(),
        "bulk cancel 10,000 ids": json.dumps({"ids": [f"j-{n:020d}" for n in range(10_000)]}).encode(),
    }


async def stalls(handle: Callable[[], Any]) -> tuple[float, float, str]:
    """(longest loop stall ms, handling wall ms, answer) of awaiting ``handle()``."""
    worst, stop = [0.0], asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst[0] = max(worst[0], now - last - 0.001)
            last = now

    beat = asyncio.ensure_future(heartbeat())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    try:
        result = await handle()
        answer = f"decoded ({type(result).__name__})"
    except SchedError as refused:
        answer = f"refused {refused.code}"
    wall = time.perf_counter() - start
    stop.set()
    await beat
    return worst[0] * 1000, wall * 1000, answer


async def main(mib: int) -> None:
    loop, pool = asyncio.get_running_loop(), ThreadPoolExecutor(2)
    for name, raw in bodies(mib).items():

        async def before(raw: bytes = raw) -> Any:
            return old_decode(raw)

        async def after(raw: bytes = raw) -> Any:
            return await loop.run_in_executor(pool, decoded_body, raw)

        old_stall, old_wall, _ = await stalls(before)
        new_stall, new_wall, new_answer = await stalls(after)
        print(f"{name:24s} {len(raw) / (1 << 20):5.1f} MiB  loop blocked: before {old_stall:8.1f} ms, after "
              f"{new_stall:6.1f} ms  | handled in: before {old_wall:8.1f} ms, after {new_wall:7.1f} ms ({new_answer})")
    pool.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=16, help="size of red38's bodies in MiB (default 16)")
    asyncio.run(main(parser.parse_args().mib))
