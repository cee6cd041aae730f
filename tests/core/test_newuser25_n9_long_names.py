"""newuser25 N9 (the CLI's nit): a 190-character job name in a waiting job's reason was cut at 80
characters mid-word with no mark — ``when experiment-(alphas)…-final-wi (j-…) ends``, read as the whole
name. It is cut to 79 characters and an ellipsis, as the CLI cuts names (the panel clamps them).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason

LONG = "experiment-" + "\u03b1" * 60 + "-final-with-a-very-long-tail-" + "x" * 90  # alpha: a name of 190 characters


def test_newuser25_n9_a_long_name_in_a_reason_is_cut_with_an_ellipsis() -> None:
    holder = running(make_job("j-long", gpus=2, user="eve", time_limit_s=300), "n1", started=0)
    holder = replace(holder, spec=replace(holder.spec, name=LONG))
    waiting = make_job("j-wait", gpus=1, user="eve", time_limit_s=60, submitted=0.05)
    snap = snapshot([make_node("n1", gpus=2)], [holder, waiting], now=T0 + timedelta(seconds=10))
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["j-wait"]
    said = reason.details["eta_waits_on_names"]["j-long"]
    assert said == LONG[:79] + "…" and len(said) == 80, said
    text = render_reason(reason_to_dict(reason), now=T0 + timedelta(seconds=10), relative=True).eta
    assert f"when {LONG[:79]}… (j-long) ends" in text, text


def test_newuser25_n9_a_name_of_80_characters_is_said_whole() -> None:
    name = "n" * 80
    holder = running(make_job("j-80", gpus=2, user="eve", time_limit_s=300), "n1", started=0)
    holder = replace(holder, spec=replace(holder.spec, name=name))
    snap = snapshot([make_node("n1", gpus=2)], [holder, make_job("j-wait", gpus=1, user="eve", time_limit_s=60)],
                    now=T0 + timedelta(seconds=10))
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["j-wait"]
    assert reason.details["eta_waits_on_names"]["j-80"] == name
