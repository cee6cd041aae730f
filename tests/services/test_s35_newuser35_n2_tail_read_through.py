"""newuser35 N2: ``GET jobs/{id}/logs?tail=N`` of a job whose executor keeps its log in no file here (a
Kubernetes pod's): the service reads it through in the largest slices and answers the same tail as a log
file's read back from its end — whole lines, at most ``limit`` bytes, ``offset`` where they begin and
``next_offset`` the end.

Real parts: the application services on a SQLite store. The executor's ``logs`` is a double of a pod's log
(no Kubernetes here), keeping :meth:`Executor.logs`'s contract: ``(text, next_offset)`` from a byte offset.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetJobLogsRequest
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

ANA = Caller(user="ana", teams=("default",))


def test_newuser35_n2_a_pod_logs_tail_is_read_through_and_cut_as_a_files(services: Services,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    pod_log = "".join(f"step {i} é\n" for i in range(300_000)).encode() + b"last, unfinished"

    def logs(job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        end = min(len(pod_log), offset + limit)
        while end < len(pod_log) and pod_log[end] & 0xC0 == 0x80:  # never a split character
            end -= 1
        return pod_log[offset:end].decode(), end

    monkeypatch.setattr(services.executor, "logs", logs)
    job = replace(make_job("j-pod", state=JobState.SUCCEEDED), started_at=T0, finished_at=T0)
    services.store.insert_job(JobRecord(job=job, executor="kubernetes", handle={"pod": "j-pod-0"}))
    answer = services.jobs.logs(ANA, "j-pod", GetJobLogsRequest(tail=2))
    assert answer.text == "step 299999 é\nlast, unfinished"
    assert (answer.offset, answer.next_offset) == (len(pod_log) - len(answer.text.encode()), len(pod_log))
    bounded = services.jobs.logs(ANA, "j-pod", GetJobLogsRequest(tail=100_000, limit=1000))
    assert len(bounded.text.encode()) <= 1000 and bounded.text.startswith("step ")  # from a line's start
    assert pod_log.endswith(bounded.text.encode()) and bounded.offset == len(pod_log) - len(bounded.text.encode())
    assert services.jobs.logs(ANA, "j-pod", GetJobLogsRequest(tail=0)).text == ""
