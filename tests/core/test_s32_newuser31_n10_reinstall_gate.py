"""newuser31 N10 (core half): while ``Snapshot.reinstalled`` says jupyter_sched was reinstalled under the server
that launches the jobs, every batch job pends ``Reinstalled`` with the one line that names the restart, whatever
GPUs are free; a kernel's lease (nothing to launch) is granted; a later snapshot without it admits the jobs. The
edge that finds the reinstall is ``jupyter_sched.executors.install_check``."""

from __future__ import annotations

from dataclasses import replace

from core_builders import T0, make_job, make_node, snapshot

from jupyter_sched.model import JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import Reinstall
from jupyter_sched.wording import render_reason


def test_newuser31_n10_a_reinstall_holds_batch_jobs_not_leases_until_a_snapshot_without_it() -> None:
    batch = make_job("train", gpus=1)
    lease = make_job("kernel", gpus=1)
    lease = replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE, command=(), kernel_id="k-1"))
    change = Reinstall(running="0.1.0+g8d235e7", installed="0.1.0+g4ed6989", wrapper_gone=True)
    result = run_cycle(replace(snapshot([make_node("n1", gpus=4)], [batch, lease]), reinstalled=change))
    assert [a.job_id for a in result.admits] == ["kernel"], "a lease launches nothing: not held"
    (pend,) = result.pending
    assert pend.reason.code == "Reinstalled", pend.reason
    assert pend.reason.message == ("jupyter_sched was reinstalled under this running server (0.1.0+g8d235e7 → "
                                   "0.1.0+g4ed6989): restart jupyter lab (jobs stay pending)"), pend.reason.message
    assert pend.reason.eta is None and pend.reason.eta_reason == "held until the restart", pend.reason
    line = render_reason(reason_to_dict(pend.reason), now=T0, relative=True).line
    # held until the restart: no place among the jobs waiting to start (newuser38 n10)
    assert line == ("queued · jupyter_sched was reinstalled under this running server (0.1.0+g8d235e7 → "
                    "0.1.0+g4ed6989): restart jupyter lab (jobs stay pending) · ETA unknown: held until the restart"), line

    restarted = run_cycle(snapshot([make_node("n1", gpus=4)], [batch]))
    assert [a.job_id for a in restarted.admits] == ["train"], "re-read each cycle: after the restart it starts"
