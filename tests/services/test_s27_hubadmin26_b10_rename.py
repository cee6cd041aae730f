"""hubadmin26 B10: a user renamed on the hub was "removed" + a stranger (pending job held, definitions paused,
per-user budget left on the old name) with no tool to carry them over. ``POST users/{user}/rename`` (``jupyter-sched
users rename OLD NEW``) moves the person's jobs, definitions, per-user lines, budgets, memberships and usage."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jupyter_sched.errors import AuthorizationError, ConflictError, NotFoundError, ValidationError
from jupyter_sched.model import Budget, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest, parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest, ListDefinitionsRequest
from jupyter_sched.services.models.users import RenameUserRequest
from tests.runtime.builders import T0


def _setup(services: Services, tmp_path: Path) -> dict[str, str]:
    """ana (vision) with a per-user line and budget, a pending job, a cancelled one with usage, a definition."""
    services.quotas.set(services.caller("boss", admin=True), parse(SetQuotasRequest, {
        "quotas": [{"team": "vision", "guaranteed": 4, "borrowing_limit": 0},
                   {"team": "vision", "user": "ana", "guaranteed": 2, "borrowing_limit": 0}],
        "budgets": [{"team": "vision", "user": "ana", "gpu_hours": 50}],
        "user_teams": {"ana": "vision", "bob": "vision"}}))
    ana = services.caller("ana", admin=False)
    done = services.jobs.submit(ana, SubmitJobRequest(gpus=1, team="vision", name="old", command=["true"])).id
    services.jobs.cancel(ana, done)
    with services.store.transaction() as tx:
        tx.open_usage(job_id=done, attempt=1, user="ana", team="vision", kind="training",
                      gpus=[("GPU-0", "sim", 1.0)], started_at=T0 - timedelta(hours=3))
        tx.close_usage(done, T0 - timedelta(hours=1))
    script = tmp_path / "nightly.py"
    script.write_text("print('hi')\n")
    definition = services.definitions.create(ana, CreateDefinitionRequest(
        name="nightly", script=str(script), schedule="0 3 * * *", gpus=1)).id
    # the engine is not started here: it stays pending
    pending = services.jobs.submit(ana, SubmitJobRequest(gpus=1, team="vision", name="ren-run", command=["true"])).id
    return {"done": done, "pending": pending, "definition": definition}


def _rename(services: Services, old: str, new: str, *, dry_run: bool = False, admin: bool = True) -> dict:
    caller = services.caller("boss" if admin else "judy", admin=admin)
    return services.users.rename(caller, old, RenameUserRequest(to=new, dry_run=dry_run)).model_dump(mode="json")


def test_hubadmin26_b10_rename_moves_jobs_definitions_lines_budgets_memberships_and_usage(
        services: Services, tmp_path: Path) -> None:
    """Failed before: no such act (services.users absent); the renamed person had no jobs, definitions, budget."""
    ids = _setup(services, tmp_path)
    plan = _rename(services, "ana", "ana.lopez", dry_run=True)
    assert (plan["finished_jobs"], plan["quota_lines"], plan["budgets"], plan["memberships"], plan["usage_rows"]) == (
        1, 1, 1, 1, 1), plan
    assert {i["id"] for i in plan["items"]} == {ids["pending"], ids["definition"]}, plan
    assert services.store.get_job(ids["pending"]).job.spec.user == "ana"  # a dry run changes nothing
    assert services.store.list_events(action="user_renamed") == []

    done = _rename(services, "ana", "ana.lopez")
    assert not done["dry_run"] and not done["already"], done
    store = services.store
    for job_id in (ids["pending"], ids["done"]):
        assert store.get_job(job_id).job.spec.user == "ana.lopez"
    assert store.get_job(ids["pending"]).job.state == JobState.PENDING
    assert store.count_jobs(user="ana") == 0 and store.count_jobs(user="ana.lopez") == 2
    qs = store.quota_set()
    assert [(q.team, q.user) for q in qs.quotas if q.user] == [("vision", "ana.lopez")]
    assert qs.budgets == (Budget(team="vision", user="ana.lopez", gpu_hours=50.0, period="month"),)
    assert qs.user_teams.get("ana.lopez") == ("vision",) and "ana" not in qs.user_teams
    assert [iv.user for iv in store.usage_rows()] == ["ana.lopez"]
    new = services.caller("ana.lopez", admin=False)
    listed = services.definitions.list(new, parse(ListDefinitionsRequest, {})).definitions.model_dump(mode="json")
    assert [d["id"] for d in listed] == [ids["definition"]], listed
    [event] = store.list_events(action="user_renamed")
    assert (event.actor, event.user, event.details["to"], event.details["usage_rows"]) == (
        "boss", "ana", "ana.lopez", 1)
    assert "the audit log keeps the old name" in done["kept"], done

    again = _rename(services, "ana", "ana.lopez")  # idempotent
    assert again["already"] and "nothing to do" in again["text"], again
    assert len(store.list_events(action="user_renamed")) == 1
    with pytest.raises(ValidationError) as other:
        _rename(services, "ana", "ana.x")
    assert other.value.field == "user" and "was renamed to 'ana.lopez'" in other.value.message
    services.jobs.cancel(new, ids["pending"])


def test_hubadmin26_b10_budget_and_fair_share_follow_the_person_at_once(services: Services, tmp_path: Path) -> None:
    """The engine's running usage sums (red26 R1) are read again: the new name's budget standing has the old
    name's GPU-hours this period, not 0 until a restart."""
    ids = _setup(services, tmp_path)
    budgets = services.store.quota_set().budgets
    decayed, hours = services.engine.decider.usage.read(T0, budgets)
    assert hours[("vision", "ana")] == pytest.approx(2.0) and decayed["ana"] > 0
    _rename(services, "ana", "ana.lopez")
    decayed, hours = services.engine.decider.usage.read(T0, services.store.quota_set().budgets)
    assert hours[("vision", "ana.lopez")] == pytest.approx(2.0), hours
    assert "ana" not in decayed and decayed["ana.lopez"] > 0, decayed
    services.jobs.cancel(services.caller("boss", admin=True), ids["pending"])


def test_hubadmin26_b10_refusals_name_the_field_and_the_fix(services: Services, tmp_path: Path) -> None:
    ids = _setup(services, tmp_path)
    with pytest.raises(AuthorizationError):
        _rename(services, "ana", "ana.lopez", admin=False)
    assert [e.user for e in services.store.list_events(action="refused")][-1] == "judy"
    with pytest.raises(ValidationError) as same:
        _rename(services, "ana", "ana")
    assert same.value.field == "to"
    with pytest.raises(ValidationError) as nobody:
        _rename(services, "anna", "ana.lopez")
    assert nobody.value.field == "user" and nobody.value.hint == "did you mean ana?"
    with pytest.raises(ValidationError) as slash:
        _rename(services, "ana", "a/b")
    assert slash.value.field == "to"
    bob = services.caller("bob", admin=False)
    theirs = services.jobs.submit(bob, SubmitJobRequest(gpus=1, team="vision", name="b", command=["true"])).id
    with pytest.raises(ConflictError) as busy:
        _rename(services, "ana", "bob")
    assert busy.value.field == "to" and theirs in busy.value.message and "cancel" in (busy.value.hint or "")
    assert services.store.get_job(ids["pending"]).job.spec.user == "ana"  # nothing moved
    services.jobs.cancel(bob, theirs)
    services.jobs.cancel(services.caller("ana", admin=False), ids["pending"])


def test_hubadmin26_b10_on_a_hub_the_old_name_must_be_gone_and_the_new_one_a_user(
        services: Services, tmp_path: Path) -> None:
    ids = _setup(services, tmp_path)
    hub = {"ana"}

    def owner_caller(user: str) -> object:
        if user not in hub:
            raise NotFoundError(f"no user {user}")
        return services.caller(user, admin=False)

    services.users.owner_caller = owner_caller  # type: ignore[assignment]
    with pytest.raises(ValidationError) as still:
        _rename(services, "ana", "ana.lopez")
    assert still.value.field == "user" and "rename them on the hub first" in (still.value.hint or "")
    hub.clear()
    with pytest.raises(ValidationError) as stranger:
        _rename(services, "ana", "ana.lopez")
    assert stranger.value.field == "to" and "is not a user of this hub" in stranger.value.message
    hub.add("ana.lopez")
    # the hub's removal of ana paused the definition (owner_removed names it): the rename resumes it
    services.definitions.pause(services.caller("jupyterhub", admin=True), ids["definition"])
    services.store.add_event(actor="jupyterhub", action="owner_removed", job_id=None, user="ana",
                             message="ana is no longer a user of this hub",
                             details={"user": "ana", "paused_definitions": [ids["definition"]]})
    done = _rename(services, "ana", "ana.lopez")
    assert done["resumed"] == [ids["definition"]], done
    from jupyter_sched.store.definitions import get_definition
    with services.store.transaction(write=False) as tx:
        definition = get_definition(tx, ids["definition"])
    assert (definition.user, definition.paused) == ("ana.lopez", False)
    services.jobs.cancel(services.caller("boss", admin=True), ids["pending"])


def test_verify27_v8_a_rename_into_another_person_with_records_is_refused_unless_merge(
        services: Services, tmp_path: Path) -> None:
    """verify27 V8: a typo'd ``to`` naming another existing person (bob: a finished job, a membership) merged the
    two — bob could read ana's job logs and ana's pending job would run as bob's OS account. Refused (409 naming
    ``to``, a dry run too) unless ``merge`` says both names are one person; nothing moves."""
    ids = _setup(services, tmp_path)
    bob = services.caller("bob", admin=False)
    services.jobs.cancel(bob, services.jobs.submit(bob, SubmitJobRequest(gpus=1, team="vision", name="b",
                                                                        command=["true"])).id)
    boss = services.caller("boss", admin=True)
    for dry_run in (True, False):
        with pytest.raises(ConflictError) as merged:
            services.users.rename(boss, "ana", RenameUserRequest(to="bob", dry_run=dry_run))
        assert merged.value.field == "to", merged.value
        assert merged.value.message.startswith("to: bob already has records of their own (1 job record(s), 1 team "
                                               "membership(s)): this would MERGE two people's records"), merged.value
        assert "--merge" in (merged.value.hint or "")
    assert services.store.get_job(ids["pending"]).job.spec.user == "ana"  # nothing moved
    assert services.store.list_events(action="user_renamed") == []
    done = services.users.rename(boss, "ana", RenameUserRequest(to="bob", merge=True))
    assert services.store.get_job(ids["pending"]).job.spec.user == "bob" and done.finished_jobs == 1
    services.jobs.cancel(boss, ids["pending"])


def test_hubadmin26_b10_a_rename_right_after_the_hubs_is_not_refused_from_the_cached_record(
        services: Services, tmp_path: Path) -> None:
    """The hub identity caches a user's record for lookup_cache_s (60 s): right after the hub renamed ana, the cached
    record said ana was still a user and the rename was refused as "still a user of this hub"."""
    from types import SimpleNamespace

    from jupyter_sched.hub.central import HubSchedApp

    ids = _setup(services, tmp_path)

    class Provider:  # the hub renamed ana to ana.lopez; ana's record is still cached (HubIdentityProvider)
        def __init__(self) -> None:
            self.cached = {"ana": (False, ("vision",))}

        def forget(self, name: str) -> None:
            self.cached.pop(name, None)

        def roles_now(self, name: str) -> tuple[bool, tuple[str, ...]]:
            if name in self.cached:
                return self.cached[name]
            if name != "ana.lopez":
                raise NotFoundError(f"{name} is not a user of this hub", field="user")
            return False, ("vision",)

    provider = Provider()
    app = SimpleNamespace(services=services, admin_users=[], _provider=lambda: provider)
    app.owner_caller = lambda user: HubSchedApp.owner_caller(app, user)  # type: ignore[arg-type]
    services.users.owner_caller = lambda user: HubSchedApp.owner_caller_now(app, user)  # type: ignore[arg-type]
    done = _rename(services, "ana", "ana.lopez")
    assert not done["already"] and services.store.get_job(ids["pending"]).job.spec.user == "ana.lopez", done
    services.jobs.cancel(services.caller("boss", admin=True), ids["pending"])
