"""Run A of session 38 (verify 24 V2's bound failed): a large body's refusal, raised on a request thread since
red38 R1 (25f72c9c), kept the body alive in a reference cycle until a full garbage collection — ~4 MiB per
refused 7.5 MB body in ``jupyter-sched serve``. :func:`.body_bounds.refusal_returned` hands the refusal back
without the thread's frames and :func:`.body_bounds.refusal_raised` raises it on the loop.

Real parts: the request threads' per-user line (PerUserLines on a real thread pool and asyncio loop), the real
request model's refusal of an unknown field; the garbage collector is off, so only a cycle keeps the body.
(The whole service is measured in tests/hub/test_verify24_v2_body_memory.py.)"""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.extension.body_bounds import refusal_raised, refusal_returned
from jupyter_sched.extension.per_user_lines import PerUserLines
from jupyter_sched.services.models import SubmitJobRequest, parse

R = TypeVar("R")


class _Body:
    """A body as a handler holds it (weakly referable, unlike bytes)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw


def _in_line(pool: ThreadPoolExecutor, call: Callable[[], R]) -> Awaitable[R]:
    """``call()`` in a user's line of the request threads, as a large body's work runs (``quick_off_loop``)."""
    lines = PerUserLines(pool, most=64, what="requests", retry_s=1)
    return lines.run("ivan", call, stopping=lambda: False, threads_stopped=lambda: False)


@pytest.fixture
def no_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_s38_runa_v2_a_refused_body_on_a_request_thread_is_freed_without_a_collection(no_gc: None) -> None:
    seen: list[weakref.ref[_Body]] = []

    def work() -> Any:
        body = _Body(json.dumps({"command": ["true"], "junk": "x" * 1_000_000}).encode())
        seen.append(weakref.ref(body))
        return parse(SubmitJobRequest, json.loads(body.raw))  # refused: unknown field 'junk'

    async def main() -> tuple[str | None, str]:
        with ThreadPoolExecutor(2) as pool:
            try:
                await refusal_raised(_in_line(pool, refusal_returned(work)))
            except ValidationError as refused:
                return refused.field, str(refused)
        raise AssertionError("the unknown field was taken")

    field, said = asyncio.run(main())
    assert field == "junk" and "unknown field" in said, said  # the refusal itself is whole
    assert seen and seen[0]() is None, "the refused body is still alive: a reference cycle holds it"


def test_s38_runa_v2_a_taken_body_comes_back_as_its_value(no_gc: None) -> None:
    async def main() -> Any:
        with ThreadPoolExecutor(2) as pool:
            return await refusal_raised(_in_line(pool, refusal_returned(
                lambda: parse(SubmitJobRequest, {"command": ["true"], "gpus": 1}))))

    taken = asyncio.run(main())
    assert isinstance(taken, SubmitJobRequest) and taken.gpus == 1
