"""verify42 v5: a job preempted and started again said "start 2, after preemption by bully (j-…)" in `jupyter-sched
jobs` and on the panel's Queue card (session 42's n6), but not in `jupyter-sched queue` nor `%schedule queue`: two
views of one queue disagreed. Both queue tables' running rows now carry it (wording.jobs.restarted_text).

In-process: the magics' queue table from the rows the server sends; the CLI's queue through its command with a client
that answers those rows (a double of the client object, not of the wire: the rendering is what is tested).
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from jupyter_sched.cli.commands import queue
from jupyter_sched.cli.main import Streams
from jupyter_sched.magics.render import queue_frame
from jupyter_sched.wording.jobs import restarted_text

NOW = datetime(2026, 12, 8, 0, 40, tzinfo=UTC)
VICTIM: dict[str, Any] = {
    "id": "j-victim", "name": "victim", "user": "me", "mine": True, "state": "running", "kind": "job",
    "priority": "low", "gpus": 4, "attempts": 2, "false_starts": 0, "preempted_by": "j-bully",
    "preempted_by_name": "bully", "started_at": "2026-12-08T00:32:00+00:00", "time_limit_s": 1800,
    "allocation": {"node": "vm", "gpu_uuids": ["g0", "g1", "g2", "g3"], "gpu_milli": 1000},
}


def test_verify42_v5_the_queue_says_a_restarted_job_is_on_its_second_start() -> None:
    said = "start 2, after preemption by bully (j-bully)"
    assert restarted_text(VICTIM) == said
    assert restarted_text({**VICTIM, "attempts": 1}) == ""
    frame = queue_frame([VICTIM], NOW)
    assert said in frame.set_index("id").loc["j-victim", "detail"], frame.to_dict("records")


def test_verify42_v5_the_cli_queue_says_it_too() -> None:
    client = SimpleNamespace(queue=lambda **_: [VICTIM], queue_head=lambda limit: ([VICTIM], 0),
                             idle_candidates=lambda: [], connection=SimpleNamespace(url="http://x/"))
    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(everything=False, mine=False, team=None, user=None, state=None, summary=False, json=False,
                           limit=None, kind=None, wide=False)
    try:
        queue(client, args, Streams(out=out, err=err, stdin=io.StringIO()))
    except (AttributeError, TypeError) as exc:  # the command asks for more than this double has: say what
        raise AssertionError(f"queue needs more of the client: {exc}") from exc
    assert "start 2, after preemption by bully (j-bully)" in out.getvalue(), out.getvalue() + err.getvalue()
