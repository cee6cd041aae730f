"""newuser36 n2 (nit): ``jupyter-sched cancel a-sweep5`` (another user's job, by its name) said "'a-sweep5' is
n36a's job j-… (pending), not yours: … ask n36a or an admin", while ``cancel j-…`` (the same job, by its id)
said "j-… is another user's job: you may cancel only your own — ask its owner (the queue names them) or an
admin"; the same for ``hold``. The queue shows every user each live job's id beside its owner, so the refusal
by id names the owner too, and nothing more of the job; an ended job (not in the queue) stays a 404 naming
nobody.

Real parts: the application services on a SQLite store with a manual clock (tests/services/conftest.py); the
client's refusal of a name made from the queue lines the asker reads.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.client._wire import named_by_others
from jupyter_sched.errors import AuthorizationError, NotFoundError
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest
from jupyter_sched.services.models.jobs import UpdateJobRequest
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

BO = Caller(user="bo", teams=("default",))


def test_newuser36_n2nit_cancel_and_hold_by_id_name_the_owner_the_queue_shows(services: Services) -> None:
    services.store.insert_job(JobRecord(job=replace(make_job("j-sweep5", user="n36a"), submitted_at=T0)))
    services.store.insert_job(JobRecord(job=make_job("j-ended", user="n36a", state=JobState.SUCCEEDED)))
    seen = [e for e in services.jobs.queue_page(BO, GetQueueRequest()).entries.model_dump(mode="json")
            if e["id"] == "j-sweep5"]
    assert [e["user"] for e in seen] == ["n36a"], seen  # the rule: bo's queue shows whose it is
    for request, call in (("cancel only your own", lambda: services.jobs.cancel(BO, "j-sweep5")),
                          ("hold, release or change only your own",
                           lambda: services.jobs.update(BO, "j-sweep5", UpdateJobRequest(held=True)))):
        with pytest.raises(AuthorizationError) as refused:  # before: "… is another user's job … ask its owner"
            call()
        assert refused.value.message.startswith(f"j-sweep5 is n36a's job: you may {request}"), refused.value.message
        assert refused.value.hint == "ask n36a or an admin", refused.value.hint
    # by name (the CLI's words from the queue line): the same owner, the same thing to do
    by_name = named_by_others("a-sweep5", seen, admin=False, command="jupyter-sched cancel")
    assert by_name.hint == "ask n36a or an admin" and "you may cancel only your own" in by_name.message, by_name
    with pytest.raises(NotFoundError) as hidden:  # ended: not in the queue, its owner not named
        services.jobs.cancel(BO, "j-ended")
    assert "n36a" not in f"{hidden.value.message} {hidden.value.hint}", hidden.value
