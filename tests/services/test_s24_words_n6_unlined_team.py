"""New user 23, N6: a job charged to a team that no longer has a quota line (root's 3-GPU ``waiter`` in team
``default``, queued before the admin gave lines to ml and cv only and put root in ml and cv) said:

- ``team default has no quota line: …, so 3 GPUs can never start on it`` — GPUs do not start;
- ``Cancel it and resubmit with a team of yours that has a quota line, …`` — naming neither ml nor cv;
- and GET jobs/{id} carried ``"predicted_start": "…08:43:44Z"`` beside ``"eta": null, "eta_reason": "never, …"``.

Now: ``so this 3-GPU job can never start``; to its owner, ``Cancel it and resubmit it to team ml or cv
(your teams with a quota line), or …`` (their Caller's teams, added to the owner's reads only:
:mod:`jupyter_sched.services.owner_teams`) in GET jobs/{id}, GET jobs and GET queue; and
``predicted_start`` null while the ETA is never.

Real parts: the services on a SQLite store, four simulated GPUs, the local executor (ann's job runs a
real ``sleep``), the engine's cycles, the REST answer models.
"""

from __future__ import annotations

from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest, SetQuotasRequest, SubmitJobRequest
from jupyter_sched.wording.reasons import unblock_sentence

SETTING = "c.SchedApp.unlisted_team_borrowing_limit"


def test_s24_words_n6_a_job_of_a_team_without_a_line_names_the_owners_teams_and_no_start_time(
        services: Services) -> None:
    services.store.unlisted_borrowing_limit = 0.0  # c.SchedApp.unlisted_team_borrowing_limit's default
    ann = services.caller("ann", admin=False)
    services.jobs.submit(ann, SubmitJobRequest(gpus=2, time_limit="10m", command=["sleep", "300"]))
    services.engine.tick()  # ann's job holds 2 of the 4 GPUs until its 10m limit at the latest
    root = services.caller("root", admin=True)
    waiter = services.jobs.submit(root, SubmitJobRequest(gpus=3, name="waiter", command=["true"])).id
    services.engine.tick()
    first = services.jobs.get(root, waiter).to_wire()
    assert first["state"] == "pending" and first["reason"]["predicted_start"] is not None, first["reason"]

    services.quotas.set(root, SetQuotasRequest.model_validate({
        "quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 2}, {"team": "cv", "guaranteed": 2, "borrowing_limit": 0}],
        "user_teams": {"root": ["ml", "cv"]}}))
    services.engine.tick()
    root = services.caller("root", admin=True)  # resolved again: root is in ml and cv now
    reason = services.jobs.get(root, waiter).to_wire()["reason"]
    assert reason["eta"] is None and reason["eta_reason"].startswith("never"), reason
    assert reason["message"].endswith(f"({SETTING}), so this 3-GPU job can never start"), reason["message"]
    # before: "2026-12-05T…" beside "ETA never"
    assert reason["predicted_start"] is None, reason
    # before: "Cancel it and resubmit with a team of yours that has a quota line, or ask an admin to …"
    want = (f"Cancel it and resubmit it to team ml or cv (your teams with a quota line), or add a quota line for "
            f"team default with PUT quotas (or raise {SETTING}).")
    assert reason["text"]["unblock"] == reason["unblock"] == want, reason["text"]
    assert "cancel it and resubmit it to team ml or cv" in reason["text"]["line"], reason["text"]["line"]
    assert reason["details"]["owner_teams_with_lines"] == ["ml", "cv"], reason["details"]
    row = next(j for j in services.jobs.list(root, ListJobsRequest()).jobs.to_wire() if j["id"] == waiter)
    assert row["reason"]["text"]["unblock"] == want and row["reason"]["predicted_start"] is None, row["reason"]
    entry = next(e for e in services.jobs.queue(root, GetQueueRequest()).to_wire() if e["id"] == waiter)
    assert entry["reason"]["text"]["unblock"] == want and entry["eta"] is None, entry["reason"]

    # another reader is not told root's teams, nor addressed as their owner
    boss = services.caller("boss", admin=True)
    other = services.jobs.get(boss, waiter).to_wire()["reason"]
    assert "owner_teams_with_lines" not in other["details"] and "ml or cv" not in other["text"]["unblock"], other
    assert other["predicted_start"] is None, other
    ann_line = next(e for e in services.jobs.queue(ann, GetQueueRequest()).to_wire() if e["id"] == waiter)
    assert "owner_teams_with_lines" not in ann_line["reason"]["details"], ann_line["reason"]

    # a non-admin owner with one such team is told to ask an admin; with none, that none of theirs has a line
    details = {"never": "quota", "unlisted": True, "field": "team", "team": "nlp"}
    assert unblock_sentence({"code": "Unschedulable", "details": {**details, "owner_teams_with_lines": ["cv"],
                                                                  "owner_is_admin": False}}) == (
        f"Cancel it and resubmit it to team cv (your team with a quota line), or ask an admin to add a quota line "
        f"for team nlp (or to raise {SETTING}).")
    assert unblock_sentence({"code": "Unschedulable", "details": {**details, "owner_teams_with_lines": []}}) == (
        f"None of your teams has a quota line: ask an admin to add a quota line for team nlp (or to raise {SETTING}); "
        "until then it cannot start.")
