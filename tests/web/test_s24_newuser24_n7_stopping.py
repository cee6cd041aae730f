"""New user 24, N7: every server stop answered the panel's polls with 500 and a traceback in the
server log (``RuntimeError: cannot schedule new futures after shutdown``): jupyter_server stops its
extensions before its HTTP server stops taking requests, and ``GET jobs`` went to the bulk threads
the extension had shut. Every request that meets a stopping server is answered 503 ``stopping`` with
a Retry-After and our words; a call that reaches a pool already shut, or is dropped from its queue by
the shutdown, is the same answer (``jupyter_sched.extension.stopping.run_pooled``)."""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from jupyter_sched.errors import StoppingError, http_status_for
from jupyter_sched.extension.stopping import run_pooled

from .conftest import API, IVAN_TOKEN

POLLS = [("GET", "jobs"), ("GET", "leases"), ("GET", "queue"), ("GET", "config"), ("GET", "inventory"),
         ("GET", "audit"), ("POST", "dryrun"), ("POST", "jobs")]


async def test_newuser24_n7_requests_during_a_server_stop_are_503_stopping_with_retry_after(
        sched_app: Any, jp_fetch: Any) -> None:
    await sched_app.stop_extension()  # the server stops: its extensions first, HTTP still answering
    for method, route in POLLS:
        body = '{"gpus": 1, "command": ["true"]}' if method == "POST" else None
        reply = await jp_fetch(*API.split("/"), route, method=method, body=body, raise_error=False,
                               headers={"Authorization": f"token {IVAN_TOKEN}"})
        text = reply.body.decode()
        assert reply.code == 503, (method, route, reply.code, text)
        assert reply.headers.get("Retry-After", "").isdigit(), (route, dict(reply.headers))
        assert '"code": "stopping"' in text and "the server is stopping" in text, text
        assert "Traceback" not in text and "futures after shutdown" not in text, text


async def test_newuser24_n7_a_call_reaching_a_shut_pool_is_stopping_not_runtime_error() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown(wait=True)
    with pytest.raises(StoppingError) as caught:
        await run_pooled(pool, lambda: 1, stopping=lambda: True)
    assert http_status_for(caught.value) == 503 and caught.value.details["retry_after_s"] > 0
    with pytest.raises(RuntimeError, match="after shutdown"):  # a shut pool of a running server stays a fault
        await run_pooled(pool, lambda: 1, stopping=lambda: False)


async def test_newuser24_n7_a_call_dropped_from_a_pool_queue_by_the_shutdown_is_stopping() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    release = threading.Event()
    busy = asyncio.ensure_future(run_pooled(pool, functools.partial(release.wait, 10), stopping=lambda: True))
    queued = asyncio.ensure_future(run_pooled(pool, lambda: "ran", stopping=lambda: True))
    await asyncio.sleep(0.05)
    pool.shutdown(wait=False, cancel_futures=True)  # as SchedApp.stop_extension shuts its pools
    release.set()
    assert await busy is True  # the running call finishes
    with pytest.raises(StoppingError):
        await queued
    own = asyncio.ensure_future(run_pooled(ThreadPoolExecutor(max_workers=1), functools.partial(release.wait, 1),
                                           stopping=lambda: True))
    await asyncio.sleep(0)
    own.cancel()  # the caller's own cancellation stays a cancellation
    with pytest.raises(asyncio.CancelledError):
        await own
