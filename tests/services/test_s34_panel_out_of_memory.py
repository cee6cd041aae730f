"""s34-panel (newuser33 n9's next step): the panel's Resubmit of a job the out-of-memory killer ended sent it again at
once, to be killed the same way; it now offers the Submit form with Memory to change — which needs the panel to know
the job ended so. ``GET jobs/{id}`` says ``ended_out_of_memory: true`` for a failed job whose message is one of
:mod:`jupyter_sched.executors.outcome`'s out-of-memory sentences (read from the sentence's head, never from the job's
own output quoted after ``last lines:``). Real parts: the outcome module's own writers, the services on SQLite.
"""

from __future__ import annotations

import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

from jupyter_sched.executors.outcome import (
    describe_exit,
    describe_termination,
    kernel_death_sentence,
    said_out_of_memory,
)
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job


def test_s34_panel_the_out_of_memory_sentences_are_known_and_a_jobs_own_output_is_not(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text("loading\nthe out-of-memory killer; killed by SIGKILL (likely out of memory\n")
    said = {
        "kernel, counted": kernel_death_sentence(9, peak_mib=1900, oom_killed=True, limit_mib=2048, cell_index=5, first_line="x = load()"),
        "kernel, near its limit": kernel_death_sentence(9, peak_mib=2040, oom_killed=False, limit_mib=2048, cell_index=5, first_line="x = load()"),
        "kubernetes OOMKilled": describe_termination(137, "", reason="OOMKilled"),
        "a cgroup's kill": describe_exit(-signal.SIGKILL, oom_kills=1, memory_limit_mib=2048),
    }
    for what, sentence in said.items():
        assert said_out_of_memory(sentence), (what, sentence)
    other = {
        "kernel, no kill counted": kernel_death_sentence(9, peak_mib=50, oom_killed=False, oom_counted=True, cell_index=5, first_line="x = load()"),
        "a plain SIGKILL": describe_exit(-signal.SIGKILL, oom_kills=0),
        "its own output says the words": describe_exit(1, log=log),
        "a time limit": "killed by SIGTERM (time limit 1m reached)",
    }
    for what, sentence in other.items():
        assert not said_out_of_memory(sentence), (what, sentence)
    assert not said_out_of_memory(None)


def test_s34_panel_get_job_says_a_failed_job_ended_out_of_memory(services: Any) -> None:
    from jupyter_sched.admission import Caller

    ends = {"j-oom": describe_exit(-signal.SIGKILL, oom_kills=2, memory_limit_mib=4096),
            "j-crash": describe_exit(1)}
    for job_id, message in ends.items():
        record = services.store.insert_job(JobRecord(job=make_job(job_id, user="ann", gpus=0)))
        with services.store.transaction() as tx:
            tx.update_job(replace(record, job=replace(record.job, state=JobState.FAILED, started_at=T0,
                                                      finished_at=T0, exit_code=1, message=message)))
    ann = Caller(user="ann", teams=("default",))
    assert services.jobs.get(ann, "j-oom").to_wire()["ended_out_of_memory"] is True
    assert "ended_out_of_memory" not in services.jobs.get(ann, "j-crash").to_wire()


def test_newuser33_n3_get_jobs_by_a_submit_key_says_whether_that_submit_made_a_job(services: Any) -> None:
    """newuser33 N3 (nit): after a Submit whose outcome was unknown, the panel said "may or may not have been
    submitted" for good; ``GET jobs?idempotency_key=K`` answers it: the caller's job that key made, or none."""
    import pytest

    from jupyter_sched.errors import ValidationError
    from jupyter_sched.services.models import ListJobsRequest, SubmitJobRequest

    ann, bo = services.caller("ann", admin=False), services.caller("bo", admin=False)
    made, _ = services.jobs.submit_keyed(ann, SubmitJobRequest(name="b-during", gpus=0, command=["true"]), "panel-k1")

    def listed(caller: Any, key: str) -> list[str]:
        return [job.id for job in services.jobs.list(caller, ListJobsRequest(idempotency_key=key)).jobs.root]

    assert listed(ann, "panel-k1") == [made.id]
    assert listed(ann, "panel-k2") == []  # a submit that made nothing
    assert listed(bo, "panel-k1") == []  # another user's same key is their own: never ann's job
    with pytest.raises(ValidationError) as refused:
        listed(ann, "not a key!")
    assert refused.value.field == "idempotency_key"
