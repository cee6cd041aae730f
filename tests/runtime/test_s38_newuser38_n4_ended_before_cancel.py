"""newuser38 N4: a job whose program had already exited 0 was recorded ``cancelled … (exited with code 0)`` when a
cancel came between its exit and the scheduler's next look (a bulk ``cancel --mine`` at load 15): ``wait`` exited 4,
a Run All stopped, a pipeline ran it again. Now the local executor notes, when the stop reaches it, that nothing of
the job was running and its end was recorded (``Exited.before_stop``), and the engine keeps the job's own end, said:
"…; it had ended before the cancel reached it". A job still running when the cancel comes is cancelled as before.

Real parts: SchedulerService in-process, SQLite, the local executor running real processes (its wrapper writes the
end record), the real clock; the test holds the engine's ticks to open the window the tester hit by chance.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.in_process import cancel_all_and_close
from tests.runtime.test_engine import make_service, state_of, wait_until


def test_newuser38_n4_a_job_that_ended_before_the_cancel_keeps_its_own_end(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=1, poll_interval_s=0.05)
    try:
        done = svc.submit({"gpus": 0, "name": "n4-done", "command": [sys.executable, "-c", "print('all done')"]},
                          user="n38a")["id"]
        running = svc.submit({"gpus": 0, "name": "n4-runs", "command": [sys.executable, "-c",
                                                                         "import time; time.sleep(60)"]},
                             user="n38a")["id"]
        wait_until(lambda: state_of(svc, done) in ("running", "succeeded") and state_of(svc, running) == "running",
                   "both jobs to start", tick=svc.tick)
        if state_of(svc, done) == "running":  # no tick now: it ends, and nothing settles it before the cancel
            tracked = svc.executor._jobs[done]  # type: ignore[attr-defined]
            deadline = time.monotonic() + 30
            while not svc.executor._ended_on_its_own(tracked) and time.monotonic() < deadline:  # type: ignore[attr-defined]
                time.sleep(0.05)
            assert svc.executor._ended_on_its_own(tracked)  # type: ignore[attr-defined]
            svc.cancel(done, user="n38a")
            svc.cancel(running, user="n38a")
            wait_until(lambda: state_of(svc, done) == "succeeded",
                       lambda: f"its own end to stand: {svc.get_job(done, user='n38a')}", tick=svc.tick)
            job = svc.get_job(done, user="n38a")
            assert job["exit_code"] == 0, job
            assert job["message"].endswith("; it had ended before the cancel reached it"), job["message"]
            assert "cancelled" not in job["message"], job["message"]
        else:  # settled before the test could hold it (a loaded machine): the cancel is refused as too late
            svc.cancel(running, user="n38a")
        wait_until(lambda: state_of(svc, running) == "cancelled", "the running job to be cancelled", tick=svc.tick)
        assert "had ended before" not in svc.get_job(running, user="n38a")["message"]
    finally:
        cancel_all_and_close(svc)
