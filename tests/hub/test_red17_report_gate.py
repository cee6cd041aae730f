"""Red team 17, R13: which refused-token reports the central service takes (:class:`ReportGate`):
at most a few a minute per reporter and once a minute per (reporter, token, why). The end-to-end
walk (actor = reporter, one answer for live and dead tokens) is in tests/hub/test_newuser13_hub.py."""

from __future__ import annotations

from jupyter_sched.hub.refusals import REPORTS_PER_MINUTE, ReportGate


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_red17_r13_one_report_a_minute_per_token_and_a_few_per_reporter() -> None:
    clock = Clock()
    gate = ReportGate(clock=clock)
    assert gate.take("amy", "eve-token", "token_refused")
    assert not gate.take("amy", "eve-token", "token_refused")  # the same token again this minute: dropped
    assert gate.take("amy", "eve-token", "not_the_owner")  # another refusal of it is its own record
    assert gate.take("bob", "eve-token", "token_refused")  # another reporter is counted apart
    taken = sum(gate.take("amy", f"guess-{i}", "token_refused") for i in range(100))
    assert taken == REPORTS_PER_MINUTE - 2  # amy's two above count against her minute
    clock.now += 60.0
    assert gate.take("amy", "eve-token", "token_refused")  # a minute later: taken again
