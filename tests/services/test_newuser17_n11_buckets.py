"""New user 17, N11: each user's submit rate is a token bucket (:class:`SubmitBuckets`): a burst of
``per_minute`` submits, then one every ``60 / per_minute`` s; a refused take says how long to wait
(the ``Retry-After`` of the 429). A manual monotonic clock; no sleeping."""

from __future__ import annotations

from jupyter_sched.services.callers import SubmitBuckets


class Tick:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_newuser17_n11_a_burst_then_the_refill_rate_and_the_wait_is_said() -> None:
    tick = Tick()
    buckets = SubmitBuckets(monotonic=tick)
    assert [buckets.take("ana", 6) for _ in range(6)] == [0.0] * 6, "a burst of per_minute"
    wait = buckets.take("ana", 6)
    assert 9.9 < wait <= 10.0, wait  # 6 a minute: one every 10 s
    assert buckets.take("bo", 6) == 0.0, "bo's bucket is his own"
    tick.now += 5
    assert 4.9 < buckets.take("ana", 6) <= 5.0, "a refused take does not cost a token"
    tick.now += 5
    assert buckets.take("ana", 6) == 0.0
    assert buckets.take("ana", 6) > 0
    tick.now += 3600
    assert [buckets.take("ana", 6) for _ in range(7)].count(0.0) == 6, "an hour idle refills to the burst, no more"


def test_newuser17_n11_forgets_full_buckets_beyond_keep() -> None:
    tick = Tick()
    buckets = SubmitBuckets(monotonic=tick, keep=3)
    for user in ("a", "b", "c"):
        buckets.take(user, 60)
    tick.now += 120  # all full again
    buckets.take("d", 60)
    assert set(buckets._buckets) == {"d"}, buckets._buckets
