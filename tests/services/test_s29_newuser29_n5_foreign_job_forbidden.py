"""newuser29 n5: a refusal of another user's live job said "j-… is another user's job: you may read only
your own jobs' logs — ask its owner …" (the job exists: the shared queue shows it) but was tagged
``[not_found]``, HTTP 404. The one refusal (services.context ``_not_yours``) is now ``forbidden``, 403, on
every route that makes it (read, logs, cancel, update, the bulk cancel's message), and so is its audit row;
an ended job of another user stays a 404 "no job … visible to you" (not shown to others at all).

Real parts: the application services on a SQLite store with a manual clock; job rows as the engine stores them.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.errors import AuthorizationError, NotFoundError, SchedError, http_status_for
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetJobLogsRequest
from jupyter_sched.services.models.jobs import UpdateJobRequest
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

BO = Caller(user="bo", teams=("default",))


def test_newuser29_n5_another_users_live_job_is_refused_forbidden_with_its_words(services: Services) -> None:
    live = make_job("j-live", state=JobState.RUNNING, allocation=Allocation(node="vm", gpu_uuids=("GPU-vm-0",)))
    services.store.insert_job(JobRecord(job=replace(live, started_at=T0)))
    services.store.insert_job(JobRecord(job=make_job("j-done", state=JobState.SUCCEEDED)))
    refusals: dict[str, SchedError] = {}
    for verb, call in (("read", lambda: services.jobs.get(BO, "j-live")),
                       ("logs", lambda: services.jobs.logs(BO, "j-live", GetJobLogsRequest())),
                       ("cancel", lambda: services.jobs.cancel(BO, "j-live")),
                       ("update", lambda: services.jobs.update(BO, "j-live", UpdateJobRequest(held=True)))):
        with pytest.raises(AuthorizationError) as refused:
            call()
        refusals[verb] = refused.value
    for verb, err in refusals.items():
        assert (err.code, http_status_for(err)) == ("forbidden", 403), verb
        assert err.message.startswith("j-live is another user's job: you may "), err.message
        assert err.hint == "ask its owner (the queue names them) or an admin"
    assert refusals["logs"].message == "j-live is another user's job: you may read only your own jobs' logs"
    rows = [e.details for e in services.store.list_events(job_id="j-live") if e.action == "refused"]
    assert rows and all((d["code"], d["status"]) == ("forbidden", 403) for d in rows), rows
    with pytest.raises(NotFoundError) as hidden:  # an ended job of another user: not shown, still a 404
        services.jobs.get(BO, "j-done")
    assert (hidden.value.code, http_status_for(hidden.value)) == ("not_found", 404)
    assert hidden.value.message == "no job 'j-done' visible to you"
