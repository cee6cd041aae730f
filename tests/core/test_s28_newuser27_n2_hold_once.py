"""newuser27 n2 (second half): a held job's line said the release command twice — "held by root at 22:14 UTC
(release with: jupyter-sched release j-…) · ETA unknown: held · release it: jupyter-sched release j-…" (CLI
``queue``/``status``, the panel's row). The reason's message names who and when; its unblock says the command,
once; an admin's hold still says only an admin releases it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, snapshot

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.job import Hold
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import render_reason


def _line(hold: Hold) -> str:
    job = replace(make_job("j-own", gpus=1, user="root"), held=hold)
    (pend,) = run_cycle(snapshot([make_node("n1", gpus=4)], [job])).pending
    return render_reason(reason_to_dict(pend.reason), now=T0).line


def test_newuser27_n2_a_held_jobs_line_says_the_release_command_once() -> None:
    at = T0 - timedelta(minutes=6)
    line = _line(Hold(by="root", at=at))
    assert line == "queued · held by root at 11:54 UTC · ETA unknown: held · release it: jupyter-sched release j-own", line
    admins = _line(Hold(by="boss", at=at, admin=True))
    assert admins.count("jupyter-sched release j-own") == 1, admins
    assert admins.endswith("an admin releases it: jupyter-sched release j-own (an admin's hold)"), admins
