"""hubadmin23 A15 (left by s23-admincli): ``jupyter-sched audit --exclude eta_moveed`` (REST
``GET audit?exclude=eta_moveed``) answered every row, the ``eta_moved`` ones included, without a word —
a typo excluded nothing. An excluded name that no audit record has nor can have is now a 400 naming
the field (``exclude``), the value, the nearest known action when one is close and every known one,
as ``action=`` is refused (new user 13, N17); a known action not yet written is still fine.

Real parts: the services on a SQLite store (tests/services/conftest.py), the CLI's refusal renderer.
"""

from __future__ import annotations

import pytest

from jupyter_sched.cli.main import error_line
from jupyter_sched.errors import ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.audit import AUDIT_ACTIONS
from jupyter_sched.services.models import GetAuditRequest


def _audit(services: Services, **query: str) -> list[dict[str, object]]:
    boss = services.caller("boss", admin=True)
    return [dict(r) for r in services.audit.list(boss, GetAuditRequest.model_validate(query)).to_wire()]


def _refused(services: Services, **query: str) -> ValidationError:
    with pytest.raises(ValidationError) as refused:
        _audit(services, **query)
    return refused.value


def test_s24_words_a15_an_excluded_typo_is_refused_naming_the_field_value_and_the_action_meant(
        services: Services) -> None:
    # before: 200 with every row (the typo matched no action, so nothing was left out)
    err = _refused(services, exclude="submit,eta_moveed")
    assert err.field == "exclude", err
    assert err.message == "unknown audit action 'eta_moveed' in exclude — did you mean eta_moved?", err.message
    assert err.details == {"value": "eta_moveed", "did_you_mean": "eta_moved"}, err.details
    assert err.hint is not None and err.hint.startswith("use eta_moved; audit records have the actions "), err.hint
    assert all(a in err.hint for a in AUDIT_ACTIONS), err.hint
    line = error_line("audit", err)
    assert "'eta_moveed'" in line and "did you mean eta_moved?" in line and "[validation_error]" in line, line


def test_s24_words_a15_a_name_like_no_action_is_refused_with_every_action_and_no_guess(services: Services) -> None:
    err = _refused(services, exclude="zzz")
    assert (err.field, err.message) == ("exclude", "unknown audit action 'zzz' in exclude"), err
    assert err.hint is not None and err.hint.startswith("audit records have the actions "), err.hint
    # the bad value is said once, cut, and escaped (it goes to a terminal)
    long = _refused(services, exclude="x" * 64)
    assert long.details == {"value": "x" * 64}, long.details


def test_s24_words_a15_known_actions_and_stored_old_ones_are_excluded_as_before(services: Services) -> None:
    assert _audit(services, exclude="leader_resigned,eta_moved") == []  # known, none written yet: no refusal
    # an action an older release wrote, kept in the store
    services.store.add_event(actor="jupyter_sched", action="legacy_thing", message="from an older release")
    assert _audit(services, exclude="legacy_thing") == []
    kept = _audit(services)
    assert [r["action"] for r in kept] == ["legacy_thing"], kept
    # the action filter gives a close match too
    err = _refused(services, action="preemt")
    assert (err.field, err.message) == ("action", "unknown audit action 'preemt' — did you mean preempt?"), err
