"""red38 R1: one user's 16 MiB JSON body of tiny objects (``{"command": ["true"], "x": [{}, {}, …]}``) cost ~4.6 s
of pure-Python decode and walks on the service's event loop before any field was checked: every user's calls waited
(20 s with four connections) and the hub lookup of the sender timed out (503).

A body past ``ON_LOOP_BYTES`` is now decoded on a request thread in its sender's line, its JSON items counted at C
speed first: past ``MAX_BODY_ITEMS`` it is refused 413 naming ``body`` and the bound, audited as a flood (one row a
minute per user). The real server of ``tests/web/conftest.py``; where a request must be held, a spy around the
service's read blocks on an event (as red37 R3's tests; no timing)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from tornado.httpclient import AsyncHTTPClient

from jupyter_sched.extension import body_bounds, web
from jupyter_sched.extension.body_bounds import MAX_BODY_ITEMS, ON_LOOP_BYTES, body_items

from .conftest import BOSS_TOKEN, EVE_TOKEN, IVAN_TOKEN, wait_for

JOB = {"gpus": 0, "command": ["python", "-c", "print('hello')"]}


def tiny_objects(size: int) -> bytes:
    """red38's body: a valid submit with ``size`` bytes of ``{},`` in an unknown field."""
    return b'{"command":["true"],"x":[' + b"{}," * (size // 3) + b"{}]}"


def reference_items(raw: bytes) -> int:
    """:func:`body_items` the slow way: a walk of every byte, tracking strings and escapes."""
    items, in_string, escaped = 0, False, False
    for byte in raw:
        char = chr(byte)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string, items = True, items + 1
        elif char in ",[{":
            items += 1
    return items


@pytest.mark.parametrize("text", [
    '{"a": [1, 2, {"b": "x,y[{"}], "c": "\\\\", "d": "q\\"uo,te"}',
    '["\\\\\\"", "\\\\", ",,,", {}, [], "{[", "\\\\\\\\"]',
    json.dumps({"notebook_json": json.dumps({"cells": [{"source": ['x = "a, b"\\n', "[1, {2}]"]}] * 20})}),
    '"' + "\\\\" * 40 + '"' + ", 1" * 30,
], ids=["escapes and structure inside strings", "runs of backslashes before quotes", "a carried notebook",
        "a run of backslashes across every piece boundary"])
def test_red38_r1_body_items_counts_what_a_walk_of_every_byte_counts_whatever_the_piece_size(text: str) -> None:
    raw = text.encode()
    want = reference_items(raw)
    assert want > 0
    for piece in (1, 2, 3, 5, 7, 64, 1 << 20):  # pieces cut escapes, strings and backslash runs anywhere
        assert body_items(raw, most=10**9, piece=piece) == want, piece


def test_red38_r1_body_items_stops_once_past_the_bound() -> None:
    assert body_items(tiny_objects(3 << 20), most=1000, piece=1 << 16) <= 1000 + 2 * (1 << 16)
    assert body_items(b'"' * (1 << 22), most=1000) > 1000  # a body of quotes: counted, never split
    notebook = json.dumps({"notebook_json": json.dumps({"cells": [{"source": ["a, [b], {c}\n"] * 5000}] * 60})})
    assert len(notebook) > 4 << 20 and body_items(notebook.encode()) == 3  # a carried notebook: {, a key, a string


async def test_red38_r1_a_big_body_waits_in_its_senders_line_while_another_users_me_is_answered(
        sched_app: Any, api: Any, jp_http_port: int, jp_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ivan's threads are all held by his own reads; his big body then waits in his line — it is not decoded on
    the event loop — and eve's ``GET me`` is answered before it is. Released, it is refused 413."""
    status, job = await api("POST", "jobs", JOB)
    assert status == 201, job
    monkeypatch.setattr(sched_app, "per_user_in_flight", True)  # as HubSchedApp (red37 R3)
    jobs, release, started = sched_app.services.jobs, threading.Event(), [0]
    real_get = jobs.get

    def held_get(*args: Any, **kwargs: Any) -> Any:
        started[0] += 1
        assert release.wait(60)
        return real_get(*args, **kwargs)

    monkeypatch.setattr(jobs, "get", held_get)
    bound, base = sched_app.request_threads // 2, f"http://localhost:{jp_http_port}{jp_base_url}api/sched/"
    ivan = {"Authorization": f"token {IVAN_TOKEN}"}
    client = AsyncHTTPClient(force_instance=True, max_clients=32)
    try:
        held = [asyncio.ensure_future(client.fetch(f"{base}jobs/{job['id']}", headers=ivan, raise_error=False))
                for _ in range(bound)]

        async def all_held() -> bool:
            return bool(started[0] >= bound)

        await wait_for(all_held, timeout_s=60)
        big = asyncio.ensure_future(client.fetch(
            f"{base}jobs", method="POST", body=tiny_objects(4 << 20), raise_error=False, request_timeout=120,
            headers={**ivan, "Content-Type": "application/json"}))

        async def big_in_line() -> bool:  # his body waits for one of his threads, holding none
            return bool(sched_app._quick_lines.of.get("ivan", [None, 0])[1] > bound)

        await wait_for(big_in_line, timeout_s=60)
        status, me = await api("GET", "me", token=EVE_TOKEN)
        assert status == 200 and me["user"] == "eve", me
        assert not big.done()  # answered before ivan's body, not after it
        release.set()
        answer = await asyncio.wait_for(big, 120)
        assert [reply.code for reply in await asyncio.wait_for(asyncio.gather(*held), 60)] == [200] * bound
    finally:
        release.set()
        client.close()
    error = json.loads(answer.body)["error"]
    assert answer.code == 413 and error["code"] == "too_large" and error["field"] == "body", error
    assert f"at most {MAX_BODY_ITEMS:,}" in error["message"], error


BIG = tiny_objects(1 << 20)  # ~350,000 tiny objects: past MAX_BODY_ITEMS
assert len(BIG) > ON_LOOP_BYTES


async def test_red38_r1_every_route_that_reads_a_body_refuses_one_past_the_item_bound(
        sched_app: Any, api: Any, jp_root_dir: Path) -> None:
    """Every operation of openapi.yaml with a request body, with the ids it names made real."""
    spec = yaml.safe_load((Path(web.__file__).parent / "openapi.yaml").read_text())
    status, job = await api("POST", "jobs", JOB)
    assert status == 201, job
    (jp_root_dir / "r.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    status, definition = await api("POST", "definitions", {"name": "r", "notebook": "r.ipynb", "timezone": "UTC"})
    assert status == 201, definition
    names = {"job_id": job["id"], "lease_id": job["id"], "definition_id": definition["id"], "team": "default",
             "user": "ivan", "node": "node-0"}
    routes = [(method.upper(), path) for path, operations in spec["paths"].items()
              for method, operation in operations.items() if isinstance(operation, dict) and "requestBody" in operation]
    assert len(routes) >= 18, routes
    answers = {}
    for method, path in routes:
        for name, value in names.items():
            path = path.replace("{" + name + "}", value)
        status, error = await api(method, path.lstrip("/"), raw=BIG, token=BOSS_TOKEN)
        answers[f"{method} {path}"] = (status, error["error"]["code"] if isinstance(error, dict) else error)
    assert set(answers.values()) == {(413, "too_large")}, answers


async def test_red38_r1_a_body_past_the_bound_is_audited_as_a_flood_once_a_minute(sched_app: Any, api: Any) -> None:
    for _ in range(3):
        status, error = await api("POST", "jobs", raw=BIG, token=EVE_TOKEN)
        assert status == 413 and error["error"]["field"] == "body", error
    store = sched_app.services.store

    async def audited() -> list[Any]:
        return [row for row in store.list_events(action="refused", limit=100) if row.user == "eve"]

    rows = await wait_for(audited, timeout_s=30)
    await asyncio.sleep(0.5)  # a second row, were one written, would have landed by now
    rows = await audited()
    assert len(rows) == 1, [(row.message, row.details) for row in rows]
    assert rows[0].details["code"] == "too_large" and rows[0].details["status"] == 413, rows[0].details
    assert rows[0].details["request"] == "submit job" and "refused 413" in rows[0].message, rows[0]


async def test_red38_r1_a_carried_notebook_of_several_mib_is_decoded_on_a_request_thread_and_taken(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded_on: list[str] = []
    real = body_bounds.decoded_body

    def spied(raw: bytes, **kwargs: Any) -> Any:
        decoded_on.append(threading.current_thread().name)
        return real(raw, **kwargs)

    monkeypatch.setattr(web, "decoded_body", spied)
    cell: dict[str, Any] = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": ["x = [1, {'a': \"b\"}]  # a, b, c\n"] * 40}
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell] * 3000}
    text = json.dumps(notebook)
    assert len(text) > 4 << 20
    body = {"gpus": 0, "notebook": "big.ipynb", "notebook_json": text}
    status, answer = await api("POST", "dryrun", body)
    assert status == 200, str(answer)[:400]
    assert len(decoded_on) == 1 and decoded_on[0].startswith("jupyter-sched-api"), decoded_on
