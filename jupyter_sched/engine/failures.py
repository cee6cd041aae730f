"""What a failed side effect means for its job: retry, requeue or fail, and the cause in words.

The engine calls executors (start, stop, adopt) that may raise anything: our own
:class:`~jupyter_sched.errors.ExecutorError`, ``OSError`` from ``fork``/``exec``, ``ValueError``
from ``subprocess.Popen`` (an environment key containing ``=``), ``PermissionError``, a
Kubernetes ``ApiException`` (4xx/5xx) or a urllib3 transport error. :func:`classify` turns any of
them into a :class:`Failure` so that exactly that one job is retried, requeued or failed with a
reason naming the cause, and the rest of the cycle goes on.

Rules (first match wins, looking at the exception and then its ``__cause__`` chain):

* HTTP 408, 425, 429, 5xx, transport errors (urllib3, ``ConnectionError``, ``TimeoutError``),
  other ``OSError`` (``EAGAIN``, ``ENOMEM``, ``EMFILE``…) and store failures → ``retry``: the
  peer or the machine may recover; the job keeps its allocation and is tried again with backoff.
* A Kubernetes ResourceQuota refusal (case 019, an ``ExecutorError`` with a pending-reason
  ``code`` in its details) → ``requeue``: the job goes back to the queue with that reason.
* Everything else (``ValueError``, ``TypeError``, ``PermissionError``, ``FileNotFoundError``,
  validation errors, other HTTP 4xx such as 409 AlreadyExists or 422 Invalid, an executor
  refusal) → ``fail``: trying again cannot help.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import ExecutorError, SchedError, StoreError, ValidationError

__all__ = ["Failure", "Outcome", "classify"]

Outcome = Literal["retry", "requeue", "fail"]

_TRANSIENT_HTTP = frozenset({408, 425, 429})
_PERMANENT_OS = (PermissionError, FileNotFoundError, NotADirectoryError, IsADirectoryError)


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified failure.

    Attributes:
        outcome: ``retry`` (transient), ``requeue`` (back to the queue) or ``fail`` (permanent).
        cause: one line naming the cause, e.g. ``"ValueError: embedded null byte"`` or
            ``"HTTP 500: etcdserver: request timed out"``.
        status: the HTTP status behind it, if any.
    """

    outcome: Outcome
    cause: str
    status: int | None = None


def _status(exc: BaseException) -> int | None:
    if isinstance(exc, SchedError):
        value = exc.details.get("status")
        return value if isinstance(value, int) else None
    value = getattr(exc, "status", None)
    return value if isinstance(value, int) else None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SchedError):
        return exc.message
    status = _status(exc)
    if status is not None:
        reason = getattr(exc, "reason", None) or ""
        return f"HTTP {status} {reason}".strip()
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def classify(exc: BaseException) -> Failure:
    """Classify ``exc`` raised by a side effect (see the module docstring for the rules)."""
    cause = _describe(exc)
    for link in _chain(exc):
        status = _status(link)
        if status is not None:
            transient = status >= 500 or status in _TRANSIENT_HTTP
            if not isinstance(link, SchedError) or link is not exc:
                cause = f"{cause} (HTTP {status})" if f"HTTP {status}" not in cause else cause
            return Failure("retry" if transient else "fail", cause, status)
        if isinstance(link, ExecutorError) and isinstance(link.details.get("code"), str):
            return Failure("requeue", cause)
        if isinstance(link, StoreError) or type(link).__module__.split(".")[0] == "urllib3":
            return Failure("retry", cause)
        if isinstance(link, (ConnectionError, TimeoutError)):
            return Failure("retry", cause)
        if isinstance(link, _PERMANENT_OS):
            return Failure("fail", cause if link is exc else f"{cause} ({_describe(link)})")
        if isinstance(link, OSError):
            return Failure("retry", cause if link is exc else f"{cause} ({_describe(link)})")
        if isinstance(link, (ValueError, TypeError, KeyError, ValidationError)):
            return Failure("fail", cause if link is exc else f"{cause} ({_describe(link)})")
    return Failure("fail", cause)
