"""New user 15, N8 (/work/coord/notes/newuser15.md): one request, one name in the audit.

A submit refused by its request model was audited ``POST jobs``, the same submit refused by the
admission step ``submit job``; a definition ``POST definitions`` or ``save a definition``; and
``%schedule cancel l-…`` of another user's lease wrote a ``read job`` row and a ``cancel job`` row
(field ``job_id``), where the same attempt by REST is one ``cancel lease`` row. Against a real
embedded server (simulated GPUs) and the magics driven in this process with a real client.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sched.extension.audit_names import request_name
from tests.onboarding.test_cli_firsthour import api, clear, module_server, start_kernel
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu15n8", USERS)


def _refusals(server: EmbeddedServer, user: str, count: int, **params: Any) -> list[dict[str, Any]]:
    """``user``'s refusal records, polled for until there are ``count`` (written just after the answer)."""
    deadline = time.monotonic() + 30
    while True:
        rows = api(server, "tok-boss").get("audit", params={"limit": 1000, "user": user, "action": "refused",
                                                            **params}).json()
        if len(rows) >= count:
            return list(rows)
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


@pytest.mark.parametrize(("method", "template", "lease", "want"), [
    ("POST", "jobs", False, "submit job"),
    ("POST", "jobs", True, "request lease"),
    ("POST", "leases", False, "request lease"),
    ("POST", "definitions", False, "create definition"),
    ("PATCH", "definitions/{definition_id}", False, "edit definition"),
    ("DELETE", "leases/{lease_id}", False, "cancel lease"),
    ("GET", "queue", False, "GET queue"),
])
def test_newuser15_n8_routes_are_named_as_the_services_name_them(method: str, template: str, lease: bool,
                                                                 want: str) -> None:
    assert request_name(method, template, lease=lease) == want


def test_newuser15_n8_a_submit_and_a_definition_are_one_name_whichever_layer_refused(server: EmbeddedServer) -> None:
    clear(server)
    bob = api(server, "tok-bob")
    attempts = [
        ("jobs", {"gpus": 0, "command": ["true"], "gpuz": 1}, "submit job"),          # the request model
        ("jobs", {"gpus": 0, "command": ["true"], "priority": "high"}, "submit job"),  # the admission step
        ("jobs", {"kind": "lease", "gpus": 1, "gpuz": 1}, "request lease"),
        ("definitions", {"name": "d", "script": "x.py", "schedule": "not cron", "timezone": "UTC"},
         "create definition"),
        ("definitions", {"name": "d", "script": "x.py", "schedule": "0 7 * * *", "timezone": "UTC",
                         "priority": "high"}, "create definition"),
    ]
    for path, body, _ in attempts:
        refused = bob.post(path, json=body)
        assert 400 <= refused.status_code < 500, refused.text
    rows = _refusals(server, "bob", len(attempts))
    assert sorted(r["details"]["request"] for r in rows) == sorted(want for _, _, want in attempts), rows


def test_newuser15_n8_a_magic_cancel_of_anothers_lease_is_one_cancel_lease_record(server: EmbeddedServer) -> None:
    from jupyter_sched.magics.core import MagicError
    from tests.onboarding.test_newuser11 import _magics

    clear(server)
    lease = api(server, "tok-ann").post("leases", json={"gpus": 1, "kernel_id": start_kernel(server)})
    assert lease.status_code == 201, lease.text
    lease_id = lease.json()["id"]
    with pytest.raises(MagicError) as refused:
        _magics(server, "tok-bob").schedule(f"cancel {lease_id}")
    assert "lease" in str(refused.value), refused.value
    (row,) = _refusals(server, "bob", 1, job_id=lease_id)
    assert row["details"]["request"] == "cancel lease" and row["details"]["field"] == "lease_id", row
    # no second row (the magic read nothing first): GET audit reads after every refusal answered before it, and the
    # magic's requests were all answered when it raised — one read says it (it slept 1 s first until session 41)
    assert len(_refusals(server, "bob", 1, job_id=lease_id)) == 1
    assert api(server, "tok-ann").get(f"leases/{lease_id}").json()["state"] in ("pending", "admitted", "running")
    # the owner's own magic cancel of a lease still says what it did
    released = _magics(server, "tok-ann")
    released.schedule(f"cancel {lease_id}")
    assert api(server, "tok-ann").get(f"leases/{lease_id}").json()["state"] == "cancelled"
