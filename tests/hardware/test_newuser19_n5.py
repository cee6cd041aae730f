"""New user 19, N5: once an idle batch job had been reported as idle (``idle_job_action = "notify"``:
nothing is freed, the job runs on), ``jupyter-sched jobs`` / ``queue`` and ``%gpu`` stopped saying it
was idle — ``GET idle`` still listed it (stage ``reclaimed``), but the owner's note was only made
for the ``warned`` stage. The note goes on while it stays idle, saying it was reported and when."""

from __future__ import annotations

from jupyter_sched.reclaim import idle_policies_from_settings
from jupyter_sched.wording.jobs import idle_note

from .idle_harness import at, gpu_sample, make_job, run_ladder


def _busy_then_idle(m: float) -> list:
    return [gpu_sample("GPU-d", at(m), 95.0 if m < 60 else 0.0, mem=1024, pids=[4000])]


def test_newuser19_n5_a_job_reported_as_idle_still_says_it_is_idle_and_when_it_was_reported() -> None:
    policies = idle_policies_from_settings({"idle_window_s": 3600, "idle_job_action": "notify"})
    run = run_ladder([make_job("J", ["GPU-d"])], _busy_then_idle, policies, until=130)
    assert [stage for _, stage in run.stages("J")] == ["warn", "reclaim"]
    (after,) = run.candidates[125]
    assert (after.stage, after.action) == ("reclaimed", "notify")
    note = idle_note(after.to_dict(), at(125))
    assert note == (f"idle since {at(60):%H:%M} UTC (rule: GPU < 5 % for 60 min): reported as idle at "
                    f"{at(120):%H:%M} UTC (nothing is freed) — using its GPUs ends the idle period"), note
    assert idle_note(after.to_dict(), at(125), magic=True) == note


def test_newuser19_n5_work_whose_gpus_were_taken_gets_no_standing_note() -> None:
    """A release, requeue or stop ends the work's hold: nothing stands to be said on its line."""
    entry = {"job_id": "J", "kind": "training", "stage": "reclaimed", "action": "stop",
             "idle_since": "2026-12-02T09:58:00Z", "deadline": "2026-12-02T10:58:00Z", "rule": "GPU < 5 % for 60 min"}
    assert idle_note(entry, None) == ""
