"""Work no request carries is admitted as its owner's own requests are (red-team finding 1, issue 15).

A job definition fires with nobody asking: in hub mode its run must be charged to the owner's HUB
team and held to that team's ceiling, as ``POST jobs`` is — never to the default team by omission.
The real services over SQLite (tests/definitions/def_builders.Server), a manual clock; the hub's
answer about a user is a function here (``Admission.roles_lookup``; the central service asks the
real hub API, walked in tests/hub/test_hub_integration.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from jupyter_sched.admission import gate
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.model import JobState
from jupyter_sched.services.models import SetQuotasRequest, parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest
from jupyter_sched.store import sqlite_url
from tests.definitions.def_builders import Server, at

DAILY = {"name": "nightly", "notebook": "n.ipynb", "schedule": "0 12 * * *", "gpus": 1}
MALLORY_GROUPS = ["interns"]


class Hub:
    """What the hub says about a user: their groups, or no answer."""

    def __init__(self, groups: Sequence[str] | None) -> None:
        self.groups = groups
        self.asked: list[str] = []

    def __call__(self, user: str) -> tuple[bool, Sequence[str]]:
        self.asked.append(user)
        if self.groups is None:
            raise OSError("hub unreachable")
        return False, self.groups


@pytest.fixture
def svc(tmp_path: Path) -> Server:
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    server = Server(sqlite_url(tmp_path / "sched.sqlite"), clock, tmp_path / "jobs")
    admin = server.services.caller("carol", admin=True)
    server.services.quotas.set(admin, parse(SetQuotasRequest, {"quotas": [
        {"team": "interns", "guaranteed": 1, "borrowing_limit": 0}, {"team": "ml", "guaranteed": 1}]}))
    return server


def create_as_hub_user(svc: Server, body: dict[str, object]) -> str:
    caller = svc.services.caller("mallory", admin=False, groups=MALLORY_GROUPS)  # her request, through the hub
    return str(svc.definitions.create(caller, parse(CreateDefinitionRequest, body)).id)


def fire(svc: Server) -> list[str]:
    svc.clock.set(at("2025-06-02T12:00:30+00:00"))
    return list(svc.fire_due().created)


def test_a_scheduled_run_is_charged_to_the_owners_hub_team_as_the_hub_says_now(
        svc: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = Hub(MALLORY_GROUPS)
    svc.services.admission.roles_lookup = hub
    create_as_hub_user(svc, DAILY)
    monkeypatch.setattr(gate, "ROLES_FRESH_S", 0.0)  # her request's roles are stale: the hub is asked
    (run,) = fire(svc)
    job = svc.store.get_job(run).job
    assert job.spec.team == "interns" and job.state is not JobState.REJECTED, job
    assert hub.asked == ["mallory"]


def test_a_run_over_the_hub_teams_ceiling_is_refused_at_firing_not_charged_to_default(svc: Server) -> None:
    svc.services.admission.roles_lookup = Hub(MALLORY_GROUPS)
    create_as_hub_user(svc, DAILY)
    admin = svc.services.caller("carol", admin=True)  # interns' ceiling drops to 0 after she saved it
    svc.services.quotas.set(admin, parse(SetQuotasRequest, {"quotas": [
        {"team": "interns", "guaranteed": 0, "borrowing_limit": 0}, {"team": "ml", "guaranteed": 1}]}))
    (run,) = fire(svc)
    job = svc.store.get_job(run).job
    assert job.state is JobState.REJECTED and job.spec.team != "default", job
    assert "can never fit the limit of team interns" in (job.message or ""), job.message


def test_with_the_hub_silent_the_last_roles_her_requests_showed_are_used(svc: Server,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    svc.services.admission.roles_lookup = Hub(None)
    create_as_hub_user(svc, DAILY)
    monkeypatch.setattr(gate, "ROLES_FRESH_S", 0.0)
    (run,) = fire(svc)
    assert svc.store.get_job(run).job.spec.team == "interns"


def test_an_owner_the_hub_cannot_place_gets_a_refused_run_and_an_audit_record(svc: Server, tmp_path: Path) -> None:
    svc.services.admission.roles_lookup = Hub(MALLORY_GROUPS)
    create_as_hub_user(svc, DAILY)
    restarted = Server(sqlite_url(tmp_path / "sched.sqlite"), svc.clock, tmp_path / "jobs")  # no request seen yet
    restarted.services.admission.roles_lookup = Hub(None)
    (run,) = fire(restarted)
    job = restarted.store.get_job(run).job
    assert job.state is JobState.REJECTED and "hub groups of mallory are unknown" in (job.message or ""), job
    refused = restarted.store.list_events(action="refused", user="mallory")
    assert refused and refused[-1].details["field"] == "team", refused


def test_embedded_owners_are_resolved_as_their_requests_are(svc: Server) -> None:
    assert svc.services.admission.roles_lookup is None
    owner, asking = svc.services.admission.owner("ana"), svc.services.caller("ana", admin=False)
    assert (owner.teams, dict(owner.granted), owner.admin) == (asking.teams, dict(asking.granted), False)
