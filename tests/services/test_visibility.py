"""Who sees what of other users' work (jupyter_sched.services.visibility), as scenarios, and the
event fan-out that applies it before queueing (a user's queue never fills with others' events)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.extension.events import EventHub
from jupyter_sched.hub.budgets import BUDGET_ACTION
from jupyter_sched.services.visibility import HOLDERS_KEY, WITHHELD_NOTE, event_for, telemetry_for

ANA = Caller(user="ana", teams=("ml",))
BOSS = Caller(user="boss", teams=("ops",), admin=True)
BO = Caller(user="bo", teams=("cv",))


def sample(uuid: str, *, pids: tuple[int, ...] = (101,), mig: str | None = None) -> dict[str, Any]:
    return {"gpu_uuid": uuid, "mig_uuid": mig, "utilization_pct": 40.0, "memory_used_mib": 1000,
            "processes": [{"pid": p, "used_memory_mib": 500, "sm_util_pct": 10, "name": "python"} for p in pids],
            "pod": f"pod-of-{uuid}", "namespace": "team-ml", "container": "job"}


def telemetry_event() -> dict[str, Any]:
    return {"type": "telemetry", "data": {"at": "2026-12-02T00:00:00+00:00", "gpus": [sample("GPU-a"), sample("GPU-b")],
                                          HOLDERS_KEY: {"GPU-a": ["ana"], "GPU-b": ["bo"]}}}


@pytest.mark.parametrize(("caller", "event", "want_seen"), [
    pytest.param(ANA, {"type": "job", "data": {"id": "j1", "user": "ana"}}, True, id="a user sees their own job event"),
    pytest.param(ANA, {"type": "job", "data": {"id": "j2", "user": "bo"}}, False, id="not another user's"),
    pytest.param(ANA, {"type": "idle_warning", "data": {"job_id": "j2", "user": "bo"}}, False,
                 id="nor another user's idle warning"),
    pytest.param(BOSS, {"type": "lease", "data": {"id": "l1", "user": "bo"}}, True, id="an admin sees everyone's"),
    pytest.param(ANA, {"type": "inventory", "data": {"changes": []}}, True, id="ownerless events go to everyone"),
    pytest.param(ANA, {"type": BUDGET_ACTION, "data": {"team": "ml", "user": None}}, True,
                 id="a member sees their team's budget warning"),
    pytest.param(BO, {"type": BUDGET_ACTION, "data": {"team": "ml", "user": None}}, False,
                 id="red team 6: another team's member does not see it"),
    pytest.param(BOSS, {"type": BUDGET_ACTION, "data": {"team": "ml", "user": None}}, True,
                 id="an admin sees every team's budget warning"),
    pytest.param(BO, {"type": BUDGET_ACTION, "data": {"team": "ml", "user": "ana"}}, False,
                 id="a user's budget warning is theirs alone"),
])
def test_who_receives_an_event(caller: Caller, event: dict[str, Any], want_seen: bool) -> None:
    assert (event_for(caller, event) is not None) is want_seen


def test_telemetry_events_show_process_lists_of_the_callers_own_gpus_only() -> None:
    seen = event_for(ANA, telemetry_event())
    assert seen is not None and HOLDERS_KEY not in seen["data"]
    mine, other = seen["data"]["gpus"]
    assert [p["pid"] for p in mine["processes"]] == [101] and mine["pod"] == "pod-of-GPU-a"
    assert other["processes"] == [] and other["pod"] is None
    # bo's GPU's reading is bo's while bo's work holds it (red team 17, R9 / new user 17, N4)
    assert other["utilization_pct"] is None and other["note"] == WITHHELD_NOTE and mine["utilization_pct"] == 40.0
    admin = event_for(BOSS, telemetry_event())
    assert admin is not None and all(g["processes"] for g in admin["data"]["gpus"]) and HOLDERS_KEY not in admin["data"]


def test_get_telemetry_hides_foreign_alerts_and_others_idle_work_from_users() -> None:
    body = {"gpus": [{"gpu_uuid": "GPU-a", "current": sample("GPU-a"), "recent": [sample("GPU-a")]},
                     {"gpu_uuid": "GPU-b", "current": sample("GPU-b", mig="MIG-b1"), "recent": []}],
            "foreign": [{"gpu_uuid": "GPU-b", "pids": [999]}],
            "idle": [{"job_id": "j-ana", "gpu_uuids": ["GPU-a"]}, {"job_id": "j-bo", "gpu_uuids": ["GPU-b"]}]}
    user = telemetry_for(ANA, body, held={"GPU-a", "MIG-x"}, own_jobs={"j-ana"})
    assert user["foreign"] == [] and [i["job_id"] for i in user["idle"]] == ["j-ana"]
    assert user["gpus"][0]["current"]["processes"] and user["gpus"][0]["recent"][0]["processes"]
    assert user["gpus"][1]["current"]["processes"] == []
    assert telemetry_for(BOSS, body, held=set(), own_jobs=set()) == body


def test_a_users_queue_never_fills_with_events_they_may_not_see() -> None:
    async def scenario() -> tuple[bool, int, int]:
        hub = EventHub(queue_size=5)
        ana = hub.subscribe(lambda event: event_for(ANA, event))
        for i in range(1000):  # bo's busy work: far more events than ana's queue holds
            hub.publish({"type": "job", "data": {"id": f"j{i}", "user": "bo"}})
        hub.publish({"type": "job", "data": {"id": "mine", "user": "ana"}})
        first = await ana.next(1.0)
        return ana.dropped, ana.pending, 0 if first is None else int(first["data"]["id"] == "mine")

    dropped, pending, got_mine = asyncio.run(scenario())
    assert (dropped, pending, got_mine) == (False, 0, 1)


def _waiting_lease_event(owner: str) -> dict[str, Any]:
    """A pending lease of ``owner`` waiting on their own other kernel lease, as the engine
    publishes it (job_to_dict: the core's reason, no sentences)."""
    reason = {"code": "ExceedsQuota", "message": "team-ui has 0 of 2 GPUs free (2 in use), this kernel needs 1",
              "details": {"team": "team-ui", "eta_code": "NoTimeLimit", "eta_waits_on": ["l-1"],
                          "eta_waits_on_own": [{"id": "l-1", "name": "kernel-a", "kind": "lease", "gpus": 1}]},
              "unblock": "starts when team-ui releases GPUs or an admin raises its quota", "position": 1,
              "eta": None, "eta_reason": "it fits only after jobs without a time limit end (l-1)"}
    return {"type": "lease", "data": {"id": "l-2", "user": owner, "kind": "lease", "state": "pending",
                                      "reason": reason}}


def test_a_job_event_carries_its_reason_in_words_for_whoever_receives_it() -> None:
    """The panel's live rows read the event stream: with the core's raw fields it wrote "ETA
    unknown (it fits only after jobs without a time limit end (l-1))" and told the owner to wait
    for their team — the reason's sentences now come with the event, as with a REST answer."""
    own = event_for(ANA, _waiting_lease_event("ana"))
    assert own is not None
    text = own["data"]["reason"]["text"]
    assert text["eta"].startswith("ETA unknown: it can start only after your own kernel lease l-1 (kernel-a)")
    assert "%gpu release in that notebook" in text["unblock"] and "end (l-1)" not in text["line"]
    admin = event_for(BOSS, _waiting_lease_event("ana"))
    assert admin is not None
    assert "your own" not in str(admin["data"]["reason"]["text"]) and admin["data"]["reason"]["text"]["eta"]
    assert "text" not in _waiting_lease_event("ana")["data"]["reason"]  # the shared event is not changed
