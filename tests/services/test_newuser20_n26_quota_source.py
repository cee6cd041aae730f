"""New user 20, N26: a server restart silently put the config file's quota lines back over the
lines an admin set at run time (PUT quotas) — a per-user line vanished and a job over it started;
the only trace was an audit row "quotas changed by config".

The rule now (:mod:`jupyter_sched.services.quota_config`): the config's lines apply at a start only
when they changed since last applied; then the start-up log warns, naming the lines it overrides,
and the audit row says the same. GET quotas says who set the set in force.

Real parts: a SQLite file and a PostgreSQL database (``tests/pg.py``), the services as a server
builds them (:func:`~jupyter_sched.services.build_services`); a restart is a new build on the same store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.errors import QuotaError
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest
from tests.services.restarts import Restarts, restarting

CONFIG = [{"team": "ml", "guaranteed": 2, "borrowing_limit": 1}, {"team": "vision", "guaranteed": 1, "borrowing_limit": 0}]
ROOT_LINE = {"team": "ml", "user": "root", "guaranteed": 1, "borrowing_limit": 0.5}


class Server(Restarts):
    def start(self, quotas: list[dict[str, Any]]) -> tuple[Services, list[str]]:
        return self.start_with({"user_teams": {"root": "ml"}, "quotas": quotas}, "quotas:")


@pytest.fixture
def server(db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Server]:
    yield from restarting(Server(db_url, tmp_path, caplog))


def _lines(services: Services) -> list[dict[str, Any]]:
    return [q.model_dump(exclude_defaults=False) for q in services.quotas.get().quotas]


def _changes(services: Services) -> list[tuple[str, str]]:
    root = services.caller("root", admin=True)
    events = sorted(services.audit.list(root, GetAuditRequest(action="quotas_changed")).root, key=lambda e: e.id)
    return [(e.actor, e.message) for e in events]  # oldest first


def _put_root_line(services: Services) -> None:
    services.quotas.set(services.caller("root", admin=True),
                        SetQuotasRequest.model_validate({"quotas": [*CONFIG, ROOT_LINE]}))


def test_newuser20_n26_an_unchanged_config_leaves_the_admins_put_in_force_across_restarts(server: Server) -> None:
    services, said = server.start(CONFIG)
    assert said == []  # a fresh store: the config's lines are the first set, nothing overridden
    first = services.quotas.get(services.caller("root", admin=True))
    _put_root_line(services)

    services, said = server.start(CONFIG)  # restart, same config
    assert [(q["team"], q["user"]) for q in _lines(services)] == [("ml", None), ("vision", None), ("ml", "root")]
    # the per-user line is in force: root (ml) may hold at most 1.5 GPUs there — a 2-GPU job is refused
    with pytest.raises(QuotaError):
        services.jobs.submit(services.caller("root", admin=True), SubmitJobRequest(gpus=2, command=["true"]))
    assert said == []
    source = services.quotas.get().source
    assert source is not None and source.set_by == "root" and not source.config, source
    assert source.text.startswith("root with PUT quotas at ") and source.text.endswith(" UTC"), source.text
    assert [actor for actor, _ in _changes(services)] == ["config", "root"]  # nothing written by the restart
    assert first.source is not None and first.source.set_by == "config" and first.source.config, first


def test_newuser20_n26_a_changed_config_replaces_the_put_and_the_log_and_audit_say_what_it_overrides(
        server: Server) -> None:
    services, _ = server.start(CONFIG)
    _put_root_line(services)
    changed = [{"team": "ml", "guaranteed": 3, "borrowing_limit": 1}, CONFIG[1]]

    services, said = server.start(changed)
    assert len(said) == 1, said
    line = said[0]
    assert line.startswith("jupyter_sched: quotas: c.SchedApp.quotas changed since it was last applied at "), line
    assert "the config's 2 lines replace the 3 lines set by root with PUT quotas at " in line, line
    assert "removed ml/root (guaranteed 1, borrowing limit 0.5)" in line, line
    assert "changed ml: guaranteed 2 → 3" in line, line
    assert [(q["team"], q["user"], q["guaranteed"]) for q in _lines(services)] == [("ml", None, 3), ("vision", None, 1)]
    actor, message = _changes(services)[-1]
    assert actor == "config" and message == line.removeprefix("jupyter_sched: "), message
    source = services.quotas.get().source
    assert source is not None and source.config and source.text.startswith("the config file (c.SchedApp.quotas) at ")

    services, said = server.start(changed)  # the same changed config again: applied once only
    assert said == [] and len(_changes(services)) == 3


def test_newuser20_n26_a_store_from_before_the_digest_keeps_an_admins_put_and_warns(server: Server) -> None:
    services, _ = server.start(CONFIG)
    _put_root_line(services)
    with services.store.engine.begin() as conn:  # as a store the previous release wrote: no source row
        conn.execute(sa.text("DELETE FROM quota_source"))

    services, said = server.start(CONFIG)
    assert len(said) == 1 and "differ from the 3 lines set by root with PUT quotas at " in said[0], said
    assert "those stay in force (removed ml/root (guaranteed 1, borrowing limit 0.5))" in said[0], said
    assert len(_lines(services)) == 3 and [a for a, _ in _changes(services)] == ["config", "root"]

    services, said = server.start(CONFIG)  # remembered from then on: no warning, nothing replaced
    assert said == [] and len(_lines(services)) == 3
