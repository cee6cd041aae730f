"""newuser31 n14: n31b held every GPU while n31a's job waited; n31b's ``status`` never said so. The cycle's reasons
name, per waiting job, the running work its ETA waits on and whose it is (``eta_waits_on_owners``);
:func:`jupyter_sched.engine.waiting_on.waiting_on` turns them into, per holder, what of other users waits on them —
counts and owners, never names — which ``GET me``, ``status``, ``%gpu`` and the panel say
(:func:`jupyter_sched.wording.status.waiting_on_you_text`). Pure."""

from __future__ import annotations

from dataclasses import replace

from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.engine.waiting_on import WaitingOn, waiting_on
from jupyter_sched.model import JobKind
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.status import waiting_on_you_text


def test_newuser31_n14_the_holder_is_told_who_waits_on_their_gpus() -> None:
    lease = make_job("l-c", user="n31c")
    jobs = [*(running(make_job(f"fl2-{i}", user="n31b", time_limit_s=360), indices=[i], started=-1) for i in range(3)),
            running(make_job("a-own", user="n31a", time_limit_s=600), indices=[3], started=-1),
            make_job("a-w", gpus=2, user="n31a", time_limit_s=300, submitted=1),
            replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE, kernel_id="k-c")),
            make_job("b-next", user="n31b", time_limit_s=300, submitted=3)]
    snap = snapshot([make_node(gpus=4)], jobs)
    by_id = {j.id: j for j in snap.jobs}
    found = waiting_on(run_cycle(snap).pending, by_id.get)
    # a-w (2 GPUs) waits on n31b's and its own owner's work; n31c's lease on the first GPU that frees, n31b's
    assert found["n31b"] == WaitingOn(jobs=1, leases=1, users=("n31a", "n31c")), found
    assert "n31c" not in found  # nothing of n31c's holds GPUs
    assert "n31a" not in found or "n31a" not in found["n31a"].users  # one's own waiting work is not "another user"
    assert waiting_on_you_text(1, 1, ("n31a", "n31c")) == "1 job and 1 lease of other users (n31a, n31c) wait for GPUs you hold"
    assert waiting_on_you_text(1, 0, ("n31a",)) == "1 job of another user (n31a) waits for GPUs you hold"
    assert waiting_on_you_text(3, 0, ("n31a",)) == "3 jobs of another user (n31a) wait for GPUs you hold"
    assert waiting_on_you_text(0, 0, ()) == ""
