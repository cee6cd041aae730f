"""New user 24, N2: a job reporting progress every 4 s, idle by the GPU rule (simulated GPUs follow the CPU),
was told on ``queue``/``jobs`` "it is reported as idle (nothing is freed) at 12:06 UTC (in 1m37s) unless it is
used — using its GPUs keeps them": (1) the report came after its own 4m time-limit end (12:06, in 1m35s) — the
"no idle words after the end" rule held only before the warning; (2) for ``notify`` nothing is taken, so
"keeps them" contradicted "nothing is freed". One rule on every surface: no idle note when the deadline is at or
after the time-limit end (warned too); a notify note ends "unless it is used". (The panel's toast: the
labextension test of the same name.)"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_sched.client.status import idle_notes
from jupyter_sched.wording.jobs import idle_note

# cvnorm: started 12:02:10, 4m time limit → ends 12:06:10; idle deadline 12:06:12 (2 s after)
JOB = {"id": "j-cv", "kind": "training", "state": "running", "started_at": "2026-12-05T12:02:10+00:00",
       "time_limit_s": 240}
WARNED = {"stage": "warned", "action": "notify", "kind": "training", "job_id": "j-cv",
          "idle_since": "2026-12-05T12:02:12+00:00", "deadline": "2026-12-05T12:06:12+00:00",
          "rule": "GPU < 5 % for 4 min"}


class _Client:
    def __init__(self, *entries: dict[str, Any]) -> None:
        self.entries = list(entries)

    def idle_candidates(self) -> list[dict[str, Any]]:
        return self.entries


def test_newuser24_n2_no_idle_note_when_the_warned_deadline_is_after_the_time_limit_end() -> None:
    assert idle_notes(_Client(WARNED), [JOB]) == {}  # queue, jobs and status read these
    for action in ("release", "requeue", "stop"):  # every action: its limit ends it first
        assert idle_notes(_Client({**WARNED, "action": action}), [JOB]) == {}, action
    at_end = {**WARNED, "deadline": "2026-12-05T12:06:10+00:00"}  # at the end: not said either
    assert idle_notes(_Client(at_end), [JOB]) == {}
    before = {**WARNED, "deadline": "2026-12-05T12:05:00+00:00"}  # before its end: still said
    assert "reported as idle (nothing is freed) at" in idle_notes(_Client(before), [JOB])["j-cv"]


def test_newuser24_n2_a_notify_note_ends_unless_it_is_used_with_no_keeps_them() -> None:
    now = datetime(2026, 12, 5, 12, 4, 40, tzinfo=timezone.utc)
    note = idle_note(WARNED, now)
    assert note.endswith("it is reported as idle (nothing is freed) at 12:06 UTC (in 1m32s) unless it is used"), note
    assert "keeps" not in note and "keeps" not in idle_note(WARNED, now, magic=True)
    # the other actions take the GPUs: the keep-alive tail stays
    assert idle_note({**WARNED, "action": "release"}, None).endswith("using its GPUs keeps them")


def test_newuser24_n2_on_simulated_gpus_the_rule_says_their_use_is_the_job_s_cpu() -> None:
    """N2 (4): a job reporting progress every 4 s (sleeping between) was idle by the GPU rule with no
    word that simulated GPUs follow the CPU: the rule clause says it where the job's GPUs are simulated."""
    before = {**WARNED, "deadline": "2026-12-05T12:05:00+00:00"}
    note = idle_notes(_Client(before), [{**JOB, "simulated": True}])["j-cv"]
    assert "(rule: GPU < 5 % for 4 min; simulated GPUs: their use is the job's CPU activity)" in note, note
    assert "simulated" not in idle_notes(_Client(before), [{**JOB, "simulated": False}])["j-cv"]
