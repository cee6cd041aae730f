"""New user 20, N25: a never-fit refusal advised "ask for at most 1.5 GPUs", a request that is itself
refused (GPU counts are whole numbers or a share below 1): it names the largest request accepted."""

from __future__ import annotations

import re

import pytest
from core_builders import make_job, make_node, quotas, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Quota
from jupyter_sched.model.validation import parse_gpus
from jupyter_sched.scheduling import run_cycle


def _unblock(guaranteed: float, borrowing: float, gpus: int) -> str:
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=1),
               Quota(team="ml", user="alice", guaranteed=guaranteed, borrowing_limit=borrowing))
    result = run_cycle(snapshot([make_node("n1", gpus=4)], [make_job("big", gpus=gpus, team="ml")], quota=q))
    reason = next(p.reason for p in result.pending if p.job_id == "big")
    assert reason.details.get("never") == "quota", reason
    return reason.unblock


@pytest.mark.parametrize(("guaranteed", "borrowing", "gpus", "most", "accepted"), [
    (1, 0.5, 2, "at most 1 GPU (or a share below 1)", "1"),
    (2, 0.5, 3, "at most 2 GPUs (or a share below 1)", "2"),
    (1, 1, 3, "at most 2 GPUs", "2"),
    (0.5, 0, 1, "at most 0.5 GPU", "0.5"),
])
def test_newuser20_n25_the_never_fit_hint_names_a_request_that_is_accepted(
        guaranteed: float, borrowing: float, gpus: int, most: str, accepted: str) -> None:
    unblock = _unblock(guaranteed, borrowing, gpus)
    assert f"resubmit with {most}," in unblock, unblock
    said = re.search(r"at most (\d+(?:\.\d+)?) GPU", unblock)
    assert said is not None and said.group(1) == accepted
    parse_gpus(said.group(1))  # the count it names is one a submit accepts


def test_newuser20_n25_the_old_advice_was_refused() -> None:
    with pytest.raises(ValidationError):
        parse_gpus("1.5")
