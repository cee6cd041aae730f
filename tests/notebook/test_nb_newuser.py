"""Issue 20, the second new-user try (/work/coord/findings-newuser.md): the magics', notebooks' and
reasons' findings, one named test each.

Most are checked where the words are made (the one reason renderer, the magics' parser and table
code, the server's response models); one real kernel against a real server walks the first hour
again — empty tables, a waiting job, dry runs, refusals, bulk cancel — and asserts what a new user
reads (one server for all of it: a server per finding would cost the test command minutes).
"""

from __future__ import annotations

import asyncio
import getpass
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection
from jupyter_sched.errors import NotFoundError, UnschedulableError, ValidationError
from jupyter_sched.magics.core import _one_line
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line
from jupyter_sched.magics.render import queue_frame, reason_line
from jupyter_sched.services.models.jobs import DryrunJobResponse, Job
from jupyter_sched.wording import render_reason, wait_progress

NOW = datetime(2026, 12, 2, 4, 50, tzinfo=timezone.utc)
StartKernel = Callable[..., Awaitable[Kernel]]


def _backfill_reason() -> dict[str, Any]:
    """A wait behind a reservation, as the core sends it for work with no time limit."""
    reserved = (NOW + timedelta(minutes=4)).isoformat()
    return {"code": "WaitingForCapacity", "position": 2,
            "message": "needs 1 Simulated GPU 80GB GPUs, 0 free; it has no time limit (none given), so it cannot start "
                       f"ahead of j-big, reserved from {reserved}; it can only start when nothing is reserved.",
            "details": {"model": "Simulated GPU 80GB",
                        "backfill": {"reserved_for": "j-big", "reservation": reserved, "limit_s": None,
                                     "limit_source": "none given"}}}


# ---- finding 2: a lease is not told to give a time limit it cannot give ------------------------------

def test_finding_2_a_lease_behind_a_reservation_is_told_what_it_waits_for() -> None:
    lease = render_reason(_backfill_reason(), now=NOW, kind="lease").summary
    assert "it cannot start ahead of j-big, whose GPUs are reserved from 04:54 UTC" in lease, lease
    assert "with no time limit" not in lease and "only when nothing is reserved" not in lease
    job = render_reason(_backfill_reason(), now=NOW).summary  # a job can be given one: the clause stays
    assert "without a time limit of its own it cannot start ahead of j-big" in job
    # the server renders a lease's reason as a lease's (every surface shows reason.text as it is)
    wire = Job.model_validate({"id": "l-1", "name": "kernel-1", "user": "ana", "team": "default", "kind": "lease",
                               "priority": "normal", "state": "pending", "resources": {"gpus": 1},
                               "reason": _backfill_reason()}).to_wire()
    assert "a kernel holds its GPUs until it releases them" in wire["reason"]["text"]["summary"]
    # ... and the magic's own lines for a lease (a timed-out %gpu request quotes its last reason)
    said = reason_line({"id": "l-1", "kind": "lease", "state": "pending", "reason": _backfill_reason()}, NOW)
    assert "a kernel holds its GPUs until it releases them" in said and "time limit" not in said, said


def test_finding_2_gpu_request_says_why_it_takes_no_time_limit() -> None:
    with pytest.raises(ValidationError) as refused:
        parse_gpu_line("request 1 --time-limit 10m")
    assert refused.value.field == "--time-limit"
    assert "takes no --time-limit" in refused.value.message and "%gpu release" in refused.value.message
    assert "unknown argument" not in refused.value.message


# ---- finding 3: a dry run shows its sentence; never-fits is not "queued" -----------------------------

def test_finding_3_a_never_fit_reason_is_neither_queued_nor_waiting_for_an_eta() -> None:
    reason = {"code": "Unschedulable", "message": "needs 99 GPUs per worker; the largest node has 4.",
              "details": {"requested": 99, "max_per_node": 4}, "eta_reason": "it can never fit"}
    text = render_reason(reason, never=True)
    assert not text.line.startswith("queued") and "ETA" not in text.line and text.eta == "", text.line
    assert text.line == "needs 99 GPUs per worker; the largest node has 4 · ask for at most 4 GPUs"
    answer = DryrunJobResponse.model_validate({
        "fits": False, "never": True, "allocation": None, "reason": reason, "eta": None, "would_preempt": [],
        "job": {"id": "dryrun", "name": "job", "user": "ana", "team": "default", "kind": "training",
                "priority": "normal", "state": "pending", "resources": {"gpus": 99}}}).to_wire()
    assert "queued" not in answer["reason"]["text"]["line"] and "ETA" not in answer["reason"]["text"]["line"]


# ---- finding 4: an ended job shows what ended it, not its old place in the queue ----------------------

def test_finding_4_ended_jobs_show_what_ended_them_not_a_position_or_eta() -> None:
    old_reason = {"code": "WaitingForCapacity", "message": "needs 1 GPU, 0 free.", "position": 5,
                  "details": {"eta_code": "NoTimeLimit", "eta_waits_on": ["j-a"]}}
    rows = [{"id": "j-1", "name": "waiter", "user": "root", "kind": "training", "state": "cancelled",
             "resources": {"gpus": 2}, "reason": old_reason, "message": "cancelled by root"},
            {"id": "j-2", "name": "t", "user": "root", "kind": "training", "state": "failed", "resources": {"gpus": 1},
             "reason": None, "exit_code": 1, "message": "exited with code 1"}]
    frame = queue_frame(rows, NOW)
    cancelled, failed = frame.iloc[0], frame.iloc[1]
    assert cancelled["detail"] == "cancelled by root" and cancelled["eta"] == "" and cancelled["reason"] == ""
    assert (frame["position"] == "").all()
    assert failed["detail"] == "exited with code 1"


def test_round3_finding_3_running_rows_have_no_na_position_and_say_when_they_end() -> None:
    started = (NOW - timedelta(minutes=1)).isoformat()
    rows = [{"id": "j-w", "name": "two", "user": "root", "kind": "training", "state": "pending",
             "resources": {"gpus": 2}, "reason": {"code": "WaitingForCapacity", "position": 1,
                                                  "message": "needs 2 Simulated GPU 80GB GPUs, 1 free.",
                                                  "details": {"model": "Simulated GPU 80GB"}}},
            {"id": "j-h", "name": "hold", "user": "root", "kind": "training", "state": "running",
             "resources": {"gpus": 3}, "time_limit_s": 240, "started_at": started,
             "allocation": {"node": "vm", "gpu_uuids": ["GPU-0", "GPU-1", "GPU-2"]}},
            {"id": "l-1", "name": "kernel-1", "user": "root", "kind": "lease", "state": "running",
             "resources": {"gpus": 1}, "started_at": started, "allocation": {"node": "vm", "gpu_uuids": ["GPU-3"]}}]
    frame = queue_frame(rows, NOW)
    assert frame["position"].tolist() == [1, "", ""]
    assert "<NA>" not in frame.to_string()
    # the lease row: the CLI's words, from the one renderer (new user 14, N18), with the magic's cancel
    assert frame["eta"].tolist()[1:] == ["ends by 04:53 UTC (in 3m), its 4m time limit",
                                         "GPUs held for no kernel: `%schedule cancel l-1` releases them (or idle "
                                         "reclaim), no time limit"]
    assert frame["detail"].tolist()[0] == "needs 2 Simulated GPU 80GB, 1 free"  # no full stop in a cell


def test_round3_finding_6_help_and_not_found_name_the_magic_that_lists_job_ids() -> None:
    from jupyter_sched.magics.core import SchedMagics

    assert "%schedule logs 42" not in str(SchedMagics.schedule.__doc__) and "%schedule logs {job} -f" in str(
        SchedMagics.schedule.__doc__)
    missing = _one_line(NotFoundError("no job '42' visible to you", field="job_id",
                                      hint="list your jobs to see their ids"))
    assert missing == "no job '42' visible to you. %schedule jobs lists your jobs with their ids."
    hidden = _one_line(NotFoundError("no job '42' visible to you", field="job_id",  # the server's since N10
                                     hint="list your jobs to see their ids (another user's job is shown only while "
                                          "it is in the queue)"))
    assert hidden == ("no job '42' visible to you. %schedule jobs lists your jobs with their ids (another user's job "
                      "is shown only while it is in the queue).")
    with pytest.raises(ValidationError) as refused:
        parse_schedule_line("logs")  # `status` alone is the summary since new user 12, N4
    assert refused.value.field == "JOB" and "%schedule jobs lists your jobs" in str(refused.value.hint)


def test_round3_finding_12_a_bulk_cancel_lists_which_jobs_running_first() -> None:
    from jupyter_sched.wording.jobs import bulk_cancel_plan

    jobs = [{"id": f"j-{i}", "name": f"p{i}", "user": "ana", "state": "pending", "resources": {"gpus": 1}}
            for i in range(12)] + [{"id": "j-run", "name": "train", "user": "bob", "state": "running",
                                    "resources": {"gpus": 2}}]
    mine = bulk_cancel_plan(jobs[-2:], everyone=False)
    assert mine == ["your 2 jobs (1 pending, 1 running)", "j-run (train): running, 2 GPUs", "j-11 (p11): pending, 1 GPU"]
    everyone = bulk_cancel_plan(jobs, everyone=True)
    assert everyone[0] == "13 jobs of 2 users (12 pending, 1 running)"
    assert everyone[1] == "j-run (train) of bob: running, 2 GPUs" and everyone[-1] == "and 3 more"
    assert parse_gpu_line("request 1 --for 2s").options.timeout_s == 2.0  # --for, as %schedule wait takes it


def test_round3_finding_18_a_failed_jobs_line_keeps_the_logs_last_lines() -> None:
    from jupyter_sched.wording import job_line

    failed = {"id": "j-1", "state": "failed", "exit_code": 2,
              "message": "exited with code 2; last lines: python3: can't open file '/nonexistent.py'"}
    assert job_line(failed, NOW) == "job j-1: failed, exit code 2 — last lines: python3: can't open file '/nonexistent.py'"
    plain = {"id": "j-2", "state": "succeeded", "exit_code": 0, "message": "exited with code 0; last lines: done"}
    assert job_line(plain, NOW) == "job j-2: succeeded, exit code 0"


def test_round3_finding_24_schedule_run_has_no_wait_and_says_how_to_follow() -> None:
    for line, cell in (("run train.py --epochs 5 --gpus 1 --wait", False), ("--no-wait", True)):
        with pytest.raises(ValidationError) as refused:
            parse_schedule_line(line, cell=cell)
        assert refused.value.field == "--wait" and "%schedule wait {job}" in str(refused.value.hint)
    assert parse_schedule_line("run train.py -- --wait").args == ("--wait",)  # the script's own, after --


def test_round3_finding_27_jobs_queue_and_cancel_take_the_clis_filters() -> None:
    jobs = parse_schedule_line("jobs --state failed --limit 2")
    assert (jobs.state, jobs.limit) == ("failed", 2)
    queue = parse_schedule_line("queue --mine --limit 5")
    assert (queue.mine, queue.limit) == (True, 5)
    assert parse_schedule_line("cancel j-a j-b").job_ids == ("j-a", "j-b")
    with pytest.raises(ValidationError) as refused:
        parse_schedule_line("jobs --limit 0")
    assert refused.value.field == "--limit"


def test_round3_finding_14_the_wait_line_says_why_its_eta_is_unknown() -> None:
    job = {"id": "l-1", "state": "pending", "kind": "lease", "submitted_at": NOW.isoformat(),
           "reason": {"code": "ExceedsQuota", "message": "default has 0 of 1 GPUs free (1 in use), job needs 1.",
                      "position": 3, "details": {"eta_code": "NoTimeLimit", "eta_waits_on": ["j-9"]}}}
    assert wait_progress(job, NOW).long_label.endswith(
        "ETA unknown: it can start only after j-9 ends, which has no time limit")


def test_round3_finding_33_a_requeued_jobs_retry_time_is_a_clock_time() -> None:
    reason = {"code": "Backoff", "message": "requeued after preemption; retries from 2026-12-02T04:53:28.388077+00:00",
              "details": {"not_before": "2026-12-02T04:53:28.388077+00:00"}}
    assert render_reason(reason, now=NOW).summary == "requeued after preemption; retries from 04:53 UTC."
    odd = {"code": "Backoff", "message": "retries from 2026-12-02T99:99+00:00"}  # not a time: left as it is
    assert render_reason(odd, now=NOW).summary == "retries from 2026-12-02T99:99+00:00."


def test_round3_finding_20_an_ended_jobs_last_reason_is_not_queued() -> None:
    wire = Job.model_validate({"id": "l-1", "name": "kernel-1", "user": "ana", "team": "default", "kind": "lease",
                               "priority": "normal", "state": "cancelled", "resources": {"gpus": 1},
                               "reason": _backfill_reason()}).to_wire()
    line = wire["reason"]["text"]["line"]
    assert "queued" not in line and "ETA" not in line and "cannot start ahead of j-big" in line, line


def test_round3_finding_14_one_gpu_is_singular_and_a_lease_is_not_a_job() -> None:
    reason = {"code": "ExceedsQuota", "message": "default has 0 of 1 GPUs free (1 in use), job needs 1.",
              "details": {"team": "default", "quota": 1, "rule": "team quota"}}
    assert render_reason(reason, kind="lease").summary == "default has 0 of 1 GPU free (1 in use), this kernel needs 1."
    assert render_reason(reason).summary == "default has 0 of 1 GPU free (1 in use), job needs 1."
    refused = _one_line(ValidationError("2 GPUs can never fit the limit of team default: 1 GPUs", field="gpus",
                                        hint="ask for at most 1 GPUs"))
    assert "1 GPUs" not in refused and "limit of team default: 1 GPU. Ask for at most 1 GPU." in refused, refused


def test_round3_finding_15_a_wait_on_a_kernel_lease_says_release_not_end() -> None:
    reason = {"code": "ExceedsQuota", "message": "default has 0 of 1 GPUs free (1 in use), job needs 1.",
              "details": {"team": "default", "quota": 1, "rule": "team quota", "eta_code": "NoTimeLimit",
                          "eta_waits_on": ["l-1m8tqw5xm-4k5f2q"], "eta_waits_on_names": {"l-1m8tqw5xm-4k5f2q": "kernel lease"}}}
    text = render_reason(reason)
    assert text.eta == ("ETA unknown: it can start only after kernel lease l-1m8tqw5xm-4k5f2q is released by its "
                        "owner or reclaimed when idle (a kernel's GPUs have no time limit)")
    assert "running jobs or kernel leases release GPUs" in text.unblock


# ---- finding 5: "which has no time limit" names the blocking job -------------------------------------

def test_finding_5_the_eta_says_the_blocking_job_has_no_time_limit() -> None:
    one = {"code": "WaitingForCapacity", "message": "needs 2 GPUs, 0 free.",
           "details": {"eta_code": "NoTimeLimit", "eta_waits_on": ["j-big"]}}
    assert render_reason(one).eta == "ETA unknown: it can start only after j-big ends, which has no time limit"
    two = {**one, "details": {"eta_code": "NoTimeLimit", "eta_waits_on": ["j-a", "j-b"]}}
    assert render_reason(two).eta == ("ETA unknown: it can start only after one or more of j-a and j-b end, "
                                      "none of which has a time limit")


# ---- finding 9: magic wording -----------------------------------------------------------------

def test_finding_9_magic_errors_carry_no_python_class_or_cli_argument_names() -> None:
    missing = _one_line(NotFoundError("no job 'j-nosuch' visible to you", field="job_id",
                                      hint="check the id with %schedule jobs"))
    assert missing == "no job 'j-nosuch' visible to you. Check the id with %schedule jobs."
    never = _one_line(UnschedulableError("needs 99 GPUs per worker; the largest node has 4.", field="gpus",
                                         hint="ask for at most 4 GPUs per worker"))
    assert never == "--gpus: needs 99 GPUs per worker; the largest node has 4. Ask for at most 4 GPUs per worker."
    cron = _one_line(ValidationError("schedule: a cron expression has 5 fields (got 'banana')", field="schedule"))
    assert cron.startswith("--cron: a cron expression has 5 fields"), cron
    for text in (missing, never, cron):
        assert "Error" not in text and "JOB_ID" not in text and "4. (" not in text


def test_finding_9_a_wait_line_reads_in_the_order_of_every_reason_line() -> None:
    job = {"id": "j-1", "state": "pending", "kind": "training", "submitted_at": NOW.isoformat(),
           "reason": {"code": "WaitingForCapacity", "message": "needs 4 Simulated GPU 80GB GPUs, 3 free.",
                      "position": 1, "details": {"model": "Simulated GPU 80GB"}}}
    frame = wait_progress(job, NOW)
    assert frame.long_label == "queued #1 · needs 4 Simulated GPU 80GB, 3 free · ETA unknown"
    assert frame.label == "queued #1 · ETA unknown"  # the terminal bar's short label is unchanged


def test_finding_9_timeout_errors_say_timeout_not_limit() -> None:
    for line, parse in (("request 1 --timeout 99999999999999999999d", parse_gpu_line),
                        ("wait j-1 --for 9999d", parse_schedule_line)):
        with pytest.raises(ValidationError) as refused:
            parse(line)
        said = str(refused.value)
        assert "timeout" in said and "limit" not in said, said


def test_finding_9_cancel_takes_mine_or_all_with_a_confirmation() -> None:
    mine = parse_schedule_line("cancel --mine")
    assert (mine.scope, mine.yes, mine.job_id) == ("mine", False, None)
    everyone = parse_schedule_line("cancel --all --state pending --yes")
    assert (everyone.scope, everyone.state, everyone.yes) == ("all", "pending", True)
    assert parse_schedule_line("cancel j-7").job_id == "j-7"
    for bad, field in (("cancel", "JOB"), ("cancel j-7 --mine", "--mine"), ("cancel j-7 --yes", "--yes")):
        with pytest.raises(ValidationError) as refused:
            parse_schedule_line(bad)
        assert refused.value.field == field


def test_a_job_name_with_brackets_is_quoted_not_nested() -> None:
    """Found re-running definitions.ipynb: "job j-7 (daily_report (run now)): failed"."""
    from jupyter_sched.wording import job_line

    line = job_line({"id": "j-7", "name": "daily_report (run now)", "state": "failed", "exit_code": 1}, NOW)
    assert line == "job j-7 'daily_report (run now)': failed, exit code 1"
    assert job_line({"id": "j-8", "name": "train", "state": "succeeded"}, NOW) == "job j-8 (train): succeeded"


def test_work_without_gpus_is_not_labelled_simulated_gpus() -> None:
    """Found trying %schedule serve --gpus 0: "service j-1 (app): running [simulated GPUs]"."""
    from jupyter_sched.wording import job_line

    service = {"id": "j-1", "name": "app", "kind": "inference", "state": "running", "simulated": True,
               "allocation": {"node": "vm", "gpu_uuids": []}}
    assert job_line(service, NOW) == "service j-1 (app): running"
    held = {**service, "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"]}}
    assert job_line(held, NOW) == "service j-1 (app): running on vm: GPU-sim-vm-0 [simulated GPUs]"


# ---- finding 11: --for and --timeout on %schedule wait ------------------------------------------------

def test_finding_9_a_timeout_without_waiting_is_refused_not_ignored() -> None:
    with pytest.raises(ValidationError) as refused:
        parse_gpu_line("request 1 --no-wait --timeout 5s")
    assert refused.value.field == "--timeout" and "--no-wait" in refused.value.message
    assert parse_gpu_line("request 1 --timeout 5s").options.timeout_s == 5.0


def test_finding_11_schedule_wait_takes_for_and_timeout() -> None:
    assert parse_schedule_line("wait j-1 --for 3s").timeout_s == 3.0
    assert parse_schedule_line("wait j-1 --timeout 2m").timeout_s == 120.0
    assert parse_schedule_line("wait j-1").timeout_s is None


# ---- the first hour again, in a real kernel -------------------------------------------------------------

@pytest.fixture
def sched_settings() -> dict[str, Any]:
    return {"stop_grace_s": 5, "user_teams": {getpass.getuser(): ["default"]}}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def _job_id(result: Any) -> str:
    return str(result.data[-1]["text/plain"]).strip("'\"")


def _seen(result: Any) -> str:
    """What the notebook shows: streams, displays and the error's rendered lines (a MagicError
    renders as ``jupyter_sched: <message>``; its class name is not shown)."""
    lines = [result.stdout, result.stderr, *(str(d.get("text/plain", "")) for d in result.data)]
    if result.error:
        lines += [str(line) for line in result.error.get("traceback") or []]
    return "\n".join(lines)


@pytest.mark.slow
async def test_findings_2_3_4_9_10_11_the_first_hour_in_a_real_kernel(start_kernel: StartKernel,
                                                                       api: AsyncSchedClient,
                                                                       jp_root_dir: Path, jp_serverapp: Any) -> None:
    kernel = await start_kernel()
    await kernel.run(f"import os; os.chdir({str(jp_root_dir)!r})\n%env JUPYTER_SCHED_WIDGETS=0")
    # finding 10: a fresh server's empty tables are one sentence each, never "Empty DataFrame"
    for line, said in (("%schedule queue", "The queue is empty"), ("%schedule jobs", "You have no jobs yet"),
                       ("%schedule profiles", "No profiles defined"),
                       ("%schedule define list", "You have no job definitions yet")):
        shown = await kernel.run(line)
        assert shown.error is None and said in shown.stdout, shown.text
        assert "Empty DataFrame" not in shown.text and not shown.data, shown.text

    # the aside: a %%schedule cell's script leaves no untracked folder in a git checkout
    subprocess.run(["git", "init", "-q", str(jp_root_dir)], check=True)
    cell = await kernel.run("%%schedule --gpus 0 --name cell\nprint(1)")
    assert cell.error is None, cell.text
    status = subprocess.run(["git", "-C", str(jp_root_dir), "status", "--porcelain", "--untracked-files=all"],
                            check=True, capture_output=True, text=True).stdout
    assert ".jupyter_sched" not in status and (jp_root_dir / ".jupyter_sched" / "cells").is_dir(), status
    await wait_for(lambda: _state(api, _job_id(cell), "succeeded"), timeout_s=60)  # out of the bulk cancel's count

    (jp_root_dir / "hold.py").write_text("import time\ntime.sleep(120)\n")
    hold = _job_id(await kernel.run("j = %schedule run hold.py --gpus 4 --time-limit 5m --name hold\nj"))
    await wait_for(lambda: _state(api, hold, "running"), timeout_s=30)
    waiter = _job_id(await kernel.run("j = %schedule run hold.py --gpus 2 --name waiter\nj"))

    # finding 9 + 11: the wait line in the order of every reason line, --for, no class name
    await wait_for(lambda: _has_reason(api, waiter), timeout_s=30)  # a cycle has looked at it (no timing guess)
    waited = await kernel.run(f"%schedule wait {waiter} --for 2s")
    # the last frame: the first may come before any cycle looked at the job ("waiting for the next cycle")
    bar = [str(d["text/plain"]) for d in waited.data if "queued" in str(d.get("text/plain", ""))][-1]
    assert "needs 2" in bar and "ETA" in bar and bar.index("needs 2") < bar.index("ETA"), bar
    assert ". ·" not in bar, bar
    # new user 17, N12: printed as the CLI prints it ("2s", exit 5 there), not raised (a Run-All went on)
    assert waited.error is None and "still pending after 2s: " in _seen(waited), waited.text

    # round 3, finding 34: interrupting a waiting %gpu request withdraws the request, and says so only then
    asking = await start_kernel()
    _, running = asking.start_run("%gpu request 1 --timeout 1m")
    await wait_for(lambda: _pending_lease(api), timeout_s=30)
    await asyncio.sleep(0.3)  # inside a long poll (an HTTP read), where the interrupt used to break the connection
    await jp_serverapp.kernel_manager.interrupt_kernel(asking.id)
    stopped = _seen(await running)
    assert "interrupted: lease request l-" in stopped and "withdrawn; nothing stays pending" in stopped, stopped
    assert "does not speak HTTP" not in stopped, stopped
    assert not await _pending_lease(api), "the interrupted request stayed pending"
    assert (await _newest_lease(api))["message"].endswith(": the request was interrupted while it waited")
    # round 3, finding 20: a --timeout that passed is recorded as such, not as "request withdrawn by root"
    timed_out = _seen(await asking.run("%gpu request 1 --timeout 2s"))
    assert "no GPUs granted within 2s" in timed_out, timed_out
    assert (await _newest_lease(api))["message"] == (
        "request withdrawn: no GPUs granted within its 2s timeout; nothing was held")

    # finding 9 (the CLI's "logs of a pending job", in the magic): why the log is empty
    logs = await kernel.run(f"%schedule logs {waiter}")
    assert f"{waiter} is pending: no output yet; %schedule logs {waiter} -f follows it once it starts." in logs.stdout
    assert "log continues" not in logs.stdout, logs.text
    usage = _seen(await kernel.run("%gpu request 0"))  # a usage error's hint is a sentence, not "(got 0) (ask…)"
    assert "%gpu request: gpus must be > 0 (got 0). Ask for 1 or more GPUs, or a share such as 0.5." in usage, usage
    # new user 4, finding 13: -1 got case 019's "use 0 for CPU-only work" although %gpu refuses 0;
    # an empty %%schedule cell ran an empty script on a GPU; --help was "unknown argument"
    minus = _seen(await kernel.run("%gpu request -1"))
    assert "%gpu request: gpus must be > 0 (got -1). Ask for 1 or more GPUs, or a share such as 0.5." in minus and "CPU-only" \
        not in minus, minus
    empty = await kernel.run("%%schedule --gpus 1\n\n# nothing yet\n")
    assert empty.error is not None and "the cell is empty: nothing to run" in _seen(empty), empty.text
    assert "MagicError" in str(empty.error.get("ename")), empty.error  # one class for every refusal (newuser 14)
    helped = _seen(await kernel.run("%gpu request 1 --help"))  # new user 5 #1: the help itself, not a usage error
    assert helped.startswith("%gpu request N [--model M]") and "%gpu? shows the whole help." in helped, helped
    assert "unknown argument" not in helped and "UsageError" not in helped, helped

    # finding 3: a dry run prints its sentence and no Out[] dict; never-fits is not queued
    dry = await kernel.run("%schedule dryrun --gpus 4")
    assert dry.stdout.startswith("Would wait: queued #") and not dry.data, dry.text
    never = await kernel.run("%schedule dryrun --gpus 99")
    assert never.stdout.startswith("Would never start here: needs 99 GPUs") and not never.data, never.text
    assert "queued" not in never.stdout and "ETA" not in never.stdout
    with pytest.raises(UnschedulableError) as refused:  # a refused submission's reason reads the same way
        await api.submit({"gpus": 99, "command": ["true"]})
    line = refused.value.details["reason"]["text"]["line"]
    assert line.startswith("needs 99 GPUs") and "queued" not in line and "ETA" not in line, line
    memory = await kernel.run("%schedule dryrun --gpus 1 --mem-per-gpu 200GiB")
    assert memory.stdout.startswith("Would never start here: asks for 200 GiB of memory per GPU"), memory.text

    # finding 9: refusals in the notebook's own words
    missing = _seen(await kernel.run("%schedule status j-nosuch"))
    # the lab's owner is its admin: "no job has the id …", never what non-admins are not shown (newuser35 n4)
    assert "no job has the id 'j-nosuch'" in missing and "NotFoundError" not in missing and "JOB_ID" not in missing, \
        missing
    assert "not shown to you" not in missing, missing
    cron = _seen(await kernel.run("%schedule define hold.py --cron banana"))
    assert "--cron:" in cron and "ValidationError" not in cron, cron
    timeout = _seen(await kernel.run("%gpu request 1 --timeout 99999999999999999999d"))
    assert "timeout" in timeout and "limit" not in timeout, timeout

    # finding 2: a lease takes no time limit, in the magic and in REST
    limited = _seen(await kernel.run("%gpu request 1 --time-limit 10m"))
    assert "takes no --time-limit" in limited, limited
    with pytest.raises(ValidationError) as refused:
        await api.request_lease({"gpus": 1, "time_limit": "10m"})
    assert refused.value.field == "time_limit"

    # finding 4: a cancelled job's row says who cancelled it; no position, reason or ETA
    await kernel.run(f"%schedule cancel {waiter}")
    row = await kernel.run(f"f = %schedule jobs\nr = f[f['id'] == {waiter!r}].iloc[0]\n"
                           # eta and position are columns only where some row has one (newuser26 n13)
                           "print('ROW', r['state'], '|', r['detail'], '|', r.get('eta', ''), '|', "
                           "r.get('position', ''))")
    # …as its owner reads it: "cancelled by you" (new user 25, n2)
    assert "ROW cancelled | cancelled by you |  | \n" in row.stdout, row.text

    ended = await kernel.run(f"%schedule logs {waiter}")  # round 3, finding 5: an ended job's empty log
    assert f"{waiter} cancelled with no output." in ended.stdout, ended.text

    # finding 9: cancel --mine lists first, cancels with --yes
    asked = await kernel.run("%schedule cancel --mine")
    assert asked.error is None and "Would cancel your 1 job (1 running):" in asked.stdout, asked.text
    assert f"  {hold} (hold): running, 4 GPUs" in asked.stdout and "--mine --yes" in asked.stdout, asked.text  # which
    assert (await api.job(hold))["state"] == "running"
    done = await kernel.run("%schedule cancel --mine --yes")
    assert "Cancelled 1 job: 1 running job is stopping (5 s grace)." in done.stdout, done.text
    again = await kernel.run("%schedule cancel --all")
    assert "Nothing to cancel" in again.stdout or "Would cancel" in again.stdout, again.text

    # found on the way: %schedule cancel of this kernel's own lease hides its GPUs as %gpu release does
    granted = await kernel.run("%gpu request 1 --for 1m")  # --for as %schedule wait says it (round 3, finding 12)
    assert granted.error is None, granted.text
    lease_id = granted.stdout.split("(lease ", 1)[1].split(")", 1)[0]
    released = await kernel.run(f"%schedule cancel {lease_id}\nimport os; print('CVD', repr(os.environ['CUDA_VISIBLE_DEVICES']))")
    assert f"Released lease {lease_id}" in released.stdout and "CVD ''" in released.stdout, released.text

    # round 3, finding 26: a lease freed because its kernel was shut down says so (not "released by <user>")
    other = await start_kernel()
    took = await other.run("%gpu request 1 --for 1m")
    assert took.error is None, took.text
    other_lease = took.stdout.split("(lease ", 1)[1].split(")", 1)[0]
    await jp_serverapp.kernel_manager.shutdown_kernel(other.id, now=True)
    await wait_for(lambda: _state(api, other_lease, "cancelled"), timeout_s=30)
    assert (await api.job(other_lease))["message"] == "released by the server: its kernel was shut down"

    # round 3, finding 24: an argument the parser refuses is a usage error whatever word it names
    keep = await kernel.run("%gpu keepalive 10m")
    assert keep.error is not None and keep.error.get("ename") == "MagicError", keep.text
    # round 3, finding 27: several ids (a refusal does not stop the others), the CLI's filters
    several = await kernel.run("%schedule cancel j-nosuch-1 j-nosuch-2")
    assert several.error is None and several.stderr.count("no job has the id 'j-nosuch-") == 2, several.text
    # round 3, finding 16: "never, because of the quota" is a dry run's answer, not an error
    await api.set_quotas({"quotas": [{"team": "default", "gpu_model": "*", "guaranteed": 1, "borrowing_limit": 0}]})
    quota = await kernel.run("%schedule dryrun --gpus 2")
    assert quota.error is None and quota.stdout.startswith("Would never start here: 2 GPUs can never fit"), quota.text
    # red-team round 3, finding 8: a bulk cancel goes on past one page (the page made 2 long here)
    for n in range(3):
        assert (await kernel.run(f"%schedule run hold.py --gpus 1 --name p{n}")).error is None
    paged = await kernel.run("import jupyter_sched.magics.core as c; c._BULK_PAGE = 2\n%schedule cancel --mine --yes")
    assert "Cancelled 3 jobs: " in paged.stdout, paged.text
    listed = await kernel.run("f = %schedule jobs --state cancelled --limit 2\nprint('ROWS', len(f), set(f['state']))")
    assert "ROWS 2 {'cancelled'}" in listed.stdout, listed.text


async def _pending_lease(api: AsyncSchedClient) -> bool:
    return any(lease.get("state") == "pending" for lease in await api.leases())


async def _newest_lease(api: AsyncSchedClient) -> dict[str, Any]:
    return max(await api.leases(), key=lambda lease: str(lease.get("submitted_at") or ""))


async def _has_reason(api: AsyncSchedClient, job_id: str) -> bool:
    return bool((await api.job(job_id)).get("reason"))


async def _state(api: AsyncSchedClient, job_id: str, state: str) -> bool:
    return (await api.job(job_id))["state"] == state


def test_newuser4_finding_13_a_missing_job_id_hint_is_about_job_ids() -> None:
    with pytest.raises(ValidationError) as missing:
        parse_schedule_line("wait")
    # about jobs, not "%gpu status shows the GPUs…"; names work too since new user 21's N9
    assert missing.value.hint == "e.g. %schedule wait train; %schedule jobs lists your jobs with their names and ids"
