"""Red team 42 ("held up so far", nit a): a job that ended while the store's disk was full was recorded once space
returned as "killed by SIGTERM (while the server was down)" — the server was up and saw the end; its store could not
record it. The engine's write of the end failed, so the job still read running, and the engine adopted it as work
nobody watched: its end became the owner's claim from ``exit.json``, worded as a restart's. The executor now keeps
the ends its polls reported and gives such a job's end again when the engine adopts it: this server's words and
time, not a claim.

Real parts: the local executor running a real job (a subprocess and its wrapper); the engine's part (a write that
fails, then the adoption of the job it still reads running) is the executor's own ``adopt`` call, as the engine's
recovery makes it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation
from jupyter_sched.store.claimed_ends import CLAIM_MARK
from tests.runtime.test_local_executor import job_for, wait_event


def test_red42_a_an_end_the_store_could_not_record_is_given_again_with_this_servers_words(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    job = replace(job_for(tmp_path, "sys.exit(3)\n"), attempts=1)
    handle = ex.start(job, Allocation("n1", ("GPU-0",)))
    told = wait_event(ex, Exited)  # the engine's write of this end fails: the store still reads the job running
    assert isinstance(told, Exited) and told.exit_code == 3 and not told.claimed
    again = ex.adopt(job, handle)  # the engine's recovery adopts the job it reads running and nobody watches
    assert again == told, again
    assert isinstance(again, Exited) and CLAIM_MARK not in again.message and not again.claimed
    # given once: a later adoption (another server's, after a real restart) reads the job's own files
    later = ex.adopt(job, handle)
    assert isinstance(later, Exited) and later.claimed and CLAIM_MARK in later.message
    # another run of the job (requeued: its next attempt) is never given an older run's end
    ex2 = LocalExecutor(tmp_path / "jobs2")
    first = replace(job_for(tmp_path, "sys.exit(5)\n", job_id="j-2"), attempts=1)
    ex2.start(first, Allocation("n1", ("GPU-0",)))
    told2 = wait_event(ex2, Exited)
    assert ex2.adopt(replace(first, attempts=2), None) is not told2
