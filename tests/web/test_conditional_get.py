"""Polled answers carry an ETag (the SHA-1 of the body), and a GET that sends it back while the
answer is unchanged gets ``304 Not Modified`` with no body (issue 17: the ETag is computed once
per kept answer, not once per request). The ETag names a body, never a user: a client can only
be told "unchanged" about the exact answer it would be given itself."""

from __future__ import annotations

import json
from typing import Any

from .conftest import API, IVAN_TOKEN, JUDY_TOKEN, wait_for


async def _get(jp_fetch: Any, path: str, token: str, etag: str | None = None) -> Any:
    headers = {"Authorization": f"token {token}"}
    if etag is not None:
        headers["If-None-Match"] = etag
    return await jp_fetch(*API.split("/"), *path.split("/"), params={"limit": "5"}, headers=headers,
                          raise_error=False)


async def test_an_unchanged_page_is_answered_304_and_a_changed_one_200_with_a_new_etag(
        sched_app: Any, api: Any, jp_fetch: Any) -> None:
    first = await _get(jp_fetch, "queue", IVAN_TOKEN)
    etag = first.headers.get("Etag")
    assert first.code == 200 and etag
    again = await _get(jp_fetch, "queue", IVAN_TOKEN, etag)
    assert again.code == 304 and not again.body
    status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "changes-the-queue"})
    assert status == 201
    changed = await _get(jp_fetch, "queue", IVAN_TOKEN, etag)
    assert changed.code == 200 and changed.headers.get("Etag") not in (None, etag)
    assert "changes-the-queue" in changed.body.decode()


async def test_another_users_etag_gets_the_callers_own_answer_not_a_304(sched_app: Any, api: Any,
                                                                          jp_fetch: Any) -> None:
    status, job = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "env": {"NOTE": "ivans-secret"},
                                            "name": "ivans"})
    assert status == 201

    async def running() -> bool:  # a job still starting changes the queue between two reads
        _, now = await api("GET", f"jobs/{job['id']}")
        return bool(now["state"] == "running")

    await wait_for(running)
    ivan = await _get(jp_fetch, "queue", IVAN_TOKEN)
    assert ivan.code == 200 and "ivans-secret" in ivan.body.decode()
    judy = await _get(jp_fetch, "queue", JUDY_TOKEN, ivan.headers["Etag"])
    assert judy.code == 200, "judy's view differs from ivan's: his ETag must not match it"
    entries = json.loads(judy.body)
    assert [e["name"] for e in entries if e["user"] == "ivan"] == ["ivans"]
    assert "ivans-secret" not in judy.body.decode() and judy.headers["Etag"] != ivan.headers["Etag"]
    # and the other way: judy's own unchanged answer is still a 304 for her
    assert (await _get(jp_fetch, "queue", JUDY_TOKEN, judy.headers["Etag"])).code == 304


async def _read_until_unchanged(jp_fetch: Any, path: str, params: dict[str, str] | None) -> int:
    """Read ``path`` as ivan, then again with its ETag, until the second read is a 304; each 200 before must carry
    another body under another ETag (a real change between the two reads). Returns how many pairs were 200."""
    changed = 0

    async def unchanged_pair() -> bool:
        nonlocal changed
        auth = {"Authorization": f"token {IVAN_TOKEN}"}
        first = await jp_fetch(*API.split("/"), path, headers=auth, params=params)
        etag = first.headers["Etag"]
        again = await jp_fetch(*API.split("/"), path, headers={**auth, "If-None-Match": etag}, params=params,
                               raise_error=False)
        if again.code == 304:
            return True
        assert again.code == 200 and again.body != first.body and again.headers["Etag"] != etag, \
            (path, again.code, first.body, again.body)
        changed += 1
        return False

    await wait_for(unchanged_pair, timeout_s=60, poll_s=0)
    return changed


async def test_jobs_and_me_are_conditional_too(sched_app: Any, jp_fetch: Any) -> None:
    """``GET jobs`` and ``GET me`` answer an unchanged body 304 too. s33 (session 32's run 3 failed it once,
    under load: ``me`` 200 == 304): ``GET me``'s ``gpu_hours_since`` — the start of its 7-day window — is
    taken at the whole second, so two reads either side of a second's turn are two bodies (a real change,
    rightly a new ETag; the first read took 264 ms there). So ``me`` is read in pairs until one falls within
    one second; a page of no jobs has nothing that moves with time: its first pair is a 304."""
    assert await _read_until_unchanged(jp_fetch, "jobs", {"limit": "5"}) == 0
    await _read_until_unchanged(jp_fetch, "me", None)
