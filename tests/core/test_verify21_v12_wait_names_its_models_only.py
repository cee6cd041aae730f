"""Verify 21, V12: a 2-GPU H100 job behind two leases without an end on one node of 2 A100-80GB +
4 H100-80GB (4 x H100 and 2 x A100) read "ETA unknown: it can start only after one or more of your
own leases l-…pr and l-…tm …, which hold 6 GPUs, are released with `jupyter-sched cancel …`" — the
A100 lease cannot help an H100 job, yet was named, counted and cancelled. The core's blocker list
(``eta_waits_on``) now names holders of the models the job may use only; a quota wait keeps
holders of other models (they count on a team-wide line).

Real parts: the pure core (``run_cycle`` with its ETA pass).
"""

from __future__ import annotations

from dataclasses import replace

from jupyter_sched.model import Node, Quota, QuotaSet
from jupyter_sched.scheduling import run_cycle
from tests.core.core_builders import make_job, make_node, quotas, running, snapshot


def _mixed() -> Node:
    a100 = make_node("g1", gpus=2, model="A100-80GB")
    h100 = make_node("g1", gpus=4, model="H100-80GB")
    gpus = tuple(replace(g, index=i, uuid=f"GPU-g1-{i}") for i, g in enumerate(a100.gpus + h100.gpus))
    return replace(a100, gpus=gpus)


def _waits(job_models: tuple[str, ...], quota: QuotaSet | None = None) -> tuple[str, list[str]]:
    idle2 = running(make_job("idle2", gpus=2, models=("A100-80GB",), unlimited=True), "g1", [0, 1])
    idle4 = running(make_job("idle4", gpus=4, models=("H100-80GB",), unlimited=True), "g1", [2, 3, 4, 5])
    job = make_job("w", gpus=2, models=job_models, submitted=1)
    result = run_cycle(snapshot([_mixed()], [idle2, idle4, job], quota=quota))
    reason = {p.job_id: p.reason for p in result.pending}["w"]
    return reason.code, list(reason.details.get("eta_waits_on", []))


def test_verify21_v12_an_h100_job_waits_on_h100_holders_only() -> None:
    code, waits = _waits(("H100-80GB",))
    assert waits == ["idle4"], (code, waits)  # was: ["idle2", "idle4"] (the A100 lease named and counted)


def test_verify21_v12_an_a100_job_waits_on_a100_holders_only() -> None:
    code, waits = _waits(("A100-80GB",))
    assert waits == ["idle2"], (code, waits)


def test_verify21_v12_a_job_of_any_model_still_names_both() -> None:
    _, waits = _waits(())
    assert sorted(waits) == ["idle2", "idle4"]


def test_verify21_v12_a_quota_wait_keeps_holders_of_other_models() -> None:
    """A team-wide line (all models) counts the A100 lease too: releasing it gives an H100 job room."""
    code, waits = _waits(("H100-80GB",), quotas(Quota(team="default", guaranteed=6, borrowing_limit=0)))
    assert code in ("ExceedsQuota", "BorrowingLimitReached", "InsufficientQuota"), (code, waits)
    assert sorted(waits) == ["idle2", "idle4"]
