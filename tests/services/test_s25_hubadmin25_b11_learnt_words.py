"""Hubadmin25 B11 (services half): the words of an ETA learnt from other users' runs say what was matched.

A 2-GPU job's end was learnt from 0-GPU sleeps and said "as other users' runs of its size did". The core
now reads a newcomer's GPU job from runs of its size, else from GPU runs of any size under time limits like
its own (``details.eta_learned_gpu_runs``), never a CPU-only run. The waiter's reason, as a reader is
served it (:func:`~jupyter_sched.services.withheld.reason_for`) and rendered by the one renderer: the job's
owner and admins read where the figure came from; another reader reads "as estimated from past runs", with
neither the figure nor whose runs (red team 22, R2).
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.services.withheld import reason_for
from jupyter_sched.wording import render_reason

DUE = "2026-12-05T15:42:00+00:00"


def learnt_wait() -> dict[str, Any]:
    """v-wait (h25b's) waits on v-train (h25a's 2-GPU job), whose end came from GPU runs under like limits."""
    return {"code": "WaitingForCapacity", "message": "needs 2 GPUs, 0 free", "position": 1, "eta": DUE,
            "eta_reason": "",
            "details": {"eta_code": "Projected", "eta_waits_on": ["j-1"], "eta_waits_on_owners": {"j-1": "h25a"},
                        "eta_waits_on_names": {"j-1": "v-train"}, "eta_learned": ["j-1"],
                        "eta_learned_other": {"j-1": 0.1}, "eta_learned_gpu_runs": ["j-1"]}}


@pytest.mark.parametrize(("reader", "admin", "want"), [
    pytest.param("h25a", False, "(if it ends at ~10 % of its time limit, as other users' GPU runs under similar "
                 "time limits did)", id="v-train's owner: what was matched"),
    pytest.param("boss", True, "(if it ends at ~10 % of its time limit, as other users' GPU runs under similar "
                 "time limits did)", id="an admin: the same"),
    pytest.param("h25b", False, "(if it ends as estimated from past runs)", id="another user: no figure, no whose"),
])
def test_hubadmin25_b11_the_served_words_say_what_was_matched(reader: str, admin: bool, want: str) -> None:
    seen = reason_for(learnt_wait(), owner="h25b", reader=reader, admin=admin)
    eta = render_reason(seen).eta
    assert eta.endswith(want), eta
    assert "of its size" not in eta
    if not admin and reader != "h25a":
        assert "eta_learned_gpu_runs" not in seen["details"], seen["details"]
