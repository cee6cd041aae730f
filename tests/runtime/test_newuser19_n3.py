"""New user 19, N3: a job re-adopted after a server restart (``kill -9`` of ``jupyter lab``) and
then preempted ended its log without the ``[jupyter_sched] preempted at … by …`` line that a job
the same server started gets: the stop's words went only down the pipe of the server that spawned
the wrapper. Now the wrapper also listens on ``stop.fifo`` in its job directory, which any later
server writes the words into (a FIFO of the job's owner only: never a file the owner put there).

Real parts: the local executor and its wrapper, a real job process; the "restart" is a second
executor adopting the job from its persisted handle, as the engine does at start.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from jupyter_sched.executors.base import ExecutorHandle, Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation
from tests.accounts import os_accounts, shared_dir
from tests.runtime.test_local_executor import job_for, wait_event, wait_until
from tests.runtime.test_runas import hub_executor, needs_accounts, py_job, run_as

WORDS = "preempted at 19:20:56 UTC by higher-priority normal job j-9 (p1) of team ml"
PRINT_THEN_WAIT = "print('working', flush=True)\ntime.sleep(300)\n"


def _adopted(tmp_path: Path) -> tuple[LocalExecutor, str]:
    first = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, PRINT_THEN_WAIT)
    handle = first.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: "working" in first.logs(job.id)[0], "the job to print")
    first.detach()  # the server is killed; the job keeps running
    second = LocalExecutor(tmp_path / "jobs")
    assert second.adopt(job, ExecutorHandle.from_dict(json.loads(json.dumps(handle.to_dict())))) is None
    return second, job.id


def test_newuser19_n3_an_adopted_job_stopped_ends_its_log_with_the_stops_words(tmp_path: Path) -> None:
    executor, job_id = _adopted(tmp_path)
    executor.stop(job_id, grace_s=5, reason=WORDS)
    assert isinstance(wait_event(executor, Exited), Exited)
    lines = executor.logs(job_id)[0].splitlines()
    # the processes the stop signalled come through the FIFO too (newuser30 n16), before the words
    assert lines[-4:-2] == ["working", "[jupyter_sched] the scheduler sent SIGTERM to the job's 1 process to stop it:"]
    assert lines[-1] == f"[jupyter_sched] {WORDS}", lines


def test_newuser19_n3_a_stop_never_writes_into_a_file_the_owner_put_in_the_fifos_place(tmp_path: Path) -> None:
    """The owner can replace ``stop.fifo`` (their directory): with a regular file or a symlink, the
    server writes nothing there; the stop goes on, and its words reach the log from outside once it
    ended (newuser30 n16: as where the wrapper was killed before it wrote them)."""
    executor, job_id = _adopted(tmp_path)
    fifo = tmp_path / "jobs" / job_id / "stop.fifo"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the wrapper listens on stop.fifo"
    target = tmp_path / "elsewhere.txt"
    target.write_text("kept\n")
    fifo.unlink()
    fifo.symlink_to(target)
    executor.stop(job_id, grace_s=5, reason=WORDS)
    assert isinstance(wait_event(executor, Exited), Exited)
    assert target.read_text() == "kept\n"
    assert executor.logs(job_id)[0].splitlines()[-1] == f"[jupyter_sched] {WORDS}"


@needs_accounts
def test_newuser19_n3_an_adopted_owners_job_hears_the_stop_from_the_root_service() -> None:
    """Hub mode: the wrapper runs as the job's owner, the service as root; the FIFO is the owner's."""
    with os_accounts(1) as (alice,), shared_dir() as root:
        first = hub_executor(root)
        job = py_job("j-owned", PRINT_THEN_WAIT, user=alice.name)
        handle = first.start(job, Allocation("n1", ("GPU-0",)), run_as(alice))  # type: ignore[arg-type]
        wait_until(lambda: "working" in first.logs("j-owned")[0], "the job to print")
        first.detach()
        second = hub_executor(root)
        assert second.adopt(job, ExecutorHandle.from_dict(json.loads(json.dumps(handle.to_dict())))) is None  # type: ignore[arg-type]
        fifo = Path(str(handle.data["job_dir"])) / "stop.fifo"
        assert os.lstat(fifo).st_uid == alice.uid
        second.stop("j-owned", grace_s=5, reason=WORDS)
        assert isinstance(wait_event(second, Exited), Exited)
        assert second.logs("j-owned")[0].splitlines()[-1] == f"[jupyter_sched] {WORDS}"
