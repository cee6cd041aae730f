"""Left open in session 26: a queue's maximum time limit was enforced nowhere at submit, and
``c.SchedApp.time_limits`` — which the README names — did not exist as a setting.

An owner could lengthen a pending job's limit only up to its queue's maximum (hubadmin25 B18), but the
same job submitted with ``--time-limit 30d`` was accepted — and the setting itself could not be made. A mature
scheduler (Slurm's partition ``MaxTime``) refuses what is over the maximum. Now one set of rules —
``c.SchedApp.time_limits`` — is planned with and enforced at submit (admins may go over it); ``time_limit: 0``
stays unlimited, accepted with its note (case 033); a bad rule is a start-up error naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from traitlets import TraitError

from jupyter_sched.errors import AuthorizationError, ValidationError
from jupyter_sched.extension.app import SchedApp
from jupyter_sched.queues.limits import TimeLimitRule, effective_limit, time_limit_rules
from jupyter_sched.services import build_services
from jupyter_sched.services.models import SubmitJobRequest

RULES = [{"team": "default", "default_s": 1800, "max_s": 3600}, {"priority": "low", "max_s": 7200}]


def _services(tmp_path: Path, **settings: Any) -> Any:
    return build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                           "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off",
                           "admin_users": ["boss"], **settings})


def _submit(services: Any, user: str, body: dict[str, Any], *, admin: bool = False) -> Any:
    request = SubmitJobRequest.model_validate({"gpus": 0, "command": ["true"], **body})
    return services.jobs.submit(services.caller(user, admin=admin), request)


def test_s26_a_submit_over_its_queues_maximum_time_limit_is_refused_naming_it_and_audited(tmp_path: Path) -> None:
    services = _services(tmp_path, time_limits=RULES)
    try:
        with pytest.raises(AuthorizationError) as caught:
            _submit(services, "bo", {"time_limit": "2h"})
        assert caught.value.field == "time_limit"
        assert caught.value.message == "time limit 2h00m is above the maximum of team default's queue (1h00m)", \
            caught.value.message
        assert "--time-limit 1h00m" in (caught.value.hint or "")
        refusals = [e for e in services.store.list_events(user="bo") if "above the maximum" in e.message]
        assert refusals, [e.message for e in services.store.list_events(user="bo")]
        assert services.store.list_jobs() == []  # nothing stored
        # within it: taken; an admin may go over it (as an owner's lengthening is checked, admins not)
        assert _submit(services, "bo", {"time_limit": "45m"}).state == "pending"
        assert _submit(services, "boss", {"time_limit": "2h"}, admin=True).state == "pending"
        # 0 asks for none: unlimited, accepted with its note (case 033), never backfilled
        unlimited = _submit(services, "bo", {"time_limit": 0})
        assert any("unlimited" in w for w in unlimited.model_dump(mode="json").get("warnings") or ()), unlimited
    finally:
        services.store.close()


def test_s26_a_job_that_gives_no_time_limit_is_planned_with_its_queues_default_else_its_maximum(
        tmp_path: Path) -> None:
    services = _services(tmp_path, time_limits=[*RULES, {"team": "cv", "max_s": 5400}],
                         user_teams={"cy": ["cv"]})
    try:
        rules = services.engine.profile.time_limits
        assert rules == time_limit_rules([*RULES, {"team": "cv", "max_s": 5400}])
        assert services.admission.policy.time_limits == rules  # one set: planned with and enforced at submit
        queued_default, queued_max = _submit(services, "bo", {}), _submit(services, "cy", {})
        low = _submit(services, "bo", {"priority": "low"})
        limits = {r.job.id: effective_limit(r.job.spec, rules) for r in services.store.list_jobs()}
        assert limits[queued_default.id] == (1800, "queue default; none given")
        assert limits[queued_max.id] == (5400, "queue max; none given")
        assert limits[low.id] == (1800, "queue default; none given")  # team default's rule over the class-only one
    finally:
        services.store.close()


def test_s26_the_servers_default_time_limit_is_capped_by_the_queues_maximum(tmp_path: Path) -> None:
    services = _services(tmp_path, time_limits=[{"max_s": 3600}], default_time_limit_s=86400)
    try:
        job = _submit(services, "bo", {})
        assert services.store.get_job(job.id).job.spec.time_limit_s == 3600
    finally:
        services.store.close()


@pytest.mark.parametrize("rules,field,words", [
    ({"team": "cv"}, "time_limits", "must be a list of rules"),
    ([{"team": "cv", "max": 3600}], "time_limits[0].max", "unknown key 'max'"),
    ([{"team": "cv"}], "time_limits[0]", "gives neither default_s nor max_s"),
    ([{"team": "cv", "max_s": -1}], "time_limits[0].max_s", "max_s must be a positive number of seconds"),
    ([{"default_s": 7200, "max_s": 3600}], "time_limits[0].default_s", "default_s 7200 is above max_s 3600"),
    ([{"team": "cv", "max_s": 60}, {"team": "cv", "max_s": 90}], "time_limits[1]", "a second rule"),
])
def test_s26_a_bad_time_limit_rule_names_itself_at_start(rules: Any, field: str, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        time_limit_rules(rules)
    assert caught.value.field == field and words in caught.value.message, (caught.value.field, caught.value.message)
    if isinstance(rules, list):
        with pytest.raises(TraitError, match=r"c\.SchedApp\.time_limits = .*" + words.replace("(", r"\(")[:20]):
            SchedApp(time_limits=rules)


def test_s26_time_limits_is_a_setting_of_the_server() -> None:
    app = SchedApp(time_limits=RULES)
    assert time_limit_rules(app.time_limits) == (TimeLimitRule(team="default", default_s=1800, max_s=3600),
                                                 TimeLimitRule(priority="low", max_s=7200))
