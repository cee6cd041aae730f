"""New user 18's server-side findings (/work/coord/notes/newuser18.md: N1, N12, N17, N3): what
``GET me``, a pending job's reason, a gang's refusal and the queue's positions say.

Real parts: a SQLite store, the local executor (real processes), the service's own cycle.
"""

from __future__ import annotations

import pytest

from jupyter_sched.errors import QuotaError, UnschedulableError
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, GetQueueRequest, SetQuotasRequest, SubmitJobRequest
from jupyter_sched.wording.quota import quota_lines, quota_text
from jupyter_sched.wording.status import status_lines


def _quotas(services: Services, *lines: dict[str, object]) -> None:
    """As an admin's ``PUT quotas`` (the engine is told)."""
    services.quotas.set(services.caller("root", admin=True), SetQuotasRequest.model_validate({"quotas": list(lines)}))


# ---- N1: the quota line per team the caller's work is charged to --------------------------------

def test_newuser18_n1_work_charged_to_two_teams_gets_one_quota_line_per_team_yours_counted_in_each(
        services: Services) -> None:
    root, al = services.caller("root", admin=True), services.caller("al", admin=False)
    team = services.accounting.me(root).team
    _quotas(services, {"team": "teama", "guaranteed": 2, "borrowing_limit": 0},
            {"team": "teamb", "guaranteed": 2, "borrowing_limit": 2})
    root = services.caller("root", admin=True)  # an admin may charge a team the quotas name
    services.jobs.submit(root, SubmitJobRequest(gpus=2, team="teama", name="a-guar", command=["sleep", "60"]))
    services.jobs.submit(root, SubmitJobRequest(gpus=1, name="mine", command=["sleep", "60"]))
    services.jobs.submit(al, SubmitJobRequest(gpus=1, name="his", command=["sleep", "60"]))
    services.engine.tick()
    wire = services.accounting.me(root).model_dump(mode="json")
    assert wire["in_use"]["gpus"] == 3.0 and wire["team_in_use"] == 2.0
    assert "teama" in wire["teams"] and "teama" in wire["priorities"], wire["teams"]  # it charged teama
    lines = quota_lines(wire)
    assert lines == [
        f"team {team} has no GPUs set aside and no limit (no quota); 2 GPUs in use by the team, 1 GPU of them yours",
        "team teama: guaranteed 2 GPUs, borrowing limit 0 GPUs (at most 2 GPUs); 2 GPUs in use by the team, 2 GPUs of them yours",
    ]  # was one line: "…; 2 GPUs in use by the team, 3 GPUs of them yours"
    assert wire["quota_text"] == quota_text(wire) == "\n".join(lines)  # the panel's sentence is the CLI's
    said = status_lines("http://x/", {"version": "1"}, wire, {"gpus": []})
    at = next(i for i, line in enumerate(said) if line.startswith("quota      "))
    assert said[at:at + 2] == [f"quota      {lines[0]}", f"           {lines[1]}"], said
    # al holds GPUs in one team only: one line, as before
    assert quota_lines(services.accounting.me(al).model_dump(mode="json")) == [
        f"team {team} has no GPUs set aside and no limit (no quota); 2 GPUs in use by the team, 1 GPU of them yours"]


# ---- N12: a quota lowered under a pending job says "never" ---------------------------------------

def test_newuser18_n12_a_job_above_a_lowered_per_user_limit_says_never_with_the_submit_sentence(
        services: Services) -> None:
    al, bo, root = (services.caller("al", admin=False), services.caller("bo", admin=False),
                    services.caller("root", admin=True))
    team = services.accounting.me(bo).team
    _quotas(services, {"team": team, "guaranteed": 4, "borrowing_limit": 0})
    services.jobs.submit(al, SubmitJobRequest(gpus=3, command=["sleep", "60"]))
    services.engine.tick()
    big = services.jobs.submit(bo, SubmitJobRequest(gpus=4, name="q4", command=["sleep", "5"]))
    services.engine.tick()
    assert services.jobs.get(bo, big.id).state == "pending"
    # the admin caps bo at 1 GPU: q4 can never start under it
    _quotas(services, {"team": team, "guaranteed": 4, "borrowing_limit": 0},
            {"team": team, "user": "bo", "guaranteed": 1, "borrowing_limit": 0})
    for _ in range(2):
        services.engine.tick()
    with pytest.raises(QuotaError) as refused:  # what a submission of the same request is told now
        services.jobs.submit(bo, SubmitJobRequest(gpus=4, command=["sleep", "5"]))
    seen = services.jobs.get(bo, big.id).model_dump(mode="json")
    reason = seen["reason"]
    assert seen["state"] == "pending"  # kept, as Kueue keeps an inadmissible workload: the quota may go up again
    assert reason["message"] == refused.value.message == (
        f"4 GPUs can never fit the per-user limit of bo in team {team}: 1 GPU (guaranteed 1 + borrowing limit 0)")
    assert reason["code"] == "Unschedulable"
    assert reason["text"]["eta"] == "ETA never, under the quota now in force"
    assert reason["text"]["unblock"] == "Cancel it and resubmit with at most 1 GPU, or ask an admin to raise the quota."
    assert "own running work" not in reason["text"]["line"] and "Also full" not in reason["text"]["line"]
    assert not reason.get("position")  # it holds no place in the queue
    # the owner is told once, under their name (two cycles, one row)
    rows = [r for r in services.audit.list(root, GetAuditRequest(action="never_fits_quota")).root]
    assert [(r.job_id, r.user) for r in rows] == [(big.id, "bo")], rows
    assert "q4: 4 GPUs can never fit the per-user limit of bo" in rows[0].message
    # the admin raises it again: the job waits as before (no "never")
    _quotas(services, {"team": team, "guaranteed": 4, "borrowing_limit": 0})
    services.engine.tick()
    again = services.jobs.get(bo, big.id).model_dump(mode="json")["reason"]
    assert again["code"] != "Unschedulable" and "never" not in again["text"]["eta"], again


def test_newuser18_n12_a_gang_above_a_lowered_team_limit_names_its_workers(services: Services) -> None:
    bo = services.caller("bo", admin=False)
    team = services.accounting.me(bo).team
    services.jobs.submit(bo, SubmitJobRequest(gpus=4, command=["sleep", "60"]))
    services.engine.tick()
    gang = services.jobs.submit(bo, SubmitJobRequest(gpus=1, workers=3, command=["sleep", "5"]))
    services.engine.tick()
    _quotas(services, {"team": team, "guaranteed": 1, "borrowing_limit": 1})
    services.engine.tick()
    reason = services.jobs.get(bo, gang.id).model_dump(mode="json")["reason"]
    assert reason["message"] == f"3 GPUs can never fit the limit of team {team}: 2 GPUs (guaranteed 1 + borrowing limit 1)"
    assert reason["details"]["field"] == "workers"
    assert reason["text"]["unblock"] == ("Cancel it and resubmit with at most 2 workers of 1 GPU, or ask an admin to "
                                         "raise the quota.")


# ---- N3: queue positions are unique at every read -------------------------------------------------

def _positions(services: Services, caller: object) -> list[tuple[str, int | None]]:
    page = services.jobs.queue_page(caller, GetQueueRequest())  # type: ignore[arg-type]
    return [(str(e.name), e.position) for e in page.entries.root if e.state == "pending"]


def test_newuser18_n3_a_fresh_submit_never_shares_a_position_with_a_job_it_passes(services: Services) -> None:
    al, bo = services.caller("al", admin=False), services.caller("bo", admin=False)
    services.jobs.submit(al, SubmitJobRequest(gpus=4, command=["sleep", "60"]))
    services.engine.tick()
    services.jobs.submit(bo, SubmitJobRequest(gpus=3, name="big3", command=["sleep", "5"]))
    services.jobs.submit(bo, SubmitJobRequest(gpus=1, name="lowone", priority="low", command=["sleep", "5"]))
    services.engine.tick()
    assert _positions(services, bo) == [("big3", 1), ("lowone", 2)]
    for n in range(1, 4):
        services.jobs.submit(bo, SubmitJobRequest(gpus=2, name=f"dup{n}", command=["sleep", "5"]))
        seen = _positions(services, bo)  # at once, before any cycle numbered it
        numbers = [p for _, p in seen if p is not None]
        assert len(numbers) == len(set(numbers)), seen  # was [('big3', 1), ('dup1', 2), ('lowone', 2)]
        assert len(seen) == n + 2, seen
        services.engine.tick()
        after = _positions(services, bo)
        assert [p for _, p in after] == list(range(1, n + 3)), after  # the cycle numbers everyone
        assert after[-1][0] == "lowone", after  # the low-priority job last


# ---- N17: a gang too big for the cluster names its groups -----------------------------------------

def test_newuser18_n17_a_gang_of_groups_too_big_for_the_cluster_names_groups_the_total_and_the_fix(
        services: Services) -> None:
    bo = services.caller("bo", admin=False)
    request = SubmitJobRequest.model_validate({"groups": [{"name": "a", "gpus": 3}, {"name": "b", "gpus": 3}],
                                               "command": ["true"]})
    with pytest.raises(UnschedulableError) as refused:
        services.jobs.submit(bo, request)
    err = refused.value
    assert err.field == "groups", err  # the request has no gpus field (was "gpus")
    assert err.message == "a gang of 2 groups needs 6 GPUs of any model in all (3 + 3) but only 4 exist", err.message
    assert err.hint is not None and "per worker" not in err.hint and "at most 4 GPUs across its groups" in err.hint, \
        err.hint
    # a dry run says the same
    said = services.jobs.dryrun(bo, SubmitJobRequest.model_validate(
        {"groups": [{"name": "l", "gpus": 1}, {"name": "t", "gpus": 2, "workers": 2}], "command": ["true"]}))
    wire = said.model_dump(mode="json")
    assert wire["never"] is True, wire
    text = wire["reason"]["text"]
    assert "(1 + 2 x 2)" in text["summary"] and "per worker" not in text["unblock"], text
    assert "at most 4 GPUs across its groups" in text["unblock"], text
