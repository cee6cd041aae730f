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
    assert text.unblock == "An admin ends the cordon with jupyter-sched nodes uncordon vm.", text.unblock  # n11


def test_newuser35_n11_a_job_only_a_cordoned_node_holds_says_the_uncordon_once_and_its_command_as_an_admins() -> None:
    """newuser35 n11: "ETA unknown: only a cordoned node can hold it: it waits until an admin uncordons vm · starts
    when an admin uncordons vm (jupyter-sched nodes uncordon vm)" — the same thing twice, and an admin's command
    given to a user as if theirs. The ETA says when; the unblock only how an admin ends the cordon."""
    for nodes, gpus in (([cordoned("vm", gpus=1)], 1), ([cordoned(gpus=4)], 0)):
        (pend,) = run_cycle(snapshot(nodes, [make_job("train", gpus=gpus)])).pending
        line = render_reason(reason_to_dict(pend.reason), now=T0).line
        assert line.count("uncordons") <= 1, line
        assert "(jupyter-sched nodes uncordon" not in line, line  # the bare command is marked an admin's
        assert "an admin ends the cordon with jupyter-sched nodes uncordon" in line or \
            "(admins: jupyter-sched nodes uncordon n3)" in line, line
