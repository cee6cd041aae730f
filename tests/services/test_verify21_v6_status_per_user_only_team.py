"""Verify 21, the V6 variation on ``status``: ve21d, a member of team ghost whose only quota line is
ve21a's per-user line (A100), was told by ``status`` (and ``%gpu`` / the panel's Quota view, all from
GET me ``by_team``) "team ghost has no quota line … — no GPU work of the team can start until it
gets a line": false twice (ghost has a line, and ve21a's work on A100 can start). GET me now carries
the per-user-only scope (``unlisted_scope.members`` / ``member_models``) and the quota line says it
in the submit refusal's words, of the reader's own work.

Real parts: a SQLite store, the local executor; 2 simulated A100 and 2 simulated H100 (two nodes).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.quota import ask_for_gpus, quota_lines
from tests.runtime.builders import T0
from tests.services.test_red20_r2_scopes import _Mixed


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now), inventory=_Mixed(),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    svc.store.unlisted_borrowing_limit = 0.0
    svc.quotas.set(svc.caller("carol", admin=True), SetQuotasRequest.model_validate({"quotas": [
        {"team": "vision", "gpu_model": "A100", "guaranteed": 1, "borrowing_limit": 1},
        {"team": "ghost", "user": "ve21a", "gpu_model": "A100", "guaranteed": 0, "borrowing_limit": 1}]}))
    yield svc
    svc.store.close()


def test_verify21_v6_status_names_the_other_members_line_not_no_line(services: Services) -> None:
    me = services.accounting.me(services.caller("ve21d", admin=False, groups=["ghost"])).model_dump(mode="json")
    ghost = next(t for t in me["by_team"] if t["team"] == "ghost")
    assert ghost["unlisted"] is True
    assert ghost["unlisted_scope"] is not None  # was null: the per-user-only scope was not carried
    assert ghost["unlisted_scope"]["members"] == ["ve21a"]
    assert ghost["unlisted_scope"]["member_models"] == {"ve21a": ["A100"]}
    line = quota_lines(me)[0]
    assert line.startswith("team ghost has only a quota line for user ve21a (A100): its other members, you "
                           "included, may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit); 0 GPUs in use by "
                           "the team, 0 GPUs of them yours — none of your GPU work in the team can start until you "
                           "get a line"), line
    assert "(no quota line" not in me["quota_text"] and "no GPU work of the team" not in me["quota_text"]
    assert "(no quota line" not in line
    # %gpu's ask line: the reader can start nothing there, the team can
    assert ask_for_gpus(me, "%gpu request 1") == ("You can start no GPU work in team ghost until an admin gives "
                                                  "you a quota line.")


def test_verify21_v6_a_team_with_no_line_at_all_keeps_its_words(services: Services) -> None:
    me = services.accounting.me(services.caller("ve21e", admin=False, groups=["nolines"])).model_dump(mode="json")
    team = next(t for t in me["by_team"] if t["team"] == "nolines")
    assert team["unlisted"] is True and team["unlisted_scope"] is None
    assert quota_lines(me)[0].startswith("team nolines has no share of the GPUs (no quota line): teams without one may use 0 GPUs"), me
    assert "no GPU work of the team can start until it gets a line" in quota_lines(me)[0]
