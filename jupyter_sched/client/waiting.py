"""Waiting for a job to end: one poll for `jupyter-sched wait` and the Python client's ``wait`` (newuser42 N1).

A script had to poll ``job(id)`` itself; the CLI's wait polled in its own loop. :func:`poll_job` is that loop:
quick at first (a start is often imminent), then gentle (every :data:`MAX_POLL_S` seconds), each read through a
:class:`~.ride_out.RideOut` so a restart of the server is ridden out, never past the wait's own limit.
:class:`JobFailed` and :class:`WaitTimeout` are what the client's ``wait`` raises: the CLI's exit codes 4 and 5.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from ..errors import SchedError
from ..wording.jobs import TERMINAL_STATES, job_line, lease_given_back, still_going
from .ride_out import RideOut

__all__ = ["FIRST_POLL_S", "MAX_POLL_S", "JobFailed", "WaitTimeout", "ended_well", "job_ended", "poll_job"]

FIRST_POLL_S = 0.2
"""Seconds before the second read of the job."""

MAX_POLL_S = 2.0
"""Longest pause (seconds) between two reads of a job that the server answers."""

_clock: Callable[[], float] = time.monotonic
_sleep: Callable[[float], None] = time.sleep


def job_ended(job: Mapping[str, Any]) -> bool:
    """Whether ``job`` (REST shape) is in a state it never leaves (succeeded, failed, cancelled, lost, rejected)."""
    return str(job.get("state")) in TERMINAL_STATES


def ended_well(job: Mapping[str, Any]) -> bool:
    """Whether an ended ``job`` succeeded, or is a lease its owner gave back (the normal end of a lease: the
    CLI's exit 0, :func:`~jupyter_sched.wording.jobs.lease_given_back`)."""
    return job.get("state") == "succeeded" or lease_given_back(job)


class JobFailed(SchedError):
    """``wait(..., check=True)``: the job ended and did not succeed (the CLI's exit 4). The message is its line
    (state, exit code or signal, why, its last lines where the server has them); ``job`` is the ended job."""

    code = "job_failed"

    def __init__(self, job: Mapping[str, Any]) -> None:
        job_id = str(job.get("id") or "")
        super().__init__(job_line(job, datetime.now(timezone.utc)),
                         hint=f"its log: logs({job_id!r}) here, or `jupyter-sched logs {job_id}`",
                         details={"job_id": job_id, "state": job.get("state"), "exit_code": job.get("exit_code")})
        self.job = dict(job)


class WaitTimeout(SchedError, TimeoutError):
    """``wait(..., timeout=…)`` ran out before the job ended (the CLI's exit 5): the job goes on. The message
    says its state after that long (``still running after 10s: …``); ``job`` is the job as last read."""

    code = "wait_timeout"

    def __init__(self, job: Mapping[str, Any], waited_s: float) -> None:
        job_id = str(job.get("id") or "")
        super().__init__(still_going(job, waited_s, datetime.now(timezone.utc)),
                         hint=f"the job goes on: wait({job_id!r}) again, or cancel({job_id!r}) to stop it",
                         details={"job_id": job_id, "state": job.get("state"), "waited_s": waited_s})
        self.job = dict(job)


def poll_job(fetch: Callable[[], dict[str, Any]], ride: RideOut, *, limit_s: float | None = None,
             ended: Callable[[dict[str, Any]], bool] = job_ended) -> tuple[dict[str, Any], bool]:
    """Read the job (``fetch``) through ``ride`` until ``ended`` says it ended or ``limit_s`` seconds pass.

    Args:
        fetch: one read of the job (``lambda: client.job(job_id)``).
        ride: rides a restart of the server out (one per wait: its notice is said once); never past ``limit_s``.
        limit_s: how long to wait; None: until it ends.
        ended: whether a read job has ended (default :func:`job_ended`); it may show the job's progress too
            (the CLI's bar), as it sees every read.

    Returns: ``(job, True)`` once ended; ``(job as last read, False)`` when ``limit_s`` ran out first.
    Raises: what ``ride`` raises (no server answered past its limit, a refusal).
    """
    started = _clock()
    deadline = None if limit_s is None else started + limit_s
    delay = FIRST_POLL_S
    job = ride(fetch, deadline=deadline)
    while not ended(job):
        if deadline is not None and _clock() >= deadline:
            return job, False
        _sleep(delay if deadline is None else max(0.0, min(delay, deadline - _clock())))
        delay = min(delay * 1.5, MAX_POLL_S)
        job = ride(fetch, deadline=deadline)
    return job, True
