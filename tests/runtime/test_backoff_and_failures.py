"""Backoff schedules, retry bookkeeping, and how a side effect's exception is classified."""

from __future__ import annotations

import errno
from dataclasses import dataclass

import pytest
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import MaxRetryError

from jupyter_sched.backoff import Backoff, Reconnecting, Retries
from jupyter_sched.engine.failures import classify
from jupyter_sched.errors import ExecutorError, StoreError, ValidationError


def test_the_wait_doubles_to_the_cap_and_jitter_only_shortens_it() -> None:
    schedule = Backoff(base_s=0.5, cap_s=8.0, jitter=0.5)
    assert [schedule.ceiling(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert schedule.delay(3, rng=lambda: 0.0) == 2.0 and schedule.delay(3, rng=lambda: 0.999) > 1.0
    assert schedule.ceiling(10_000) == 8.0  # no overflow however long it retried
    with pytest.raises(ValueError, match="cap_s >= base_s"):
        Backoff(base_s=2.0, cap_s=1.0)


def test_retries_wait_out_their_backoff_and_say_so() -> None:
    now = [100.0]
    retries = Retries(Backoff(base_s=1.0, cap_s=4.0, jitter=0.0), monotonic=lambda: now[0])
    assert retries.due("j-1")
    assert retries.failed("j-1", "HTTP 500").attempt == 1 and not retries.due("j-1")
    now[0] += 1.0
    assert retries.due("j-1") and retries.failed("j-1", "HTTP 500").attempt == 2
    state = retries.reconnecting("j-1", "the Kubernetes API")
    assert state == Reconnecting("the Kubernetes API", 2, 2.0, "HTTP 500")
    assert state.message == "reconnecting to the Kubernetes API (attempt 2, next in 2 s): HTTP 500"
    retries.succeeded("j-1")
    assert retries.due("j-1") and retries.reconnecting("j-1", "x") is None


@dataclass(frozen=True)
class Case:
    exc: BaseException
    outcome: str
    cause: str


def _wrapped(inner: BaseException, message: str) -> ExecutorError:
    try:
        raise inner
    except BaseException as exc:
        try:
            raise ExecutorError(message) from exc
        except ExecutorError as outer:
            return outer


CASES = {
    "Popen's ValueError for an env key with '=' is permanent": Case(
        ValueError("illegal environment variable name"), "fail", "ValueError: illegal environment variable name"),
    "EAGAIN from fork is transient": Case(
        OSError(errno.EAGAIN, "Resource temporarily unavailable"), "retry",
        "BlockingIOError: [Errno 11] Resource temporarily unavailable"),
    "EACCES on exec is permanent": Case(PermissionError(errno.EACCES, "Permission denied"), "fail",
                                        "PermissionError: [Errno 13] Permission denied"),
    "a Kubernetes 500 is transient": Case(ApiException(status=500, reason="Internal Server Error"), "retry",
                                          "HTTP 500 Internal Server Error"),
    "a Kubernetes 429 is transient": Case(ApiException(status=429, reason="Too Many Requests"), "retry",
                                          "HTTP 429 Too Many Requests"),
    "a Kubernetes 422 is permanent": Case(ApiException(status=422, reason="Unprocessable Entity"), "fail",
                                          "HTTP 422 Unprocessable Entity"),
    "our error wrapping a 409 names both": Case(
        _wrapped(ApiException(status=409, reason="Conflict"), "cannot create Job x: already exists"), "fail",
        "cannot create Job x: already exists (HTTP 409)"),
    "our error wrapping ENOENT is permanent": Case(
        _wrapped(FileNotFoundError(errno.ENOENT, "No such file or directory"), "cannot start job j"), "fail",
        "cannot start job j (FileNotFoundError: [Errno 2] No such file or directory)"),
    "a namespace quota refusal requeues": Case(
        ExecutorError("namespace geo GPU quota exhausted (4 of 4 in use)", details={"code": "ExceedsQuota"}),
        "requeue", "namespace geo GPU quota exhausted (4 of 4 in use)"),
    "a transport error is transient": Case(MaxRetryError(None, "/apis/batch/v1", "connection refused"), "retry",
                                           "MaxRetryError: None: Max retries exceeded with url: /apis/batch/v1 "
                                           "(Caused by 'connection refused')"),
    "a store failure is transient": Case(StoreError("store failure: OperationalError"), "retry",
                                         "store failure: OperationalError"),
    "a validation error is permanent": Case(ValidationError("bad image", field="image"), "fail", "bad image"),
    "an executor refusal without a cause is permanent": Case(ExecutorError("nothing to run"), "fail", "nothing to run"),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_side_effects_exception_is_classified_with_its_cause(case: Case) -> None:
    failure = classify(case.exc)
    assert (failure.outcome, failure.cause) == (case.outcome, case.cause)
