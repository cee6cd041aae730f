"""New user 20, N21: ``PUT quotas``' ``user_teams`` took one team per user while ``c.SchedApp.user_teams``
takes a list (``{"root": ["ml", "vision", "exp"]}`` → 400 "must be a string"); ``GET quotas`` showed
``{}`` under a config that set teams; and ``PUT {"root": "exp"}`` made exp root's *third* team (GET me:
team ml, teams ml, vision, exp) — the config's list and the PUT's team were merged.

The rule now (:mod:`jupyter_sched.services.members_config`, as the quota lines' of N26): the store
holds the memberships in force, ``{user: [team, ...]}`` (the first charged when a request names none);
PUT takes the config's shapes (a name or a list) and replaces them; the config's memberships apply at a
start only when they changed since last applied; GET quotas shows them and who set them
(``user_teams_source``); every change is audited ``team_members_changed``.

Real parts: a SQLite file and a PostgreSQL database (``tests/pg.py``), the services as a server builds
them (:func:`~jupyter_sched.services.build_services`); a restart is a new build on the same store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.errors import AuthorizationError, ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import migrations, schema
from tests.services.restarts import Restarts, restarting

LINES = [{"team": t, "guaranteed": 1, "borrowing_limit": 1} for t in ("ml", "vision", "exp")]
CONFIG = {"root": ["ml", "vision"], "ana": "ml"}


class Server(Restarts):
    def start(self, user_teams: Mapping[str, Any]) -> tuple[Services, list[str]]:
        return self.start_with({"simulated_gpus": 4, "user_teams": dict(user_teams), "quotas": LINES}, "user_teams:")


@pytest.fixture
def server(db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[Server]:
    yield from restarting(Server(db_url, tmp_path, caplog))


def _put(services: Services, user_teams: Any, *, by: str = "root", admin: bool = True) -> dict[str, Any]:
    answer = services.quotas.set(services.caller(by, admin=admin),
                                 SetQuotasRequest.model_validate({"user_teams": user_teams}))
    return dict(answer.model_dump(mode="json"))


def _teams(services: Services, user: str) -> tuple[str, ...]:
    return services.caller(user, admin=False).teams


def _member_events(services: Services) -> list[tuple[str, str]]:
    events = sorted(services.audit.list(services.caller("root", admin=True),
                                        GetAuditRequest(action="team_members_changed")).root, key=lambda e: e.id)
    assert all(e.user for e in events), events  # one row per user changed, carrying the user (red21 R6)
    return [(e.actor, e.message) for e in events]


def test_newuser20_n21_put_takes_the_configs_shapes_and_get_shows_the_memberships_in_force(server: Server) -> None:
    services, said = server.start(CONFIG)
    assert said == []  # a fresh store: the config's memberships are the first, nothing overridden
    got = services.quotas.get().model_dump(mode="json")
    assert got["user_teams"] == {"ana": ["ml"], "root": ["ml", "vision"]}, got  # was {} (N21)
    assert got["user_teams_source"]["config"] and got["user_teams_source"]["text"].startswith(
        "the config file (c.SchedApp.user_teams) at "), got["user_teams_source"]

    answer = _put(services, {**CONFIG, "root": ["ml", "vision", "exp"]})  # was 400 "must be a string"
    assert answer["user_teams"]["root"] == ["ml", "vision", "exp"], answer
    assert _teams(services, "root") == ("ml", "vision", "exp")

    answer = _put(services, {**CONFIG, "root": "exp"})  # "root's team is exp": a name is a list of one
    assert answer["user_teams"]["root"] == ["exp"] and not answer["user_teams_source"]["config"], answer
    assert answer["user_teams_source"]["text"].startswith("root with PUT quotas at "), answer["user_teams_source"]
    assert _teams(services, "root") == ("exp",)  # was ("ml", "vision", "exp"): exp added third
    job = services.jobs.submit(services.caller("root", admin=False), SubmitJobRequest(gpus=1, command=["true"]))
    assert job.model_dump(mode="json")["team"] == "exp"  # a request naming no team is charged to exp
    assert _member_events(services) == [
        ("config", "team memberships changed by config: added ana (ml)"),
        ("config", "team memberships changed by config: added root (ml, vision)"),
        ("root", "team memberships changed by root: changed root: ml, vision → ml, vision, exp"),
        ("root", "team memberships changed by root: changed root: ml, vision, exp → exp")]


def test_newuser20_n21_a_put_outlives_a_restart_and_a_changed_config_replaces_it_saying_so(server: Server) -> None:
    services, _ = server.start(CONFIG)
    _put(services, {"root": "exp"})  # ana removed, root's team exp

    services, said = server.start(CONFIG)  # restart, same config: the PUT stays
    assert said == [] and _teams(services, "root") == ("exp",) and _teams(services, "ana") == ("default",)
    assert [actor for actor, _ in _member_events(services)] == ["config", "config", "root", "root"]  # nothing by the restart

    services, said = server.start({**CONFIG, "bo": ["vision"]})  # the config changed: it replaces the PUT
    assert len(said) == 1, said
    line = said[0]
    assert line.startswith("jupyter_sched: user_teams: c.SchedApp.user_teams changed since it was last applied at "), line
    assert "the config's teams of 3 users replace the memberships set by root with PUT quotas at " in line, line
    assert "(added ana (ml); added bo (vision); changed root: exp → ml, vision)" in line, line
    assert _teams(services, "root") == ("ml", "vision") and _teams(services, "bo") == ("vision",)
    actor, message = _member_events(services)[-1]
    assert actor == "config" and message == line.removeprefix("jupyter_sched: "), message
    source = services.quotas.get().user_teams_source
    assert source is not None and source.config, source


def test_newuser20_n21_an_emptied_config_empties_its_own_memberships_never_an_admins(server: Server) -> None:
    server.start(CONFIG)
    services, said = server.start({})  # the admin took everyone out of c.SchedApp.user_teams
    assert _teams(services, "root") == ("default",) and len(said) == 1, said
    assert said[0].endswith("(removed ana (ml); removed root (ml, vision))"), said
    _put(services, {"root": "exp"})
    services, said = server.start({})  # no config memberships: an admin's stay
    assert said == [] and _teams(services, "root") == ("exp",)


def test_newuser20_n21_a_store_from_before_version_15_keeps_a_puts_team_after_the_configs(
        db_url: str, server: Server) -> None:
    """Version 14's ``user_teams`` (one team per user, set by PUT quotas) migrates to position 0; the
    first start keeps what callers had then: the config's teams, then the PUT's."""
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        for step in migrations.MIGRATIONS[:14]:
            step.upgrade(conn)
        schema_version = sa.Table("schema_version", sa.MetaData(), sa.Column("version", sa.Integer),
                                  sa.Column("description", sa.Text), sa.Column("applied_at", sa.String(32)))
        schema_version.create(conn)
        conn.execute(schema_version.insert(), [{"version": s.version, "description": s.description,
                                                "applied_at": "2026-12-04T23:00:00.000000Z"}
                                               for s in migrations.MIGRATIONS[:14]])
        conn.execute(sa.text('INSERT INTO user_teams ("user", team) VALUES (:u, :t)'), [
            {"u": "root", "t": "exp"}, {"u": "cy", "t": "vision"}])
    engine.dispose()

    services, said = server.start(CONFIG)
    assert _teams(services, "root") == ("ml", "vision", "exp") and _teams(services, "cy") == ("vision",)
    assert _teams(services, "ana") == ("ml",)
    assert len(said) == 1 and "are kept with the teams PUT quotas gave at run time after them (added cy (vision); " \
        "changed root: ml, vision → ml, vision, exp)" in said[0], said
    with services.store.transaction(write=False) as tx:
        rows = tx.conn.execute(sa.select(schema.user_teams).order_by(schema.user_teams.c.user,
                                                                     schema.user_teams.c.position)).all()
    assert [(r.user, r.position, r.team) for r in rows] == [
        ("ana", 0, "ml"), ("cy", 0, "vision"), ("root", 0, "ml"), ("root", 1, "vision"), ("root", 2, "exp")]

    services, said = server.start(CONFIG)  # from then on the rule of the other tests
    assert said == [] and _teams(services, "root") == ("ml", "vision", "exp")


@pytest.mark.parametrize("user_teams,field", [
    ({"root": []}, "user_teams.root"),
    ({"root": ["ml", "exp", "ml"]}, "user_teams.root[2]"),
    ({"root": 3}, "user_teams.root"),
    ({"root": ["ml", 3]}, "user_teams.root[1]"),
    ({"root": ["ml", " "]}, "user_teams.root[1]"),
    ({"root": ["ml", "cv\u202e"]}, "user_teams.root[1]"),
    ({" ": "ml"}, "user_teams"),
    ({"ro\u202eot": "ml"}, "user_teams.ro\u202eot"),
], ids=["an empty list", "a team twice", "a number", "a number in the list", "a blank team",
        "an invisible character in a team", "a blank user", "an invisible character in a user"])
def test_newuser20_n21_bad_memberships_are_refused_naming_the_place(user_teams: Any, field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        SetQuotasRequest.model_validate({"user_teams": user_teams})
    assert refused.value.field == field, (refused.value.field, refused.value.message)
    assert refused.value.hint, refused.value


def test_newuser20_n21_a_user_cannot_put_themselves_in_a_team(server: Server) -> None:
    services, _ = server.start(CONFIG)
    with pytest.raises(AuthorizationError):
        _put(services, {"ana": ["ml", "vision"]}, by="ana", admin=False)
    assert _teams(services, "ana") == ("ml",) and [a for a, _ in _member_events(services)] == ["config", "config"]
    refused = services.audit.list(services.caller("root", admin=True), GetAuditRequest(action="refused"))
    assert [(e.actor, e.details.get("request")) for e in refused.root] == [("ana", "changing quotas")], refused
