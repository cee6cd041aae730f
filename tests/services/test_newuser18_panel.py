"""New user 18's panel findings where the server's words or fields change (N8: a gang's size in
REST, N16: the admit audit's GPU count); the panel's parts are in labextension/test (format, forms).

Real parts: a SQLite store, the local executor, the service's own cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, ListJobsRequest, SubmitJobRequest
from jupyter_sched.wording.jobs import gpus_text

# ---- N8: what a job's size is, in REST ------------------------------------------------------------

def test_newuser18_n8_rest_says_the_total_gpus_of_a_gang_of_groups(services: Services) -> None:
    """A 1-GPU launcher + 2-GPU trainer read ``gpus: 2, workers: 2`` (2 x 2 = 4 for a 3-GPU job):
    ``resources.total_gpus`` says 3, in GET jobs/J and in the list (the codec's field: events carry it too)."""
    bo = services.caller("bo", admin=False)
    gang = services.jobs.submit(bo, SubmitJobRequest.model_validate({
        "name": "gangP", "command": ["sleep", "400"],
        "groups": [{"name": "launcher", "gpus": 1}, {"name": "trainer", "gpus": 2, "workers": 1}]}))
    services.engine.tick()
    one = services.jobs.get(bo, gang.id).model_dump(mode="json")
    listed = {j["id"]: j for j in services.jobs.list(bo, ListJobsRequest()).jobs.model_dump(mode="json")}
    for job in (one, listed[gang.id]):
        res: dict[str, Any] = job["resources"]
        assert res["total_gpus"] == 3, res
        assert (res["gpus"], res["workers"]) == (2, 2)  # kept for older clients; the schema says what they are
        assert gpus_text(job) == "1 x 1 + 1 x 2 GPUs"  # the CLI's words, which the panel writes with a multiplication sign


@pytest.mark.parametrize(("request_body", "total"), [
    ({"gpus": 2, "workers": 2}, 4),
    ({"gpus": 0.5}, 0.5),
    ({"gpus": 0}, 0),
    ({"gpus": 1}, 1),
])
def test_newuser18_n8_total_gpus_of_other_jobs(services: Services, request_body: dict[str, Any], total: float) -> None:
    bo = services.caller("bo", admin=False)
    job = services.jobs.submit(bo, SubmitJobRequest.model_validate({"command": ["sleep", "30"], **request_body}))
    wire = services.jobs.get(bo, job.id).model_dump(mode="json")
    assert wire["resources"]["total_gpus"] == total
    assert type(wire["resources"]["total_gpus"]) is type(total)  # 4, not 4.0


def test_newuser18_n8_openapi_documents_total_gpus_and_what_gpus_means_for_a_gang() -> None:
    doc = yaml.safe_load((Path(__file__).resolve().parents[2] / "jupyter_sched" / "extension" / "openapi.yaml").read_text())
    fields = doc["components"]["schemas"]["Resources"]["properties"]
    assert "sum over groups of workers x gpus" in fields["total_gpus"]["description"]
    assert "gpus x workers is no total for a gang of groups" in fields["groups"]["description"]


# ---- N16: the admit audit's GPU count -------------------------------------------------------------

def test_newuser18_n16_admit_reason_says_1_gpu_borrowed_not_1_gpus(services: Services) -> None:
    """The admit audit says "borrowing 1 GPU" and "borrowing 0.5 GPU", never "1 GPUs".

    The half share opens a GPU of its own here (the whole job holds another one, nothing else is
    shared), and since red team 38 R3 (2dde5ddc) a GPU only one team's shares hold counts whole
    against its lines: the share borrows 1 GPU. So the guarantee is 0.5 GPU: whichever of the two is
    admitted first borrows 0.5 GPU, the second 1 GPU — both forms of the count are said."""
    root = services.caller("root", admin=True)
    bo = services.caller("bo", admin=False)
    team = services.accounting.me(bo).team
    with services.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(Quota(team=team, guaranteed=0.5, borrowing_limit=None),)))
    whole = services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "30"]))
    half = services.jobs.submit(bo, SubmitJobRequest(gpus=0.5, command=["sleep", "30"]))
    services.engine.tick()
    said = {r.job_id: r.message for r in services.audit.list(root, GetAuditRequest(action="admit")).root}
    ends = sorted(said[j.id].split(": ", 1)[1] for j in (whole, half))
    assert ends == [f"fits; borrowing 0.5 GPU above {team}'s guarantee",
                    f"fits; borrowing 1 GPU above {team}'s guarantee"], said
    assert "GPUs above" not in " ".join(said.values())
