"""newuser33 n6: a waiting job's line named the other user holding 3 of 4 GPUs ("n33a holds 3 of 4 GPUs
(1 job) … ask n33a to cancel some of them"), never the reader's OWN idle kernel lease holding the 4th
it needs. The core now counts the owner's own leases among what holds the GPUs of a capacity wait
(``details.held_by_owner``: numbers; ``details.held_by_owner_leases``: each lease, with its notebook and
its kernel's idle time — the owner's alone), and the one renderer names them to the owner with what
frees them, and to anyone else as that user's holding, without notebook or kernel. The REST/CLI half
(owner and another user against a real server) is in tests/onboarding/test_red15_fair.py."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from jupyter_sched.model import JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.names import default_lease_name
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from tests.core.core_builders import T0, make_job, make_node, running, snapshot

NOTEBOOK = "work/nb.ipynb"


def _lease(lease_id: str, user: str, node: str, index: int, *, kernel: str | None = "k-b") -> object:
    job = make_job(lease_id, user=user)
    spec = replace(job.spec, kind=JobKind.LEASE, kernel_id=kernel, kernel_notebook=NOTEBOOK if kernel else None,
                   command=(), name=default_lease_name(kernel, NOTEBOOK if kernel else None))
    return running(replace(job, spec=spec), node, [index])


def _waiting_reason(*held: object, kernels: dict[str, dict[str, object]] | None = None) -> dict[str, object]:
    """n33b's 3-GPU job's wire reason on 4 GPUs where n33a runs a 3-GPU job on GPUs 0-2 and ``held`` hold the rest."""
    other = running(make_job("a-h", gpus=3, user="n33a", time_limit_s=3600), "g1", [0, 1, 2])
    wants = make_job("b-p", gpus=3, user="n33b", submitted=1, time_limit_s=3600)
    snap = replace(snapshot([make_node("g1", gpus=4)], [other, *held, wants]), kernels=kernels or {})  # type: ignore[list-item]
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["b-p"]
    return reason_to_dict(reason)


def test_newuser33_n6_the_owners_own_idle_kernel_lease_is_counted_and_named_to_them_alone() -> None:
    idle = {"k-b": {"execution_state": "idle", "last_activity": (T0 - timedelta(minutes=5)).isoformat()}}
    reason = _waiting_reason(_lease("l-b", "n33b", "g1", 3), kernels=idle)
    details = reason["details"]
    assert details["held_by_one_user"]["user"] == "n33a"
    assert details["held_by_owner"] == {"user": "n33b", "gpus": 1, "total": 4, "leases": 1}
    assert details["held_by_owner_leases"] == [{"id": "l-b", "name": "notebook lease", "kind": "lease", "gpus": 1,
                                                "notebook": NOTEBOOK, "idle_since": "2025-03-30T11:55:00+00:00"}]
    mine = render_reason(reason, now=T0, mine=True)
    assert ("n33a holds 3 of 4 GPUs (1 job); your own kernel lease l-b (notebook work/nb.ipynb) holds 1 of 4 "
            "GPUs, its kernel idle since 11:55 UTC: run %gpu release in that notebook to free it.") in mine.summary, mine
    assert "your own kernel lease" in mine.line
    theirs = render_reason(reason, now=T0)  # another reader (the API also drops held_by_owner_leases for them)
    assert "n33b holds 1 of 4 GPUs (1 lease)" in theirs.summary, theirs
    assert NOTEBOOK not in theirs.line and "k-b" not in theirs.line and "your own" not in theirs.line


@pytest.mark.parametrize("held, want", [
    pytest.param("other", None, id="another user's lease is not the owner's holding"),
    pytest.param("no kernel", "run `jupyter-sched cancel l-b` to free it", id="a lease bound to no kernel: cancel it"),
])
def test_newuser33_n6_whose_lease_and_what_frees_it(held: str, want: str | None) -> None:
    lease = _lease("l-b", "n33c", "g1", 3) if held == "other" else _lease("l-b", "n33b", "g1", 3, kernel=None)
    reason = _waiting_reason(lease)
    if want is None:
        assert "held_by_owner" not in reason["details"] and "held_by_owner_leases" not in reason["details"]
        return
    mine = render_reason(reason, now=T0, mine=True).summary
    assert "your own lease l-b (held for no kernel) holds 1 of 4 GPUs: " + want in mine, mine
    assert "idle since" not in mine  # no kernel reported idle


def test_newuser33_n6_a_lease_the_eta_already_names_with_its_release_is_not_named_twice() -> None:
    """The ETA of a wait on the owner's own leases alone names them and what frees them (issue 20, new user 20
    N29: "%gpu release" said once): the summary's clause leaves those out."""
    entry = {"id": "l-b", "name": "notebook lease", "kind": "lease", "gpus": 1, "notebook": NOTEBOOK}
    reason = {"code": "WaitingForCapacity", "message": "needs 1 A100-80GB GPU, 0 free", "eta": None,
              "details": {"eta_code": "NoTimeLimit", "eta_waits_on": ["l-b"], "eta_waits_on_own": [entry],
                          "held_by_owner": {"user": "n33b", "gpus": 1, "total": 1, "leases": 1},
                          "held_by_owner_leases": [entry]}}
    text = render_reason(reason, now=T0, mine=True)
    assert text.eta.startswith("ETA unknown: it can start only after your own kernel lease l-b"), text
    assert "holds 1 of 1" not in text.summary and text.line.count("%gpu release") == 1, text


def test_newuser35_n1_the_wait_lines_name_the_owners_own_lease_as_theirs_and_once() -> None:
    """newuser35 N1: ``%schedule wait`` / ``jupyter-sched wait``'s progress line said "root holds 1 of 4 GPUs
    (1 lease)" of the reader's OWN kernel lease (its status line said "your own kernel lease …"): the wait's
    frame rendered the reason as another reader's. Now as its owner's; to anyone else as before."""
    from jupyter_sched.wording.progress import wait_progress

    idle = {"k-b": {"execution_state": "idle", "last_activity": (T0 - timedelta(minutes=5)).isoformat()}}
    reason = _waiting_reason(_lease("l-b", "n33b", "g1", 3), kernels=idle)
    job = {"id": "b-p", "name": "wait3", "state": "pending", "kind": "training", "reason": reason,
           "submitted_at": T0.isoformat()}
    mine = wait_progress({**job, "mine": True}, T0)
    for said in (mine.detail, mine.wide, *mine.lines):
        assert "n33b holds" not in said, said
    assert "your own kernel lease l-b" in mine.wide and mine.wide.count("%gpu release") == 1, mine.wide
    theirs = wait_progress(job, T0)  # not the reader's: their holding, with no notebook
    assert "n33b holds 1 of 4 GPUs (1 lease)" in theirs.wide and NOTEBOOK not in theirs.wide, theirs.wide
