"""Verify 21, V10: PUT quotas ``"user_teams": {"root": ["Vision"]}`` while the line is for ``vision``
was stored with only the generic "teams Vision, default have no quota line"; a job charged to
``Vision`` was refused with no "did you mean". Team names stay case-sensitive, but every word about
an unknown team now offers the one spelt the same but for case.

Real parts: a SQLite store, the local executor; 2 simulated GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import AuthorizationError
from jupyter_sched.model.case_names import case_twin
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from tests.services.test_newuser21_n5_preemptible_note import _services


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    svc = _services(tmp_path, None)
    yield svc
    svc.store.close()


def _put(services: Services, user_teams: dict[str, list[str]]) -> list[str]:
    body = {"quotas": [{"team": "vision", "gpu_model": "A100-80GB", "guaranteed": 1, "borrowing_limit": 1}],
            "user_teams": user_teams}
    answer = services.quotas.set(services.caller("carol", admin=True), SetQuotasRequest.model_validate(body))
    return list(answer.warnings or [])


def test_verify21_v10_put_quotas_warns_of_a_team_differing_only_in_case(services: Services) -> None:
    warnings = _put(services, {"root": ["Vision"]})
    assert ("team Vision has no quota line but team vision has — did you mean vision? Team names are case-sensitive "
            "(root is in Vision)") in warnings, warnings
    assert "team Vision has no quota line but team vision has" in " ".join(services.quotas.get(
        services.caller("carol", admin=True)).warnings or []), "GET quotas says it too"


def test_verify21_v10_no_case_warning_when_the_team_is_spelt_right(services: Services) -> None:
    warnings = _put(services, {"root": ["vision"]})
    assert not [w for w in warnings if "did you mean" in w], warnings


def test_verify21_v10_a_job_charged_to_the_case_twin_is_told_the_right_name(services: Services) -> None:
    _put(services, {"ana": ["vision"]})
    with pytest.raises(AuthorizationError) as refused:
        services.jobs.submit(services.caller("ana", admin=False),
                             SubmitJobRequest(gpus=1, team="VISION", script="x.py", time_limit="10m"))
    assert "did you mean 'vision'? (names are case-sensitive)" in str(refused.value.hint), refused.value.hint


@pytest.mark.parametrize("name, known, want", [
    ("Vision", ["vision", "nlp"], "vision"),
    ("vision", ["vision", "Vision"], None),  # spelt as a known one
    ("VISION", ["vision", "Vision"], None),  # two twins: no guess
    ("ml", ["vision"], None),
])
def test_verify21_v10_case_twin(name: str, known: list[str], want: str | None) -> None:
    assert case_twin(name, known) == want


def test_verify21_v10_a_quota_line_for_a_model_spelt_in_another_case_is_told_the_right_name(services: Services) -> None:
    from jupyter_sched.errors import ValidationError

    body = {"quotas": [{"team": "vision", "gpu_model": "a100-80gb", "guaranteed": 1}]}
    with pytest.raises(ValidationError) as refused:
        services.quotas.set(services.caller("carol", admin=True), SetQuotasRequest.model_validate(body))
    assert str(refused.value.hint).startswith("did you mean 'A100-80GB'? (names are case-sensitive); use one of "
                                              "A100-80GB"), refused.value.hint
