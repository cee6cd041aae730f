"""Red team 22, R2 (the same class, weaker, and the other surfaces): a waiter's reason told every reader
that another user's kernel lease is idle now ("ETA … if red22a's kernel lease l-… stays idle (it is then
reclaimed)"), and an ETA move caused by another user's reports named its figure (``eta_moved.message``:
"ann's job j-1 is projected to end from its progress (49 % done)"). :func:`reason_for` keeps a blocker's
private state for its owner and admins only; the words then give the ETA and a neutral cause. Scenarios
over wire reasons as the engine writes them, rendered by the one renderer; the event fan-out applies it.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.services.visibility import event_for
from jupyter_sched.services.withheld import reason_for
from jupyter_sched.wording import render_reason

DUE = "2026-12-05T05:35:00+00:00"
LEASE = "l-1"


def idle_lease_wait(*, several: bool = False) -> dict[str, Any]:
    """bo's job waits on ann's kernel lease(s) idle now, reclaimed at :data:`DUE` if they stay idle."""
    waits = [LEASE, "l-2"] if several else [LEASE]
    details: dict[str, Any] = {
        "eta_code": "NoTimeLimit", "eta_waits_on": waits, "eta_waits_on_owners": {w: "ann" for w in waits},
        "eta_waits_on_names": {w: "kernel lease" for w in waits},
        "eta_idle_release": {w: {"after_s": 1800, "at": DUE if w == LEASE else None} for w in waits}}
    if several:
        details.update(eta_idle_at={"at": DUE, "leases": [LEASE]}, eta_must_release=1)
    return {"code": "WaitingForCapacity", "message": "all GPUs busy", "details": details, "position": 1,
            "eta": None, "eta_reason": "waits on leases"}


def progress_wait() -> dict[str, Any]:
    """bo's job waits on ann's running job j-1, whose progress (49 %) set the ETA and moved it."""
    return {"code": "WaitingForCapacity", "message": "all GPUs busy", "position": 1, "eta": DUE, "eta_reason": "",
            "details": {"eta_code": "Projected", "eta_waits_on": ["j-1"], "eta_waits_on_owners": {"j-1": "ann"},
                        "eta_progress": {"j-1": 0.49}, "eta_progress_at": {"j-1": "2026-12-05T05:10:00+00:00"},
                        "eta_moved": {"from": "a", "to": "b", "cause": "progress", "jobs": ["j-1"],
                                      "message": "ETA moved a → b: ann's job j-1 is projected to end from its "
                                                 "progress (49 % done)"}}}


@pytest.mark.parametrize(("reason", "reader", "admin", "want_eta", "want_not"), [
    pytest.param(idle_lease_wait(), "bo", False, "ETA Dec 5 05:35 UTC, when ann's kernel lease l-1 is released",
                 "idle", id="the waiter's owner reads when, not that ann's kernel is idle"),
    pytest.param(idle_lease_wait(), None, False, "ETA Dec 5 05:35 UTC, when ann's kernel lease l-1 is released",
                 "idle", id="a queue line anyone reads says the same"),
    pytest.param(idle_lease_wait(several=True), "bo", False,
                 "ETA Dec 5 05:35 UTC, when one or more of ann's kernel leases l-1 and l-2 are released", "idle",
                 id="of several leases, neither which is idle nor which is in use"),
    pytest.param(idle_lease_wait(), "ann", False, "ETA Dec 5 05:35 UTC if ann's kernel lease l-1 stays idle", "",
                 id="the lease's owner reads that it is idle"),
    pytest.param(idle_lease_wait(), "boss", True, "ETA Dec 5 05:35 UTC if ann's kernel lease l-1 stays idle", "",
                 id="an admin too"),
    pytest.param(progress_wait(), "bo", False, "ETA Dec 5 05:35 UTC, when ann's job j-1 ends, from its reported "
                 "progress", "%", id="another user's progress: the ETA and its cause, not the figure"),
    pytest.param(progress_wait(), "ann", False, "ETA Dec 5 05:35 UTC, when ann's job j-1 ends, from its progress "
                 "(49 % done, reported Dec 5 05:10:00 UTC)", "", id="its owner reads the figure"),
])
def test_s22_red22_r2_a_blockers_private_state_is_said_to_those_who_may_see_it(
        reason: dict[str, Any], reader: str | None, admin: bool, want_eta: str, want_not: str) -> None:
    """Failed before the fix (no reason_for): bo read "if ann's kernel lease l-1 stays idle (it is then
    reclaimed)" and "from its progress (49 % done, …)"."""
    seen = reason_for(reason, owner="bo", reader=reader, admin=admin)
    eta = render_reason(seen).eta
    assert eta.startswith(want_eta), eta
    if want_not:
        assert want_not not in eta and want_not not in str(seen["details"].get("eta_moved")), (eta, seen["details"])
        assert "in use" not in eta, eta
        assert all(h.get("at") is None for h in (seen["details"].get("eta_idle_release") or {}).values()), seen
        assert "eta_idle_at" not in seen["details"] and "eta_progress_at" not in seen["details"], seen["details"]
    else:
        assert seen is reason, "nothing withheld: the same reason"


def test_s22_red22_r2_the_event_stream_gives_the_waiters_owner_the_same_words() -> None:
    event = {"type": "job", "data": {"id": "j-9", "user": "bo", "kind": "training", "state": "pending",
                                     "reason": progress_wait()}}
    bo = event_for(Caller(user="bo", teams=("ml",)), event)
    assert bo is not None
    text = bo["data"]["reason"]["text"]["eta"]
    assert "from its reported progress" in text and "%" not in text, text
    boss = event_for(Caller(user="boss", teams=("ops",), admin=True), event)
    assert boss is not None and "49 % done" in boss["data"]["reason"]["text"]["eta"], boss
