"""``GET me`` kept per caller key — name, admin flag and hub groups — and per second (issue 17).

A hub request's teams come from the user's hub groups and its admin flag may come from the
token's scopes, so the same user name can be two callers with two different answers: a kept
answer is served only to the key it was computed for. The GPU-hour sums are taken at the start
of the current second, so an answer is kept within its second and computed again in the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0 + timedelta(microseconds=250_000))
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(2, node="n1"), executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    with svc.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(Quota(team="vision", guaranteed=2), Quota(team="audio", guaranteed=1))))
    yield svc
    svc.store.close()


def test_hub_groups_and_the_admin_flag_are_part_of_the_key(services: Services) -> None:
    vision, audio, admin = ("ana", False, ("vision",)), ("ana", False, ("audio",)), ("ana", True, ("vision",))
    assert services.accounting.kept_me(vision) is None  # nothing computed yet
    seen_vision, seen_audio = services.accounting.me_of(vision), services.accounting.me_of(audio)
    assert seen_vision.team == "vision" and seen_audio.team == "audio"
    assert [q.team for q in seen_vision.quotas] == ["vision"] and [q.team for q in seen_audio.quotas] == ["audio"]
    assert services.accounting.kept_me(vision) is seen_vision
    assert services.accounting.kept_me(audio) is seen_audio
    assert services.accounting.kept_me(admin) is None, "an admin token of the same name is another caller"
    assert services.accounting.me_of(admin).is_admin and not seen_vision.is_admin


def test_an_answer_is_kept_within_its_second_and_its_sums_are_taken_at_the_second(services: Services) -> None:
    ana = services.caller("ana", admin=False, groups=("vision",))
    services.leases.request(ana, SubmitJobRequest(gpus=1, kernel_id="k1", team="vision"))
    services.engine.tick()  # the lease holds a GPU from now on: an open usage interval
    who = ("ana", False, ("vision",))
    services.clock.advance(3600)  # T0 + 1 h + 0.25 s
    first = services.accounting.me_of(who)
    assert first.gpu_hours_7d == pytest.approx(1.0 - 0.25 / 3600, abs=1e-6)  # from T0 + 0.25 s to T0 + 1 h
    services.clock.advance(0.5)  # the same second
    assert services.accounting.kept_me(who) is first
    assert services.accounting.me(ana).gpu_hours_7d == first.gpu_hours_7d  # the plain path: the same sums
    services.clock.advance(0.5)  # the next second: the open interval grew
    assert services.accounting.kept_me(who) is None
    assert services.accounting.me_of(who).gpu_hours_7d == pytest.approx(first.gpu_hours_7d + 1 / 3600, abs=1e-6)
