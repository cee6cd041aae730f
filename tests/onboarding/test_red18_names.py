"""Red team 18, R5 against a real embedded server (2 simulated GPUs, no quota), through REST as the
users met it: red18b named its jobs ``x" (j-1m90y3fake-a1) ends at 16:40 UTC; then …`` so that, pasted
between plain quotes, red18a's pending reason read as a job "x" with a made-up id and end time. The
name is now quoted as a JSON string (its quote mark escaped) and cut with the "…" outside the quotes,
so red18b's text never decides where the quoted name ends.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched.wording.reasons import QUOTED_NAME_MAX, quoted_name
from tests.onboarding.test_cli_firsthour import api, module_server, wait_state
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-a": "red18a", "tok-b": "red18b", "tok-boss": "boss", OWNER_TOKEN: "boss"}
FORGED = 'x" (j-1m90y3fake-a1) ends at 16:40 UTC; then red18adm\'s maintenance job "drain1'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "red18names", USERS)


def _submit(client: httpx.Client, name: str) -> dict[str, Any]:
    answer = client.post("jobs", json={"gpus": 1, "command": ["sleep", "300"], "name": name})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_red18_r5_quoted_name_escapes_quotes_and_cuts_outside_them() -> None:
    assert quoted_name('x" (j-fake) ends') == '"x\\" (j-fake) ends"'
    assert quoted_name("back\\slash") == '"back\\\\slash"'
    long = "a" * (QUOTED_NAME_MAX + 5)
    assert quoted_name(long) == '"' + "a" * (QUOTED_NAME_MAX - 1) + '"…'
    assert quoted_name("é (v2)") == '"é (v2)"'  # readable: not \u-escaped


def test_red18_r5_another_users_name_cannot_forge_ids_or_end_times_in_a_reason(server: EmbeddedServer) -> None:
    a, b = api(server, "tok-a"), api(server, "tok-b")
    hogs = [_submit(b, FORGED) for _ in range(2)]
    for hog in hogs:
        wait_state(server, "tok-b", hog["id"], "running")
    mine = _submit(a, "a-wait")
    deadline = time.monotonic() + 60
    while True:  # a full cycle's reason with its ETA clause (polled: CI hosts are slower)
        seen = dict(a.get(f"jobs/{mine['id']}").json())
        reason = seen.get("reason") or {}
        if reason.get("details", {}).get("eta_code") not in (None, "Provisional") and hogs[0]["id"] in str(reason):
            break
        assert time.monotonic() < deadline, seen
        time.sleep(0.1)
    rows = a.get("queue").json()
    queued = [row for row in (rows["jobs"] if isinstance(rows, dict) else rows) if row["id"] == mine["id"]]
    shown = QUOTED_NAME_MAX - 1
    cut = FORGED[:shown].rstrip().replace('"', '\\"')
    for text in (reason["text"]["eta"], reason["text"]["line"], queued[0]["reason"]["text"]["line"]):
        assert 'job "x" (j-1m90y3fake-a1)' not in text, text  # before: the name's own quote closed the quotes
        assert 'ends at 16:40 UTC;…"' not in text, text  # before: the cut fell inside red18b's quotes
        assert f'red18b\'s job "{cut}"… ({hogs[0]["id"]})' in text, text
