"""New user 21, N9: PUT quotas that adds a per-user line below a pending job of that user warns of it.

Real parts: a SQLite store, the local executor, the services (tests/services/conftest.py). The pure
wording: tests/onboarding/test_newuser21_n9.py.
"""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest


def test_newuser21_n9_put_quotas_answers_that_warning_through_the_service(services: Services) -> None:
    # before: PUT quotas answered "warnings": [] (the service's own answer, real store)
    root = services.caller("root", admin=True)
    services.jobs.submit(root, SubmitJobRequest(gpus=4, name="hold", command=["sleep", "60"]))
    services.engine.tick()
    services.jobs.submit(root, SubmitJobRequest(gpus=2, name="big", command=["sleep", "5"]))
    answer = services.quotas.set(root, SetQuotasRequest.model_validate({"quotas": [
        {"team": "default", "guaranteed": 4}, {"team": "default", "user": "root", "guaranteed": 1, "borrowing_limit": 0.5}]}))
    assert any(w.startswith("user root's quota line in team default allows at most 1.5 GPUs: their 1 pending job")
               for w in answer.warnings), answer.warnings
    # GET quotas says the same, but for the PUT's own news of the change (hubadmin24 B4: a line set below running work)
    assert [w for w in answer.warnings if "over the new limit" not in w] == services.quotas.get(root).warnings
