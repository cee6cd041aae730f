"""newuser38 n4: the audit record of ``jupyter-sched submit -- sleep 100`` read ``training 'small' submitted``: every
CLI job was called by its kind's default, a category its owner never chose. A batch job is "job 'small'"; a service
(inference), asked for by that name, says so; the kind is in the record's details. Real parts: the services and a
SQLite store."""

from __future__ import annotations

from jupyter_sched.model import JobKind
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest


def test_newuser38_n4_a_submits_audit_names_a_job_not_its_default_kind(services: Services) -> None:
    ann = services.caller("ann", admin=False)
    small = services.jobs.submit(ann, SubmitJobRequest(name="small", gpus=0, command=["sleep", "100"]))
    serve = services.jobs.submit(ann, SubmitJobRequest(name="serve", gpus=0, command=["sleep", "100"], port=8000),
                                 kind=JobKind.INFERENCE)
    events = {e.job_id: e for e in services.store.list_events() if e.action == "submit"}
    assert events[small.id].message == "job 'small' submitted", events[small.id]
    assert events[serve.id].message == "inference service 'serve' submitted", events[serve.id]
    assert events[small.id].details["kind"] == "training" and events[serve.id].details["kind"] == "inference"
