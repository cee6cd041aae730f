"""newuser34 N5 (server words): a GPU definition that gives no time limit says so in ``definitions show``
and the magics (``runs_text``), the words the panel's definition card uses too."""

from __future__ import annotations


def test_newuser34_n5_runs_text_says_no_time_limit_for_a_gpu_definition_without_one() -> None:
    """Failed before: ``runs …/daily_report.ipynb · 1 GPU`` — nothing said the runs are unlimited (which start
    only when nothing is reserved); a CPU-only one still says nothing of it, a given limit is said as before."""
    from jupyter_sched.wording.definitions import runs_parts, runs_text

    gpu = {"notebook": "/srv/daily_report.ipynb", "job": {"gpus": 1}}
    assert runs_text(gpu) == "runs /srv/daily_report.ipynb · 1 GPU · no time limit", runs_text(gpu)
    assert runs_parts(gpu)["time limit"] == "none"
    cpu = {"notebook": "/srv/daily_report.ipynb", "job": {"gpus": 0}}
    assert "time limit" not in runs_text(cpu), runs_text(cpu)
    limited = {"notebook": "/srv/daily_report.ipynb", "job": {"gpus": 1, "time_limit": 300}}
    assert runs_text(limited) == "runs /srv/daily_report.ipynb · 1 GPU · time limit 5m", runs_text(limited)


def test_newuser34_n5_nit_run_now_says_queued_with_why_while_its_run_waits() -> None:
    """N5 nit: ``definitions run pdef`` (and the magic) said ``started run j-…`` of a run that its spent budget
    held pending; now the words follow the run's real state."""
    from jupyter_sched.wording.definitions import run_made_text

    waiting = {"job_id": "j-1", "job": {"state": "pending", "reason": {"code": "budget", "message": "team ml's budget is spent"}}}
    assert run_made_text(waiting) == "queued run j-1 (pending: team ml's budget is spent)"
    assert run_made_text({"job_id": "j-1", "job": {"state": "pending", "reason": None}}) == "queued run j-1 (pending)"
    assert run_made_text({"job_id": "j-2", "job": {"state": "running"}}) == "started run j-2"
    assert run_made_text({"job_id": "j-3", "job": None}) == "made run j-3"
