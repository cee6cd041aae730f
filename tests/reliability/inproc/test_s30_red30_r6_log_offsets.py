"""red30 R6: ``GET jobs/{id}/logs?offset=N`` with N at or past ext4's largest file offset (2^44) answered
500 with a traceback — ``fh.seek`` raised OSError EINVAL in ``executors.local.read_log_sized``; the model
bounds offset at 2^62 only. Now an offset at or past the log's end is "nothing more": 200, empty text,
``next_offset`` the log's size, no seek at all; and any OSError of the seek or the read is a 400 naming
``offset``. Through the real server (pytest-jupyter), SQLite store; the job's log a real small file.
"""

from __future__ import annotations

import errno
import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors import local
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

BODY = "first line\nsecond line é\n"


def _finished_job_with_log(sched_app: Any, tmp_path: Path, job_id: str) -> int:
    log = tmp_path / f"{job_id}.log"
    log.write_text(BODY, encoding="utf-8")
    job = replace(make_job(job_id, user="ivan", state=JobState.SUCCEEDED), started_at=T0, finished_at=T0)
    sched_app.services.store.insert_job(JobRecord(job=job, executor="local", handle={"log": str(log)}))
    return log.stat().st_size


@pytest.mark.parametrize("follow", [False, True])
async def test_red30_r6_an_offset_past_a_logs_end_is_nothing_more_never_a_500(
        sched_app: Any, api: Any, tmp_path: Path, follow: bool) -> None:
    size = _finished_job_with_log(sched_app, tmp_path, f"j-r6-{follow}")
    for offset in (size, size + 1, 2**44 - 1, 2**44, 2**53, 2**62):
        params = {"offset": str(offset), "limit": "4096"}
        if follow:
            params["follow"] = "true"
        status, body = await api("GET", f"jobs/j-r6-{follow}/logs", params=params)
        assert status == 200, (offset, body)  # before: 500 internal_error from 2^44 - 1 on
        assert (body["text"], body["next_offset"], body["size"], body["offset"]) == ("", size, size, offset)
    status, body = await api("GET", f"jobs/j-r6-{follow}/logs", params={"offset": "0"})
    assert status == 200 and body["text"] == BODY and body["next_offset"] == size


def test_red30_r6_a_seek_or_read_the_file_system_refuses_is_a_400_naming_offset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "output.log"
    log.write_bytes(b"x" * 100)

    class Refusing(io.BufferedReader):
        def seek(self, *args: Any) -> int:
            raise OSError(errno.EINVAL, "Invalid argument")

    real_fdopen = local.os.fdopen
    monkeypatch.setattr(local.os, "fdopen", lambda fd, mode: Refusing(real_fdopen(fd, "rb", buffering=0)))
    with pytest.raises(ValidationError) as refused:
        local.read_log_sized(log, 50, 10)
    assert refused.value.field == "offset" and "50" in str(refused.value)
    assert refused.value.hint and "next_offset" in refused.value.hint
