"""newuser26 N7 (session 27): ``GET jobs/{id}/logs`` says the log's size in bytes (``size``), so a
reader of a long log (the panel's log viewer) opens it at its end — one read at ``size - N`` —
instead of reading every byte from 0 to find it (~110 requests for 7 MB; the magic bisected with
one-byte reads for want of it).

Real parts: the application services on a SQLite store, the job's log a real file read by
``read_log_sized`` (the one reader of ``read_log``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from jupyter_sched.admission import Caller
from jupyter_sched.executors.local import read_log
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetJobLogsRequest
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

ANA = Caller(user="ana", teams=("default",))


def test_newuser26_n7_the_log_answer_says_the_logs_size_and_a_read_from_its_end_needs_no_other(
        services: Services, tmp_path: Path) -> None:
    # before: the answer had text/offset/next_offset/finished/notes only — no way to start at the end
    log = tmp_path / "output.log"
    body = "".join(f"row {i} é {'y' * 60}\n" for i in range(2000))
    log.write_text(body, encoding="utf-8")
    size = log.stat().st_size
    job = replace(make_job("j-big", state=JobState.SUCCEEDED), started_at=T0, finished_at=T0)
    services.store.insert_job(JobRecord(job=job, executor="local", handle={"log": str(log)}))
    first = services.jobs.logs(ANA, "j-big", GetJobLogsRequest(offset=0, limit=10))
    assert (first.size, first.next_offset, first.text) == (size, 10, body[:9])  # é is 2 bytes
    tail = services.jobs.logs(ANA, "j-big", GetJobLogsRequest(offset=size - 200, limit=1000))
    assert tail.next_offset == size and tail.size == size
    assert body.endswith(tail.text.partition("\n")[2]) and tail.text.endswith("y\n")
    assert first.to_wire()["size"] == size


def test_newuser26_n7_read_log_sized_agrees_with_read_log(tmp_path: Path) -> None:
    from jupyter_sched.executors.local import read_log_sized

    log = tmp_path / "output.log"
    log.write_bytes("aé€😀\n".encode() * 3)
    for offset, limit in [(0, 4), (1, 3), (0, 100), (30, 5), (50, 5)]:
        text, next_offset, size = read_log_sized(log, offset, limit)
        assert (text, next_offset) == read_log(log, offset, limit)
        assert size == max(len("aé€😀\n".encode()) * 3, next_offset)
