"""The one wording of reasons, job lines, cancels and waits (:mod:`jupyter_sched.wording`).

Issue 20, finding 4: the panel read "ETA unknown (it fits only after running jobs without a time
limit end (j-…)) · Unblocks when: starts when running jobs finish (see ETA)" — brackets inside
brackets and the ETA said twice; a user blocked by their own cap was told to wait for the team;
and a lease request withdrawn while pending read "released by bob", like a real release.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.wording import (
    cancel_outcome,
    flag_for,
    job_line,
    lease_end_message,
    refusal_text,
    render_reason,
    state_word,
    wait_progress,
)

NOW = datetime(2026, 3, 30, 6, 30, tzinfo=timezone.utc)


def make_reason(code: str = "WaitingForCapacity", message: str = "needs 2 GPUs, 1 free of 4", **kw: Any) -> dict[str, Any]:
    return {"code": code, "message": message, "details": {}, "unblock": "", "position": None, "eta": None,
            "eta_reason": "", "per_flavor": [], **kw}


@dataclass(frozen=True)
class ReasonCase:
    id: str
    reason: dict[str, Any]
    want_line: str
    want_unblock_has: str = ""
    absent: tuple[str, ...] = field(default_factory=tuple)


CASES = [
    ReasonCase("an unknown ETA says why after a colon and the capacity wait says it once",
               make_reason(position=3, eta_reason="it fits only after running jobs without a time limit end (j-7)",
                           unblock="starts when running jobs finish (see ETA)"),
               "queued #3 · needs 2 GPUs, 1 free of 4 · ETA unknown: it fits only after running jobs without a "
               "time limit end (j-7)",
               absent=("see ETA", "((", "))", "Unblocks when")),
    ReasonCase("with the core's data, an unknown ETA names the jobs it waits for in plain words",
               make_reason(position=2, eta_reason="it fits only after jobs without a time limit end (j-7, j-8)",
                           details={"eta_code": "NoTimeLimit", "eta_waits_on": ["j-7", "j-8"]}),
               "queued #2 · needs 2 GPUs, 1 free of 4 · ETA unknown: it can start only after one or more of j-7 "
               "and j-8 end, none of which has a time limit",
               absent=("(",)),
    ReasonCase("a known ETA today is a time and how long until it",
               make_reason(position=1, eta="2026-03-30T06:35:00+00:00"),
               "queued #1 · needs 2 GPUs, 1 free of 4 · ETA 06:35 UTC (in 5m)"),
    ReasonCase("an ETA on another day carries its date",
               make_reason(eta="2026-03-31T09:00:00Z"),
               "queued · needs 2 GPUs, 1 free of 4 · ETA Mar 31 09:00 UTC (in 26h30m)"),
    ReasonCase("a user's own cap points at their cap, not at the team",
               make_reason("ExceedsQuota", "user bob in research has 0 of 2 GPUs free (2 in use), job needs 1",
                           details={"team": "research", "user": "bob", "quota": 2, "used": 2}, position=1),
               "queued #1 · user bob in research has 0 of 2 GPUs free (2 in use), job needs 1 · ETA unknown · "
               "it starts when bob's own running work leaves room under bob's cap of 2 GPUs in research, or when an "
               "admin raises that cap",
               absent=("releases GPUs", "raises its quota")),
    ReasonCase("a team's quota points at the team and its quota",
               make_reason("ExceedsQuota", "research has 0 of 4 GPUs free (4 in use), job needs 2",
                           details={"team": "research", "user": None, "quota": 4, "used": 4}),
               "queued · research has 0 of 4 GPUs free (4 in use), job needs 2 · ETA unknown · it starts when "
               "research's running jobs or kernel leases release GPUs, or when an admin raises research's quota"),
    ReasonCase("a borrowing limit names guarantee plus limit",
               make_reason("BorrowingLimitReached", "ml would use 7 GPUs, above its guarantee 4 + borrowing limit 2",
                           details={"team": "ml", "guaranteed": 4, "borrowing_limit": 2}),
               "queued · ml would use 7 GPUs, above its guarantee 4 + borrowing limit 2 · ETA unknown · it starts "
               "when ml's running jobs or kernel leases release GPUs, or when an admin raises ml's borrowing limit"),
    ReasonCase("a block whose advice the core words (an unhealthy GPU's admin steps) keeps it, as one sentence",
               make_reason("UnhealthyGpu", "2 of the matching GPUs are unhealthy",
                           unblock="waits until the unhealthy GPUs recover (an admin can restart the NVIDIA device "
                                   "plugin on the node once the GPU is checked, or drain the node)"),
               "queued · 2 of the matching GPUs are unhealthy · ETA unknown · waits until the unhealthy GPUs recover "
               "(an admin can restart the NVIDIA device plugin on the node once the GPU is checked, or drain the "
               "node)"),
    ReasonCase("the rule that binds decides the advice: the team's borrowing limit",
               make_reason("ExceedsQuota", "ml would use 7 GPUs",
                           details={"team": "ml", "user": None, "rule": "team borrowing limit", "guaranteed": 4,
                                    "borrowing_limit": 2}),
               "queued · ml would use 7 GPUs · ETA unknown · it starts when ml uses fewer GPUs than its guarantee "
               "plus borrowing limit (4 + 2), or when an admin raises them"),
    ReasonCase("a user cap that binds while the team quota is full too says both",
               make_reason("ExceedsQuota", "user bob in research has 0 of 1 GPUs free (1 in use), job needs 1",
                           details={"team": "research", "user": "bob", "rule": "user cap", "quota": 1,
                                    "also_exceeds": [{"team": "research", "user": None, "quota": 4, "used": 4}]}),
               "queued · user bob in research has 0 of 1 GPU free (1 in use), job needs 1 · ETA unknown · it starts "
               "when bob's own running work leaves room under bob's cap of 1 GPU in research, or when an admin "
               "raises that cap. Also full: research's quota"),
    ReasonCase("GPU memory is said in GiB and the fix is memory per GPU",
               make_reason("Unschedulable", "the job asks for 204800 MiB per GPU; the most any GPU here has is 81920 MiB",
                           details={"field": "mem_per_gpu", "requested_mib": 204800, "max_mib": 81920}),
               "queued · asks for 200 GiB of memory per GPU; the most any GPU here has is 80 GiB · ETA unknown "
               "· ask for at most 80 GiB per GPU",
               absent=("fewer GPUs",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_reason_reads_as_one_line_with_each_part_once(case: ReasonCase) -> None:
    text = render_reason(case.reason, now=NOW, relative=True)
    assert text.line == case.want_line
    for bad in case.absent:
        assert bad not in text.line
    assert text.line.count("ETA") == 1


def test_the_server_text_is_absolute_and_names_its_fields() -> None:
    """What the server sends as ``reason.text``: no "in 5m" (it would go stale in the panel)."""
    text = render_reason(make_reason(eta="2026-03-30T06:35:00+00:00"), now=NOW)
    assert text.to_dict() == {"summary": "needs 2 GPUs, 1 free of 4.", "eta": "ETA 06:35 UTC", "unblock": "",
                              "line": "queued · needs 2 GPUs, 1 free of 4 · ETA 06:35 UTC"}


@pytest.mark.parametrize("before, after, grace, want", [
    ({"state": "pending"}, {"id": "j-1", "state": "cancelled"}, None, "cancelled j-1 (was pending; removed from the queue)"),
    ({"state": "running"}, {"id": "j-2", "state": "running"}, 60.0, "cancelled j-2 (was running; stopping, grace 60 s)"),
    ({"state": "running"}, {"id": "j-3", "state": "running"}, None, "cancelled j-3 (was running; stopping)"),
    ({"state": "pending", "kind": "lease"}, {"id": "l-1", "state": "cancelled", "kind": "lease"}, None,
     "withdrew lease request l-1 (was pending; no GPUs had been granted)"),
    ({"state": "running", "kind": "lease", "allocation": {"gpu_uuids": ["GPU-a"]}},
     {"id": "l-2", "state": "cancelled", "kind": "lease"}, None, "released lease l-2 (was running; gave back GPU-a)"),
], ids=["a pending job leaves the queue", "a running job is stopping with the grace", "grace unknown",
        "a pending lease request is withdrawn", "a granted lease gives its GPUs back"])
def test_a_cancel_says_what_happened(before: dict[str, Any], after: dict[str, Any], grace: float | None,
                                     want: str) -> None:
    assert cancel_outcome(before, after, grace_s=grace) == want


def test_a_withdrawn_lease_request_does_not_read_like_a_release() -> None:
    assert lease_end_message(granted=True, actor="bob") == "released by bob"
    withdrawn = lease_end_message(granted=False, actor="bob", why="no GPUs granted within 10m")
    assert withdrawn == "request withdrawn by bob before any GPU was granted: no GPUs granted within 10m"
    assert "released" not in withdrawn


def test_a_refusal_with_a_reason_reads_like_the_queue() -> None:
    reason = make_reason("Unschedulable", "x", details={"field": "mem_per_gpu", "requested_mib": 204800,
                                                         "max_mib": 81920}, unblock="resubmit asking for fewer GPUs")
    message, hint = refusal_text("raw", "resubmit asking for fewer GPUs per worker", {"reason": reason})
    assert message.startswith("asks for 200 GiB") and hint == "Ask for at most 80 GiB per GPU."
    assert refusal_text("bad gpus", "use 1", None) == ("bad gpus", "use 1")


@pytest.mark.parametrize("field, want", [("mem_per_gpu", "--mem-per-gpu"), ("min_memory_mib", "--mem-per-gpu"),
                                         ("queue", "--team"), ("command", "--"), ("odd", "odd")])
def test_fields_are_said_as_the_option_a_person_typed(field: str, want: str) -> None:
    assert flag_for(field) == want


def test_a_wait_frame_is_a_fraction_and_a_label_for_both_bars() -> None:
    pending = {"id": "j-1", "state": "pending", "submitted_at": "2026-03-30T06:20:00Z",
               "reason": make_reason(position=2, eta="2026-03-30T06:40:00Z")}
    frame = wait_progress(pending, NOW)
    assert (frame.phase, frame.fraction, frame.label) == ("queued", 0.5, "queued #2 · ETA 06:40 UTC (in 10m)")
    assert frame.detail == "needs 2 GPUs, 1 free of 4."
    running = {"id": "j-1", "state": "running", "started_at": "2026-03-30T06:00:00Z", "time_limit_s": 7200,
               "allocation": {"node": "n1"}}
    frame = wait_progress(running, NOW)
    assert (frame.phase, frame.fraction, frame.label) == ("running", 0.25, "running on n1 · 30m of 2h00m limit")
    unknown = wait_progress({**running, "time_limit_s": None}, NOW)
    assert unknown.fraction is None and unknown.label == "running on n1 · 30m"
    fresh = wait_progress({"id": "j-1", "state": "pending", "reason": None}, NOW)
    assert (fresh.fraction, fresh.label) == (None, "queued · waiting for the next scheduling cycle")
    done = wait_progress({"id": "j-1", "state": "succeeded", "exit_code": 0}, NOW)
    assert (done.phase, done.fraction, done.label) == ("done", 1.0, "job j-1: succeeded, exit code 0")


def test_a_pending_job_line_carries_the_rendered_reason() -> None:
    job = {"id": "l-1", "kind": "lease", "name": "kernel-1", "state": "pending", "resources": {"gpus": 1},
           "reason": make_reason(position=1, eta="2026-03-30T06:35:00Z")}
    assert job_line(job, NOW) == ("lease l-1 (kernel-1): pending, 1 GPU · queued #1 · needs 2 GPUs, 1 free of 4 · "
                                  "ETA 06:35 UTC (in 5m)")


@pytest.mark.parametrize(("backfill", "clause", "want"), [
    ({"limit_s": 3600.0, "limit_source": "given"},
     "with a limit of 3600 s (given) it cannot finish before j-9, reserved from 2026-03-30T08:15:02.123456+00:00",
     "its 1h00m time limit would run into the GPUs reserved for j-9 from 08:15 UTC"),
    ({"limit_s": 7200.0, "limit_source": "queue default; none given"},
     "with a limit of 7200 s (queue default; none given) it cannot finish before j-9, reserved from "
     "2026-03-30T08:15:02.123456+00:00",
     "the queue's default time limit (2h00m; it gave none) would run into the GPUs reserved for j-9 from 08:15 UTC"),
    ({"limit_s": None, "limit_source": "unlimited"},
     "it has no time limit (unlimited), so it cannot start ahead of j-9, reserved from 2026-03-30T08:15:02.123456+00:00; "
     "it can only start when nothing is reserved",
     "without a time limit of its own it cannot start ahead of j-9, whose GPUs are reserved from 08:15 UTC"),
], ids=["given limit", "queue default", "no limit"])
def test_a_backfill_clause_says_hours_and_a_clock_time_not_seconds_and_an_iso_stamp(
        backfill: dict[str, Any], clause: str, want: str) -> None:
    """Found trying the first hour again: a busy queue's reasons read "with a limit of 3600 s (given)
    it cannot finish before j-…, reserved from 2026-12-02T03:44:37.065813+00:00"."""
    details = {"backfill": {**backfill, "reserved_for": "j-9", "reservation": "2026-03-30T08:15:02.123456+00:00"}}
    reason = make_reason(message=f"needs 1 A100 GPU, 0 free; {clause}.", details=details)
    assert render_reason(reason, now=NOW).summary == f"needs 1 A100 GPU, 0 free; {want}."
    other_day = render_reason(reason, now=datetime(2026, 3, 29, 23, 0, tzinfo=timezone.utc)).summary
    assert "Mar 30 08:15 UTC" in other_day and "+00:00" not in other_day


def test_newuser6_finding_2_no_backfill_clause_when_no_gpu_is_free_and_the_reserved_job_by_name() -> None:
    """New user 6, F2: "needs 4 GPUs, 0 free; its 1h00m time limit would run into the GPUs reserved
    for j-… from 15:23 UTC" — with nothing free the limit is not what holds it (a reader thinks a
    shorter limit would help); and the clause named the job by id while the ETA said "big3 (j-…)"."""
    clause = "with a limit of 3600 s (given) it cannot finish before j-9, reserved from 2026-03-30T08:15:02+00:00"
    backfill = {"limit_s": 3600.0, "limit_source": "given", "reserved_for": "j-9",
                "reservation": "2026-03-30T08:15:02+00:00"}
    none_free = make_reason(message=f"needs 4 GPUs, 0 free; {clause}.", details={"free": 0, "backfill": backfill})
    assert render_reason(none_free, now=NOW).summary == "needs 4 GPUs, 0 free."
    # a kernel's lease is told what it waits for, free GPUs or not (new user 5 #4; no "it waits until j-9
    # has started", which the ETA beside it could contradict: new user 13, N8)
    assert render_reason(none_free, now=NOW, kind="lease").summary == (
        "needs 4 GPUs, 0 free; a kernel holds its GPUs until it releases them, so it cannot start ahead of j-9, "
        "whose GPUs are reserved from 08:15 UTC.")
    some_free = make_reason(message=f"needs 4 GPUs, 2 free; {clause}.",
                            details={"free": 2, "backfill": backfill, "eta_waits_on_names": {"j-9": "big3"}})
    assert render_reason(some_free, now=NOW).summary == (
        "needs 4 GPUs, 2 free; its 1h00m time limit would run into the GPUs reserved for big3 (j-9) from 08:15 UTC.")


def test_a_message_without_the_backfill_clause_is_left_as_the_core_wrote_it() -> None:
    reason = make_reason(message="needs 2 GPUs, 1 free of 4", details={"backfill": {"reserved_for": "j-9"}})
    assert render_reason(reason, now=NOW).summary == "needs 2 GPUs, 1 free of 4."


def test_an_admitted_job_the_cluster_holds_back_reads_pending_in_the_cluster() -> None:
    """Case 027 on the wire: GPUs given, but Kubernetes cannot schedule the pods — the job stays
    ``admitted`` with the reason. "admitted" alone reads as started; it is a wait (@i18-telemetry)."""
    reason = make_reason(code="Unschedulable", message="Kubernetes cannot place the pod: 0 of 3 nodes have a free GPU",
                         unblock="free a GPU on a node or add one")
    job = {"id": "j-7", "name": "train", "kind": "training", "state": "admitted", "reason": reason,
           "resources": {"gpus": 2}, "allocation": {"node": "n1", "gpu_uuids": ["GPU-a", "GPU-b"]}}
    assert job_line(job, NOW) == ("job j-7 (train): pending (in the cluster), 2 GPUs · Kubernetes cannot place the "
                                  "pod: 0 of 3 nodes have a free GPU. Free a GPU on a node or add one")
    frame = wait_progress(job, NOW)
    assert (frame.phase, frame.label, frame.fraction) == ("queued", "pending (in the cluster)", None)
    assert frame.detail.startswith("Kubernetes cannot place the pod")
    assert state_word(job) == "pending (in the cluster)"
    on_its_way = {**job, "reason": None}  # admitted a moment ago, no complaint from the cluster
    # on its way to running: "starting", the word every list uses (new user 11, N4: "admitted" only in %schedule queue)
    assert state_word(on_its_way) == "starting" and job_line(on_its_way, NOW).startswith("job j-7 (train): starting on n1")


@pytest.mark.parametrize(("model", "workers", "want"), [
    ("any model", 1, "Ask for at most 2 GPUs."),
    ("any model", 4, "Ask for at most 2 GPUs per worker."),
    ("A100 or H100", 1, "Ask for at most 2 GPUs, or for another model: no node here has more than 2 A100 or "
                        "H100 GPUs."),
])
def test_too_many_gpus_for_any_node_is_told_the_most_a_node_has(model: str, workers: int, want: str) -> None:
    """Found trying the first hour again: ``submit --gpus 3`` on a 2-GPU machine was told to ask for
    "fewer GPUs per worker or another GPU model" although it named no model; new user 4: "per
    worker" to someone who asked for no workers, and "no node here has more" said twice."""
    reason = make_reason(code="Unschedulable", message=f"needs 3 GPUs of {model} on one node but the largest node has 2",
                         unblock="resubmit asking for fewer GPUs per worker or another GPU model",
                         details={"requested": 3, "max_per_node": 2, "model": model, "filters": [], "workers": workers})
    assert render_reason(reason).unblock == want


def test_a_refusal_does_not_repeat_the_field_the_cli_already_names() -> None:
    message, hint = refusal_text("time_limit: cannot parse duration 'forever'", "use e.g. '2h'", None, "time_limit")
    assert (message, hint) == ("cannot parse duration 'forever'", "use e.g. '2h'")
    assert refusal_text("gpus must be an integer", None, None, "gpus")[0] == "gpus must be an integer"


def test_a_model_name_that_says_gpu_is_not_followed_by_gpu_again() -> None:
    """A first try on a machine without GPUs read "needs 1 Simulated GPU 80GB GPU, 0 free"."""
    one = make_reason(message="needs 1 Simulated GPU 80GB GPU, 0 free", details={"model": "Simulated GPU 80GB"})
    two = make_reason(message="needs 2 Simulated GPU 80GB GPUs, 0 free", details={"model": "Simulated GPU 80GB"})
    real = make_reason(message="needs 2 A100 GPUs, 0 free", details={"model": "A100"})
    assert [render_reason(r).summary for r in (one, two, real)] == [
        "needs 1 Simulated GPU 80GB, 0 free.", "needs 2 Simulated GPU 80GB, 0 free.", "needs 2 A100 GPUs, 0 free."]


def test_newuser6_finding_9_another_users_lease_is_not_yours_to_release() -> None:
    """New user 6, F9 (hub): bob's job waiting on alice's kernel lease said "(%gpu release in that
    notebook; …)" — an action only alice can take. Bob is told what bounds the wait instead; the
    owner of the lease keeps the sentence naming her notebook."""
    details = {"team": "default", "eta_code": "NoTimeLimit", "eta_waits_on": ["l-alice"]}
    reason = make_reason(message="needs 4 GPUs, 2 free", details=details)
    reason["eta"] = None
    bob = render_reason(reason, now=NOW, mine=True).eta
    assert bob == ("ETA unknown: it can start only after another user's lease l-alice is released or "
                   "reclaimed when idle (a lease has no time limit)"), bob  # a kernel of hers is hers to know (N9)
    named = {**reason, "details": {**details, "eta_waits_on_names": {"l-alice": "notebook lease"}}}
    assert render_reason(named, now=NOW, mine=True).eta == (  # its public name says it is a kernel's
        "ETA unknown: it can start only after another user's kernel lease l-alice is released or "
        "reclaimed when idle (a kernel's GPUs have no time limit)")
    assert "%gpu release" not in render_reason(reason, now=NOW).eta  # whose is unknown to a third reader
    own = {**details, "eta_waits_on_own": [{"id": "l-alice", "name": "kernel-a", "kind": "lease", "gpus": 2,
                                            "notebook": "a.ipynb"}]}
    alice = render_reason({**reason, "details": own}, now=NOW, mine=True).eta
    assert "your own kernel lease l-alice (kernel-a, notebook a.ipynb)" in alice and "%gpu release" in alice, alice


def test_newuser6_finding_19_a_reason_from_before_the_first_cycle_is_not_estimated_yet_not_unknown() -> None:
    """New user 6, F19: right after submit the queue said "ETA unknown: estimated within seconds, at
    the next scheduling cycle" — unknown and estimated in one breath."""
    from jupyter_sched.scheduling.live import PROVISIONAL_ETA

    reason = make_reason(eta_reason=PROVISIONAL_ETA)
    assert render_reason(reason, now=NOW).eta == "ETA not estimated yet (at the next scheduling cycle, within seconds)"
    assert render_reason(make_reason(eta_reason="no room"), now=NOW).eta == "ETA unknown: no room"



def test_newuser7_finding_1_of_several_jobs_without_a_limit_the_eta_does_not_say_all_must_end() -> None:
    """New user 7, F1: a 1-GPU request behind hogA and hogB (2 GPUs each, no time limit) read "it can
    start only after hogA (j-…) and hogB (j-…) end" — as if both had to end, while either frees
    enough. The core does not say how many must end, so the sentence says one or more; one job, one
    lease or one own lease reads as before."""
    names = {"j-a": "hogA", "j-b": "hogB"}
    details = {"team": "default", "eta_code": "NoTimeLimit", "eta_waits_on": ["j-a", "j-b"], "eta_waits_on_names": names}
    reason = {**make_reason(message="needs 1 GPU, 0 free", details=details), "eta": None}
    assert render_reason(reason, now=NOW).eta == (
        "ETA unknown: it can start only after one or more of hogA (j-a) and hogB (j-b) end, none of which has a "
        "time limit")
    one = {**reason, "details": {**details, "eta_waits_on": ["j-a"]}}
    assert render_reason(one, now=NOW).eta == "ETA unknown: it can start only after hogA (j-a) ends, which has no time limit"
    leases = {**reason, "details": {**details, "eta_waits_on": ["l-1", "l-2"]}}
    assert render_reason(leases, now=NOW).eta.startswith(
        "ETA unknown: it can start only after one or more of leases l-1 and l-2 are released by their owners")
    own = {**reason, "details": {**details, "eta_waits_on": ["l-1", "l-2"], "eta_waits_on_own": [
        {"id": "l-1", "name": "k1", "kind": "lease", "gpus": 1}, {"id": "l-2", "name": "k2", "kind": "lease", "gpus": 1}]}}
    assert render_reason(own, now=NOW, mine=True).eta.startswith(
        "ETA unknown: it can start only after one or more of your own kernel leases l-1 and l-2, which hold 2 GPUs, "
        "are released with %gpu release"), render_reason(own, now=NOW, mine=True).eta


def test_newuser6_finding_2_a_job_that_fits_now_names_the_reserved_job_it_would_delay_by_its_name() -> None:
    """New user 6, F2 remainder: a 0.5-GPU job that fits on a shared GPU (code Priority) read "fits now
    but would delay j-1m8w539dr-87hbre, which holds the reservation …" beside "ETA …, when all2
    (j-1m8w539dr-87hbre) ends" — the reserved job by its id only. (Seen through a real service: 2
    simulated GPUs, one 1-GPU and one 0.5-GPU job running, all2 waiting for both, then half2 at 0.5.)"""
    reason = {"code": "Priority", "eta": "2026-03-30T06:45:00+00:00",
              "message": "fits now but would delay j-a2, which is ahead of it in the queue: the plan keeps Simulated GPU "
                         "80GB GPUs for it from 2026-03-30T06:40:00+00:00 (reservation).",
              "details": {"reserved_for": "j-a2", "reservation": "2026-03-30T06:40:00+00:00", "model": "Simulated GPU 80GB",
                          "eta_code": "Projected", "eta_waits_on": ["j-a2"], "eta_waits_on_names": {"j-a2": "all2"}}}
    text = render_reason(reason, now=NOW)
    assert text.summary == ("fits now but would delay all2 (j-a2), which is ahead of it in the queue: the plan keeps "
                            "Simulated GPU 80GB for it from 06:40 UTC (reservation)."), text.summary
    assert text.eta == "ETA 06:45 UTC, when all2 (j-a2) ends", text.eta
    unnamed = {**reason, "details": {**reason["details"], "eta_waits_on_names": {}}}
    assert render_reason(unnamed, now=NOW).summary.startswith("fits now but would delay j-a2, which is ahead")


def test_newuser7_finding_6_exit_126_for_a_working_directory_says_so_not_the_command() -> None:
    """New user 7, F6 (hub mode): a job whose working_dir its owner cannot enter read "failed, exit code
    126 (a command is not executable) — last lines: jupyter_sched: cannot enter the working directory
    '/root/.nothere' as mallory: Permission denied"; the label pointed at the command."""
    from jupyter_sched.wording import job_line

    last = "jupyter_sched: cannot enter the working directory '/root/.nothere' as mallory: Permission denied"
    job = {"id": "j-1", "kind": "training", "state": "failed", "exit_code": 126,
           "message": f"exited with code 126; last lines: {last}"}
    assert job_line(job, NOW) == f"job j-1: failed, exit code 126 (its working directory cannot be entered) — last lines: {last}"
    other = {**job, "message": "exited with code 126; last lines: jupyter_sched: cannot run 'x': not executable"}
    assert "(a command is not executable)" in job_line(other, NOW)


def test_newuser7_finding_9_a_running_service_says_whether_its_port_answers() -> None:
    """New user 7, F9: a service that never answered on its port read word for word like a ready one."""
    from jupyter_sched.wording import job_line

    base = {"id": "j-s", "name": "app", "kind": "inference", "state": "running", "port": 8765,
            "started_at": "2026-03-30T06:20:00+00:00", "allocation": {"node": "vm", "gpu_uuids": ["GPU-1"]}}
    assert job_line({**base, "message": "running"}, NOW) == (
        "service j-s (app): running on vm: GPU-1 · not answering on port 8765 yet (started 06:20 UTC)")
    assert job_line({**base, "message": "ready on port 8765"}, NOW) == "service j-s (app): running on vm: GPU-1 · ready on port 8765"
    assert "port" not in job_line({**base, "kind": "training", "message": "running"}, NOW)


def test_newuser7_finding_16_a_hint_names_the_command_not_the_rest_request() -> None:
    """New user 7, F16: a second definition of a name said "… or change that one: PATCH
    definitions/d-1" in the CLI and the magic; each now names its own edit command."""
    from jupyter_sched.cli.main import error_line
    from jupyter_sched.errors import ConflictError
    from jupyter_sched.magics.core import _one_line

    err = ConflictError("you keep a definition named 'analysis' already (d-1)", field="name",
                        hint="choose another name, or change that one: PATCH definitions/d-1")
    assert error_line("definitions", err) == (
        "jupyter-sched definitions: --name: you keep a definition named 'analysis' already (d-1) — choose another "
        "--name, or change that one: `jupyter-sched definitions edit d-1 …` [conflict]"), error_line("definitions", err)
    said = _one_line(err)
    assert "%schedule define edit d-1 …" in said and "PATCH" not in said, said


def test_newuser7_finding_10_a_bad_quota_line_in_the_config_is_named_by_its_place_and_team(tmp_path: Any) -> None:
    """New user 7, F10: ``c.SchedApp.quotas = [{"team": "ml", "guaranteed": "lots"}]`` stopped the server
    with "guaranteed: guaranteed must be a number" — with several lines, which one?"""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.services import build_services
    from jupyter_sched.store import sqlite_url

    settings = {"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path / "logs"),
                "inventory_source": "simulated", "simulated_gpus": 2,
                "quotas": [{"team": "cv", "guaranteed": 1}, {"team": "ml", "guaranteed": "lots"}]}
    with pytest.raises(ValidationError) as err:
        build_services(settings)
    assert err.value.field == "quotas[1].guaranteed", err.value.field
    assert err.value.message.startswith("quota line 1 (team 'ml'): "), err.value.message


def test_newuser20_n22_the_unblock_sentence_is_a_clause_of_the_line() -> None:
    """New user 20, N22: "· It starts when ml's running jobs …" — a sentence with its capital inside a
    "·" list (the panel said "Unblocks when: It starts when …"); the line and the panel now agree."""
    reason = make_reason("BorrowingLimitReached", "ml would use 4 GPUs, above its limit of 3 GPUs (guaranteed 2 + "
                         "borrowing limit 1)",
                         details={"team": "ml", "guaranteed": 2, "borrowing_limit": 1})
    text = render_reason(reason, now=NOW)
    assert text.unblock.startswith("It starts when ml's")  # the sentence itself, for surfaces that show it alone
    assert text.line.endswith(" · it starts when ml's running jobs or kernel leases release GPUs, or when an admin "
                              "raises ml's borrowing limit"), text.line
    assert " · It " not in text.line and not text.line.endswith(".")
