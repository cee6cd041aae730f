"""Red team 17, R3: a port bound by a process *outside* the scheduler (red17b's terminal ran
``http.server 18888``) was seen by nobody: red17a's service declaring it was admitted, charged and
failed "port 18888 is already in use". The edge binds pending services' declared ports into
``Snapshot.ports_bound_outside``; the core pends such a job ``PortInUse`` saying so (nobody named),
with no ETA from GPUs, and admits it once a later snapshot no longer has the port."""

from __future__ import annotations

from dataclasses import replace

from core_builders import T0, make_job, make_node, snapshot

from jupyter_sched.model import Job, JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason


def _service(job_id: str, *, port: int, gpus: int = 1, user: str = "red17a") -> Job:
    job = make_job(job_id, gpus=gpus, user=user)
    return replace(job, spec=replace(job.spec, kind=JobKind.INFERENCE, port=port))


def test_red17_r3_a_service_whose_port_is_bound_outside_pends_saying_so_and_starts_once_free() -> None:
    jobs = [_service("a-serve", port=18888), _service("b-serve", port=18889, user="red17c"),
            replace(make_job("train", gpus=1), submitted_at=T0)]
    bound = replace(snapshot([make_node("vm", gpus=4)], jobs), ports_bound_outside=frozenset({18888}))
    result = run_cycle(bound)
    assert sorted(a.job_id for a in result.admits) == ["b-serve", "train"], "other work is not held back"
    reason = next(p.reason for p in result.pending if p.job_id == "a-serve")
    assert reason.code == "PortInUse", reason
    assert reason.message.startswith("port 18888 is bound on this host by a process outside the scheduler"), reason
    assert reason.details["port"] == 18888 and reason.details["outside"] is True
    assert "holder" not in reason.details and "red17b" not in reason.message, "another account's process: unnamed"
    assert reason.eta is None and "frees the port" in (reason.eta_reason or ""), (reason.eta, reason.eta_reason)
    text = render_reason(reason_to_dict(reason), now=T0, relative=True)
    assert "outside the scheduler" in text.summary, text

    free = run_cycle(snapshot([make_node("vm", gpus=4)], [_service("a-serve", port=18888)]))
    assert [a.job_id for a in free.admits] == ["a-serve"], "re-checked each cycle: admitted once the port is free"


def test_red17_r3_a_port_bound_outside_means_nothing_to_a_job_without_that_port() -> None:
    training = replace(make_job("t", gpus=1), spec=replace(make_job("t", gpus=1).spec, port=18888))
    result = run_cycle(replace(snapshot([make_node("vm", gpus=2)], [training]),
                               ports_bound_outside=frozenset({18888})))
    assert [a.job_id for a in result.admits] == ["t"], "a training job's port is not a declared service port"
