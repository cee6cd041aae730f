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
always is, and the server stores it), so calling it every step costs nothing. It never raises: a value
it cannot report, a server that cannot be reached or refuses the report is warned about once and the
job runs on. The server is the one that started the job: ``JUPYTER_SCHED_URL`` with the job's
own progress token ``JUPYTER_SCHED_JOB_TOKEN``, both set by the scheduler in every job it starts (the token
may report this job's progress and do nothing else; one it no longer takes — the job's run ended — is
warned about once). Without them (a job of an older server) it is found as
:func:`jupyter_sched.client.connect` finds it, with the owner's own token.
"""

from __future__ import annotations

import math
import operator
import os
import sys
import threading
import time
import warnings
from types import FrameType
from typing import Any

from ..errors import AuthenticationError, SchedError
from . import connect
from .discovery import ENV_URL, Connection, NoServerError
from .sync import SchedClient, ServerUnreachableError

__all__ = ["ENV_JOB_ID", "ENV_JOB_TOKEN", "MAX_STEPS", "report_progress"]

ENV_JOB_ID = "JUPYTER_SCHED_JOB_ID"
"""The variable the executors set in a job's environment: its id."""
ENV_JOB_TOKEN = "JUPYTER_SCHED_JOB_TOKEN"
"""The variable the executors set in a job's environment: its progress token (with ``JUPYTER_SCHED_URL``)."""

_lock = threading.Lock()
_state: dict[str, Any] = {"client": None, "sent_at": None, "interval_s": 10.0, "warned": set()}


_OURS = frozenset({os.path.normcase(os.path.abspath(__file__)),
                   os.path.normcase(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                 "__init__.py"))})
"""The files whose frames a warning skips: this module and the package's ``jupyter_sched.report_progress``."""

DROPPED = "this report is dropped and later ones are tried again; the job runs on"
"""How every warning of a report that did not reach the scheduler ends (new user 21, N8: "its progress is not
reported" read as for good, while the next call may well get through)."""


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning of :func:`_warn_once` at the user's line: the first frame
    outside this module and ``jupyter_sched/__init__.py`` (new user 21, N8: a fixed level pointed at
    ``jupyter_sched/__init__.py:50`` when called through ``jupyter_sched.report_progress``)."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.normcase(os.path.abspath(frame.f_code.co_filename)) in _OURS:
        frame, level = frame.f_back, level + 1
    return level


def _warn_once(key: str, text: str) -> None:
    """Warn ``text`` (a ``RuntimeWarning`` at the caller's line) the first time ``key`` comes up."""
    warned: set[str] = _state["warned"]
    if key not in warned:
        warned.add(key)
        warnings.warn(text, RuntimeWarning, stacklevel=_caller_level())


MAX_STEPS = 1e15
"""The largest ``done`` or ``total`` the server takes (``POST jobs/{id}/progress``)."""


def _number(value: object, name: str) -> tuple[float | None, str]:
    """``value`` as a finite float, or ``(None, why)``: a Python number, or anything with
    ``__index__`` (numpy/torch integer scalars) or ``__float__`` (numpy/torch float scalars, 0-d
    tensors, ``Decimal``, ``Fraction``); never a boolean, a string or an array of several numbers."""
    if isinstance(value, bool):
        return None, f"{name} must be a number of steps (got {value!r})"
    number: float | None = None
    if hasattr(value, "__index__"):  # a torch float tensor has __index__ too, and refuses it: then __float__
        try:
            number = float(operator.index(value))
        except (TypeError, ValueError, OverflowError, RuntimeError):
            number = None
    if number is None and hasattr(value, "__float__") and not isinstance(value, (str, bytes)):
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError, RuntimeError):
            number = None
    if number is None:
        kind = type(value).__name__
        return None, f"{name} must be a number (got {kind} {str(value)[:40]!r})"
    if not math.isfinite(number):
        return None, f"{name} must be a finite number (got {number})"
    return number, ""


def _checked(done: object, total: object) -> tuple[float, float] | None:
    """``(done, total)`` as floats the server takes, or None (warned once, nothing to send): a value
    that is not a finite number, ``total <= 0`` or a negative ``done`` (each warned once, naming the
    value and the fix); ``done > total`` is sent as ``total`` (warned once: an off-by-one of the
    last step is the commonest slip)."""
    checked: list[float] = []
    for name, value in (("done", done), ("total", total)):
        number, why = _number(value, name)
        if number is None:
            _warn_once(f"value:{name}", f"jupyter_sched.report_progress: {why}; nothing is reported — call "
                                        "report_progress(step, steps) with numbers, e.g. report_progress(120, 1000)")
            return None
        checked.append(number)
    got_done, got_total = checked
    if not 0 < got_total <= MAX_STEPS:
        _warn_once("total", f"jupyter_sched.report_progress: total must be more than 0 and at most 1e15 (got "
                            f"{got_total:g}); nothing is reported — give the number of steps in all, e.g. "
                            "report_progress(120, 1000)")
        return None
    if got_done < 0:
        _warn_once("done<0", f"jupyter_sched.report_progress: done must be at least 0 (got {got_done:g}); nothing "
                             "is reported — give the steps done so far, from 0 to total")
        return None
    if got_done > got_total:
        _warn_once("done>total", f"jupyter_sched.report_progress: done {got_done:g} is more than total "
                                 f"{got_total:g}; reported as {got_total:g} (all done) — count steps from 1 to total, "
                                 "e.g. report_progress(step + 1, steps) in a loop over range(steps)")
        got_done = got_total
    return got_done, got_total


def report_progress(done: float, total: float) -> dict[str, Any] | None:
    """Report that this job has done ``done`` of ``total`` steps (iterations, batches, epochs).

    It runs inside the user's training loop, so it never raises for anything of its own: whatever
    goes wrong is a ``RuntimeWarning`` (each kind once per process, naming the value or the cause
    and the fix) and the job runs on (new user 21, N1). Only ``KeyboardInterrupt``/``SystemExit``
    and the like pass through.

    Args:
        done: steps done so far: an ``int``/``float`` or anything with ``__index__``/``__float__``
            (numpy and torch scalars, 0-d tensors); finite, >= 0. More than ``total`` is reported as
            ``total`` (warned once).
        total: steps to do in all (finite, > 0, at most 1e15).

    Returns:
        The server's answer (``{"job_id", "stored", "min_interval_s", "progress"}``), or None when
        nothing was sent or the server refused it: outside a job, a value it cannot report, sooner
        than ``min_interval_s`` after the last report sent (the last step, ``done == total``, is
        always sent, and the server stores it), the server could not be reached or refused the
        report (each warned once).
    """
    job_id = os.environ.get(ENV_JOB_ID, "").strip()
    if not job_id:
        _warn_once("outside", f"jupyter_sched.report_progress: not inside a scheduled job ({ENV_JOB_ID} is not "
                              "set); nothing is reported")
        return None
    checked = _checked(done, total)
    if checked is None:
        return None
    with _lock:
        now = time.monotonic()
        sent_at = _state["sent_at"]
        if sent_at is not None and now - sent_at < _state["interval_s"] and checked[0] < checked[1]:
            return None
        _state["sent_at"] = now
        try:
            return _send(job_id, *checked)
        except Exception as exc:  # inside the user's loop: warned, never raised (new user 21, N1)
            _warn_once(f"failed:{type(exc).__name__}", f"jupyter_sched.report_progress failed: {type(exc).__name__}: "
                                                      f"{str(exc)[:200]}; {DROPPED}")
            return None


def _send(job_id: str, done: float, total: float) -> dict[str, Any] | None:
    """Send one report (under ``_lock``); the server's refusals are warned once each, not raised."""
    client: SchedClient | None = _state["client"]
    try:
        if client is None:
            client = _state["client"] = _job_client() or connect()
        answer = client.report_progress(job_id, done, total)
    except ServerUnreachableError as exc:  # the message only: its hint is a notebook user's ("restart it, or
        # connect(url, token)"), nothing a job can act on (new user 21, N8)
        moved = _to_store_server(client, job_id, done, total) if client is not None else None
        if moved is not None:
            return moved
        _warn_once("unreachable", f"jupyter_sched.report_progress: {_plain(exc.message)}; {DROPPED}")
        return None
    except NoServerError:
        _warn_once("unreachable", "jupyter_sched.report_progress: no scheduler found to report to: the job's "
                                  f"environment has no {ENV_URL} and no server runs here; {DROPPED}")
        return None
    except AuthenticationError as exc:
        if client is not None and client.connection.source == "job-token":
            _warn_once("token", f"jupyter_sched.report_progress: the scheduler no longer takes this job's token: "
                                f"{_plain(exc.message)}; {DROPPED}")
        else:
            _warn_once("auth", f"jupyter_sched.report_progress: the scheduler refused this process's credentials: "
                               f"{_plain(exc.message)}; {DROPPED}")
        return None
    except SchedError as exc:  # a value it refused, a job that is not running (409), not ours (404), busy
        hint = f" — {_plain(exc.hint)}" if exc.hint else ""
        _warn_once(f"refused:{exc.code}:{exc.field}", f"jupyter_sched.report_progress: the scheduler refused the "
                                                      f"report: {_plain(exc.message)}{hint}; {DROPPED}")
        return None
    interval = answer.get("min_interval_s")
    if isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval >= 0:
        _state["interval_s"] = float(interval)
    progress = answer.get("progress")
    why = progress.get("ignored") if isinstance(progress, dict) else None
    if isinstance(why, str) and why:  # the run's reports contradict themselves (red team 21, R2)
        _warn_once("ignored", f"jupyter_sched.report_progress: the scheduler does not read this run's reports for "
                              f"ETAs ({why}); report the steps done so far of one count, never fewer than before")
    return answer


def _to_store_server(client: SchedClient, job_id: str, done: float, total: float) -> dict[str, Any] | None:
    """The report sent to the server that serves the job's store now, when the one that started the job
    stopped answering (newuser27 N8: a second ``jupyter lab`` took the store over on another port, as its
    log advises, and every later report was dropped): :func:`~.store_follow.follow_store` offers it, with the
    job's own token, to this account's other schedulers of the host registry; one of another store refuses
    the token (401, not audited: it names nobody) and the next is tried. The one that takes it is kept for
    the later reports (said once). None when none took it."""
    if client.connection.source != "job-token":
        return None
    from .store_follow import follow_store

    here = client.connection.url.rstrip("/")
    found = follow_store(here, lambda url: SchedClient(Connection(url=url, token=client.connection.token,
                                                                  source="job-token")),
                         lambda moved: moved.report_progress(job_id, done, total))
    if found is None:
        return None
    moved, answer = found
    _state["client"] = moved
    _warn_once("moved", f"jupyter_sched.report_progress: the server at {here}/ that started this job stopped "
                        f"answering; its reports go to {moved.connection.url}, which serves the job's store "
                        "now; the job runs on")
    return dict(answer)


def _plain(text: str) -> str:
    """``text`` without a last full stop (it goes inside one sentence), bounded to 300 characters."""
    return text.strip().rstrip(".")[:300]


def _job_client() -> SchedClient | None:
    """A client of the server that started this job, with the job's own progress token (None when the
    job's environment has no ``JUPYTER_SCHED_JOB_TOKEN`` and ``JUPYTER_SCHED_URL``)."""
    token = os.environ.get(ENV_JOB_TOKEN, "").strip()
    url = os.environ.get(ENV_URL, "").strip()
    if not token or not url:
        return None
    return SchedClient(Connection(url=url if url.endswith("/") else url + "/", token=token, source="job-token"))
