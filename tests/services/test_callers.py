"""The service layer's state around the pure admission step (issue 17): the quota set callers are
resolved from (asked again at once after this process's change, within ``recheck_s`` after
another process's), and the per-user refusal minutes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.services import Services
from jupyter_sched.services.callers import RecentQuotaSet, RefusalWindows
from jupyter_sched.services.models import SetQuotasRequest
from jupyter_sched.store import Store, sqlite_url


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    yield store
    store.close()


class CountingStore:
    """The real store, counting ``quota_set()`` calls (each one a transaction on the database)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.reads = 0

    @property
    def quotas_written(self) -> int:
        return self.store.quotas_written

    def quota_set(self) -> QuotaSet:
        self.reads += 1
        return self.store.quota_set()


def test_callers_are_resolved_without_a_store_round_trip_while_the_set_is_recent(store: Store) -> None:
    ticks, counted = Ticks(), CountingStore(store)
    recent = RecentQuotaSet(counted, recheck_s=1.0, monotonic=ticks)  # type: ignore[arg-type]
    first = recent()
    for _ in range(50):
        ticks.now += 0.01
        assert recent() is first
    assert counted.reads == 1, "fifty callers within the second: one read"
    ticks.now += 1.0
    recent()
    assert counted.reads == 2, "older than recheck_s: the store is asked again"


def test_this_processs_replacement_is_seen_by_the_very_next_caller(store: Store) -> None:
    ticks = Ticks()
    recent = RecentQuotaSet(store, recheck_s=3600.0, monotonic=ticks)
    assert recent().user_teams == {}
    with store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(user_teams={"ana": ("ml",)}))
    assert recent().user_teams == {"ana": ("ml",)}, "no time passed, yet the change is seen"
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(user_teams={"ana": ("cv",)}))
        raise RuntimeError("rolled back")
    assert recent().user_teams == {"ana": ("ml",)}, "a rolled-back replacement changes nothing"


def test_another_processs_replacement_reaches_callers_within_recheck_s(store: Store) -> None:
    ticks = Ticks()
    recent = RecentQuotaSet(store, recheck_s=1.0, monotonic=ticks)
    assert recent().user_teams == {}
    other = Store(store.url)  # another server of the hub, or an admin's CLI on the database
    try:
        with other.transaction() as tx:
            tx.replace_quota_set(QuotaSet(quotas=(Quota(team="ml", guaranteed=1),), user_teams={"ana": ("ml",)}))
        ticks.now += 0.5
        assert recent().user_teams == {}, "within the bound the kept set may still answer"
        ticks.now += 0.5
        assert recent().user_teams == {"ana": ("ml",)}, "after recheck_s the other process's change is seen"
    finally:
        other.close()


def test_an_admins_quota_change_moves_the_callers_team_on_the_next_request(tmp_path: Path) -> None:
    services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                        executor=LocalExecutor(tmp_path / "jobs"))
    try:
        assert services.caller("ana", admin=False).default_team != "ml"
        boss = services.caller("boss", admin=True)
        services.quotas.set(boss, SetQuotasRequest.model_validate({"quotas": [{"team": "ml", "guaranteed": 1}],
                                                           "user_teams": {"ana": "ml"}}))
        assert services.caller("ana", admin=False).default_team == "ml"
    finally:
        services.store.close()


def test_refusal_minutes_write_per_minute_then_count_and_report_each_ended_minute_once() -> None:
    ticks = Ticks()
    windows = RefusalWindows(per_minute=4, monotonic=ticks)
    assert [windows.take_place("eve", "403 a")[0] for _ in range(5)] == [True, True, False, False, False], \
        "one kind takes at most half of a minute's places"
    assert [windows.take_place("eve", "404 b")[0] for _ in range(3)] == [True, True, False], "the other half"
    assert windows.take_place("eve", "400 c")[0] is False, "the minute's places are spent"
    assert windows.take_place("judy", "403 a") == (True, []), "another user's minute is their own"
    ticks.now += 61.0
    allowed, ended = windows.take_place("judy", "403 a")
    assert allowed and ended == [("eve", 5, {"403 a": 3, "404 b": 1, "400 c": 1})], \
        "eve's ended minute is reported, per kind, with anyone's next refusal"
    assert windows.take_place("eve", "403 a") == (True, []), "reported once; eve's new minute starts"


def test_red18_r1_a_probe_of_another_users_job_is_named_even_after_a_flood_and_the_count_needs_no_later_refusal(
) -> None:
    """red18b spent the minute's places on cheap refusals (wrong team), then probed red18a's job:
    the probes were only "N more refused request(s)", no job id, and that count was written only
    if another refusal came after the minute (red team 18, R1). The first probe of each object a
    minute is written by name; the rest are counted per kind and target; :meth:`flush` reports a
    minute that ended with no refusal after it."""
    ticks = Ticks()
    windows = RefusalWindows(per_minute=4, monotonic=ticks)
    assert sum(windows.take_place("b", "403 POST jobs (team)")[0] for _ in range(70)) == 2
    assert sum(windows.take_place("b", "400 x")[0] for _ in range(5)) == 2  # the untargeted places are spent
    probes = [windows.take_place("b", "404 cancel job (ids)", "j-a1")[0] for _ in range(3)]
    assert probes == [True, False, False], "the first probe of j-a1 this minute is written, by name"
    assert windows.take_place("b", "404 read logs (job_id)", "j-a1")[0], "another kind of probe of it too"
    assert windows.take_place("b", "404 read logs (job_id)", "j-a2")[0], "and a probe of another object"
    assert windows.flush() == [], "the minute has not ended"
    ticks.now += 61.0
    assert windows.flush() == [("b", 73, {"403 POST jobs (team)": 68, "400 x": 3, "404 cancel job (ids) j-a1": 2})]
    assert windows.flush() == [], "reported once"
