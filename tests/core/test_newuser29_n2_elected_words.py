"""New user 29, N2 (the elected words): a job queued at 05:38:27 and promised a start by 05:40 read "elected: it
has waited 9m30s, past 0.75 x the 10m wait promised when it was queued (start by 05:40 UTC)" — the 10m is the
floor an election counts (:data:`~jupyter_sched.queues.order.OVERDUE_FLOOR_S`), not what was promised. A promise
under the floor is now said as what it was, and the floor as the floor; a longer promise reads as before.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason


def _elected_line(promised_s: float, waited_min: float) -> tuple[str, datetime]:
    queued = T0 - timedelta(minutes=waited_min)
    promise = {"at": queued.isoformat(), "start": (queued + timedelta(seconds=promised_s)).isoformat()}
    job = replace(make_job("b-train", user="bo", time_limit_s=900), submitted_at=queued,
                  reason=PendingReason(code="WaitingForCapacity", message="", details={PROMISE: promise}))
    hog = running(make_job("a-long", user="ana", gpus=4, time_limit_s=3600), started=-20)
    reasons = {p.job_id: p.reason for p in run_cycle(snapshot([make_node("n1", gpus=4)], [hog, job])).pending}
    reason = reasons["b-train"]
    assert "elected" in reason.details, reason
    return render_reason(reason_to_dict(reason), now=T0).line, queued


def test_newuser29_n2_a_promise_under_the_floor_is_said_as_promised_and_the_floor_as_the_floor() -> None:
    text, queued = _elected_line(93, 9.5)
    start = (queued + timedelta(seconds=93)).strftime("%H:%M")
    assert (f"it goes first: it has waited 9m30s, past 0.75 x 10m, the least wait that counts; it was promised "
            f"a start by {start} UTC, 1m33s after it was queued; jobs queued later start ahead of it only if they end "
            "before its planned start (elected)") in text, text
    assert "the 10m wait promised" not in text


def test_newuser29_n2_a_promise_over_the_floor_reads_as_before() -> None:
    text, queued = _elected_line(2 * 3600, 100)
    start = (queued + timedelta(hours=2)).strftime("%H:%M")
    assert (f"it goes first: it has waited 1h40m, past 0.75 x the 2h00m wait promised when it was queued (start by {start} UTC); "
            "jobs queued later") in text, text
