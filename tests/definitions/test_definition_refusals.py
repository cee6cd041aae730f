"""A definition whose runs could only fail, or that its owner could not name, is refused when saved
(new user 5 #6, fixed by red team 6), against a real server.

- ``POST definitions`` with a notebook that does not exist was 201, and the typo was found at the
  first firing (tomorrow 07:00); ``POST jobs`` and the CLI refuse it at once. Now 400 naming
  ``notebook`` (``script``, ``working_dir`` alike), as ``POST jobs`` on an embedded server.
- Three definitions named "d1" were accepted; the CLI then refused ``d1`` as ambiguous. Now a
  second name of the same owner is 409 naming ``name`` and the existing definition's id; another
  user may use the name.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {OWNER_TOKEN: "ann", "tok-ann": "ann", "tok-bob": "bob"}
DAILY = {"schedule": "0 7 * * *", "timezone": "UTC", "gpus": 0}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("defs"), users=USERS, simulated_gpus=1)
    try:
        yield srv
    finally:
        srv.kill()


def client(server: EmbeddedServer, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.api, headers={"Authorization": f"token {token}"}, timeout=30)


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    found: dict[str, Any] = response.json()["error"]
    return found


def test_a_definition_of_a_missing_notebook_or_script_is_refused_naming_it(server: EmbeddedServer,
                                                                             tmp_path: Path) -> None:
    ann = client(server, "tok-ann")
    gone = tmp_path / "missing.ipynb"
    refused = error(ann.post("definitions", json={"name": "typo", "notebook": str(gone), **DAILY}), 400)
    assert refused["field"] == "notebook" and str(gone) in refused["message"] and "does not exist" in refused["message"]
    assert refused["hint"]
    script = error(ann.post("definitions", json={"name": "typo2", "script": str(tmp_path / "nope.py"), **DAILY}), 400)
    assert script["field"] == "script"
    assert [d["name"] for d in ann.get("definitions").json()] == []  # nothing was saved

    real = tmp_path / "real.py"
    real.write_text("print('ok')\n")
    made = ann.post("definitions", json={"name": "fine", "script": str(real), **DAILY})
    assert made.status_code == 201, made.text
    moved = error(ann.patch(f"definitions/{made.json()['id']}", json={"script": str(tmp_path / "moved.py")}), 400)
    assert moved["field"] == "script"
    assert ann.delete(f"definitions/{made.json()['id']}").status_code == 200


def test_a_second_definition_of_the_same_name_is_refused_naming_the_first(server: EmbeddedServer,
                                                                           tmp_path: Path) -> None:
    ann, bob = client(server, "tok-ann"), client(server, "tok-bob")
    script = tmp_path / "report.py"
    script.write_text("print('report')\n")
    body = {"name": "d1", "script": str(script), **DAILY}
    first = ann.post("definitions", json=body)
    assert first.status_code == 201, first.text
    again = error(ann.post("definitions", json=body), 409)
    assert again["field"] == "name" and first.json()["id"] in again["message"]
    assert f"PATCH definitions/{first.json()['id']}" in again["hint"]
    other = ann.post("definitions", json={**body, "name": "d2"})
    assert other.status_code == 201, other.text
    renamed = error(ann.patch(f"definitions/{other.json()['id']}", json={"name": "d1"}), 409)
    assert renamed["field"] == "name"
    assert ann.patch(f"definitions/{first.json()['id']}", json={"name": "d1", "gpus": 0}).status_code == 200
    assert bob.post("definitions", json=body).status_code == 201  # names are per owner
    assert sorted(d["name"] for d in ann.get("definitions").json()) == ["d1", "d2"]
