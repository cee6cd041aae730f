"""newuser29 n14: ``PATCH jobs/{id} {"time_limit": null}`` was refused "say what to change: held, time_limit,
priority or top" with ``"field": "held"`` — the field sent was time_limit. A field sent as null is now named,
with what it should have been; an empty body still says what may change.

Real parts: the application services on a SQLite store with a manual clock; a pending job row."""

from __future__ import annotations

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.errors import ValidationError
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models.jobs import UpdateJobRequest
from jupyter_sched.store import JobRecord
from tests.runtime.builders import make_job

ANA = Caller(user="ana", teams=("default",))


@pytest.mark.parametrize(("body", "field", "hint"), [
    ({"time_limit": None}, "time_limit", 'give a limit, e.g. "+1h", or 0 for none'),
    ({"held": None}, "held", "give true to hold it or false to release it"),
    ({"priority": None}, "priority", 'give a class, e.g. "low"'),
    ({}, "held", 'e.g. {"held": true}, {"time_limit": "+1h"} or {"priority": "low"}'),
], ids=["time_limit null", "held null", "priority null", "empty"])
def test_newuser29_n14_a_null_field_is_refused_naming_that_field(services: Services, body: dict[str, object],
                                                                 field: str, hint: str) -> None:
    services.store.insert_job(JobRecord(job=make_job("j-wait", state=JobState.PENDING)))
    with pytest.raises(ValidationError) as refused:
        services.jobs.update(ANA, "j-wait", UpdateJobRequest.model_validate(body))
    assert (refused.value.field, refused.value.hint) == (field, hint), refused.value
    assert refused.value.message == (f"{field}: null is not a change" if body else
                                     "say what to change: held, time_limit, priority or top")
