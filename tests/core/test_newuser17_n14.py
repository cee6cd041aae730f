"""New user 17, N14: with no quota, the position, the reservation and the ETA of a pending job agree,
and the job that holds the reservation is the one the cycle admits when its GPUs free.

Hub, 4 GPUs, no quota lines: nu17a holds a-busy (1 GPU, ends in 5 min), a lease (1 GPU) and a-fair1
(2 GPUs, ends in 9 min); pending a-fair2, a-fair3 (2 GPUs each), then nu17b's b-fair1 (2) and b-fair2
(1). The queue showed b-fair1 at #2 "holding the reservation from 13:38" with an ETA of 13:58, and
at 13:38 a-fair2 took the GPUs: once a-fair1 ended teama (1 GPU held) was "within its share" and
tied with teamb, and submit time put a-fair2 first (the order flipped as GPUs freed).
"""

from __future__ import annotations

from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node, running


def _a(job_id: str, **kw: object) -> object:
    return make_job(job_id, user="nu17a", team="teama", **kw)  # type: ignore[arg-type]


def test_newuser17_n14_the_job_shown_first_with_a_reservation_from_t_starts_at_t() -> None:
    sc = Scenario([make_node("n1", gpus=4)])
    sc.submit(running(_a("a-busy", time_limit_s=1200), "n1", [0], started=-15),
              running(_a("a-lease"), "n1", [1], started=-15),
              running(_a("a-fair1", gpus=2, time_limit_s=600), "n1", [2, 3], started=-1),
              _a("a-fair2", gpus=2, time_limit_s=600, submitted=1),
              _a("a-fair3", gpus=2, time_limit_s=600, submitted=2),
              make_job("b-fair1", user="nu17b", team="teamb", gpus=2, time_limit_s=600, submitted=3),
              make_job("b-fair2", user="nu17b", team="teamb", gpus=1, time_limit_s=600, submitted=4))
    result = sc.at(0.1).cycle()
    reasons = {p.job_id: p.reason for p in result.pending}
    first = min(reasons, key=lambda j: reasons[j].position)
    assert first == "b-fair1", {j: r.position for j, r in reasons.items()}
    eta = reasons["b-fair1"].eta
    assert eta is not None
    # every job listed after b-fair1 that needs its GPUs starts no earlier than b-fair1
    for job_id in ("a-fair2", "a-fair3"):
        later = reasons[job_id].eta
        assert later is not None and later >= eta, (job_id, later, eta)
    # when a-busy and a-fair1 have ended (3 GPUs free), b-fair1 is the one admitted, at its ETA
    sc.finish("a-busy").at(5.1).cycle()
    assert sc.state("b-fair1") == "pending"
    sc.finish("a-fair1")
    sc.at((eta - T0).total_seconds() / 60).cycle()
    assert sc.state("b-fair1") == "running", [(j, sc.state(j)) for j in ("a-fair2", "b-fair1", "b-fair2")]
    assert sc.state("a-fair2") == "pending"
    assert eta - T0 <= timedelta(minutes=9, seconds=1)
