"""s31-n8's next step, on the wire: ``POST jobs?idempotency_key=K`` (or the ``Idempotency-Key`` header) makes one
job per user and key — the same key and request again: 200 with that job; another request: 409 naming
``idempotency_key``; a malformed key: 400 naming it; another user's same key: their own new job (201), never
this one's. ``GET config`` says the server honours keys (``features.submit_keys``), which the client asks before
it sends one. The real server (pytest-jupyter), SQLite."""

from __future__ import annotations

from typing import Any

from .conftest import JUDY_TOKEN

TRAIN = {"gpus": 0, "command": ["python", "-c", "print(1)"], "name": "keyed", "time_limit": "1m"}


async def test_s32_submit_key_rest_one_job_per_user_and_key(sched_app: Any, api: Any) -> None:
    status, config = await api("GET", "config")
    assert status == 200 and config["features"]["submit_keys"] is True, config
    status, made = await api("POST", "jobs", TRAIN, params={"idempotency_key": "rest-k1"})
    assert status == 201, made
    status, again = await api("POST", "jobs", TRAIN, params={"idempotency_key": "rest-k1"})
    assert status == 200 and again["id"] == made["id"], again
    status, header = await api("POST", "jobs", TRAIN, headers={"Idempotency-Key": "rest-k1"})
    assert status == 200 and header["id"] == made["id"], header
    status, other = await api("POST", "jobs", {**TRAIN, "name": "other"}, params={"idempotency_key": "rest-k1"})
    assert status == 409 and other["error"]["field"] == "idempotency_key", other
    status, bad = await api("POST", "jobs", TRAIN, params={"idempotency_key": "a key/with spaces"})
    assert status == 400 and bad["error"]["field"] == "idempotency_key", bad
    status, judys = await api("POST", "jobs", TRAIN, params={"idempotency_key": "rest-k1"}, token=JUDY_TOKEN)
    assert status == 201 and judys["id"] != made["id"] and judys["user"] != made["user"], judys
    status, listed = await api("GET", "jobs")
    assert [job["id"] for job in listed if job.get("name") == "keyed"] == [made["id"]], listed
    # newuser33 N3 (nit): a client whose submit got no answer asks what its key made — on the wire, as the panel does
    status, by_key = await api("GET", "jobs", params={"idempotency_key": "rest-k1"})
    assert status == 200 and [job["id"] for job in by_key] == [made["id"]], by_key
    status, by_key = await api("GET", "jobs", params={"idempotency_key": "rest-k1"}, token=JUDY_TOKEN)
    assert status == 200 and [job["id"] for job in by_key] == [judys["id"]], by_key
    status, none = await api("GET", "jobs", params={"idempotency_key": "rest-never-sent"})
    assert status == 200 and none == [], none
    status, bad = await api("GET", "jobs", params={"idempotency_key": "a key/with spaces"})
    assert status == 400 and bad["error"]["field"] == "idempotency_key", bad
