"""hubadmin23 A4: a lease with no kernel (POST leases {"gpus": 1}) was told "`%gpu keepalive` in its
notebook keeps them" — it has no notebook; its reclaim's row read "preempted: preempted to return
borrowed quota to ops" (the verb twice)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from jupyter_sched.client.status import idle_notes
from jupyter_sched.engine.stops import lease_release_message

WARNED = {"stage": "warned", "action": "release", "kind": "lease", "idle_since": "2026-12-05T08:32:00+00:00",
          "deadline": "2026-12-05T08:37:00+00:00", "rule": "no process and < 5 % for 5 min, no kernel is bound to "
                                                          "this lease"}


class _Client:
    def idle_candidates(self) -> list[dict[str, Any]]:
        return [{**WARNED, "job_id": "j-bare"}, {**WARNED, "job_id": "j-nb"}, {**WARNED, "job_id": "j-ext"}]


def test_s23_hubadmin23_a4_a_lease_without_a_kernel_is_not_sent_to_a_notebook() -> None:
    rows = [{"id": "j-bare", "kind": "lease", "kernel_id": None},
            {"id": "j-nb", "kind": "lease", "kernel_id": "5b0e4c3a"},
            {"id": "j-ext", "kind": "lease", "kernel_id": None, "released_at_exit": True}]
    notes = idle_notes(_Client(), rows)
    assert notes["j-bare"].endswith("unless it is used — using its GPUs, or POST leases/j-bare/keepalive, keeps "
                                    "them"), notes
    assert "notebook" not in notes["j-bare"], notes
    assert notes["j-nb"].endswith("`%gpu keepalive` in its notebook keeps them"), notes  # a kernel's lease: as before
    # held by a kernel the server did not start, maybe a notebook run headless (race41's leftover, session 42)
    assert notes["j-ext"].endswith("using its GPUs keeps them, or `%gpu keepalive` in the kernel that holds it (a "
                                   "notebook run headless: a line of the notebook)"), notes


def test_s23_hubadmin23_a4_a_preempted_lease_s_row_says_the_verb_once() -> None:
    def record(message: str | None) -> Any:
        return SimpleNamespace(stop_intent="preempt", job=SimpleNamespace(message=message))

    assert lease_release_message(record("preempted to return borrowed quota to ops")) == \
        "preempted to return borrowed quota to ops"
    assert lease_release_message(record(None)) == "preempted: GPUs were needed elsewhere"
    assert lease_release_message(record("ops needs its guarantee")) == "preempted: ops needs its guarantee"
