"""Error answers say the same thing the same way on every route (new user 5 #7, red team 6), on a real server.

Before: one lease id was field ``id``, ``job_id`` or ``lease_id`` depending on the route; a
released lease was "job l-… already cancelled"; ``GET events?since=abc`` and ``GET inventory?x=1``
answered 200 as if the argument were not there (every other route refuses it); a swapped
``since``/``until`` answered ``[]``; ``{"timeout": …}`` on a lease was told "did you mean
time_limit?" (the magic's ``--timeout`` is how long to wait for the grant); ``gpus: "two"`` was
told only of whole numbers although fractions are taken.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {OWNER_TOKEN: "ann", "tok-ann": "ann"}


@pytest.fixture(scope="module")
def ann(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("errors"), users=USERS, simulated_gpus=1)
    try:
        with httpx.Client(base_url=srv.api, headers={"Authorization": "token tok-ann"}, timeout=30) as client:
            yield client
    finally:
        srv.kill()


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    found: dict[str, Any] = response.json()["error"]
    assert found["hint"], found
    return found


@pytest.mark.parametrize("path, field", [
    ("events?since=abc", "since"),
    ("inventory?x=1", "x"),
    ("me?verbose=true", "verbose"),
    ("config?x=1", "x"),
    ("quotas?team=ml", "team"),
    ("idle?all=true", "all"),
], ids=["events", "inventory", "me", "config", "quotas", "idle"])
def test_a_query_argument_a_route_does_not_take_is_a_400_naming_it(ann: httpx.Client, path: str, field: str) -> None:
    refused = error(ann.get(path), 400)
    assert refused["field"] == field and refused["message"] == f"unknown query argument {field!r}"


def test_events_without_arguments_still_stream_and_name_the_resume_header_when_given_one(ann: httpx.Client) -> None:
    assert "Last-Event-ID" in error(ann.get("events?since=abc"), 400)["hint"]
    with ann.stream("GET", "events") as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
    assert ann.get("inventory?1796197047291").status_code == 200  # JupyterLab's cache buster stays allowed


def test_one_lease_is_named_by_its_routes_path_parameter_and_in_a_leases_words(ann: httpx.Client) -> None:
    lease = ann.post("leases", json={"gpus": 0.5, "name": "nb"}).json()
    job = ann.post("jobs", json={"gpus": 0, "command": ["sleep", "60"]}).json()
    try:
        assert ann.delete(f"leases/{lease['id']}").status_code == 200
        again = error(ann.delete(f"leases/{lease['id']}"), 409)
        assert again["field"] == "lease_id" and again["message"] == f"lease {lease['id']} is already released"
        assert again["hint"] == "request a new lease"
        kept = error(ann.post(f"leases/{lease['id']}/keepalive"), 409)
        assert kept["field"] == "lease_id" and kept["message"] == f"lease {lease['id']} is already released"
        # the route's path parameter, leases/{lease_id}, on every lease route (new user 11, N10; was "id", then "job_id")
        assert error(ann.delete(f"leases/{job['id']}"), 404)["field"] == "lease_id"
        assert error(ann.delete("leases/l-nothere"), 404)["field"] == "lease_id"
        assert error(ann.get(f"jobs/{job['id']}?verbose=1"), 400)["field"] == "verbose"
    finally:
        ann.delete(f"jobs/{job['id']}")


def test_a_swapped_since_and_until_is_refused_naming_until(ann: httpx.Client) -> None:
    for route in ("usage", "usage/report"):
        refused = error(ann.get(route, params={"since": "2026-12-03T00:00:00Z", "until": "2026-12-01T00:00:00Z"}), 400)
        assert refused["field"] == "until" and "swapped" in refused["hint"]
    assert ann.get("usage", params={"since": "2026-12-01T00:00:00Z", "until": "2026-12-03T00:00:00Z"}).status_code == 200


def test_hints_say_what_the_field_takes(ann: httpx.Client) -> None:
    timeout = error(ann.post("leases", json={"gpus": 0.5, "timeout": "soon"}), 400)
    # a lease takes no time limit: its hint says how to wait for the grant, and lists a lease's fields (N20)
    assert timeout["field"] == "timeout" and "wait_ms" in timeout["hint"] and "time_limit" not in timeout["hint"]
    job_timeout = error(ann.post("jobs", json={"gpus": 0, "timeout": "soon", "command": ["true"]}), 400)
    assert "did you mean 'time_limit'" in job_timeout["hint"] or "time_limit" in job_timeout["hint"], job_timeout
    two = error(ann.post("jobs", json={"gpus": "two", "command": ["true"]}), 400)
    assert two["field"] == "gpus" and "fraction below 1 such as 0.5" in two["hint"]


def test_red41_r2_a_name_that_reads_as_an_id_is_a_400_naming_name_on_jobs_leases_and_definitions(
        ann: httpx.Client) -> None:
    """Red team 41, R2 through REST: a job, lease or definition named like an id (``j-…``, ``l-…``, ``d-…``) — every
    client reads such a reference as an id — is a 400 naming ``name``, why and the fix; nothing is stored."""
    before = ann.get("jobs").json()
    for route, body, kind in (("jobs", {"gpus": 0, "command": ["true"], "name": "j-1m991jn1y-gm4ndp"}, "job"),
                              ("leases", {"gpus": 0.5, "name": "L-1"}, "lease"),
                              ("definitions", {"name": "d-nightly", "script": "nightly.py", "gpus": 0,
                                               "schedule": "0 7 * * *"}, "definition")):
        refused = error(ann.post(route, json=body), 400)
        assert refused["field"] == "name" and f"reads as a {kind} id" in refused["message"], refused
        assert "does not start with j-, l- or d-" in refused["hint"], refused
    dash = error(ann.post("jobs", json={"gpus": 0, "command": ["true"], "name": "a\u2010train"}), 400)
    assert dash["field"] == "name" and "U+2010 (hyphen)" in dash["message"], dash
    # nothing stored: the same jobs (by id — an earlier test's job may settle from cancelling to cancelled meanwhile:
    # the whole run of session 42 compared whole rows and failed on that)
    assert [job["id"] for job in ann.get("jobs").json()] == [job["id"] for job in before]
