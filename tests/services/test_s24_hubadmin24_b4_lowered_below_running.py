"""hubadmin24 B4: PUT quotas (its dry run, the panel's "Save quotas") that lowers a listed team's limit
below what its running work holds says so per line — nothing is stopped, its pending jobs wait until the
team is under — in the answer's ``warnings`` and in the ``quotas_changed`` audit row. It said nothing
for a listed team (only teams without a line had their sentence).

Real parts: a SQLite store, the local executor (4 simulated GPUs), the services."""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest

SAID = ("nlp: running work holds 3 GPUs, 2 GPUs over the new limit of 1 GPU — it runs on (nothing is stopped); "
        "its 1 pending job waits until it is under; 2 more ask for more than 1 GPU and can never start under it")


def _put(services: Services, body: dict[str, object]) -> list[str]:
    answer = services.quotas.set(services.caller("boss", admin=True), SetQuotasRequest.model_validate(body))
    return list(answer.warnings or ())


def test_s24_hubadmin24_b4_lowering_a_listed_team_below_its_running_work_warns(services: Services) -> None:
    _put(services, {"quotas": [{"team": "nlp", "guaranteed": 2, "borrowing_limit": 2},
                               {"team": "ops", "guaranteed": 1, "borrowing_limit": 0}]})
    bo = services.caller("bo", admin=False, groups=["nlp"])
    for i in range(3):
        services.jobs.submit(bo, SubmitJobRequest(gpus=1, team="nlp", name=f"b{i}", command=["sleep", "60"]))
    services.engine.tick()
    for i in range(2):  # queued, no cycle yet (the PUT comes first)
        services.jobs.submit(bo, SubmitJobRequest(gpus=2, team="nlp", name=f"w{i}", command=["sleep", "5"]))
    services.jobs.submit(bo, SubmitJobRequest(gpus=1, team="nlp", name="w-one", command=["sleep", "5"]))
    lowered = {"quotas": [{"team": "nlp", "guaranteed": 1, "borrowing_limit": 0},
                          {"team": "ops", "guaranteed": 1, "borrowing_limit": 0}]}

    root = services.caller("boss", admin=True)
    dry = _put(services, {**lowered, "dry_run": True})
    assert dry[0] == SAID, dry
    assert not any(w.startswith("ops") for w in dry), "ops holds nothing: nothing to say of it"
    assert len(services.audit.list(root, GetAuditRequest(action="quotas_changed")).root) == 1, "a dry run stores nothing"

    assert _put(services, lowered)[0] == SAID
    row = services.audit.list(root, GetAuditRequest(action="quotas_changed")).root[0]
    assert row.message == (f"quotas changed by boss: changed nlp: guaranteed 2 → 1, borrowing limit 2 → 0; {SAID}"), \
        row.message  # what changed first (hubadmin25 B2)
    assert row.details["over_limit"] == [SAID], row.details

    # not lowered again (the same lines, or budgets only): said once, when it was lowered
    assert not any("over the new limit" in w for w in _put(services, lowered))
    assert not any("over the new limit" in w for w in _put(services, {"budgets": []}))
    # a per-user cap below the user's running work: per user
    capped = _put(services, {"quotas": [*lowered["quotas"],  # type: ignore[list-item]
                                        {"team": "nlp", "user": "bo", "guaranteed": 0, "borrowing_limit": 2}]})
    assert ("user bo in nlp: running work holds 3 GPUs, 1 GPU over the new limit of 2 GPUs — it runs on (nothing "
            "is stopped); its 3 pending jobs wait until it is under") in capped, capped
    # a cap below the pending requests themselves: those never start, said apart
    small = _put(services, {"quotas": [*lowered["quotas"],  # type: ignore[list-item]
                                       {"team": "nlp", "user": "bo", "guaranteed": 1, "borrowing_limit": 0}]})
    assert ("user bo in nlp: running work holds 3 GPUs, 2 GPUs over the new limit of 1 GPU — it runs on (nothing "
            "is stopped); its 1 pending job waits until it is under; 2 more ask for more than 1 GPU and can never start "
            "under it") in small, small
