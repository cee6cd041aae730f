"""New user 21: progress reports — N1 (``report_progress`` killed the job it reported for), N2 (each
bound's own hint), N3 (the final report coalesced away).

Real parts: a jupyter_server with jupyter_sched, ivan's token, real job processes (``sleep``) on
simulated GPUs, the SQLite store on disk, numpy scalars as a training loop has them.
"""

from __future__ import annotations

import asyncio
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from jupyter_sched.client import progress as client_progress
from jupyter_sched.errors import ValidationError
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.jobs import ReportProgressRequest
from jupyter_sched.services.models.quotas import TeamPolicyLine

from .conftest import IVAN_TOKEN, running_job, wait_for


class _FloatTensor:
    """What a 0-d torch float tensor offers: ``__index__`` that refuses (not an integer), ``__float__``."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __index__(self) -> int:
        raise TypeError("only integer tensors of a single element can be converted to an index")

    def __float__(self) -> float:
        return self.value


@pytest.fixture
def in_job(monkeypatch: pytest.MonkeyPatch, http_server_port: Any, jp_base_url: str) -> Any:
    """Set a job's environment for ``report_progress`` (the job id is set by each test); fresh client state."""
    monkeypatch.setattr(client_progress, "_state", {"client": None, "sent_at": None, "interval_s": 10.0,
                                                    "warned": set()})
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    monkeypatch.delenv("JUPYTER_SCHED_JOB_TOKEN", raising=False)

    def call(done: Any, total: Any) -> tuple[Any, list[str]]:
        client_progress._state["sent_at"] = None  # each call is sent (the interval is N3's and the old test's)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            answer = client_progress.report_progress(done, total)
        return answer, [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]

    return call


async def test_newuser21_n1_report_progress_never_raises_and_takes_numpy_scalars(
        sched_app: Any, api: Any, in_job: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    job_id = await running_job(api)
    monkeypatch.setenv("JUPYTER_SCHED_JOB_ID", job_id)
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)  # each report stored: what was sent
    loop = asyncio.get_running_loop()

    async def report(done: Any, total: Any) -> tuple[Any, list[str]]:
        return await loop.run_in_executor(None, in_job, done, total)

    answer, said = await report(np.float32(2.5), np.int32(10))
    assert answer is not None and answer["progress"]["done"] == 2.5 and not said
    answer, said = await report(np.int64(5), 10)  # `for step in np.arange(n)`: sent as 5 of 10
    assert answer is not None and answer["progress"]["done"] == 5 and answer["progress"]["total"] == 10 and not said
    answer, said = await report(_FloatTensor(6.0), Fraction(10))  # a 0-d float tensor, a Fraction
    assert answer is not None and answer["progress"]["done"] == 6.0 and not said

    answer, said = await report(11, 10)  # the off-by-one of the last step: reported as all done, warned
    assert answer is not None and answer["progress"]["done"] == 10 and answer["progress"]["fraction"] == 1.0
    assert len(said) == 1 and "done 11 is more than total 10" in said[0] and "reported as 10" in said[0], said
    assert (await report(12, 10))[1] == []  # warned once

    for done, total, words in ((5, 0, "total must be more than 0 and at most 1e15 (got 0)"),
                               (float("nan"), 10, "done must be a finite number (got nan)"),
                               (-1, 10, "done must be at least 0 (got -1)"),
                               ("5", 10, "done must be a number (got str '5')"),
                               (True, 10, "done must be a number of steps (got True)"),
                               (1, math.inf, "total must be a finite number (got inf)"),
                               (np.array([1, 2]), 10, "done must be a number (got ndarray")):
        client_progress._state["warned"] = set()
        answer, said = await report(done, total)  # never raised, whatever the timing (checked before the interval)
        assert answer is None and len(said) == 1 and words in said[0] and "nothing is reported" in said[0], said
        assert (await report(done, total)) == (None, [])  # each kind warned once
    # the server refuses (the job ended: 409): warned once, the loop runs on
    status, _ = await api("DELETE", f"jobs/{job_id}")
    assert status in (200, 202), _

    async def ended() -> bool:
        _, seen = await api("GET", f"jobs/{job_id}")
        return bool(seen["state"] not in ("running", "admitted"))

    await wait_for(ended)
    answer, said = await report(1, 10)
    assert answer is None and len(said) == 1 and "refused the report" in said[0] and "not running" in said[0], said
    answer, said = await report(2, 10)
    assert answer is None and said == []


def test_newuser21_n1_a_client_that_cannot_load_is_warned_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole kind: the package's own entry point runs in the user's loop too (a slim or broken install)."""
    import sys

    import jupyter_sched

    monkeypatch.setitem(sys.modules, "jupyter_sched.client.progress", None)  # importing it raises ImportError
    with pytest.warns(RuntimeWarning, match="the client could not be loaded"):
        assert jupyter_sched.report_progress(1, 10) is None


@pytest.mark.parametrize("body, field, message, hint", [
    ({"done": 11, "total": 10}, "done", "done must be at most total (got done 11, total 10)",
     'report done ≤ total, e.g. {"done": 10, "total": 10} at the end'),
    ({"done": 5, "total": 0}, "total", "total must be more than 0 (got 0)", "the number of steps to do in all"),
    ({"done": -1, "total": 10}, "done", "done must be at least 0 (got -1)", "from 0 to total"),
    ({"done": 1, "total": 1e16}, "total", "total must be at most 1e15 (got 1e16)", "count in larger steps"),
    ({"done": 1e16, "total": 10}, "done", "done must be at most 1e15 (got 1e16)", "count in larger steps"),
], ids=["done above total", "total zero", "negative done", "huge total", "huge done"])
async def test_newuser21_n2_each_bound_of_a_progress_report_has_its_own_hint(
        sched_app: Any, api: Any, body: dict[str, Any], field: str, message: str, hint: str) -> None:
    job_id = await running_job(api)
    status, error = await api("POST", f"jobs/{job_id}/progress", body)
    assert status == 400, error
    error = error["error"]
    assert error["field"] == field and error["message"] == message and hint in error["hint"], error
    assert "1000000000000000" not in error["hint"] + error["message"] and ") (" not in error["message"], error


def test_newuser21_n2_a_more_than_bound_is_hinted_as_one() -> None:
    """The whole kind: every ``gt`` bound (a quota line's weight) was hinted from its upper bound alone."""
    with pytest.raises(ValidationError) as caught:
        parse(TeamPolicyLine, {"team": "ml", "weight": 0})
    assert caught.value.field == "weight" and "more than 0" in (caught.value.hint or ""), caught.value.hint
    with pytest.raises(ValidationError) as caught:
        parse(ReportProgressRequest, {"done": "5", "total": 10})
    assert caught.value.hint == "give a number from 0 to 1e15", caught.value.hint


async def test_newuser21_n3_the_final_report_is_stored_inside_the_interval(sched_app: Any, api: Any) -> None:
    job_id = await running_job(api)
    status, first = await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 10})
    assert status == 200 and first["stored"] is True, first
    status, middle = await api("POST", f"jobs/{job_id}/progress", {"done": 5, "total": 10})
    assert status == 200 and middle["stored"] is False, middle  # coalesced, as before
    status, last = await api("POST", f"jobs/{job_id}/progress", {"done": 10, "total": 10})
    assert status == 200 and last["stored"] is True and last["progress"]["fraction"] == 1.0, last
    status, again = await api("POST", f"jobs/{job_id}/progress", {"done": 10, "total": 10})
    assert status == 200 and again["stored"] is False, again  # once per run: a loop at its end writes no more
    _, job = await api("GET", f"jobs/{job_id}")
    assert job["progress"]["fraction"] == 1.0 and job["progress"]["done"] == 10, job["progress"]
