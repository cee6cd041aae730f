"""newuser42 N3: a reclaim of ml's borrowed work (four 16-second-old jobs, two of them borrowed) audited "kept a1, a2
(run less than the minimum runtime, 5m)" — a reason that fitted the two jobs it stopped just as well: every candidate
was young, and the minimum runtime spares young work only where another choice frees the GPUs (DESIGN.md *Reclaim*:
"protected where possible"; the README said "not before its minimum runtime"). The audit now says the others were kept
because fewer were needed; where older work went instead, it keeps its old words (hubadmin22 H9's test).

Pure core: one cycle over a snapshot.
"""

from __future__ import annotations

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import run_cycle

Q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=2), Quota(team="cv", guaranteed=2, borrowing_limit=2))


def test_newuser42_n3_when_every_candidate_is_young_the_kept_ones_are_not_said_kept_for_their_age() -> None:
    young = [running(make_job(f"a{i}", team="ml", user="n42a", time_limit_s=1800), "n1", [i], started=-16 / 60)
             for i in range(4)]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], [*young, make_job("b-guar", team="cv", gpus=2)], quota=Q))
    assert len(result.preemptions) == 2, result.preemptions
    rows = [a for a in result.audit if a.action == "reclaim"]
    assert len(rows) == 2 and all(a.details["protected_min_runtime"] is True for a in rows), rows
    for row in rows:
        assert ": fewer were needed (every candidate had run less than the minimum runtime, 5m, which spares young " \
               "work only where another choice frees the GPUs)" in row.message, row.message
        assert "(run less than the minimum runtime, 5m)" not in row.message, row.message
