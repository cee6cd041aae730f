"""Our jobs and definitions in jupyter-scheduler's vocabulary (pure mapping, no server)."""

from __future__ import annotations

import pytest

from jupyter_sched.jupyter_scheduler_backend.mapping import (
    compute_request,
    definition_fields,
    describe_definition,
    describe_job,
    job_status,
)


@pytest.mark.parametrize(("state", "stop", "want"), [
    ("pending", False, "QUEUED"), ("preempted", False, "QUEUED"), ("admitted", False, "QUEUED"),
    ("running", False, "IN_PROGRESS"), ("running", True, "STOPPING"), ("succeeded", False, "COMPLETED"),
    ("failed", False, "FAILED"), ("lost", False, "FAILED"), ("rejected", False, "FAILED"),
    ("cancelled", False, "STOPPED"),
])
def test_every_state_has_a_jupyter_scheduler_status(state: str, stop: bool, want: str) -> None:
    job = {"state": state, **({"stop_requested": {"intent": "cancel"}} if stop else {})}
    assert job_status(job) == want


def test_a_pending_job_shows_our_reason_and_a_failed_one_its_cell() -> None:
    base = {"id": "j-1", "name": "r", "notebook": "/w/report.ipynb", "submitted_at": "2025-06-02T10:00:00Z",
            "started_at": None, "finished_at": None, "parameters": {"n": 3, "who": "fay"}, "profile": "a100",
            "definition_id": "d-1"}
    pending = describe_job({**base, "state": "pending",
                            "reason": {"code": "WaitingForCapacity", "message": "waits for 1 A100: 0 of 4 free"}})
    assert (pending["status"], pending["status_message"]) == ("QUEUED", "waits for 1 A100: 0 of 4 free")
    assert pending["parameters"] == {"n": "3", "who": "fay"} and pending["compute_type"] == "a100"
    assert (pending["create_time"], pending["job_definition_id"], pending["input_filename"]) == (
        1748858400000, "d-1", "report.ipynb")
    failed = describe_job({**base, "state": "failed", "message": "cell 3 raised ImportError: x"})
    assert (failed["status"], failed["status_message"]) == ("FAILED", "cell 3 raised ImportError: x")


def test_compute_types_are_profiles_or_two_defaults() -> None:
    assert compute_request("a100", {"a100": {}}) == {"profile": "a100"}
    assert compute_request("CPU only", {}) == {"gpus": 0, "profile": None}
    assert compute_request(None, {"a100": {}}) == {}
    with pytest.raises(ValueError, match="this server offers: a100"):
        compute_request("h100", {"a100": {}})


def test_definition_fields_both_ways() -> None:
    body = definition_fields({"name": "nightly", "input_uri": "nb/x.ipynb", "schedule": "0 2 * * *",
                              "timezone": "Europe/Berlin", "active": False, "compute_type": "a100",
                              "parameters": {"k": "v"}}, root_dir="/root", profiles={"a100": {}})
    assert body == {"name": "nightly", "notebook": "/root/nb/x.ipynb", "working_dir": "/root/nb",
                    "schedule": "0 2 * * *", "timezone": "Europe/Berlin", "paused": True, "profile": "a100",
                    "compute_type": "a100", "parameters": {"k": "v"}}
    described = describe_definition({"id": "d-1", "name": "nightly", "notebook": "/root/nb/x.ipynb",
                                     "schedule": "0 2 * * *", "timezone": "Europe/Berlin", "paused": True,
                                     "parameters": {}, "job": {"profile": "a100"}, "created_at": "2025-06-02T10:00:00Z",
                                     "updated_at": "2025-06-02T10:00:00Z", "compute_type": None})
    assert (described["active"], described["compute_type"], described["input_filename"]) == (False, "a100", "x.ipynb")
