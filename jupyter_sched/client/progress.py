"""``jupyter_sched.report_progress(done, total)``: a running job tells the scheduler how far it is.

Call it from inside a job (a script, a notebook or a cell run by ``%%schedule``), e.g. once per
training step or epoch::

    import jupyter_sched
    for step in range(steps):
        train_step()
        jupyter_sched.report_progress(step + 1, steps)

The scheduler reads the job's end from its reports for the ETAs it shows the jobs waiting for its
GPUs (issue 16 item 4); nothing it decides depends on them. Outside a job (no ``JUPYTER_SCHED_JOB_ID``
in the environment) the call does nothing but warn once. A call made sooner than the server's
``min_interval_s`` (10 s) after the last one sent is not sent (the last step, ``done == total``,
always is), so calling it every step costs nothing; a server that cannot be reached is warned about
once and the job runs on. The server is the one that started the job: ``JUPYTER_SCHED_URL`` with the job's
own progress token ``JUPYTER_SCHED_JOB_TOKEN``, both set by the scheduler in every job it starts (the token
may report this job's progress and do nothing else; one it no longer takes — the job's run ended — is
warned about once). Without them (a job of an older server) it is found as
:func:`jupyter_sched.client.connect` finds it, with the owner's own token.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from typing import Any

from ..errors import AuthenticationError, ValidationError
from . import connect
from .discovery import ENV_URL, Connection, NoServerError
from .sync import SchedClient, ServerUnreachableError

__all__ = ["ENV_JOB_ID", "ENV_JOB_TOKEN", "report_progress"]

ENV_JOB_ID = "JUPYTER_SCHED_JOB_ID"
"""The variable the executors set in a job's environment: its id."""
ENV_JOB_TOKEN = "JUPYTER_SCHED_JOB_TOKEN"
"""The variable the executors set in a job's environment: its progress token (with ``JUPYTER_SCHED_URL``)."""

_lock = threading.Lock()
_state: dict[str, Any] = {"client": None, "sent_at": None, "interval_s": 10.0, "warned": set()}


def _warn_once(key: str, text: str) -> None:
    warned: set[str] = _state["warned"]
    if key not in warned:
        warned.add(key)
        warnings.warn(text, RuntimeWarning, stacklevel=3)


def report_progress(done: float, total: float) -> dict[str, Any] | None:
    """Report that this job has done ``done`` of ``total`` steps (iterations, batches, epochs).

    Args:
        done: steps done so far (>= 0, at most ``total``).
        total: steps to do in all (> 0).

    Returns:
        The server's answer (``{"job_id", "stored", "min_interval_s", "progress"}``), or None when
        nothing was sent: outside a job (warned once), sooner than ``min_interval_s`` after the last
        report sent, or the server could not be reached (warned once).

    Raises:
        ValidationError: ``done``/``total`` are not numbers with ``0 <= done <= total`` and
            ``total > 0`` (said by the server, naming the field).
        NotFoundError / AuthorizationError / ConflictError: the job is not the caller's, or not running.
    """
    job_id = os.environ.get(ENV_JOB_ID, "").strip()
    if not job_id:
        _warn_once("outside", f"jupyter_sched.report_progress: not inside a scheduled job ({ENV_JOB_ID} is not "
                              "set); nothing is reported")
        return None
    if isinstance(done, bool) or isinstance(total, bool) or not isinstance(done, (int, float)) \
            or not isinstance(total, (int, float)):
        raise ValidationError(f"done and total must be numbers (got {type(done).__name__} and {type(total).__name__})",
                              field="done", hint="e.g. report_progress(120, 1000)")
    with _lock:
        now = time.monotonic()
        sent_at = _state["sent_at"]
        if sent_at is not None and now - sent_at < _state["interval_s"] and done < total:
            return None
        _state["sent_at"] = now
        try:
            client: SchedClient | None = _state["client"]
            if client is None:
                client = _state["client"] = _job_client() or connect()
            answer = client.report_progress(job_id, float(done), float(total))
        except (NoServerError, ServerUnreachableError) as exc:
            _warn_once("unreachable", f"jupyter_sched.report_progress: the scheduler could not be reached ({exc}); "
                                      "the job runs on, its progress is not reported")
            return None
        except AuthenticationError as exc:
            if client is None or client.connection.source != "job-token":
                raise
            _warn_once("token", f"jupyter_sched.report_progress: the scheduler no longer takes this job's token "
                                f"({exc.message}); the job runs on, its progress is not reported")
            return None
        interval = answer.get("min_interval_s")
        if isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval >= 0:
            _state["interval_s"] = float(interval)
        return answer


def _job_client() -> SchedClient | None:
    """A client of the server that started this job, with the job's own progress token (None when the
    job's environment has no ``JUPYTER_SCHED_JOB_TOKEN`` and ``JUPYTER_SCHED_URL``)."""
    token = os.environ.get(ENV_JOB_TOKEN, "").strip()
    url = os.environ.get(ENV_URL, "").strip()
    if not token or not url:
        return None
    return SchedClient(Connection(url=url if url.endswith("/") else url + "/", token=token, source="job-token"))
