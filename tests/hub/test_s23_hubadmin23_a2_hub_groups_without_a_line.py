"""hubadmin23 A2: the start-up log named "team default" as having no quota line, never the hub
groups without one (research, 3 members): the start-up check runs before the hub is first read.
Now the first hub poll's listing says them, once, with their member counts."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.services.hub_teams import groups_of_models, unlisted_group_warning

NOW = datetime(2026, 12, 5, 8, 30, tzinfo=timezone.utc)
LINES = QuotaSet(quotas=(Quota(team="ops", guaranteed=1.0, borrowing_limit=0.0),))
MODELS = {"ha23r": {"groups": ["research"]}, "ha23s": {"groups": ["research"]}, "ha23t": {"groups": ["research", "ops"]},
          "ha23l": {"groups": ["nlp"]}, "ha23q": {"groups": ["ops"]}, "ha23n": {"groups": []}}


def _hub_app() -> Any:
    store = SimpleNamespace(quota_set=lambda: LINES, unlisted_borrowing_limit=0.0, live_jobs=list)
    services = SimpleNamespace(quotas=SimpleNamespace(hub_groups=None), clock=SimpleNamespace(now=lambda: NOW),
                               store=store, admission=SimpleNamespace(policy=SimpleNamespace(default_team="default")))
    return SimpleNamespace(services=services, _provider=lambda: None)


def test_s23_hubadmin23_a2_the_first_hub_read_names_the_groups_without_a_line_once(
        caplog: pytest.LogCaptureFixture) -> None:
    app = _hub_app()
    with caplog.at_level(logging.WARNING, logger="jupyter_sched"):
        HubSchedApp._seen_models(app, MODELS)
        HubSchedApp._seen_models(app, MODELS)  # later polls: said already
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said == ["jupyter_sched: hub groups nlp (1 member), research (3 members) have no quota line: each may use "
                    "0 GPUs (c.SchedApp.unlisted_team_borrowing_limit); give them a line with PUT quotas"], said
    assert app.services.quotas.hub_groups.groups == {"research", "nlp", "ops"}


def test_s23_hubadmin23_a2_no_lines_or_every_group_lined_says_nothing_and_no_limit_is_said() -> None:
    hub = groups_of_models(MODELS, NOW)
    assert unlisted_group_warning(QuotaSet(), hub, "default", 0.0) == ""  # no lines: no limit applies
    lined = QuotaSet(quotas=tuple(Quota(team=t, guaranteed=0.0, borrowing_limit=1.0) for t in ("ops", "nlp", "research")))
    assert unlisted_group_warning(lined, hub, "default", 0.0) == ""
    assert unlisted_group_warning(LINES, groups_of_models({"a": {"groups": ["nlp"]}}, NOW), "default", None) == (
        "hub group nlp (1 member) has no quota line: no limit: it may borrow every idle GPU "
        "(c.SchedApp.unlisted_team_borrowing_limit is None)")
