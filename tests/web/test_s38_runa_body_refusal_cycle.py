"""Run A of session 38 (verify 24 V2's bound failed): a large body's refusal, raised on a request thread since
red38 R1 (25f72c9c), kept the body alive in a reference cycle until a full garbage collection — ~4 MiB per
refused 7.5 MB body in ``jupyter-sched serve``. :func:`.stopping.run_pooled`, every hop onto a request pool,
now hands a refusal (4xx) back from the thread without its frames and raises it on the loop; a fault keeps
its traceback.

Real parts: the request threads' per-user line (PerUserLines on a real thread pool and asyncio loop), the real
request model's refusal of an unknown field; the garbage collector is off, so only a cycle keeps the body.
(The whole service is measured in tests/hub/test_verify24_v2_body_memory.py.)"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import weakref
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from jupyter_sched.errors import ValidationError
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


def _parsed(body: _Body) -> Any:
    return parse(SubmitJobRequest, json.loads(body.raw))


@pytest.mark.parametrize("held_by", ["the thread", "the caller"])
def test_s38_runa_v2_a_refused_body_on_a_request_thread_is_freed_without_a_collection(
        no_gc: None, held_by: str) -> None:
    """The body held by the thread's frames only (its decode), or by the call the caller sent (the handler's
    partial, which the caller's frames in the refusal's traceback hold)."""
    seen: list[weakref.ref[_Body]] = []

    def made() -> _Body:
        body = _Body(json.dumps({"command": ["true"], "junk": "x" * 1_000_000}).encode())
        seen.append(weakref.ref(body))
        return body

    def work() -> Any:
        return _parsed(made())  # refused: unknown field 'junk'

    async def main() -> tuple[str | None, str]:
        with ThreadPoolExecutor(2) as pool:
            try:
                await _in_line(pool, work if held_by == "the thread" else functools.partial(_parsed, made()))
            except ValidationError as refused:
                return refused.field, str(refused)
        raise AssertionError("the unknown field was taken")

    field, said = asyncio.run(main())
    assert field == "junk" and "unknown field" in said, said  # the refusal itself is whole
    assert seen and seen[0]() is None, "the refused body is still alive: a reference cycle holds it"


def test_s38_runa_v2_a_taken_body_comes_back_as_its_value(no_gc: None) -> None:
    async def main() -> Any:
        with ThreadPoolExecutor(2) as pool:
            return await _in_line(pool, lambda: parse(SubmitJobRequest, {"command": ["true"], "gpus": 1}))

    taken = asyncio.run(main())
    assert isinstance(taken, SubmitJobRequest) and taken.gpus == 1


def test_s38_runa_v2_a_fault_on_a_request_thread_keeps_its_traceback(no_gc: None) -> None:
    def work() -> Any:
        try:
            json.loads("{")
        except ValueError as bad:
            raise RuntimeError("a fault") from bad

    async def main() -> BaseException:
        with ThreadPoolExecutor(2) as pool:
            try:
                await _in_line(pool, work)
            except RuntimeError as fault:
                return fault
        raise AssertionError("the fault was not raised")

    fault = asyncio.run(main())
    assert isinstance(fault.__cause__, ValueError) and fault.__traceback__ is not None  # for the log, whole
