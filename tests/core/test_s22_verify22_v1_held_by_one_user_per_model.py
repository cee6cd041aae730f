"""Verify 22, V1: on a node of 2 A100-80GB + 4 H100-80GB, ivan's job holding the 4 H100s and eve's
holding both A100s, judy's 1-GPU A100 job read "ivan holds 4 of 6 GPUs (1 job) … ask ivan to release
some of them … so no one user can hold every GPU": ivan's H100s can never start an A100 job, and he
held 4 of 6, not every GPU. ``details.held_by_one_user`` now counts the GPUs of the job's own models
(as ``eta_waits_on`` does) and names them; the quota advice says "every" only when that is true.

Real parts: the pure core (``run_cycle``) and the wording layer (:func:`render_reason`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jupyter_sched.model import Node
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.dryrun import dryrun
from jupyter_sched.wording.reasons import held_by_text, unblock_sentence
from tests.core.core_builders import make_job, make_node, running, snapshot


def _mixed() -> Node:
    a100 = make_node("g1", gpus=2, model="A100-80GB")
    h100 = make_node("g1", gpus=4, model="H100-80GB")
    gpus = tuple(replace(g, index=i, uuid=f"GPU-g1-{i}") for i, g in enumerate(a100.gpus + h100.gpus))
    return replace(a100, gpus=gpus)


def _reason(models: tuple[str, ...], *, eve_a100: int = 2, ivan_a100: int = 0) -> Any:
    jobs = [running(make_job("lowml", gpus=4, models=("H100-80GB",), user="ivan"), "g1", [2, 3, 4, 5])]
    if eve_a100:
        jobs.append(running(make_job("slowlim", gpus=eve_a100, models=("A100-80GB",), user="eve"), "g1",
                            list(range(eve_a100))))
    if ivan_a100:
        jobs.append(running(make_job("a100job", gpus=ivan_a100, models=("A100-80GB",), user="ivan"), "g1",
                            list(range(eve_a100, eve_a100 + ivan_a100))))
    jobs.append(make_job("w3", gpus=1, models=models, user="judy", submitted=1))
    result = run_cycle(snapshot([_mixed()], jobs))
    return {p.job_id: p.reason for p in result.pending}["w3"]


def test_s22_verify22_v1_an_a100_wait_names_the_a100_holder_not_the_h100_one() -> None:
    reason = _reason(("A100-80GB",))
    held = reason.details.get("held_by_one_user")
    assert held is not None and held["user"] == "eve", reason.details  # was: ivan, 4 of 6
    assert (held["gpus"], held["total"], held["jobs"], held["models"]) == (2, 2, 1, ["A100-80GB"]), held
    assert held_by_text(held) == "eve holds 2 of 2 A100-80GB GPUs (1 job, no time limit)"
    unblock = unblock_sentence({"code": reason.code, "message": reason.message, "details": reason.details})
    assert "Ask eve to cancel some of them" in unblock and "ivan" not in unblock, unblock
    assert "so no one user can hold every A100-80GB GPU" in unblock, unblock


def test_s22_verify22_v1_an_h100_wait_counts_the_h100s_only() -> None:
    """ivan holds the 4 H100s and 1 A100 (eve the other): 4 of 4 H100s, not 5 of 6."""
    reason = _reason(("H100-80GB",), eve_a100=1, ivan_a100=1)
    held = reason.details["held_by_one_user"]
    assert (held["user"], held["gpus"], held["total"], held["jobs"]) == ("ivan", 4, 4, 1), held


def test_s22_verify22_v1_most_but_not_every_gpu_is_not_advised_as_every() -> None:
    """A job of either model: ivan holds 5 of 6 — said over the node's GPUs, and the advice does not say
    "every GPU" (he does not hold every one)."""
    reason = _reason((), eve_a100=1, ivan_a100=1)
    held = reason.details["held_by_one_user"]
    assert (held["user"], held["gpus"], held["total"]) == ("ivan", 5, 6), held
    assert "models" not in held, held  # every model of the inventory: the plain words
    assert held_by_text(held) == "ivan holds 5 of 6 GPUs (2 jobs, no time limit)"
    unblock = unblock_sentence({"code": reason.code, "message": reason.message, "details": reason.details})
    assert "Ask ivan to cancel some of them" in unblock, unblock
    assert "every GPU" not in unblock and "so no one user can hold most of the GPUs" in unblock, unblock


def test_s22_verify22_v1_no_one_holding_most_of_the_models_gpus_names_nobody() -> None:
    """An A100 job with eve on 1 of 2 A100s and ivan on the 4 H100s: nobody holds most A100s."""
    reason = _reason(("A100-80GB",), eve_a100=1, ivan_a100=1)
    assert "held_by_one_user" not in reason.details, reason.details


def test_s22_verify22_v1_a_dry_run_of_an_a100_job_names_the_a100_holder() -> None:
    """The dry run (``submit --dry-run``, %gpu's "would it fit") reads the same per-model holder."""
    jobs = [running(make_job("lowml", gpus=4, models=("H100-80GB",), user="ivan"), "g1", [2, 3, 4, 5]),
            running(make_job("slowlim", gpus=2, models=("A100-80GB",), user="eve"), "g1", [0, 1])]
    spec = make_job("w3", gpus=1, models=("A100-80GB",), user="judy").spec
    answer = dryrun(snapshot([_mixed()], jobs), spec)
    assert answer.reason is not None, answer
    held = answer.reason.details["held_by_one_user"]
    assert (held["user"], held["gpus"], held["total"]) == ("eve", 2, 2), held
