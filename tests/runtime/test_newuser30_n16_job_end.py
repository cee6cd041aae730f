"""A job's end says what it stopped (newuser30 n16: the wrapper ended a job's leftover processes — a
dataloader worker, a tensorboard, ``sleep 1000 &`` — silently; the log just ended).

The log names each process it stopped (pid, command line cut and escaped: the user's own), which signal
it got and why; so does a stop's (cancel, preemption, time limit), from outside where the stop's SIGKILL
killed the wrapper before it could write; and the job's message says it in short.

Real parts: the local executor, its wrapper, real job processes (Python and ``sleep``). Stop plans and the
executor's leftover grace run on an injected monotonic clock the test advances; the wrapper's own
leftover grace is real time (0.3 s), and nothing asserts how long anything took.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import replace
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.wrapper import COMMAND_CHARS, STOP_FIFO, left_lines
from jupyter_sched.model import Allocation, ResourceRequest
from jupyter_sched.wording.jobs import job_line
from tests.accounts import os_accounts, shared_dir
from tests.runtime.test_local_executor import FakeMonotonic, gone, job_for, wait_event, wait_until
from tests.runtime.test_local_gangs import ALLOCATION, GROUPS
from tests.runtime.test_runas import hub_executor, needs_accounts, py_job, run_as

GPU = Allocation("n1", ("GPU-0",))
IGNORING_TERM = "lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN)"
"""A child's ``preexec_fn``: SIGTERM ignored across its exec (``sleep`` then outlives a SIGTERM)."""


def _pids(tmp_path: Path) -> dict[str, int]:
    path = tmp_path / "pids.json"
    wait_until(lambda: path.exists() and path.read_text().endswith("}"), "the job to write its pids")
    return dict(json.loads(path.read_text()))


def _ended(ex: LocalExecutor) -> Exited:
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited)
    return ended


def test_newuser30_n16_a_job_whose_main_process_ended_says_what_it_left_running_was_stopped(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3)
    job = job_for(tmp_path, f"""
quiet = subprocess.Popen(["sleep", "1001"])
stubborn = subprocess.Popen(["sleep", "997"], preexec_fn={IGNORING_TERM})
json.dump({{"quiet": quiet.pid, "stubborn": stubborn.pid}}, open("pids.json", "w"))
print("main done", flush=True)
""")
    ex.start(job, GPU)
    ended = _ended(ex)
    pids = _pids(tmp_path)
    assert ended.exit_code == 0
    assert gone(pids["quiet"]) and gone(pids["stubborn"])
    lines = ex.logs(job.id)[0].splitlines()
    at = lines.index("main done")
    assert lines[at + 1] == ("[jupyter_sched] the job's main process ended (exit code 0) and left 2 processes running; "
                             "jobs do not leave processes behind, so they were sent SIGTERM, then SIGKILL to the 1 "
                             "still running 0.3 s later:"), lines
    assert sorted(lines[at + 2:]) == sorted([f"[jupyter_sched]   pid {pids['quiet']}: sleep 1001 (ended on SIGTERM)",
                                             f"[jupyter_sched]   pid {pids['stubborn']}: sleep 997 (sent SIGKILL)"])
    # the message says it in short; a succeeded job's line keeps it (the exit code is said there already)
    assert ended.message.startswith("exited with code 0; its main process left 2 processes running, ended as jobs "
                                    "leave none behind: "), ended.message
    assert "sleep 1001 (SIGTERM)" in ended.message and "sleep 997 (SIGKILL)" in ended.message
    line = job_line({"id": job.id, "state": "succeeded", "exit_code": 0, "message": ended.message}, None)
    assert "its main process left 2 processes running" in line, line


def test_newuser30_n16_a_leftovers_command_line_is_escaped_and_cut(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3)
    job = job_for(tmp_path, """
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", "\\x1b]0;owned\\x07\\u202e", "x" * 300])
json.dump({"child": child.pid}, open("pids.json", "w"))
""")
    ex.start(job, GPU)
    _ended(ex)
    child = _pids(tmp_path)["child"]
    text = ex.logs(job.id)[0]
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    shown = next(line for line in text.splitlines() if line.startswith(f"[jupyter_sched]   pid {child}: "))
    command = shown.removeprefix(f"[jupyter_sched]   pid {child}: ").removesuffix(" (ended on SIGTERM)")
    assert "import time; time.sleep(1000) \\x1b]0;owned\\x07\\u202e xxx" in command, command
    assert len(command) == COMMAND_CHARS and command.endswith("…"), command


CANCELLED_BY_ANA = "cancelled by ana"


def test_newuser30_n16_a_cancel_names_what_it_signalled_and_what_the_main_process_left(tmp_path: Path) -> None:
    """The main process ends on the stop's SIGTERM; a child that ignores it is ended by the wrapper."""
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3, monotonic=FakeMonotonic())  # no SIGKILL from the plan
    job = job_for(tmp_path, f"""
stubborn = subprocess.Popen(["sleep", "997"], preexec_fn={IGNORING_TERM})
json.dump({{"main": os.getpid(), "stubborn": stubborn.pid}}, open("pids.json", "w"))
print("ready", flush=True)
time.sleep(300)
""")
    ex.start(job, GPU)
    pids = _pids(tmp_path)
    wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to start its child")
    ex.stop(job.id, grace_s=60, reason=CANCELLED_BY_ANA)
    ended = _ended(ex)
    assert ended.exit_code == -signal.SIGTERM
    lines = ex.logs(job.id)[0].splitlines()
    at = lines.index("ready")
    assert lines[at + 1] == "[jupyter_sched] the scheduler sent SIGTERM to the job's 2 processes to stop it:", lines
    assert lines[at + 2].startswith(f"[jupyter_sched]   pid {pids['main']}: ") and lines[at + 2].endswith("j-1.py"), lines
    assert lines[at + 3:] == [
        f"[jupyter_sched]   pid {pids['stubborn']}: sleep 997",
        "[jupyter_sched] the job's main process ended (killed by SIGTERM) and left 1 process running; jobs do not "
        "leave processes behind, so it was sent SIGTERM, then SIGKILL to the 1 still running 0.3 s later:",
        f"[jupyter_sched]   pid {pids['stubborn']}: sleep 997 (sent SIGKILL)",
        f"[jupyter_sched] {CANCELLED_BY_ANA}"], lines  # the last line says why it stopped (issue 20, F15)
    # in the order they came, before the log's last lines the message ends with
    assert "; the stop sent SIGTERM to 2 processes (" in ended.message, ended.message
    assert ended.message.index("the stop sent") < ended.message.index("its main process left 1 process running, ended "
                                                                     "as jobs leave none behind: sleep 997 (SIGKILL)")
    assert ended.message.endswith("; last lines: ready"), ended.message


def test_newuser30_n16_a_stop_whose_sigkill_killed_the_wrapper_is_said_from_outside(tmp_path: Path) -> None:
    """Nothing of the job ends on SIGTERM: the plan's SIGKILL kills the wrapper too, before it wrote a word, so
    the service writes the stop's words and both signals' processes into the log (it read only "ready")."""
    clock = FakeMonotonic()
    ex = LocalExecutor(tmp_path / "jobs", monotonic=clock)
    job = job_for(tmp_path, """
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "995"])
json.dump({"main": os.getpid(), "child": child.pid}, open("pids.json", "w"))
print("ready", flush=True)
time.sleep(300)
""")
    ex.start(job, GPU)
    pids = _pids(tmp_path)
    wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to ignore SIGTERM")
    ex.stop(job.id, grace_s=10, reason=CANCELLED_BY_ANA)
    assert ex.poll() == []
    clock.advance(10)
    ended = _ended(ex)
    assert ended.exit_code == -signal.SIGKILL
    lines = ex.logs(job.id)[0].splitlines()
    at = lines.index("ready")
    main = f"[jupyter_sched]   pid {pids['main']}: "
    child = f"[jupyter_sched]   pid {pids['child']}: sleep 995"
    assert lines[at + 1] == "[jupyter_sched] the scheduler sent SIGTERM to the job's 2 processes to stop it:", lines
    assert lines[at + 2].startswith(main) and lines[at + 3] == child, lines
    assert lines[at + 4] == ("[jupyter_sched] 10 s after the stop began, the scheduler sent SIGKILL to the 2 still "
                             "running:"), lines
    assert lines[at + 5].startswith(main) and lines[at + 6:] == [child, f"[jupyter_sched] {CANCELLED_BY_ANA}"], lines
    assert "the stop sent SIGTERM to 2 processes (" in ended.message and "then SIGKILL 10 s later to 2 (" in ended.message


def test_newuser30_n16_a_job_that_killed_its_wrapper_has_its_leftovers_ended_and_said(tmp_path: Path) -> None:
    clock = FakeMonotonic()
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=3, monotonic=clock)
    job = job_for(tmp_path, f"""
stubborn = subprocess.Popen(["sleep", "993"], preexec_fn={IGNORING_TERM})
json.dump({{"main": os.getpid(), "stubborn": stubborn.pid}}, open("pids.json", "w"))
print("ready", flush=True)
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(300)
""")
    ex.start(job, GPU)
    pids = _pids(tmp_path)
    # the wrapper is gone: the executor sends what is left SIGTERM (the main process ends on it) ...
    wait_until(lambda: ex.poll() == [] and gone(pids["main"]), "the main process to end on the service's SIGTERM")
    assert not gone(pids["stubborn"])
    clock.advance(3)  # ... and SIGKILL after its leftover grace
    ended = _ended(ex)
    assert gone(pids["stubborn"])
    lines = ex.logs(job.id)[0].splitlines()
    at = lines.index("ready")
    assert lines[at + 1] == ("[jupyter_sched] the job's wrapper ended and left 2 processes running; jobs do not leave "
                             "processes behind, so the service sent SIGTERM to them:"), lines
    assert lines[at + 2].startswith(f"[jupyter_sched]   pid {pids['main']}: "), lines
    assert lines[at + 3:] == [f"[jupyter_sched]   pid {pids['stubborn']}: sleep 993",
                              "[jupyter_sched] 3 s later the service sent SIGKILL to the 1 still running:",
                              f"[jupyter_sched]   pid {pids['stubborn']}: sleep 993"], lines
    assert "its wrapper ended and left processes running: the service sent SIGTERM to 2 processes (" in ended.message
    assert "then SIGKILL 3 s later to 1 (sleep 993)" in ended.message, ended.message


def test_newuser30_n16_a_record_the_job_forges_on_its_stop_fifo_is_shown_escaped_and_breaks_nothing(
        tmp_path: Path) -> None:
    """The stop FIFO is the owner's: a job may write anything into it; its wrapper still ends it rightly."""
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3)
    gate = tmp_path / "gate"
    job = job_for(tmp_path, f"print('ready', flush=True)\nwait_gate({str(gate)!r})\nsys.exit(3)\n")
    handle = ex.start(job, GPU)
    wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to start")
    forged = [{"signal": "SIGTERM", "processes": [[], [1], ["x", "y"], [True, "z"], [7, "\x1b[2Jred"]], "more": "many",
               "after_s": "soon"},
              {"signal": ["not", "a", "name"]}, ["not a record"], {"stop": 5}]
    fd = os.open(Path(str(handle.data["job_dir"])) / STOP_FIFO, os.O_WRONLY | os.O_NONBLOCK)
    os.write(fd, ("\n".join(json.dumps(m) for m in forged) + "\nnot json\n").encode())
    os.close(fd)
    gate.touch()
    ended = _ended(ex)
    assert ended.exit_code == 3
    text = ex.logs(job.id)[0]
    assert "Traceback" not in text and "\x1b" not in text, text
    assert ("[jupyter_sched] the scheduler sent SIGTERM to the job's 1 process to stop it:\n"
            "[jupyter_sched]   pid 7: \\x1b[2Jred\n") in text, text


def test_newuser30_n16_a_gangs_workers_say_what_they_left_running(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3)
    job = job_for(tmp_path, """
child = subprocess.Popen(["sleep", "991"])
open(f"pid-{os.environ['RANK']}", "w").write(str(child.pid))
""")
    job = replace(job, spec=replace(job.spec, resources=ResourceRequest.of_groups(GROUPS)))
    ex.start(job, ALLOCATION)
    ended = _ended(ex)
    assert ended.exit_code == 0
    children = {int((tmp_path / f"pid-{rank}").read_text()) for rank in range(3)}
    lines = ex.logs(job.id)[0].splitlines()
    assert lines[0] == ("[jupyter_sched] the job's workers ended (exit code 0) and left 3 processes running; jobs do not "
                        "leave processes behind, so they were sent SIGTERM:"), lines
    assert sorted(lines[1:]) == sorted(f"[jupyter_sched]   pid {pid}: sleep 991 (ended on SIGTERM)" for pid in children)
    assert ended.message == ("exited with code 0; its workers left 3 processes running, ended as jobs leave none behind: "
                             "sleep 991 (SIGTERM), sleep 991 (SIGTERM), sleep 991 (SIGTERM)"), ended.message


LEFT = "its main process left 1 process running, ended as jobs leave none behind: sleep 1001 (SIGTERM)"


def test_newuser30_n16_an_ended_jobs_line_keeps_what_its_end_stopped() -> None:
    """``jobs``, ``status``, ``wait`` and the magics' lines (wording.jobs): the exit code is said once, what the end
    stopped stays, a failure's last lines too — but not right after ``logs -f`` printed them (new user 17, N20)."""
    succeeded = {"id": "j-1", "state": "succeeded", "exit_code": 0, "message": f"exited with code 0; {LEFT}"}
    assert job_line(succeeded, None) == f"job j-1: succeeded, exit code 0 — {LEFT}"
    failed = {"id": "j-2", "state": "failed", "exit_code": 1, "message": f"exited with code 1; {LEFT}; last lines: boom"}
    assert job_line(failed, None) == f"job j-2: failed, exit code 1 — {LEFT}; last lines: boom"
    assert job_line(failed, None, log_shown=True) == f"job j-2: failed, exit code 1 — {LEFT}"


def test_newuser30_n16_the_readme_shows_the_lines_a_jobs_end_writes() -> None:
    """The README's example is the wrapper's own wording (a new user reads it there first)."""
    readme = " ".join((Path(__file__).parents[2] / "docs" / "details.md").read_text().split())
    header, process = left_lines([[4242, "tensorboard --logdir runs", "SIGTERM"]], ended="exit code 0", grace_s=3)
    assert " ".join(f"`{header}` then `{process}`".split()) in readme  # as Markdown shows it: spaces folded


def test_newuser30_n16_a_gangs_failing_worker_says_which_workers_its_stop_sent_sigterm(tmp_path: Path) -> None:
    gate = tmp_path / "never"
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.3)
    job = job_for(tmp_path, f"""
open(f"pid-{{os.environ['RANK']}}", "w").write(str(os.getpid()))
if os.environ['RANK'] == '2':
    while not all(os.path.exists(f"pid-{{r}}") for r in range(3)):
        time.sleep(0.02)
    sys.exit(7)
wait_gate({str(gate)!r})
""")
    job = replace(job, spec=replace(job.spec, resources=ResourceRequest.of_groups(GROUPS)))
    ex.start(job, ALLOCATION)
    ended = _ended(ex)
    assert ended.exit_code == 7
    pids = {rank: int((tmp_path / f"pid-{rank}").read_text()) for rank in range(3)}
    lines = [line for line in ex.logs(job.id)[0].splitlines() if line.startswith("[jupyter_sched]")]
    assert lines[0] == (f"[jupyter_sched] worker 2 (pid {pids[2]}) failed (exit code 7); a gang runs all or nothing, so "
                        "the other 2 workers were sent SIGTERM:"), lines
    assert [line.split(":")[0] for line in lines[1:]] == [f"[jupyter_sched]   pid {pids[r]}" for r in (0, 1)], lines
    assert all(line.endswith(" (ended on SIGTERM)") for line in lines[1:]), lines
    assert ended.message.startswith("exited with code 7; worker 2 failed (exit code 7), so the other 2 workers were "
                                    "sent SIGTERM: "), ended.message


@needs_accounts
def test_newuser30_n16_hub_mode_a_stop_that_killed_the_owners_wrapper_is_said_in_the_owners_log() -> None:
    """Hub mode: the wrapper runs as the job's owner, the service as root; what the stop's SIGKILL left unsaid the
    service writes into the owner's own log file (as it cuts it: no link followed, only a file of that owner)."""
    clock = FakeMonotonic()
    with os_accounts(1) as (alice,), shared_dir() as root:
        ex = hub_executor(root, monotonic=clock)
        job = py_job("j-hub", "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                     "time.sleep(300)\n", user=alice.name)
        ex.start(job, GPU, run_as(alice))  # type: ignore[arg-type]
        wait_until(lambda: "ready" in ex.logs("j-hub")[0], "the job to ignore SIGTERM")
        ex.stop("j-hub", grace_s=5, reason="cancelled by root")
        clock.advance(5)
        ended = _ended(ex)
        assert ended.exit_code == -signal.SIGKILL
        lines = ex.logs("j-hub")[0].splitlines()
        assert lines[lines.index("ready") + 1] == ("[jupyter_sched] the scheduler sent SIGTERM to the job's 1 process "
                                                   "to stop it:"), lines
        assert lines[-3] == "[jupyter_sched] 5 s after the stop began, the scheduler sent SIGKILL to the 1 still running:"
        assert lines[-1] == "[jupyter_sched] cancelled by root", lines
        log = root / "jobs" / "users" / alice.name / "j-hub" / "output.log"
        assert log.stat().st_uid == alice.uid  # still the owner's file


def test_newuser30_n16_what_a_wrapper_killed_while_the_server_was_down_left_is_ended_and_said(tmp_path: Path) -> None:
    first = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, """
child = subprocess.Popen(["sleep", "989"])
json.dump({"child": child.pid}, open("pids.json", "w"))
print("ready", flush=True)
time.sleep(300)
""")
    handle = first.start(job, GPU)
    child = _pids(tmp_path)["child"]
    wait_until(lambda: "ready" in first.logs(job.id)[0], "the job to start")
    first.detach()  # the server goes away; then its job's wrapper is killed
    os.kill(int(handle.data["pid"]), signal.SIGKILL)  # type: ignore[arg-type]
    wait_until(lambda: gone(int(handle.data["pid"])), "the wrapper to die")  # type: ignore[arg-type]
    ended = LocalExecutor(tmp_path / "jobs").adopt(job, handle)
    assert ended is not None and gone(child)
    said = ended.message if isinstance(ended, Exited) else getattr(ended, "reason", "")
    assert "its wrapper ended and left processes running: the service sent SIGKILL to 2 processes (" in said, said
    lines = first.logs(job.id)[0].splitlines()
    assert lines[lines.index("ready") + 1] == ("[jupyter_sched] the job's wrapper ended and left 2 processes running; "
                                               "jobs do not leave processes behind, so the service sent SIGKILL to "
                                               "them:"), lines
    assert f"[jupyter_sched]   pid {child}: sleep 989" in lines, lines
