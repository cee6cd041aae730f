"""newuser27 n5: on a one-node lab, a cordoned node's pending job read "needs 1 … GPU, 0 free on the other
nodes; node vm is cordoned … · starts when an admin uncordons vm …, or when GPUs free up on the other nodes" —
there are no other nodes. The core's reason (details ``no_other_nodes``) and its rendering leave them out."""

from __future__ import annotations

from core_builders import T0, make_job, snapshot
from test_s25_drain_cordon import cordoned

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import render_reason


def test_newuser27_n5_a_one_node_lab_names_no_other_nodes() -> None:
    (pend,) = run_cycle(snapshot([cordoned("vm", gpus=1)], [make_job("train", gpus=1)])).pending
    reason = pend.reason
    assert reason.code == "NodeCordoned" and reason.details.get("no_other_nodes") is True, reason
    assert reason.message.startswith("needs 1 A100-80GB GPU; node vm is cordoned for maintenance: PSU swap"), reason.message
    text = render_reason(reason_to_dict(reason), now=T0)
    assert "other nodes" not in text.summary + text.unblock, text
    assert text.unblock == "Starts when an admin uncordons vm (jupyter-sched nodes uncordon vm).", text.unblock
