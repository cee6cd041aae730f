"""verify28 V8: a team-policy row with a weight out of bounds (-1, NaN, Infinity, 0) was read and used instead of
quarantined as bad quota and budget rows are; after a restart GET quotas answered ``"weight": NaN`` — not JSON.
Now such a row does not read (``TeamPolicy`` bounds its weight as PUT quotas does): it holds its team's GPU work
(fail closed), GET quotas' warnings name it, and no answer carries NaN or Infinity.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models.base import wire_json
from jupyter_sched.services.models.quotas import SetQuotasRequest
from tests.services.test_s27_verify27_v6_quota_row_fails_closed import _close, _services


def _strict(data: bytes) -> object:
    def refuse(word: str) -> object:
        raise ValueError(f"not JSON: {word}")
    return json.loads(data, parse_constant=refuse)


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf"), 0.0], ids=["negative", "nan", "inf", "zero"])
def test_verify28_v8_a_team_policy_row_with_a_bad_weight_is_quarantined_and_never_served(tmp_path: Path,
                                                                                         weight: float) -> None:
    services = _services(tmp_path)
    carol = services.caller("carol", admin=True)
    services.quotas.set(carol, SetQuotasRequest.model_validate({
        "quotas": [{"team": "vision", "guaranteed": 2}], "teams": [{"team": "vision", "weight": 1}]}))
    with services.store.engine.begin() as conn:
        stored = "NaN" if weight != weight else weight  # SQLite keeps a NaN float as NULL; as text it reads NaN
        conn.execute(sa.text("UPDATE team_policies SET weight = :w WHERE team = 'vision'"), {"w": stored})
        conn.execute(sa.text("UPDATE change_counters SET value = value + 1 WHERE name = 'quotas'"))
    try:
        amy = services.caller("amy", admin=False)
        job = services.jobs.submit(amy, SubmitJobRequest(gpus=1, team="vision", command=["true"], name="a"))
        services.engine.tick()
        reason = services.engine.reasons[job.id]
        assert reason.code == "QuotaRowUnreadable" and "team policy row vision" in reason.message, reason
        assert services.store.quota_set().teams == ()
        for caller in (carol, amy):  # the admin's view and a member's
            answer = _strict(wire_json(services.quotas.get(caller)))
            assert isinstance(answer, dict)
            assert all(t.get("team") != "vision" for t in answer.get("teams", [])), answer
        warnings = services.quotas.get(carol).model_dump()["warnings"]
        assert any(w.startswith("team policy row vision") and "weight" in w for w in warnings), warnings
    finally:
        _close(services)
