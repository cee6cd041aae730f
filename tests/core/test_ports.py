"""Red team 15, R11 / new user 15, N11: an inference job's declared port is a node resource.

red15b's 0-GPU ``b-squat`` served ``http.server 18765`` on node ``vm``; red15a's ``a-serve`` (1 GPU)
declared port 18765 too, was admitted on ``vm``, crash-looped on "Address already in use" while
charged for its GPU, and said "restarted (restart 5)". Now a port held on a node (by a running or
just admitted inference job) keeps another job declaring it off that node: placed on another, or
pending with ``PortInUse`` naming the port and whose job holds it, until that job ends."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import Job, JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason


def _service(job_id: str, *, gpus: int, user: str, port: int = 18765, limit: float | None = None,
             submitted: float = 0.0) -> Job:
    job = make_job(job_id, gpus=gpus, user=user, time_limit_s=limit, submitted=submitted)
    return replace(job, spec=replace(job.spec, kind=JobKind.INFERENCE, port=port))


def _squat(node: str = "vm") -> Job:
    return running(_service("b-squat", gpus=0, user="red15b", limit=3600), node, [], started=-1)


def test_red15_r11_a_job_declaring_a_port_held_on_the_only_node_pends_naming_the_port_and_its_holder() -> None:
    jobs = [_squat(), _service("a-serve", gpus=1, user="red15a", submitted=0.5)]
    result = run_cycle(snapshot([make_node("vm", gpus=2)], jobs))
    assert [a.job_id for a in result.admits] == []
    reason = next(p.reason for p in result.pending if p.job_id == "a-serve")
    assert reason.code == "PortInUse", reason
    assert reason.message == ("port 18765 is held on vm by red15b's job b-squat; a node runs one job per "
                              "declared port"), reason.message
    assert reason.details["holder"] == "b-squat" and reason.details["held_by"] == {"vm": "b-squat"}
    # the ETA is when the holder ends (its 1 h limit, started a minute ago)
    assert reason.eta == T0 + timedelta(minutes=59), reason.eta
    text = render_reason(reason_to_dict(reason), now=T0, relative=True)
    assert "port 18765" in text.summary and "b-squat" in text.eta, text


def test_red15_r11_a_job_declaring_a_held_port_is_placed_on_another_node() -> None:
    jobs = [_squat("n1"), _service("a-serve", gpus=1, user="red15a", submitted=0.5)]
    result = run_cycle(snapshot([make_node("n1", gpus=4), make_node("n2", gpus=4)], jobs))
    assert {a.job_id: a.allocation.node for a in result.admits} == {"a-serve": "n2"}


def test_red15_r11_two_jobs_declaring_one_port_are_not_admitted_together_on_one_node() -> None:
    jobs = [_service("first", gpus=1, user="red15a", submitted=0.1),
            _service("second", gpus=1, user="red15b", submitted=0.2),
            _service("other-port", gpus=1, user="red15b", port=18766, submitted=0.3)]
    result = run_cycle(snapshot([make_node("vm", gpus=4)], jobs))
    assert sorted(a.job_id for a in result.admits) == ["first", "other-port"]
    reason = next(p.reason for p in result.pending if p.job_id == "second")
    assert reason.code == "PortInUse" and "red15a's job first" in reason.message, reason.message


def test_red15_r11_the_port_frees_when_its_holder_ends_and_a_training_job_s_port_holds_nothing() -> None:
    squat = _squat()
    trainer = replace(squat, id="t", spec=replace(squat.spec, name="t", kind=JobKind.TRAINING))
    jobs = [trainer, _service("a-serve", gpus=1, user="red15a", submitted=0.5)]
    result = run_cycle(snapshot([make_node("vm", gpus=2)], jobs))
    assert [a.job_id for a in result.admits] == ["a-serve"]


def test_red15_r11_ports_are_no_node_resource_where_each_job_has_its_own_network() -> None:
    """Kubernetes pods: a ``containerPort`` binds nothing on the node (``host_ports=False``)."""
    from jupyter_sched.scheduling import SchedulingProfile

    jobs = [_squat(), _service("a-serve", gpus=1, user="red15a", submitted=0.5)]
    result = run_cycle(snapshot([make_node("vm", gpus=2)], jobs), SchedulingProfile(host_ports=False))
    assert [a.job_id for a in result.admits] == ["a-serve"]


def test_red15_r11_a_kubernetes_server_s_profile_has_no_host_ports() -> None:
    from jupyter_sched.services.config import _scheduling_profile

    assert _scheduling_profile({"executor": "kubernetes"}).host_ports is False
    assert _scheduling_profile({"executor": "local"}).host_ports is True


def test_red15_r11_a_cpu_only_job_declaring_a_port_held_on_some_node_pends_naming_it() -> None:
    """A 0-GPU job takes no GPU the placement mask could steer: it waits for the port, said so."""
    squat = running(_service("a-gpu", gpus=1, user="red15a", limit=600), "n1", [0], started=-1)
    jobs = [squat, _service("b-cpu", gpus=0, user="red15b", submitted=0.5)]
    result = run_cycle(snapshot([make_node("n1", gpus=2), make_node("n2", gpus=2)], jobs))
    assert [a.job_id for a in result.admits] == []
    reason = next(p.reason for p in result.pending if p.job_id == "b-cpu")
    assert reason.code == "PortInUse" and reason.details["held_by"] == {"n1": "a-gpu"}, reason
    assert reason.eta == T0 + timedelta(minutes=9)


def test_red15_r11_a_job_steered_off_a_held_port_keeps_off_the_easy_reservation_too() -> None:
    """n1 holds the port; n2's free GPU is reserved for ``big`` (2 GPUs, high: first in the queue, on n2
    when r2 ends in 10 minutes): ``a-serve`` (no time limit) may not take it — it would delay big."""
    jobs = [_squat("n1"), running(make_job("r1", user="x", time_limit_s=3600), "n1", [0], started=-1),
            running(make_job("r2", user="x", time_limit_s=660), "n2", [0], started=-1),
            make_job("big", gpus=2, user="y", priority="high", time_limit_s=600, submitted=0.1),
            _service("a-serve", gpus=1, user="red15a", submitted=0.5)]
    result = run_cycle(snapshot([make_node("n1", gpus=2), make_node("n2", gpus=2)], jobs))
    placed = {a.job_id: a.allocation.node for a in result.admits}
    assert "a-serve" not in placed, placed
    assert next(p.reason for p in result.pending if p.job_id == "big").eta == T0 + timedelta(minutes=10)


def test_red16_r8_one_users_services_hold_at_most_max_ports_per_user_ports() -> None:
    """Red team 16, R8: red16b reserved 6006, 8000, 8080, 8888… with 0-GPU ``sleep`` services. One
    user's services hold at most ``max_ports_per_user`` (default 4) declared ports; the next pends
    ``PortLimit`` naming the setting, while another user's service on a free port starts."""
    from jupyter_sched.scheduling import SchedulingProfile

    squats = [running(_service(f"b-{port}", gpus=0, user="red16b", port=port, limit=3600), "vm", [], started=-1)
              for port in (6006, 8000, 8080, 8888)]
    jobs = [*squats, _service("b-7860", gpus=0, user="red16b", port=7860, submitted=0.5),
            _service("a-7861", gpus=0, user="red16a", port=7861, submitted=0.6)]
    result = run_cycle(snapshot([make_node("vm", gpus=2)], jobs))
    assert [a.job_id for a in result.admits] == ["a-7861"], result.admits
    reason = next(p.reason for p in result.pending if p.job_id == "b-7860")
    assert reason.code == "PortLimit", reason
    assert reason.message == ("red16b's services hold 4 declared ports (6006, 8000, 8080, 8888); at most 4 per "
                              "user (c.SchedApp.max_ports_per_user)"), reason.message
    uncapped = run_cycle(snapshot([make_node("vm", gpus=2)], jobs), SchedulingProfile(max_ports_per_user=0))
    assert sorted(a.job_id for a in uncapped.admits) == ["a-7861", "b-7860"], uncapped.admits


def test_red16_r8_the_port_limit_reason_says_when_it_starts() -> None:
    squats = [running(_service(f"b-{port}", gpus=0, user="red16b", port=port, limit=3600), "vm", [], started=-1)
              for port in (6006, 8000, 8080, 8888)]
    result = run_cycle(snapshot([make_node("vm", gpus=2)], [*squats, _service("b-7860", gpus=0, user="red16b",
                                                                                 port=7860, submitted=0.5)]))
    reason = next(p.reason for p in result.pending if p.job_id == "b-7860")
    text = render_reason(reason_to_dict(reason), now=T0, relative=True)
    assert "c.SchedApp.max_ports_per_user" in text.summary and "when one of them ends" in text.eta, text
