"""Bad input is always a 4xx JSON error naming the field and the fix — never a 500 (case 020, issue 10)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, IVAN_TOKEN


@dataclass(frozen=True)
class Bad:
    id: str
    method: str
    path: str
    body: Any = None
    raw: bytes | None = None
    params: dict[str, str] = field(default_factory=dict)
    token: str = IVAN_TOKEN
    want_field: str | None = None
    want_status: int = 400


def cmd(**extra: Any) -> dict[str, Any]:
    return {"command": ["python", "-c", "pass"], **extra}


CASES = [
    Bad("a body that is not JSON names the body", "POST", "jobs", raw=b"{gpus: 1", want_field="body"),
    Bad("an empty body names the body", "POST", "jobs", raw=b"", want_field="body"),
    Bad("a JSON array is not a request object", "POST", "jobs", raw=b"[1, 2]", want_field="body"),
    Bad("a JSON string is not a request object", "POST", "jobs", raw=b'"gpus"', want_field="body"),
    Bad("binary garbage names the body", "POST", "jobs", raw=b"\xff\xfe\x00", want_field="body"),
    Bad("gpus as a word names gpus", "POST", "jobs", cmd(gpus="two"), want_field="gpus"),
    Bad("negative gpus names gpus", "POST", "jobs", cmd(gpus=-1), want_field="gpus"),
    Bad("1.5 gpus names gpus", "POST", "jobs", cmd(gpus=1.5), want_field="gpus"),
    Bad("gpus null names gpus", "POST", "jobs", cmd(gpus=None), want_field="gpus"),
    Bad("an unknown field is named", "POST", "jobs", cmd(gpuz=1), want_field="gpuz"),
    Bad("the body cannot choose the user", "POST", "jobs", cmd(user="judy"), want_field="user"),
    Bad("an unknown priority names priority", "POST", "jobs", cmd(priority="urgent"), want_field="priority"),
    Bad("a command string instead of a list names command", "POST", "jobs", {"command": "python x.py"},
        want_field="command"),
    Bad("nothing to run names command", "POST", "jobs", {"gpus": 1}, want_field="command"),
    Bad("a time limit that is not a duration names time_limit", "POST", "jobs", cmd(time_limit="forever"),
        want_field="time_limit"),
    Bad("env that is not an object names env", "POST", "jobs", cmd(env=["A=1"]), want_field="env"),
    Bad("an out-of-range port names port", "POST", "jobs", cmd(kind="inference", port=70000), want_field="port"),
    Bad("a 300-character name names name", "POST", "jobs", cmd(name="x" * 300), want_field="name"),
    Bad("workers zero names workers", "POST", "jobs", cmd(workers=0), want_field="workers"),
    Bad("dry-run validates like submit", "POST", "dryrun", cmd(gpus="many"), want_field="gpus"),
    Bad("a lease with a malformed body names the body", "POST", "leases", raw=b"{", want_field="body"),
    Bad("log offset below zero names offset", "GET", "jobs/x/logs", params={"offset": "-1"}, want_field="offset"),
    Bad("log limit that is not a number names limit", "GET", "jobs/x/logs", params={"limit": "lots"},
        want_field="limit"),
    Bad("log limit above 1 MiB names limit", "GET", "jobs/x/logs", params={"limit": str(1 << 30)},
        want_field="limit"),
    Bad("follow that is not a boolean names follow", "GET", "jobs/x/logs", params={"follow": "maybe"},
        want_field="follow"),
    Bad("all that is not a boolean names all", "GET", "jobs", params={"all": "perhaps"}, want_field="all"),
    Bad("audit limit zero names limit", "GET", "audit", params={"limit": "0"}, token=BOSS_TOKEN, want_field="limit"),
    Bad("quotas that are not JSON name the body", "PUT", "quotas", raw=b"quotas=1", token=BOSS_TOKEN,
        want_field="body"),
    Bad("a quota with a negative guarantee names guaranteed", "PUT", "quotas",
        {"quotas": [{"team": "a", "guaranteed": -1}]}, token=BOSS_TOKEN, want_field="guaranteed"),
    Bad("a quota line that is not an object is refused", "PUT", "quotas", {"quotas": ["a"]}, token=BOSS_TOKEN),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_bad_input_is_a_4xx_json_error_with_field_and_hint(sched_app: Any, api: Any, case: Bad) -> None:
    status, body = await api(case.method, case.path, case.body, raw=case.raw, params=case.params or None,
                             token=case.token)
    assert 400 <= status < 500, (status, body)
    assert isinstance(body, dict) and set(body["error"]) >= {"code", "message", "field", "hint"}, body
    assert body["error"]["message"] and body["error"]["hint"], body
    if case.want_field is not None:
        assert body["error"]["field"] == case.want_field, body
    if case.want_status == 400 and case.want_field is not None:
        assert status == 400


async def test_unknown_job_is_404_with_the_error_shape(sched_app: Any, api: Any) -> None:
    status, body = await api("GET", "jobs/no-such-job")
    assert status == 404 and body["error"]["code"] == "not_found"


async def test_unknown_route_under_the_namespace_is_404_json(sched_app: Any, api: Any) -> None:
    status, _ = await api("GET", "nothing-here")
    assert status == 404
