"""newuser31 N5: a 4-GPU job whose projected ETA was the reclaim of its owner's idle 1-GPU kernel lease said
"released with %gpu release in that notebook, it starts at once" while another user's jobs held the other 3
GPUs; released, it did not start. "At once" is now said only when the GPUs free now and the leases' cover
what the job requests (the capacity wait's ``requested`` / ``free``); else that a release lets it start sooner."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.wording.reasons import eta_sentence

NOW = datetime(2026, 12, 6, 12, 40, tzinfo=timezone.utc)
AT = "2026-12-06T12:58:00+00:00"


def _waiting_on_own_idle_lease(*, requested: Any, free: Any) -> dict[str, Any]:
    """A capacity wait's reason as the engine sends it to the job's owner: projected on their idle lease l-1."""
    details: dict[str, Any] = {
        "eta_code": "Projected", "eta_idle_at": {"at": AT, "leases": ["l-1"]}, "eta_waits_on": ["l-1"],
        "eta_waits_on_own": [{"kind": "lease", "id": "l-1", "gpus": 1, "kernel": True, "notebook": "a1.ipynb"}],
        "eta_idle_release": {"l-1": {"after_s": 1800, "at": AT}}}
    if requested is not None:
        details |= {"requested": requested, "free": free}
    return {"code": "WaitingForCapacity", "eta": AT, "details": details}


@pytest.mark.parametrize(("requested", "free", "said"), [
    (4, 0, "it can start sooner (it still needs GPUs other work holds now)"),  # another user holds 3 of 4
    (4, 3, "it starts at once"),
    (1, 0, "it starts at once"),
    (None, None, "it can start sooner"),  # not known: never promised
], ids=["others hold the rest", "the lease is the last in the way", "the lease alone", "no counts"])
def test_newuser31_n5_at_once_only_when_the_release_frees_enough(requested: Any, free: Any, said: str) -> None:
    text = eta_sentence(_waiting_on_own_idle_lease(requested=requested, free=free), now=NOW, mine=True)
    assert text.startswith("ETA 12:58 UTC if your own kernel lease l-1"), text
    assert f"released with %gpu release in that notebook, {said}" in text, text
    if "sooner" in said:
        assert "at once" not in text, text


def test_newuser31_n8_work_holding_no_gpu_is_not_told_it_waits_for_reservations() -> None:
    """newuser31 n8: a 0-GPU notebook run was told "this job can only start when nothing is reserved"; it
    started at once — reservations are of GPUs. Work holding GPUs is still told (REST tests pin its words)."""
    from jupyter_sched.model.validation import (
        NO_LIMIT_NO_GPU_WARNING,
        NO_LIMIT_WARNING,
        UNLIMITED_NO_GPU_WARNING,
        UNLIMITED_WARNING,
        no_limit_note,
    )

    assert no_limit_note("none given", 0) == NO_LIMIT_NO_GPU_WARNING
    assert no_limit_note("unlimited", 0) == UNLIMITED_NO_GPU_WARNING
    assert all("reserved" not in note for note in (NO_LIMIT_NO_GPU_WARNING, UNLIMITED_NO_GPU_WARNING))
    assert no_limit_note("none given", 2) == NO_LIMIT_WARNING and "nothing is reserved" in NO_LIMIT_WARNING
    assert no_limit_note("unlimited", 1) == UNLIMITED_WARNING


@pytest.mark.parametrize(("jobs", "leases", "verb"), [(3, 0, "cancel"), (0, 2, "release"), (1, 1, "release or cancel")],
                         ids=["batch jobs", "leases", "both"])
def test_newuser31_n5b_the_holder_is_asked_to_cancel_jobs_and_release_leases(jobs: int, leases: int, verb: str) -> None:
    """newuser31 n5: "ask n31b to release some of them" of batch jobs with time limits — "release" is the
    lease's (and a held job's) word; a job is cancelled."""
    from jupyter_sched.wording.reasons import _held_by_unblock

    said = _held_by_unblock({"user": "n31b", "gpus": 4, "total": 4, "jobs": jobs, "leases": leases})
    assert said.startswith(f"Ask n31b to {verb} some of them, or ask an admin to set quotas"), said
