"""Verify 21, V11: 6 GPUs on one node with 2 A100-80GB + 4 H100-80GB were refused with "needs 6 GPUs
of any model on one node but the largest node has 4" and "Ask for at most 4 GPUs" — the node has 6
GPUs; a request takes one model, so what is meant is "at most 4 of one model". The core now says the
node's size per model, and the reason's numbers are for the models the job may use only.

Real parts: the pure core (``run_cycle``) and the user-facing wording (``unblock_sentence``).
"""

from __future__ import annotations

from dataclasses import replace

from jupyter_sched.model import Node
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import unblock_sentence
from tests.core.core_builders import make_job, make_node, snapshot


def _mixed() -> Node:
    a100 = make_node("g1", gpus=2, model="A100-80GB")
    h100 = make_node("g1", gpus=4, model="H100-80GB")
    gpus = tuple(replace(g, index=i, uuid=f"GPU-g1-{i}") for i, g in enumerate(a100.gpus + h100.gpus))
    return replace(a100, gpus=gpus)


def _refusal(gpus: int, models: tuple[str, ...] = ()) -> tuple[str, str]:
    result = run_cycle(snapshot([_mixed()], [make_job("j", gpus=gpus, models=models)]))
    reason = {r.job_id: r.reason for r in result.rejects}["j"]
    as_dict = {"code": reason.code, "message": reason.message, "details": dict(reason.details),
               "unblock": reason.unblock}
    return reason.message, unblock_sentence(as_dict)


def test_verify21_v11_a_mixed_node_is_said_per_model() -> None:
    message, hint = _refusal(6)
    # was: "needs 6 GPUs of any model on one node but the largest node has 4"
    assert "the largest node has 4 H100-80GB (and 2 A100-80GB): a request takes one model" in message, message
    assert hint == "Ask for at most 4 GPUs (of one model).", hint


def test_verify21_v11_a_named_model_counts_only_that_model() -> None:
    message, hint = _refusal(3, ("A100-80GB",))
    assert "needs 3 GPUs of A100-80GB on one node but the largest node has 2 A100-80GB (and 4 H100-80GB)" in message
    assert "Ask for at most 2 GPUs, or for another model" in hint, hint


def test_verify21_v11_a_one_model_cluster_keeps_its_words() -> None:
    result = run_cycle(snapshot([make_node(gpus=8)], [make_job("j", gpus=9)]))
    reason = {r.job_id: r.reason for r in result.rejects}["j"]
    assert "needs 9 GPUs of any model on one node but the largest node has 8" in reason.message
    assert "model" not in reason.message.split("largest node has 8", 1)[1]
