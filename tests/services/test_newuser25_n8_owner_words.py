"""newuser25 N8: the panel called the reader's own pending job's history "its owner's other runs"
(``… ETA … when third (j-…) ends (if it ends at ~13 % of its time limit, as its owner's other runs
did)``) where ``jupyter-sched queue`` and the running cards said "your other runs". The panel shows
the server's sentences (``reason.text``) of the queue read and of the event stream; both now say
them as the reader reads them — the owner is told "your", anyone else "its owner's" or less.

Real parts: the core's reason for eve's job waiting on her own running job whose end was learnt from
her other programs, the REST models and the event-stream renderer.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from jupyter_sched.backfill.history import OTHER_RUNS
from jupyter_sched.model import JobState
from jupyter_sched.model.codec import job_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.services.models.jobs import QueueEntry, job_in_words
from tests.core.core_builders import T0, make_job, make_node, running, snapshot

YOURS = "(if it ends at ~12 % of its time limit, as your other runs did)"
OWNERS = "as its owner's other runs did"


def _waiting() -> dict[str, Any]:
    """eve's ``eve-three`` (pending) as the engine's dict: it waits on her ``eve-two``, whose end was
    learnt from her runs of other programs (36 s of its 5m limit)."""
    jobs = [running(make_job("eve-two", gpus=2, user="eve", time_limit_s=300), "n1", started=0),
            make_job("eve-three", gpus=1, user="eve", time_limit_s=60, submitted=0.05)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, now=T0 + timedelta(seconds=10)),
                   runtime_estimates={"eve-two": 36.0}, runtime_sources={"eve-two": OTHER_RUNS})
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["eve-three"]
    job = replace(jobs[1], state=JobState.PENDING, reason=reason)
    return job_to_dict(job)


def test_newuser25_n8_the_event_stream_says_your_other_runs_to_the_owner() -> None:
    own = job_in_words(_waiting(), viewer="eve")["reason"]["text"]["eta"]
    assert own.endswith(YOURS), own
    admin = job_in_words(_waiting(), viewer="boss", admin=True)["reason"]["text"]["eta"]
    assert OWNERS in admin and "your" not in admin, admin


def test_newuser25_n8_the_queue_read_says_your_other_runs_to_the_owner() -> None:
    line = QueueEntry.model_validate({**_waiting(), "mine": True, "position": 1}, context={"viewer": "eve"})
    assert line.reason is not None and line.reason.text is not None
    assert line.reason.text.eta.endswith(YOURS), line.reason.text.eta
    other = QueueEntry.model_validate({**_waiting(), "mine": False, "position": 1},
                                      context={"viewer": "boss", "admin": True})
    assert other.reason is not None and other.reason.text is not None
    assert OWNERS in other.reason.text.eta and "your" not in other.reason.text.eta, other.reason.text.eta
