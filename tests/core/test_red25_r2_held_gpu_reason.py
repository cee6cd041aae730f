"""Red team 25, R2: the user waiting for a GPU a lease still held — its kernel's leftover child on it —
was told "GPU 0 on vm holds 1024 MiB used by processes the scheduler did not start", blaming an unknown
process for the holder's own; and "(grace 60 s)" long past the grace, not what happens next.

Now a GPU a job or lease holds is not listed as used by processes the scheduler did not start (its holder
blocks it, named where it does); a GPU no one holds still is (case 014).
"""

from __future__ import annotations

from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.scheduling import SchedulingProfile, run_cycle


def _reason(held: bool) -> str:
    jobs = [make_job("eve", submitted=5)]
    if held:
        jobs.append(running(make_job("amy-lease"), "n1", [0]))
    result = run_cycle(snapshot([make_node(gpus=1, foreign={0: 1024})], jobs), SchedulingProfile())
    (waiting,) = [p.reason for p in result.pending if p.job_id == "eve"]
    return waiting.message


def test_red25_r2_a_held_gpus_processes_are_not_said_to_be_unknown() -> None:
    said = _reason(held=True)
    assert "did not start" not in said, said


def test_red25_r2_an_unheld_gpus_foreign_memory_is_still_named() -> None:
    said = _reason(held=False)
    assert "GPU 0 on n1 holds 1024 MiB used by processes the scheduler did not start" in said, said
