"""``jupyter-sched`` as a new user met it in issue 20: real subprocesses against a real server.

Findings: ``cancel J`` printed ``j-…: running`` (read as a failed cancel); clearing 122 pending
jobs took a script; ``submit --gpus 1`` with no command answered with a JSON hint; a GPU memory
per GPU that no GPU has was told to "ask for fewer GPUs per worker", and an absurd one was a 422
with a 30-digit MiB figure.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_JOB_FAILED, EXIT_OK, EXIT_REFUSED, EXIT_TIMEOUT, EXIT_USAGE, main
from jupyter_sched.model.validation import NO_LIMIT_NO_GPU_WARNING
from jupyter_sched.wording import render_reason
from tests import leftovers
from tests.cli_server import TLS, Run, server_for_module
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "cli", USERS, stop_grace_s=60)


ENDED = r" · ended \d\d:\d\d UTC \(ran [0-9hms]+\)"
"""What a finished job's line says of when it ran (newuser27 N5: "· ended 22:11 UTC (ran 4m02s)")."""

def api(server: EmbeddedServer, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.api, headers={"Authorization": f"token {token}"}, timeout=30, verify=TLS)


def start_kernel(server: EmbeddedServer) -> str:
    """A real kernel of the server (``POST api/kernels``), its id: a lease must name a kernel its
    server runs (issue 20 (d)). The server shuts it down when it stops."""
    started = httpx.post(server.url + "api/kernels", json={"name": "python3"}, timeout=60,
                         headers={"Authorization": f"token {OWNER_TOKEN}"})
    assert started.status_code == 201, started.text
    return str(started.json()["id"])


def cli(server: EmbeddedServer, token: str, *argv: str, stdin: str | None = None) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": token, "PYTHONPATH": str(ROOT)})
    done = subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120, input=stdin)
    return Run(done.returncode, done.stdout, done.stderr)


def submit(server: EmbeddedServer, token: str, *, gpus: int = 1, command: list[str] | None = None,
           priority: str = "normal") -> dict[str, Any]:
    answer = api(server, token).post("jobs", json={"gpus": gpus, "time_limit": "10m", "priority": priority,
                                                   "command": command or ["sleep", "300"]})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def wait_state(server: EmbeddedServer, token: str, job_id: str, *states: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        job = dict(api(server, token).get(f"jobs/{job_id}").json())
        if job["state"] in states:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def wait_numbered(server: EmbeddedServer, token: str, running: str, waiting: list[str]) -> None:
    """Until ``running`` runs and the engine has numbered every job of ``waiting`` (their ``GET queue`` positions).
    A job submitted after the cycle that started the first one has no position until a later decision, so
    positions read as soon as the first job ran could leave one out (s31-flake: the race
    tests/web/test_paging.py's queue pages had under load)."""
    wait_state(server, token, running, "running")
    deadline = time.monotonic() + 60
    while True:
        rows = api(server, token).get("queue").json()
        if {row["id"] for row in rows if row.get("position") is not None} >= set(waiting):
            return
        assert time.monotonic() < deadline, rows
        time.sleep(0.1)


def module_server(tmp_path_factory: pytest.TempPathFactory, folder: str, users: dict[str, str],
                  admin: str = "boss", **sched: Any) -> Iterator[EmbeddedServer]:
    """A module's embedded server (2 simulated GPUs, ``admin`` its admin, ``sched`` more settings), its live work
    stopped before it is killed (jobs outlive a killed server by design) — the body of the new-user modules'
    module-scoped ``server`` fixtures (:func:`tests.cli_server.server_for_module`)."""
    yield from server_for_module(tmp_path_factory, folder, users, before_kill=clear, admin_users=[admin],
                                 **{"simulated_gpus": 2, **sched})


def clear(server: EmbeddedServer) -> None:
    """Cancel everyone's live work (as the admin) so each test starts with free GPUs."""
    boss = api(server, "tok-boss")

    def live(states: str) -> list[dict[str, Any]]:
        rows = boss.get("jobs", params={"all": "true", "state": states}).json()
        return list(rows["jobs"] if isinstance(rows, dict) else rows)

    for job in live("pending,preempted,admitted,running"):
        boss.delete(f"jobs/{job['id']}")
    deadline = time.monotonic() + 60
    while running := live("admitted,running"):
        # each is in its stop now: a process ignoring SIGTERM gets at once the SIGKILL its grace ends with
        # (up to 60 s per such job in these modules; every assertion on it is made by now)
        leftovers.kill_sigterm_ignorers([job["id"] for job in running])
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_cancel_says_what_happened_to_a_pending_and_a_running_job(server: EmbeddedServer) -> None:
    clear(server)
    running = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", running["id"], "running")
    pending = submit(server, "tok-ann", gpus=2)
    run = cli(server, "tok-ann", "cancel", pending["id"], running["id"])
    assert run.code == EXIT_OK, run.err
    assert run.out.splitlines() == [f"cancelled {pending['id']} (was pending; removed from the queue)",
                                    f"cancelled {running['id']} (was running; stopping, grace 60 s)"]


def test_submit_without_a_command_answers_with_the_cli_form(server: EmbeddedServer) -> None:
    run = cli(server, "tok-ann", "submit", "--gpus", "1")
    assert run.code == EXIT_USAGE and run.out == ""
    # the CLI's one error style (new user 10: argparse's "usage: …" + "…: error: …" was a second one)
    assert run.err == ("jupyter-sched submit: say what to run: -- python train.py, --script train.py or --notebook "
                       "analysis.ipynb [usage_error]\n"), run.err


def test_cancel_mine_counts_asks_and_refuses_without_a_terminal(server: EmbeddedServer) -> None:
    clear(server)
    jobs = [submit(server, "tok-bob", gpus=2) for _ in range(4)]  # one runs, three wait
    wait_state(server, "tok-bob", jobs[0]["id"], "running")
    unasked = cli(server, "tok-bob", "cancel", "--mine", "--state", "pending")
    assert unasked.code == EXIT_USAGE
    assert "would cancel 3 jobs (3 pending)" in unasked.err and "--yes" in unasked.err
    # third new-user run, finding 12b: it asked without naming them — the jobs are listed first
    assert {line.split()[0] for line in unasked.err.splitlines()[:3]} == {j["id"] for j in jobs[1:]}
    assert f"  {jobs[1]['id']}  pending  2 GPUs" in unasked.err.splitlines()
    assert all(wait_state(server, "tok-bob", j["id"], "pending", "running")["state"] != "cancelled" for j in jobs)
    done = cli(server, "tok-bob", "cancel", "--mine", "--state", "pending", "--yes")
    assert done.code == EXIT_OK, done.err
    assert done.out.strip() == "cancelled 3 jobs: 3 pending removed from the queue"
    assert [wait_state(server, "tok-bob", j["id"], "cancelled", "running")["state"] for j in jobs] == [
        "running", "cancelled", "cancelled", "cancelled"]
    rest = cli(server, "tok-bob", "cancel", "--mine", "--yes")
    assert rest.out.strip() == "cancelled 1 job: 1 running job is stopping (60 s grace)"  # new user 4: was garbled


class Terminal(io.StringIO):
    """A stdin that says it is a terminal and holds the user's answer."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("answer, want_cancelled", [("n\n", False), ("y\n", True)], ids=["no keeps", "yes cancels"])
def test_cancel_mine_on_a_terminal_asks_with_the_count_first(server: EmbeddedServer, answer: str,
                                                             want_cancelled: bool,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    clear(server)
    jobs = [submit(server, "tok-ann", gpus=0, command=["sleep", "300"]) for _ in range(2)]
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "tok-ann")  # not --token, which adds its note to stderr
    code = main(["--url", server.url, "cancel", "--mine"], out=out, err=err, stdin=Terminal(answer))
    assert code == EXIT_OK, err.getvalue()
    asked = err.getvalue().splitlines()
    assert asked[-1].startswith("Cancel 2 of your jobs (") and len(asked) == 3  # the 2 jobs listed, then asked
    if want_cancelled:
        assert out.getvalue().startswith("cancelled 2 jobs: ")
        assert all(wait_state(server, "tok-ann", j["id"], "cancelled")["state"] == "cancelled" for j in jobs)
    else:
        assert out.getvalue().strip() == "nothing cancelled"
        assert all(wait_state(server, "tok-ann", j["id"], "pending", "running")["state"] != "cancelled"
                   for j in jobs)


def test_redteam3_finding_8_a_bulk_cancel_reads_every_page(server: EmbeddedServer,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Red-team 3 finding 8: ``cancel --mine --yes`` listed one page (the server's default, 500)
    and said "cancelled 500 jobs" with 120 left pending. 503 pending jobs here: more than one
    default page; and pages of 200 (for the server's 1000) make the CLI follow three."""
    from jupyter_sched.cli import cancel as cancel_module

    clear(server)
    with api(server, "tok-ann") as ann:
        ids = []
        for _ in range(503):  # 2 GPUs each of 2: one may start, the rest wait (nothing else runs)
            answer = ann.post("jobs", json={"gpus": 2, "time_limit": "10m", "command": ["sleep", "300"]})
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["id"])
    monkeypatch.setattr(cancel_module, "BULK_PAGE", 200)
    out, err = io.StringIO(), io.StringIO()
    plan = main(["--url", server.url, "--token", "tok-ann", "cancel", "--mine"], out=out, err=err,
                stdin=io.StringIO())
    assert plan == EXIT_USAGE and "would cancel 503 jobs (" in err.getvalue(), err.getvalue()
    assert "… and 493 more" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    code = main(["--url", server.url, "--token", "tok-ann", "cancel", "--mine", "--yes"], out=out, err=err)
    assert code == EXIT_OK, err.getvalue()
    assert out.getvalue().startswith("cancelled 503 jobs: "), out.getvalue()
    left = api(server, "tok-ann").get("jobs", params={"state": "pending,preempted,admitted", "limit": 1000}).json()
    assert (left["jobs"] if isinstance(left, dict) else left) == []


def test_cancel_all_is_for_admins_and_counts_every_users_jobs(server: EmbeddedServer) -> None:
    clear(server)
    submit(server, "tok-ann", gpus=2)
    submit(server, "tok-bob", gpus=2)
    refused = cli(server, "tok-bob", "cancel", "--all", "--yes")
    assert refused.code == EXIT_REFUSED
    assert "only admins may cancel everyone's jobs (bob is not an admin)" in refused.err
    assert "cancel --mine" in refused.err
    done = cli(server, "tok-boss", "cancel", "--all", "--yes")
    assert done.code == EXIT_OK, done.err
    assert done.out.startswith("cancelled 2 jobs: ")


def test_wait_draws_until_the_end_and_exits_by_the_outcome(server: EmbeddedServer) -> None:
    clear(server)
    good = submit(server, "tok-ann", command=[sys.executable, "-c", "print('ok')"])
    run = cli(server, "tok-ann", "wait", good["id"])
    assert run.code == EXIT_OK and re.fullmatch(f"job {good['id']}: succeeded, exit code 0{ENDED}", run.out.strip()), run
    bad = submit(server, "tok-ann", command=[sys.executable, "-c", "raise SystemExit(3)"])
    run = cli(server, "tok-ann", "wait", bad["id"])
    assert run.code == EXIT_JOB_FAILED and f"job {bad['id']}: failed, exit code 3" in run.out
    slow = submit(server, "tok-ann")
    run = cli(server, "tok-ann", "wait", slow["id"], "--for", "1s")
    assert run.code == EXIT_TIMEOUT and run.out.startswith("still ")
    assert run.err.splitlines()[0].startswith(("queued", "running"))  # a phase line (no terminal: no bar)


def test_an_absurd_memory_per_gpu_is_a_400_naming_the_bound(server: EmbeddedServer) -> None:
    answer = api(server, "tok-ann").post("jobs", json={"gpus": 1, "mem_per_gpu": "99999999999999999999999TiB",
                                                       "command": ["true"]})
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["field"] == "mem_per_gpu" and "at most 1 PiB per GPU" in error["message"]
    assert "104857599999999991203906977792" not in answer.text


def test_memory_per_gpu_no_gpu_has_is_refused_naming_memory_per_gpu(server: EmbeddedServer) -> None:
    answer = api(server, "tok-ann").post("jobs", json={"gpus": 1, "mem_per_gpu": "200GiB", "command": ["true"]})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == "mem_per_gpu" and "fewer GPUs" not in answer.text
    assert error["details"]["reason"]["details"]["max_mib"] == 81920
    run = cli(server, "tok-ann", "submit", "--gpus", "1", "--mem-per-gpu", "200GiB", "--", "true")
    assert run.code == EXIT_REFUSED
    assert run.err.startswith("jupyter-sched submit: --mem-per-gpu: ") and "asks for 200 GiB of memory per GPU" in run.err
    assert "the most any GPU here has is 80 GiB — ask for at most 80 GiB per GPU [unschedulable]" in run.err


def test_no_server_and_a_dead_server_are_explained_in_the_clis_terms(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "empty"), "PYTHONPATH": str(ROOT)})
    none = subprocess.run([CLI, "status"], env=env, capture_output=True, text=True, timeout=60)
    assert none.returncode == 3 and none.stderr.count("\n") == 1
    assert "jupyter-sched: no jupyter_sched server found" in none.stderr and "--url URL --token TOKEN" in none.stderr
    assert f"in the runtime dir {tmp_path / 'empty'} (JUPYTER_RUNTIME_DIR)" in none.stderr  # round 3, finding 29
    assert "connect(" not in none.stderr  # the Python API's spelling is for notebooks
    dead = subprocess.run([CLI, "--url", "http://127.0.0.1:9/", "status"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert dead.returncode == 3 and "cannot reach the jupyter_sched server at http://127.0.0.1:9/" in dead.stderr
    assert "connect(" not in dead.stderr and "--url" in dead.stderr
    # finding 9 of the second new-user run: said "(ConnectionRefusedError: [Errno 111] Connection refused)"
    assert "nothing is listening there (connection refused)" in dead.stderr
    assert "Errno" not in dead.stderr and "Error:" not in dead.stderr
    assert ". —" not in none.stderr  # the message's own period does not run into the dash


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux `script` (a pseudo-terminal) is not installed")
def test_wait_on_a_terminal_draws_a_progress_bar_while_queued_then_prints_the_end(server: EmbeddedServer) -> None:
    """On a terminal (a pty from util-linux ``script``, with no size set: 0 x 0, as some CI ptys)
    ``wait`` draws tqdm bars on stderr while the job is queued and running, and ends with one line."""
    clear(server)
    blocker = submit(server, "tok-ann", gpus=2, command=["sleep", "3"])
    wait_state(server, "tok-ann", blocker["id"], "running")
    waiting = submit(server, "tok-ann", gpus=1, command=["sleep", "1"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)})
    done = subprocess.run(["script", "-qec", f"{CLI} wait {waiting['id']}", "/dev/null"], env=env,
                          capture_output=True, text=True, timeout=120)
    screen = done.stdout.replace("\r", "\n")
    assert done.returncode == EXIT_OK, screen
    # the queued phase's bar: its gauge says what it measures (newuser23 N18: never a bare percentage)
    assert "queued #1 · ETA" in screen and "| waited " in screen and " of ~" in screen
    assert re.search(f"job {waiting['id']}: succeeded, exit code 0{ENDED}$", screen.rstrip()), screen


def test_every_reason_the_api_answers_carries_its_sentences(server: EmbeddedServer) -> None:
    """``reason.text`` = the one renderer's {summary, eta, unblock, line}: in the queue, a job, a
    dry run and a 422's details, so the panel shows the words the CLI and magics print."""
    clear(server)
    ann = api(server, "tok-ann")
    blocker = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", blocker["id"], "running")
    waiting = submit(server, "tok-ann", gpus=1)
    deadline = time.monotonic() + 30
    while not (job := ann.get(f"jobs/{waiting['id']}").json()).get("reason"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    text = job["reason"]["text"]
    assert set(text) == {"summary", "eta", "unblock", "line"}
    assert text["line"].startswith("queued #1 · ") and text["eta"].startswith("ETA ")
    assert "see ETA" not in text["line"] and text["line"].count("ETA") == 1
    rows = ann.get("queue").json()
    rows = rows["queue"] if isinstance(rows, dict) else rows
    assert next(r for r in rows if r["id"] == waiting["id"])["reason"]["text"] == text
    dry = ann.post("dryrun", json={"gpus": 1, "command": ["true"]}).json()
    wire = {key: value for key, value in dry["reason"].items() if key != "text"}
    assert dry["reason"]["text"] == render_reason(wire).to_dict()  # the one renderer, as the CLI uses it
    assert dry["reason"]["text"]["summary"].startswith("needs 1 Simulated GPU 80GB, 0 free")  # not "80GB GPU"
    assert "+00:00" not in dry["reason"]["text"]["summary"]  # clock times, not ISO stamps
    refused = ann.post("jobs", json={"gpus": 1, "mem_per_gpu": "200GiB", "command": ["true"]}).json()["error"]
    assert refused["details"]["reason"]["text"]["unblock"] == "Ask for at most 80 GiB per GPU."


def test_a_lease_request_withdrawn_while_pending_does_not_read_like_a_release(server: EmbeddedServer) -> None:
    clear(server)
    ann = api(server, "tok-ann")
    granted = ann.post("leases", json={"gpus": 2, "name": "nb-1"})
    assert granted.status_code == 201, granted.text
    wait_state(server, "tok-ann", granted.json()["id"], "running", "admitted")
    queued = ann.post("leases", json={"gpus": 1, "name": "nb-2"}).json()
    assert queued["state"] == "pending"
    withdrawn = ann.delete(f"leases/{queued['id']}").json()
    assert withdrawn["message"] == "request withdrawn by ann before any GPU was granted"
    released = ann.delete(f"leases/{granted.json()['id']}").json()
    assert released["message"] == "released by ann"


def test_newuser3_finding_20_a_timed_out_lease_request_says_its_timeout_not_a_withdrawal(
        server: EmbeddedServer) -> None:
    """Round 3 finding 20: ``%gpu request --timeout 3s`` that got no GPU was recorded as "request
    withdrawn by root" — DELETE leases carried no why. ``?why=`` is a closed set, validated."""
    clear(server)
    ann = api(server, "tok-ann")
    held = ann.post("leases", json={"gpus": 2, "name": "nb-1"}).json()
    wait_state(server, "tok-ann", held["id"], "running", "admitted")
    queued = [ann.post("leases", json={"gpus": 1, "name": f"nb-{i}"}).json() for i in (2, 3, 4)]
    refused = ann.delete(f"leases/{queued[0]['id']}", params={"why": "bored"})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "why" and "'timeout'" in error["message"] and "(got 'bored')" in error["message"]
    alone = ann.delete(f"leases/{queued[0]['id']}", params={"timeout_s": "30"}).json()["error"]
    assert alone["field"] == "timeout_s" and "why=timeout" in alone["hint"]
    job = submit(server, "tok-ann", gpus=2)
    not_a_lease = ann.delete(f"jobs/{job['id']}", params={"why": "timeout"}).json()["error"]
    assert not_a_lease["field"] == "why" and "leases only" in not_a_lease["message"]
    unknown = ann.delete(f"leases/{queued[0]['id']}", params={"reason": "x"}).json()["error"]
    assert unknown["field"] == "reason" and unknown["hint"].startswith("DELETE leases/")  # not "GET"
    assert wait_state(server, "tok-ann", queued[0]["id"], "pending")["state"] == "pending"  # nothing ended
    timed_out = ann.delete(f"leases/{queued[0]['id']}", params={"why": "timeout", "timeout_s": "30"}).json()
    assert timed_out["message"] == "request withdrawn: no GPUs granted within its 30s timeout; nothing was held"
    interrupted = ann.delete(f"leases/{queued[1]['id']}", params={"why": "interrupt"}).json()
    assert interrupted["message"] == ("request withdrawn by ann before any GPU was granted: the request was "
                                      "interrupted while it waited")
    assert ann.delete(f"jobs/{queued[2]['id']}").json()["message"] == (  # jupyter-sched cancel l-…
        "request withdrawn by ann before any GPU was granted")
    assert ann.delete(f"leases/{held['id']}", params={"why": "release"}).json()["message"] == "released by ann"
    # the client sends it as the magic does on its --timeout
    from jupyter_sched.client import connect

    again = ann.post("leases", json={"gpus": 2, "name": "nb-5"}).json()  # behind the 2-GPU job
    with connect(server.url, "tok-ann") as client:
        gone = client.release_lease(again["id"], why="timeout", timeout_s=2.5)
    assert gone["message"] == "request withdrawn: no GPUs granted within its 2.5s timeout; nothing was held"


def test_queue_shows_the_head_of_a_long_queue_and_says_more_wait(server: EmbeddedServer) -> None:
    """Issue 20: ``queue`` took 2.3 s with ~220 jobs stored; with 1,000 the whole queue is ~3 MB.
    The terminal gets the first pending jobs (the server validates and sends only those) and
    is told that more wait, and how to see them."""
    clear(server)
    jobs = [submit(server, "tok-bob", gpus=2) for _ in range(5)]  # one runs, four wait
    wait_numbered(server, "tok-bob", jobs[0]["id"], [job["id"] for job in jobs[1:]])
    head = api(server, "tok-bob").get("queue", params={"limit": 2}).json()
    assert [(row["id"], row["position"]) for row in head] == [(jobs[1]["id"], 1), (jobs[2]["id"], 2),
                                                              (jobs[0]["id"], None)]
    short = cli(server, "tok-bob", "queue", "--limit", "2")
    assert short.code == EXIT_OK, short.err
    lines = short.out.splitlines()
    assert lines[0].split()[:3] == ["ID", "USER", "STATE"]
    assert [line.split()[0] for line in lines[1:] if line.startswith("j-")] == [jobs[1]["id"], jobs[2]["id"],
                                                                              jobs[0]["id"]]
    assert lines[2].startswith("    needs 2 Simulated GPU 80GB, 0 free")  # the reason under its row
    # how many (new user 16, N14: "more … behind these 50" said no number): 4 wait, 2 shown
    assert lines[-1] == "2 more pending jobs wait behind these 2: `jupyter-sched queue --all` lists every one (or --limit N)."
    everything = cli(server, "tok-bob", "queue", "--all")
    assert [line.split()[0] for line in everything.out.splitlines()[1:] if line.startswith("j-")] == [
        j["id"] for j in jobs[1:] + jobs[:1]]
    assert "More pending" not in everything.out
    assert len(json.loads(cli(server, "tok-bob", "--json", "queue").out)) == 5  # scripts get it all
    bad = cli(server, "tok-bob", "queue", "--limit", "0")
    assert bad.code == EXIT_USAGE and "--limit: 0 is less than 1; use --all" in bad.err
    refused = api(server, "tok-bob").get("queue", params={"limit": "0"})
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "limit"


def test_too_many_gpus_and_a_bad_time_limit_are_told_in_the_clis_terms(server: EmbeddedServer) -> None:
    """Found trying the first hour again on a 2-GPU machine: ``--gpus 3`` was told to ask for
    "another GPU model" (it named none), and ``--time-limit forever`` read ``--time-limit: time_limit: …``."""
    big = cli(server, "tok-ann", "submit", "--gpus", "3", "--", "true")
    assert big.code == EXIT_REFUSED
    assert big.err.strip() == ("jupyter-sched submit: --gpus: needs 3 GPUs of any model on one node but the largest "
                               "node has 2 — ask for at most 2 GPUs [unschedulable]")
    forever = cli(server, "tok-ann", "submit", "--time-limit", "forever", "--", "true")
    assert forever.code == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert forever.err.startswith("jupyter-sched submit: --time-limit: cannot parse duration 'forever' — ")


# ---- the second new-user run (/work/coord/findings-newuser.md, findings 3b, 6, 7, 8, 9, 11) ----


def runtime_file(folder: Path, server: EmbeddedServer, token: str) -> dict[str, str]:
    """A Jupyter runtime dir whose one ``jpserver-*.json`` describes ``server`` (as JupyterLab
    writes it) with ``token``; returns the CLI's environment without any JUPYTER_SCHED_* variable."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"jpserver-{os.getpid()}.json").write_text(json.dumps(
        {"url": server.url, "base_url": "/", "token": token, "pid": os.getpid(), "root_dir": "/"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(folder), "PYTHONPATH": str(ROOT)})
    return env


def test_a_refused_token_is_told_in_the_clis_terms_and_an_explicit_token_is_never_swapped(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """Finding 3b: a wrong or missing token was answered with the browser's advice (Authorization
    header, _xsrf cookie); and without --url a wrong --token / JUPYTER_SCHED_TOKEN was silently
    replaced by the discovered server's own token, so the command 'worked' with another identity."""
    def run(*argv: str, env: dict[str, str]) -> Run:
        done = subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)
        return Run(done.returncode, done.stdout, done.stderr)

    env = runtime_file(tmp_path / "runtime", server, "tok-ann")
    found = run("status", env=env)  # the runtime file's token, as before
    assert found.code == EXIT_OK and "user       ann" in found.out, found.err
    nvml = [line for line in found.out.splitlines() if line.startswith("nvml")]  # no NVIDIA driver: simulated
    assert all(line.startswith("nvml       not used: the GPUs are simulated — ") for line in nvml), nvml
    as_bob = run("--token", "tok-bob", "status", env=env)  # an explicit token is the one sent
    assert as_bob.code == EXIT_OK and "user       bob" in as_bob.out, as_bob.err
    wrong = run("--token", "wrong", "status", env=env)
    assert wrong.code == EXIT_REFUSED and wrong.out == ""
    assert wrong.err.splitlines() == [  # the environment first (new user 7, F17: --token is readable in `ps`)
        "jupyter-sched: note: other local accounts can read --token in `ps` while this runs; JUPYTER_SCHED_TOKEN=… "
        "in the environment or --token-file FILE is not shown there",
        # a server this account's runtime file lists: its own token is found, leaving --token out is the fix
        # (newuser32 n2: it was told to set JUPYTER_SCHED_TOKEN=TOKEN or give --token-file)
        f"jupyter-sched status: the server at {server.url} refused the token given with --token (an older server's?) "
        "— leave --token out: this server's own token is found without it, in its runtime file [forbidden]"]
    from_env = run("status", env={**env, "JUPYTER_SCHED_TOKEN": "wrong"})
    # the server was found by its runtime file, whose own token works: unsetting the variable is the fix (newuser30 N3)
    assert from_env.code == EXIT_REFUSED and "refused the token in JUPYTER_SCHED_TOKEN (an older server's?) — unset " \
        "JUPYTER_SCHED_TOKEN: this server's own token is found without it" in from_env.err, from_env.err
    # --url of a server this account's runtime dir lists: its own token (new user 5, finding 12: the
    # CLI's own "pass --url to use another: URL" was then refused for want of a token)
    listed = run("--url", server.url.replace("127.0.0.1", "localhost"), "status", env=env)
    assert listed.code == EXIT_OK and "user       ann" in listed.out, listed.err
    (tmp_path / "empty").mkdir()
    bare = run("--url", server.url, "status", env={**env, "JUPYTER_RUNTIME_DIR": str(tmp_path / "empty")})
    assert bare.code == EXIT_REFUSED and "needs a token (none was given with --url) — set JUPYTER_SCHED_TOKEN" \
        in bare.err
    for answer in (wrong, from_env, bare):
        assert "X-XSRFToken" not in answer.err and "Authorization" not in answer.err and "_xsrf" not in answer.err


def test_a_huge_number_is_echoed_as_typed(server: EmbeddedServer) -> None:
    """Finding 6: ``--gpus 99999999999999999999999`` came back as ``got 99999999999999991611392``
    (the CLI sent a float); the magic and REST echo what was typed."""
    huge = "99999999999999999999999"
    run = cli(server, "tok-ann", "submit", "--gpus", huge, "--", "true")
    assert run.code == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert f"submit: --gpus must be <= 2 (got {huge})" in run.err and "1611392" not in run.err
    cpu = cli(server, "tok-ann", "submit", "--cpu", huge, "--", "true")
    assert cpu.code == EXIT_USAGE and huge in cpu.err and "e+" not in cpu.err


def test_rest_bounds_and_types_are_told_in_plain_words(server: EmbeddedServer) -> None:
    """Findings 7 and 8 over real HTTP: ``limit`` too large named 2^62 in pydantic's words; a
    missing field quoted the whole body as a Python dict; a non-object body named NoneType/list/str."""
    ann = api(server, "tok-ann")
    huge = ann.get("queue", params={"limit": "99999999999999999999999"}).json()["error"]
    assert huge["message"] == "limit must be at most 10000 (got 99999999999999999999999)"
    assert huge["field"] == "limit" and "leave limit out" in huge["hint"]
    word = ann.get("queue", params={"limit": "abc"}).json()["error"]
    assert word["message"] == "limit must be a whole number (got 'abc')" and "from 1 to 10000" in word["hint"]
    jobs = ann.get("jobs", params={"limit": "5000"}).json()["error"]
    assert jobs["message"] == "limit must be at most 1000 (got 5000)" and "(default: 500)" in jobs["hint"]
    nameless = ann.post("definitions", json={"schedule": "banana"}).json()["error"]
    assert nameless["message"] == "name is required" and nameless["field"] == "name"
    # new user 12, N9: an unknown field is named before a missing one (it costs a round trip otherwise)
    stray_field = ann.post("definitions", json={"cron": "banana"}).json()["error"]
    assert stray_field["message"] == "unknown field 'cron'" and "did you mean 'schedule'" in stray_field["hint"]
    for body, kind in (("null", "null"), ("[]", "an array"), ('"x"', "a string"), ("3", "a number")):
        answer = ann.post("jobs", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400
        assert answer.json()["error"]["message"] == f"body must be a JSON object (got {kind})"
    typed = ann.post("jobs", json={"command": ["true"], "gpus": [1]}).json()["error"]
    # gpus in the words of every value that is not a number of GPUs (new user 13, N5); other fields in plain words
    assert typed["message"] == "gpus must be an integer (got an array of 1)"
    named = ann.post("jobs", json={"command": ["true"], "name": [1]}).json()["error"]
    assert named["message"] == "name must be a string (got an array of 1)"
    env_typed = ann.post("jobs", json={"command": ["true"], "env": {"A": 1}}).json()["error"]
    assert env_typed["message"] == "env.A must be a string (got 1)"
    # third new-user run, finding 10: queue?state=running answered the whole queue (unknown arguments ignored)
    stray = ann.get("queue", params={"state": "running"})
    assert stray.status_code == 400 and stray.json()["error"]["message"] == "unknown query argument 'state'"
    assert stray.json()["error"]["hint"] == "GET queue takes: cursor, limit"
    # ...but the panel's cache buster (JupyterLab's ServerConnection, `cache: 'no-store'`) is not an
    # argument: refusing it broke every panel read (the browser tests of the final run caught it)
    assert httpx.get(server.api + "queue?1796197047291&token=tok-ann", timeout=30).status_code == 200
    assert ann.get("queue", params={"1796197047291": "5"}).status_code == 400  # a value: an argument after all
    long = ann.get("queue", params={"x" * 5000: "1"}).json()["error"]  # user input is never echoed whole
    assert long["field"] == "x" * 77 + "..." and len(long["message"]) < 100
    by_url = httpx.get(server.api + "queue", params={"token": "tok-ann", "limit": "1"}, timeout=30)
    assert by_url.status_code == 200  # Jupyter's own ?token= is never "unknown"


def test_logs_of_a_job_without_output_says_so(server: EmbeddedServer) -> None:
    """Finding 9: ``logs <pending job>`` printed nothing and exited 0, like a broken command."""
    clear(server)
    blocker = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", blocker["id"], "running")
    pending = submit(server, "tok-ann", gpus=1)
    run = cli(server, "tok-ann", "logs", pending["id"])
    assert run.code == EXIT_OK and run.out == ""
    assert run.err.startswith(f"{pending['id']} is pending: no output yet")
    clear(server)
    quiet = submit(server, "tok-ann", gpus=1, command=["true"])
    wait_state(server, "tok-ann", quiet["id"], "succeeded")
    done = cli(server, "tok-ann", "logs", quiet["id"])
    assert done.code == EXIT_OK and done.err.strip() == f"{quiet['id']} succeeded with no output"
    lease = api(server, "tok-ann").post("leases", json={"gpus": 0.5, "name": "nb"}).json()
    kernel = cli(server, "tok-ann", "logs", lease["id"])
    assert kernel.code == EXIT_OK and kernel.err.startswith(f"{lease['id']} is a lease (GPUs held for a kernel): "
                                                            "leases have no log")
    api(server, "tok-ann").delete(f"leases/{lease['id']}")


def test_queue_mine_and_a_subcommands_usage_errors(server: EmbeddedServer) -> None:
    """Finding 9: ``queue --mine`` did not exist (cancel has it), and a bad option of a subcommand
    was answered with the whole program's usage line."""
    clear(server)
    bobs = [submit(server, "tok-bob", gpus=2) for _ in range(2)]  # one runs, one waits
    wait_state(server, "tok-bob", bobs[0]["id"], "running")
    # low priority: ann's job stays behind bob's waiting one whatever the fair-share usage does
    # meanwhile (bob's running job accrues usage, which can move ann's normal job ahead of his)
    anns = submit(server, "tok-ann", gpus=1, priority="low")

    def numbered() -> bool:  # a job the engine has not numbered yet shows no position (new user 18, N3)
        rows = api(server, "tok-ann").get("queue").json()
        return any(row["id"] == anns["id"] and (row.get("reason") or {}).get("position") for row in rows)

    deadline = time.monotonic() + 30
    while not numbered() and time.monotonic() < deadline:
        time.sleep(0.2)
    mine = cli(server, "tok-ann", "queue", "--mine")
    assert mine.code == EXIT_OK, mine.err
    rows = [line.split() for line in mine.out.splitlines()[1:] if not line.startswith("    ")]
    whole = api(server, "tok-ann").get("queue").json()
    place = next(row for row in whole if row["id"] == anns["id"])["reason"]["position"]  # in the whole queue
    assert len(whole) == 3 and place == 2 and [(row[0], row[1], row[2], row[5]) for row in rows] == [
        (anns["id"], "ann", "pending", "2")]
    after = json.loads(cli(server, "tok-ann", "queue", "--mine", "--json").out)  # options after the command too
    assert [row["id"] for row in after] == [anns["id"]]
    nothing = cli(server, "tok-boss", "queue", "--mine")
    assert nothing.out.strip() == "You have nothing pending or running."
    bad = cli(server, "tok-ann", "queue", "--mine-only")
    assert bad.code == EXIT_USAGE
    assert bad.err.startswith("jupyter-sched queue: --mine-only: not an option of jupyter-sched queue — usage: "
                              "jupyter-sched queue ") and bad.err.endswith(" [usage_error]\n"), bad.err
    assert "[--url URL]" not in bad.err


def test_wait_takes_for_and_timeout_alike(server: EmbeddedServer) -> None:
    """Finding 11: ``%schedule wait`` took --timeout and ``jupyter-sched wait`` only --for; both
    surfaces take both now (--for documented, --timeout its alias)."""
    clear(server)
    blocker = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", blocker["id"], "running")
    waiting = submit(server, "tok-ann", gpus=1)
    for option in ("--for", "--timeout"):
        run = cli(server, "tok-ann", "wait", waiting["id"], option, "1s")
        assert run.code == EXIT_TIMEOUT, (option, run.err)
        assert run.out.startswith(f"still pending after 1s: job {waiting['id']}")
        # not a terminal: one line per phase, with room for the reason (the bar's label has none)
        assert run.err.startswith("queued #1 · needs 1 Simulated GPU 80GB, 0 free · ETA "), run.err
    assert "--for DURATION, --timeout DURATION" in cli(server, "tok-ann", "wait", "--help").out


def test_jobs_lists_mine_newest_first_and_a_missing_id_points_there(server: EmbeddedServer) -> None:
    """Trying the first hour again: a mistyped id said 'list your jobs to see their ids', but the
    CLI had no command listing finished jobs (queue shows live work only), and it read
    ``JOB_ID: no job 'j-x' …`` (the id is quoted already)."""
    clear(server)
    done = submit(server, "tok-bob", gpus=1, command=["true"])
    wait_state(server, "tok-bob", done["id"], "succeeded")
    running = submit(server, "tok-bob", gpus=2)
    wait_state(server, "tok-bob", running["id"], "running")
    listed = cli(server, "tok-bob", "jobs")
    assert listed.code == EXIT_OK, listed.err
    lines = listed.out.splitlines()
    assert lines[0].split() == ["ID", "STATE", "PRIO", "GPUS", "NAME"], listed.out
    assert lines[1].split() == [running["id"], "running", "normal", "2", running["name"]], listed.out
    assert lines[2].startswith("    on ") and lines[2].endswith("its 10m time limit"), listed.out
    assert lines[3].split() == [done["id"], "succeeded", "normal", "1", done["name"]]
    assert re.fullmatch(f"    exit code 0{ENDED}", lines[4]), lines[4]
    assert cli(server, "tok-bob", "jobs", "--limit", "1").out.splitlines()[3].startswith("Older jobs are not shown")
    assert cli(server, "tok-bob", "jobs", "--state", "failed").out.strip() == "No failed jobs."
    zero = cli(server, "tok-bob", "jobs", "--limit", "0")  # round 3, finding 11: it said "use --all" (queue's)
    assert zero.code == EXIT_USAGE and zero.err.splitlines()[-1].startswith(
        "jupyter-sched jobs: --limit: 0 is not from 1 to 1000000 (default 20) — usage: jupyter-sched jobs "), zero.err
    helped = cli(server, "tok-bob", "jobs", "--help").out  # round 3, finding 9: it said "%%gpu"
    assert "(see %gpu in a notebook)" in helped.replace("\n", " ").replace("  ", " ")
    assert cli(server, "tok-bob", "jobs", "--all").err.strip() == ("jupyter-sched jobs: --all: only admins may list "
                                                                  "everyone's jobs — leave out --all to list your own [forbidden]")
    missing = cli(server, "tok-bob", "logs", "j-nosuch")
    assert missing.code == EXIT_REFUSED
    assert missing.err.strip() == ("jupyter-sched logs: no job 'j-nosuch' visible to you — `jupyter-sched jobs` lists "
                                   "yours, newest first (another user's job is shown only while it is in the queue: "
                                   "finished jobs of other users are not shown to you) [not_found]")  # as the magics say
    no_lease = cli(server, "tok-bob", "cancel", "l-nosuch")  # round 3, finding 19: a lease was called a job
    assert no_lease.err.strip() == ("jupyter-sched cancel: no lease 'l-nosuch' visible to you — `jupyter-sched queue "
                                    "--mine` shows your live leases [not_found]")
    queue = cli(server, "tok-bob", "queue").out.splitlines()
    row = next(i for i, line in enumerate(queue) if line.startswith(running["id"]))
    assert queue[row + 1].startswith("    ends by ") and queue[row + 1].endswith("its 10m time limit")


def test_newuser31_n13_submit_dry_run_prints_the_notes_its_submit_gives(server: EmbeddedServer) -> None:
    """``submit --dry-run --memory 64 --time-limit 90`` said only where it would start; the submit added
    ``memory 64 is read as 64 MiB`` and ``--time-limit 90 is 90 seconds``. The check says them too, each once,
    in the CLI's option (not the server's ``time_limit 90``), on stderr beside the answer."""
    checked = cli(server, "tok-ann", "submit", "--dry-run", "--gpus", "1", "--memory", "64", "--time-limit", "90",
                  "--", "true")
    # "start now" or "wait" as the module's earlier tests left the GPUs: the notes are what is checked here
    assert checked.code == EXIT_OK and checked.out.startswith(("Would start now", "Would wait")), \
        (checked.out, checked.err)
    notes = checked.err.splitlines()
    assert "jupyter-sched submit: note: --time-limit 90 is 90 seconds (a bare number is seconds; 90m is 90 minutes)" \
        in notes, notes
    assert any(line.startswith("jupyter-sched submit: note: memory 64 is read as 64 MiB") for line in notes), notes
    assert not any("time_limit 90" in line for line in notes), notes
    quiet = cli(server, "tok-ann", "submit", "--dry-run", "-q", "--gpus", "1", "--time-limit", "90", "--", "true")
    assert quiet.code == EXIT_OK and "note:" not in quiet.err, quiet.err


def test_newuser32_n7_a_decimal_memory_size_says_what_it_came_to_in_mib(server: EmbeddedServer) -> None:
    """``--memory 16GB`` limited the job to 15259 MiB and ``--mem-per-gpu 20G`` asked 19073 MiB, said nowhere, while
    the GPUs are named "80GB" for 80 GiB: the submit's notes (and so its dry run's) say the conversion."""
    checked = cli(server, "tok-ann", "submit", "--dry-run", "--gpus", "1", "--memory", "16GB", "--mem-per-gpu", "20G",
                  "--time-limit", "2m", "--", "true")
    assert checked.code == EXIT_OK, (checked.out, checked.err)
    assert "16GB is 15259 MiB (G and GB are 10^9 bytes; 16GiB is 16384 MiB)" in checked.err, checked.err
    assert "20G is 19073 MiB (G and GB are 10^9 bytes; 20GiB is 20480 MiB)" in checked.err, checked.err
    binary = cli(server, "tok-ann", "submit", "--dry-run", "--gpus", "1", "--memory", "16GiB", "--time-limit", "2m",
                 "--", "true")
    assert binary.code == EXIT_OK and "10^9 bytes" not in binary.err, binary.err


def test_newuser32_n6_admin_quotas_notebook_as_a_user_says_who_the_admins_are_in_one_line(
        server: EmbeddedServer) -> None:
    """admin_quotas.ipynb as a user (not an admin) showed a 10-line traceback ending ``AssertionError: run this
    notebook as an admin``: its first code cell, run by IPython as bob, now stops with one sentence naming who the
    admins are here and whom to ask, no traceback."""
    import json

    cells = json.loads((ROOT / "notebooks" / "admin_quotas.ipynb").read_text())["cells"]
    first = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-bob", "PYTHONPATH": str(ROOT)})
    done = subprocess.run([sys.executable, "-m", "IPython", "--quick", "--no-banner", "--colors=NoColor", "-c", first],
                          env=env, capture_output=True, text=True, timeout=120)
    said = done.stdout + done.stderr
    assert ("bob is not a scheduler admin here — its admins are, on a hub, the hub's admins, holders of the scope "
            "custom:jupyter-sched:admin and the users in c.SchedApp.admin_users; on a personal server, the account "
            "that runs jupyter lab and the users in c.SchedApp.admin_users; ask one of them to run this notebook") \
        in said, said
    assert "Traceback" not in said and "AssertionError" not in said and "GPUs" not in said, said


def test_a_script_or_notebook_that_is_not_there_is_refused_before_submitting(server: EmbeddedServer,
                                                                              tmp_path: Path) -> None:
    """Trying the first hour again: ``submit --script nosuch.py`` was accepted and the job failed
    at its start (a notebook's said ``[Errno 2] No such file or directory``)."""
    (tmp_path / "folder.ipynb").mkdir()
    missing = cli(server, "tok-ann", "submit", "--workdir", str(tmp_path), "--script", "nosuch.py")
    assert missing.code == EXIT_USAGE and missing.out == ""
    assert missing.err == (f"jupyter-sched submit: --script 'nosuch.py' does not exist in {tmp_path} — give the path of "
                           "the script to run, or check the spelling [usage_error]\n")
    folder = cli(server, "tok-ann", "submit", "--workdir", str(tmp_path), "--notebook", "folder.ipynb")
    assert folder.code == EXIT_USAGE and f"{tmp_path / 'folder.ipynb'} is a folder, not a file" in folder.err
    # new user 4, finding 16: the other kind of file waited for a GPU, then failed with a parser's repr
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "report.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    wrong = cli(server, "tok-ann", "submit", "--workdir", str(tmp_path), "--notebook", "train.py")
    assert wrong.code == EXIT_USAGE and wrong.err.splitlines()[-1].endswith(
        "--notebook train.py: not a notebook (not JSON) — a Python file runs with --script train.py [usage_error]"), \
        wrong.err
    swapped = cli(server, "tok-ann", "submit", "--workdir", str(tmp_path), "--script", "report.ipynb")
    assert swapped.code == EXIT_USAGE and "this is a notebook — run it with --notebook report.ipynb" in swapped.err


def test_newuser13_n10_a_command_that_does_not_exist_is_refused_at_submit(server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 13, N10: ``submit -- nosuchprogram`` was accepted and failed with exit code 127
    only when it started, after its wait for GPUs. Now refused at submit, by the CLI and REST alike,
    naming the program and where it was looked for (the server's PATH, not the user's shell)."""
    clear(server)
    run = cli(server, "tok-ann", "submit", "--gpus", "1", "--", "nosuchcmd-i20", "--x")
    assert run.code != 0 and "'nosuchcmd-i20' is not a program on the job's PATH on this server" in run.err, run.err
    for program, problem in (("nosuchcmd-i20", "is not a program on the job's PATH"),
                             (str(tmp_path / "gone"), "does not exist")):
        answer = api(server, "tok-ann").post("jobs", json={"gpus": 1, "command": [program]})
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["field"] == "command" and error["message"] == f"command: {program!r} {problem} on this server"
        # a bare name is looked up on the job's PATH; a path is run from where it points (newuser29 n6)
        assert ("not your shell's" if "/" not in program else "not looked up on PATH") in error["hint"], error
    plain = tmp_path / "plain.sh"
    plain.write_text("echo hi\n")
    answer = api(server, "tok-ann").post("jobs", json={"gpus": 1, "command": [str(plain)]})
    assert answer.status_code == 400 and "is not executable" in answer.json()["error"]["message"], answer.text
    own_path = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["gone-too"], "env": {"PATH": str(tmp_path)}})
    assert own_path.status_code == 400, own_path.text  # the job's own PATH is where it is looked for


def test_a_command_gone_by_its_start_is_said_in_words(server: EmbeddedServer, tmp_path: Path) -> None:
    """Trying the first hour again: ``submit -- nosuchcmd`` ended 'failed, exit code 127' and its
    log read ``[Errno 2] No such file or directory: 'nosuchcmd'``. Since N10 (above) a missing
    program is refused at submit; one removed while its job waited still fails at its start, in words."""
    clear(server)
    program = tmp_path / "soon-gone"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    blocker = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", blocker["id"], "running")
    job = submit(server, "tok-ann", gpus=1, command=[str(program), "--x"])
    program.unlink()
    api(server, "tok-ann").delete(f"jobs/{blocker['id']}")
    wait_state(server, "tok-ann", job["id"], "failed")
    line = cli(server, "tok-ann", "jobs", "--limit", "1").out.splitlines()[2]
    assert re.fullmatch(re.escape("    exit code 127 (command not found)") + ENDED + re.escape(
        f" — jupyter_sched: cannot start '{program}': no such program on PATH or file in the working "
        "directory"), line), line
    log = cli(server, "tok-ann", "logs", job["id"]).out
    assert f"cannot start '{program}': no such program on PATH or file in the working directory" in log
    assert "Errno" not in log


@pytest.mark.parametrize("value, want", [
    ("0", "--timeout: 0 is not a number of seconds above zero (and under a year), e.g. 30"),
    ("x", "--timeout: 'x' is not a number of seconds, e.g. 30"),
], ids=["zero: was 'operation now in progress' from the socket", "a word: was 'invalid float value'"])
def test_a_bad_request_timeout_is_a_usage_error_in_words(server: EmbeddedServer, value: str, want: str) -> None:
    run = cli(server, "tok-ann", "--timeout", value, "status")
    assert run.code == EXIT_USAGE and run.err.startswith(f"jupyter-sched: {want} — usage: jupyter-sched "), run.err
    assert run.err.endswith(" [usage_error]\n") and run.err.count("\n") == 1, run.err


def test_definitions_are_named_by_their_name_and_times_read_as_clock_times(server: EmbeddedServer,
                                                                         tmp_path: Path) -> None:
    """Trying the first hour again: ``definitions`` lists names, but ``definitions run daily``
    answered "no definition 'daily' visible to you" (only ids worked); next firings were ISO
    stamps (``2026-12-03T01:00:00Z``); a notebook that is not there was saved (each firing failed)."""
    notebook = tmp_path / "report.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    missing = cli(server, "tok-bob", "definitions", "create", str(tmp_path / "nosuch.ipynb"), "--cron", "0 1 * * *")
    # an absolute path: "does not exist", not "in <the shell's folder>" (new user 8, N7); by its kind (newuser31 n15)
    assert missing.code == EXIT_USAGE and missing.err.rstrip().endswith(
        "nosuch.ipynb' does not exist — give the path of the notebook to run, or check the spelling [usage_error]"), \
        missing.err
    assert "definitions create: notebook '" in missing.err and "NOTEBOOK_OR_SCRIPT" not in missing.err, missing.err
    made = cli(server, "tok-bob", "definitions", "create", str(notebook), "--cron", "0 1 * * *", "--name", "daily")
    assert made.code == EXIT_OK, made.err
    assert made.out.startswith("defined d-") and "daily  At 01:00 every day (UTC)  next " in made.out
    assert "T01:00:00" not in made.out and made.out.rstrip().endswith("01:00 UTC")
    nothing = cli(server, "tok-bob", "definitions", "edit", "daily")  # round 3, finding 23: said "edited"
    assert nothing.code == EXIT_USAGE and "nothing to change: give " in nothing.err and "--cron" in nothing.err
    ran = cli(server, "tok-bob", "definitions", "run", "daily")
    assert ran.code == EXIT_OK and "`jupyter-sched wait j-" in ran.out, ran.err
    runs = cli(server, "tok-bob", "definitions", "runs", "daily").out.splitlines()
    assert runs[0].split()[:4] == ["WHEN", "TRIGGER", "JOB", "OUTCOME"] and "run now" in runs[1]  # N7 (s24): not "manual"
    assert runs[0].endswith("  (times in UTC, the definition's zone)"), runs  # its one zone, named (newuser38 n20)
    assert re.match(r"(\w{3} \d{1,2} )?\d\d:\d\d UTC +run now +j-", runs[1]), runs  # a clock time, not ISO
    paused = cli(server, "tok-bob", "definitions", "pause", "daily")
    assert paused.code == EXIT_OK and paused.out.split()[0:2] == ["paused", made.out.split()[1]], paused.err
    # a second "daily" is refused naming the first (red team 6; before, it was saved and `delete daily`
    # answered "2 of your definitions are named 'daily' — give the id of one")
    twice = cli(server, "tok-bob", "definitions", "create", str(notebook), "--cron", "0 2 * * *", "--name", "daily")
    assert twice.code == EXIT_REFUSED, twice
    assert f"you keep a definition named 'daily' already ({made.out.split()[1]})" in twice.err, twice.err
    for d in api(server, "tok-bob").get("definitions").json():
        assert cli(server, "tok-bob", "definitions", "delete", d["id"]).code == EXIT_OK


def test_queue_all_pages_through_the_whole_queue(server: EmbeddedServer) -> None:
    """``queue --all`` said "every pending job", but one answer lists at most the first 1000 (plus
    your own): the client follows the answer's ``Link: rel=next`` pages (here 2 entries a page)."""
    from jupyter_sched.client import connect

    clear(server)
    jobs = [submit(server, "tok-bob", gpus=2) for _ in range(5)]  # one runs, four wait
    wait_numbered(server, "tok-bob", jobs[0]["id"], [job["id"] for job in jobs[1:]])
    with connect(server.url, "tok-ann") as client:
        paged = client.queue_all(page=2)
    assert [row["id"] for row in paged] == [j["id"] for j in jobs[1:] + jobs[:1]]
    assert [row["position"] for row in paged] == [1, 2, 3, 4, None]

    async def paged_async() -> list[dict[str, Any]]:
        from jupyter_sched.client import connect_async

        async with connect_async(server.url, "tok-ann") as client:
            return await client.queue_all(page=3)

    import asyncio

    assert [row["id"] for row in asyncio.run(paged_async())] == [row["id"] for row in paged]


def test_a_priority_not_granted_says_who_grants_it_and_how(server: EmbeddedServer) -> None:
    """Third new-user run, finding 1: an admin asking for ``--priority high`` was told "an admin
    grants others" — they are the admin, and nothing said how. An admin now reads the request that
    grants it (and it works); anyone else is told to ask an admin."""
    ann = cli(server, "tok-ann", "submit", "--priority", "high", "--", "true")
    assert ann.code == EXIT_REFUSED
    assert ann.err.strip() == ("jupyter-sched submit: --priority 'high' is not granted to ann in team 'default' — use "
                               "normal or low, or ask an admin to allow 'high' for you or team 'default' [forbidden]")
    boss = cli(server, "tok-boss", "submit", "--priority", "high", "--", "true")
    assert boss.code == EXIT_REFUSED and "an admin grants" not in boss.err
    # new user 4, finding 6: one safe remedy, not a raw PUT quotas body that replaced every team policy
    assert boss.err.strip() == (
        "jupyter-sched submit: --priority 'high' is not granted to boss in team 'default' — use normal or low; to "
        'allow it, set c.SchedApp.priority_grants = {"users": {"boss": ["high"]}} in the server\'s config and '
        "restart [forbidden]")
    assert "high needs an admin's grant" in " ".join(cli(server, "tok-boss", "submit", "--help").out.split())


def test_queue_rows_stay_short_and_a_lease_waits_as_a_lease(server: EmbeddedServer) -> None:
    """Third new-user run, findings 7 and 8: every row was padded to the longest reason (400+
    characters), and a pending lease read the JOB's backfill clause ("with no time limit it
    cannot start ahead of …") which a kernel cannot act on. Now each reason is an indented line
    under its row, in the words REST's ``reason.text`` has for that kind."""
    clear(server)
    ann = api(server, "tok-ann")
    holder = submit(server, "tok-ann", gpus=1)  # 1 of 2 GPUs, 10m limit
    wait_state(server, "tok-ann", holder["id"], "running")
    big = submit(server, "tok-ann", gpus=2)  # waits for the holder: its GPUs are reserved
    lease = ann.post("leases", json={"gpus": 1, "name": "nb"}).json()
    deadline = time.monotonic() + 30
    while not (ann.get(f"jobs/{lease['id']}").json().get("reason") or {}).get("text"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    # the reason may still change between two cycles (the reserved job's name is added once the
    # ETA walk has named it): compare the CLI with a REST reason that was the same before and after
    for _ in range(10):
        rest = ann.get(f"jobs/{lease['id']}").json()["reason"]["text"]["summary"]
        lines = cli(server, "tok-ann", "queue").out.splitlines()
        if ann.get(f"jobs/{lease['id']}").json()["reason"]["text"]["summary"] == rest:
            break
    header = lines[0]
    rows = [line for line in lines[1:] if not line.startswith("    ")]
    assert all(len(row) <= len(header) + 30 for row in rows), rows  # no row padded to a sentence
    under = lines[lines.index(next(line for line in lines if line.startswith(lease["id"]))) + 1]
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc)  # the server writes dates; the CLI drops today's only (a clock past midnight keeps it)
    today = re.sub(rf"\b{now:%b} {now.day} (\d\d:\d\d UTC)", r"\1", rest)
    assert under.startswith("    " + today.rstrip(".")), (under, rest)
    assert "time limit of its own" not in under and "with no time limit" not in under
    ann.delete(f"leases/{lease['id']}")
    ann.delete(f"jobs/{big['id']}")


def test_url_takes_what_jupyterlab_printed_and_never_answers_with_a_traceback(server: EmbeddedServer,
                                                                               tmp_path: Path) -> None:
    """Third new-user run, finding 17: ``--url 'http://127.0.0.1:8888/lab?token=…'`` (what JupyterLab
    prints) ended in a TypeError traceback, ``--url 127.0.0.1:8888`` and ``--url banana`` in a
    ValueError one, ``…/api/sched/`` in "no route 'api/sched/config'"."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env.update({"PYTHONPATH": str(ROOT), "JUPYTER_RUNTIME_DIR": str(tmp_path / "empty")})

    def run(*argv: str) -> Run:
        done = subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)
        return Run(done.returncode, done.stdout, done.stderr)

    host = server.url.split("://", 1)[1].rstrip("/")
    for url, extra in ((f"{server.url}lab?token=tok-ann", ()), (f"{server.url}lab/tree/x.ipynb", ("--token", "tok-ann")),
                       (host, ("--token", "tok-ann")), (f"{server.url}api/sched/", ("--token", "tok-ann"))):
        ok = run("--url", url, *extra, "status")
        assert ok.code == EXIT_OK and "user       ann" in ok.out, (url, ok.err)
    for url in ("ftp://x/", "http://[::1"):
        bad = run("--url", url, "status")
        assert bad.code == EXIT_USAGE and "Traceback" not in bad.err
        assert bad.err.splitlines()[-1] == (f"jupyter-sched: --url {url!r} is not a server URL — give e.g. "
                                            "http://127.0.0.1:8888/ (the address JupyterLab printed) [usage_error]")
    wrong = run("--url", f"{server.url}lab?token=wrong", "status")
    assert wrong.code == EXIT_REFUSED and "refused the token in the --url" in wrong.err
    other = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert other.stdout is not None
        port = other.stdout.readline().split("port ")[1].split()[0]  # "Serving HTTP on 127.0.0.1 port N ..."
        page = run("--url", f"http://127.0.0.1:{port}/", "status")
        assert page.code == 3 and "Traceback" not in page.err
        assert page.err.startswith(f"jupyter-sched: http://127.0.0.1:{port}/ has no jupyter_sched API (HTTP 404) — ")
    finally:
        other.kill()
        other.wait()
    env["JUPYTER_SCHED_URL"] = server.url  # round 3, finding 29: said "refused the token of its runtime file"
    missing = run("status")
    assert missing.code == EXIT_REFUSED
    assert "needs a token (JUPYTER_SCHED_URL is set but JUPYTER_SCHED_TOKEN is not)" in missing.err


def test_a_zero_time_limit_an_empty_name_and_one_gpu_are_said_as_the_magics_say_them(server: EmbeddedServer) -> None:
    """Third new-user run, findings 22 and 25: ``--time-limit 0`` was accepted as NO limit, silently, and
    ``--name ""`` as "job" (REST renamed the empty name silently), and ``status`` said "on 1 GPUs". A
    zero limit is no limit on every surface, as case 033 has REST take it, and said where it is
    accepted (new user 13, N1: the CLI and the magics refused what REST took)."""
    zero = cli(server, "tok-ann", "submit", "--gpus", "0", "--time-limit", "0s", "--", "true")
    assert zero.code == EXIT_OK and "note: time limit 0 = unlimited" in zero.err, zero.err
    empty = cli(server, "tok-ann", "submit", "--name", "", "--", "true")
    assert empty.code == EXIT_USAGE and "--name must not be empty" in empty.err
    rest = api(server, "tok-ann").post("jobs", json={"command": ["true"], "name": ""})
    assert rest.status_code == 400 and rest.json()["error"]["field"] == "name"
    clear(server)
    job = submit(server, "tok-ann", gpus=1)
    wait_state(server, "tok-ann", job["id"], "running")
    status = cli(server, "tok-ann", "status").out
    assert "my work    1 job running, on 1 GPU\n" in status


def test_ctrl_c_stops_the_waiting_and_says_the_job_goes_on(server: EmbeddedServer) -> None:
    """Third new-user run, finding 35: Ctrl-C in ``wait`` / ``submit --wait`` / ``logs -f`` exited 130
    without a word, and users believed they had aborted the job."""
    import signal

    clear(server)
    blocker = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", blocker["id"], "running")
    waiting = submit(server, "tok-ann", gpus=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)})
    for argv, what in ((["wait", waiting["id"]], "waiting"), (["logs", "-f", waiting["id"]], "following its log")):
        # a shell's background job (CI, `cmd &`) starts with SIGINT ignored, and Python then keeps it
        # ignored: give the CLI the terminal's default, as a person pressing Ctrl-C has
        proc = subprocess.Popen([CLI, *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert proc.stderr is not None
        proc.stderr.readline()  # its first line: it is waiting now
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, (argv, err)
        assert err.strip().endswith(f"stopped {what}; {waiting['id']} keeps going" + (" (pending)" if what == "waiting"
                                    else "") + f" — `jupyter-sched cancel {waiting['id']}` stops it"), err
    assert wait_state(server, "tok-ann", waiting["id"], "pending")["state"] == "pending"


def test_too_many_workers_names_workers(server: EmbeddedServer) -> None:
    """Third new-user run, finding 19: ``{"gpus": 1, "workers": 1000000}`` was refused naming
    ``gpus`` with "ask for fewer GPUs per worker" — the user asked for one GPU; the workers are too many."""
    refused = api(server, "tok-ann").post("jobs", json={"gpus": 1, "workers": 1000, "command": ["true"]})
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "workers" and error["hint"] == "ask for at most 2 workers of 1 GPU"


def test_newuser3_finding_19_rest_refuses_what_cannot_start_and_says_what_zero_means(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """Third new-user run, finding 19: REST accepted a script or working_dir that is not there
    (201; the job failed at its start) and a ``time_limit: "0s"`` that meant unlimited without a
    word. On this embedded server (jobs run as the server's account) the submit is refused naming
    the field; ``0`` keeps case 033's meaning, and the answer says it."""
    ann = api(server, "tok-ann")
    missing_script = ann.post("jobs", json={"gpus": 1, "script": str(tmp_path / "nosuch.py")})
    assert missing_script.status_code == 400, missing_script.text
    error = missing_script.json()["error"]
    assert error["field"] == "script" and error["message"] == (
        f"script '{tmp_path / 'nosuch.py'}' does not exist on this server")
    # new user 5, finding 10: the panel's Check fit (POST dryrun) said "Would start now" for it
    checked = ann.post("dryrun", json={"gpus": 1, "script": str(tmp_path / "nosuch.py")})
    assert checked.status_code == 400 and checked.json()["error"] == error, checked.text
    assert ann.post("dryrun", json={"gpus": 1}).status_code == 200  # "would 1 GPU fit?" needs no file
    missing_dir = ann.post("jobs", json={"gpus": 1, "command": ["true"], "working_dir": str(tmp_path / "nodir")})
    assert missing_dir.status_code == 400 and missing_dir.json()["error"]["field"] == "working_dir"
    relative = ann.post("jobs", json={"gpus": 1, "script": "nosuch.py", "working_dir": str(tmp_path)})
    assert relative.json()["error"]["message"].endswith(f"'{tmp_path / 'nosuch.py'}' does not exist on this server")
    missing_notebook = ann.post("jobs", json={"gpus": 0, "notebook": str(tmp_path / "nb.ipynb")})
    assert missing_notebook.json()["error"]["field"] == "notebook"
    (tmp_path / "there.py").write_text("print('hi')\n")
    there = ann.post("jobs", json={"gpus": 0, "script": "there.py", "working_dir": str(tmp_path)})
    carried = ann.post("jobs", json={"gpus": 0, "script": "cell.py", "source": "print(1)\n"})  # %%schedule's way
    assert there.status_code == 201 and carried.status_code == 201, (there.text, carried.text)
    assert there.json().get("warnings") == [NO_LIMIT_NO_GPU_WARNING]  # no other note (new user 20, N23: this one)
    unlimited = ann.post("jobs", json={"gpus": 2, "command": ["sleep", "300"], "time_limit": "0s"})
    assert unlimited.status_code == 201, unlimited.text
    assert unlimited.json()["time_limit_s"] is None
    assert unlimited.json()["warnings"] == ["time limit 0 = unlimited; this job can only start when nothing is reserved"]
    for job in (there.json(), carried.json(), unlimited.json()):
        ann.delete(f"jobs/{job['id']}")


def test_a_gang_over_the_team_quota_names_workers_not_gpus() -> None:
    """Third new-user run, finding 19 (the quota's half): a gang of 1-GPU workers over the team's
    limit was refused naming ``gpus`` — which the user had set to 1."""
    from jupyter_sched.admission.rules import check_ceiling
    from jupyter_sched.errors import QuotaError
    from jupyter_sched.model import Quota, QuotaSet, spec_from_request

    quotas = QuotaSet(quotas=(Quota(team="t", guaranteed=2, borrowing_limit=1),))
    gang = spec_from_request({"gpus": 1, "workers": 5, "team": "t", "command": ["x"]}, user="u", default_team="t")
    with pytest.raises(QuotaError) as refused:
        check_ceiling(gang, quotas, {"A100": 8})
    assert refused.value.field == "workers" and refused.value.hint == (
        "ask for at most 3 workers of 1 GPU, or ask an admin to raise the quota")
    big = spec_from_request({"gpus": 4, "workers": 2, "team": "t", "command": ["x"]}, user="u", default_team="t")
    with pytest.raises(QuotaError) as per_worker:
        check_ceiling(big, quotas, {"A100": 8})
    assert per_worker.value.field == "gpus"  # one worker alone is over the limit: the GPUs are what to change


def test_missing_paths_are_not_probed_for_jobs_run_as_other_accounts(tmp_path: Path) -> None:
    """Hub mode runs each job as its owner's account: the service must not tell one user which
    paths exist (DESIGN *Who runs it*) — never looked at as the service's account there; with no
    owner to look as (require_run_as before serve_hub), not at all. (As the owner, in hub mode:
    tests/onboarding/test_hub_paths.py.)"""
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.model import spec_from_request

    spec = spec_from_request({"gpus": 1, "script": "/root/secret/x.py", "working_dir": "/root/secret"}, user="eve")
    embedded = LocalExecutor(tmp_path / "a", tracking="marker")
    assert embedded.missing_path(spec) == ("working_dir", "/root/secret", "does not exist")
    hub = LocalExecutor(tmp_path / "b", tracking="marker", require_run_as=True)
    assert hub.missing_path(spec) is None


def test_newuser3_finding_15_your_own_kernel_lease_is_named_to_you_alone(server: EmbeddedServer) -> None:
    """Third new-user run, finding 15: the team's one GPU was held by the user's OWN other
    kernel's lease, and the reason said "when default's running jobs release GPUs" / "after
    l-… ends". The core now marks the blockers that are the owner's own; the owner reads "your
    own kernel lease l-… holds 1 GPU — %gpu release there"; another user (hub users do not trust
    each other) and an admin reading the same job do not."""
    clear(server)
    admin, ann, bob = api(server, "tok-boss"), api(server, "tok-ann"), api(server, "tok-bob")
    before = admin.get("quotas").json()
    try:
        assert admin.put("quotas", json={"quotas": [{"team": "default", "gpu_model": "*", "guaranteed": 1,
                                                     "borrowing_limit": 0}]}).status_code == 200
        # a real kernel's lease: one bound to no kernel is not released in a notebook (new user 13, N9)
        lease = ann.post("leases", json={"gpus": 1, "name": "kernel-nb1", "kernel_id": start_kernel(server)}).json()
        wait_state(server, "tok-ann", lease["id"], "running", "admitted")
        job = submit(server, "tok-ann", gpus=1)
        # bob's job is `low`: at one class, the queue puts the user with less decayed usage first
        # (queues/order.py 3.), and ann's usage grows with her lease once the usage history is
        # re-read — bob's job then goes ahead of hers and hers waits on his, not on her lease. The
        # class keeps her job at the head whenever the history is read, so the state asserted below holds.
        theirs = submit(server, "tok-bob", gpus=1, priority="low")

        def reason_of(client: httpx.Client, job_id: str) -> dict[str, Any]:
            deadline = time.monotonic() + 60
            while True:
                seen = client.get(f"jobs/{job_id}").json()
                # a full cycle's ETA (the live ledger's first answer is "Provisional", projected later)
                if (seen.get("reason") or {}).get("details", {}).get("eta_code") not in (None, "Provisional"):
                    return dict(seen)
                assert time.monotonic() < deadline, seen
                time.sleep(0.1)

        own = reason_of(ann, job["id"])
        assert own["mine"] is True
        assert own["reason"]["details"]["eta_waits_on_own"] == [
            {"id": lease["id"], "name": "kernel-nb1", "kind": "lease", "gpus": 1}]
        text = own["reason"]["text"]
        assert text["unblock"] == (f"Your own kernel lease {lease['id']} (kernel-nb1) holds 1 GPU of default's quota: "
                                   f"run %gpu release in that notebook (or `jupyter-sched cancel {lease['id']}`) "
                                   "and this one can start.")
        # the lease idles from its start; once the idle monitor has seen it so (a sample away: either state here),
        # its reclaim time is the ETA (new user 20, N29), before that the wait has none
        if ((own["reason"]["details"].get("eta_idle_release") or {}).get(lease["id"]) or {}).get("at"):
            assert text["eta"].startswith("ETA ") and f"if your own kernel lease {lease['id']} (kernel-nb1" in \
                text["eta"] and "stays idle (it is then reclaimed)" in text["eta"], text["eta"]
        else:
            assert text["eta"].startswith(f"ETA unknown: it can start only after your own kernel lease {lease['id']} "
                                          "(kernel-nb1), which holds 1 GPU, is released or reclaimed"), text["eta"]
        assert text["eta"].count("%gpu release") + text["unblock"].count("%gpu release") == 1  # new user 20, N29
        as_admin = reason_of(admin, job["id"])
        assert as_admin["mine"] is False and "your own" not in json.dumps(as_admin["reason"]["text"]).lower()
        others = reason_of(bob, theirs["id"])  # bob waits on ann's lease: nothing of hers is described as his
        assert "eta_waits_on_own" not in others["reason"]["details"]
        assert "your own" not in json.dumps(others["reason"]["text"]).lower()
        queue = cli(server, "tok-ann", "queue")
        assert f"your own kernel lease {lease['id']} (kernel-nb1" in queue.out, queue.out  # idle or not yet (above)
        assert "your own" not in cli(server, "tok-bob", "queue").out
        listed = cli(server, "tok-ann", "jobs")
        assert f"your own kernel lease {lease['id']}" in listed.out, listed.out
    finally:
        admin.put("quotas", json={"quotas": before.get("quotas", []), "teams": before.get("teams", [])})
        clear(server)
        for row in ann.get("leases", params={"state": "pending,admitted,running"}).json():
            ann.delete(f"leases/{row['id']}")


def test_newuser4_findings_7_and_10_jobs_limit_1000_and_cancel_in_words(server: EmbeddedServer) -> None:
    """New user 4: ``jobs --limit 1000`` (the documented maximum) was refused as "got 1001";
    a bulk cancel said "1 running stopping, grace 10 s" and "would cancel 1 jobs"; a job ended
    by SIGTERM read "exit code -15 — … (killed by SIGTERM …)"; ``cancel ""`` answered with a
    REST routing error pointing at openapi.yaml."""
    clear(server)
    most = cli(server, "tok-ann", "jobs", "--limit", "1000")
    assert most.code == EXIT_OK and "1001" not in most.err, most.err
    running = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", running["id"], "running")
    one = cli(server, "tok-ann", "cancel", "--mine", stdin="")
    assert one.code == EXIT_USAGE and "would cancel 1 job (1 running)" in one.err, one.err
    done = cli(server, "tok-ann", "cancel", "--mine", "--yes")
    assert done.out.strip() == "cancelled 1 job: 1 running job is stopping (60 s grace)", done.out
    ended = wait_state(server, "tok-ann", running["id"], "cancelled")
    listed = cli(server, "tok-ann", "jobs", "--limit", "1")
    if ended.get("exit_code") is not None and ended["exit_code"] < 0:  # the wrapper reports the signal
        assert "exit code -" not in listed.out and "SIGTERM" in listed.out, listed.out
    empty = cli(server, "tok-ann", "cancel", "")
    assert empty.code == EXIT_USAGE and "JOB must not be empty — give a job's id or name" in empty.err and "openapi" not in empty.err
    # new user 5, finding 15: "j-…:" copied from a `jobs` line ("job j-…: succeeded") reached a hub's
    # forwarder as an encoded path ("not a scheduler route"): the CLI names the id and the likely one
    for command in ("logs", "cancel", "wait"):
        copied = cli(server, "tok-ann", command, f"{running['id']}:")
        assert copied.code == EXIT_USAGE, copied
        assert f"'{running['id']}:' is not a job id: ids are letters, digits and '-'; did you mean {running['id']}?" \
            in copied.err, copied.err
    assert "did you mean" not in cli(server, "tok-ann", "logs", "j/../x").err


def test_a_signal_is_said_by_name_not_as_a_negative_exit_code() -> None:
    from jupyter_sched.wording import job_line

    job = {"id": "j-1", "state": "cancelled", "exit_code": -15, "message": "cancelled by ann (killed by SIGTERM)"}
    assert job_line(job, None) == "job j-1: cancelled by ann (killed by SIGTERM)"  # the word once (newuser26 n9)
    assert job_line({"id": "j-2", "state": "failed", "exit_code": -9, "message": ""}, None) == (
        "job j-2: failed, killed by SIGKILL")


def test_newuser4_finding_4_cpu_and_memory_not_reserved_are_said_at_submit(server: EmbeddedServer) -> None:
    """New user 4, finding 4: ``--cpu 1000`` and ``--memory 10TiB`` on a 2-core machine were
    accepted and ran as if reserved; this server's inventory declares no host CPU or memory, so
    the submit answer says they are not reserved, and the CLI prints it."""
    clear(server)
    # memory above the host's own is now refused (red team 16, R3): 1GiB, not reserved either; cpu above the
    # host's cores likewise (newuser39 n1): 1 core, not reserved either
    run = cli(server, "tok-ann", "submit", "--gpus", "0", "--cpu", "1", "--memory", "1GiB", "--", "true")
    assert run.code == EXIT_OK, run.err
    assert "jupyter-sched submit: note: cpu is not reserved on this server (its inventory declares no host cpu)" \
        in run.err and "note: memory is not reserved" in run.err, run.err
    plain = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"]}).json()
    assert plain.get("warnings") == [NO_LIMIT_NO_GPU_WARNING]  # nothing of cpu or memory (new user 20, N23: no time limit)


def test_newuser39_n1_asks_above_any_node_get_one_answer_whatever_the_resource(server: EmbeddedServer) -> None:
    """newuser39 n1: on a server whose inventory declares no host cpu or memory (this host is its one node),
    ``--gpus 5`` / ``--mem-per-gpu 200GiB`` were refused unschedulable (exit 1), ``--memory 1TiB`` was a
    validation error (exit 2) and ``--cpu 64`` on 2 cores was accepted with notes and ran. One kind of ask,
    one answer: each is refused unschedulable, exit 1, naming its flag's field, in submit and dry run; a
    value within the host is taken."""
    clear(server)
    cores = os.cpu_count() or 1
    asks = [["--gpus", "99"], ["--gpus", "1", "--mem-per-gpu", "2000GiB"], ["--gpus", "0", "--memory", "64TiB"],
            ["--gpus", "0", "--cpu", str(cores * 4 + 1)]]
    for ask in asks:
        for dry in ((), ("--dry-run",)):
            run = cli(server, "tok-ann", "submit", *dry, "--name", "n1ask", *ask, "--", "true")
            if dry:  # the dry run answers "never" for each, as for more GPUs than any node has
                assert run.code == EXIT_OK and run.out.startswith("Would never start here: "), (ask, run)
            else:
                assert run.code == EXIT_REFUSED and "[unschedulable]" in run.err, (ask, run.code, run.err)
    said = api(server, "tok-ann").post("jobs", json={"gpus": 0, "cpu": cores * 4 + 1, "command": ["true"]})
    assert said.status_code == 422, said.text
    error = said.json()["error"]
    assert error["code"] == "unschedulable" and error["field"] == "cpu", error
    plural = "s" if cores != 1 else ""
    assert error["message"] == f"cpu {cores * 4 + 1} is more than this host's {cores} core{plural}", error
    assert error["hint"] == f"ask for at most cpu {cores}, or leave cpu out", error
    memory = api(server, "tok-ann").post("jobs", json={"gpus": 0, "memory": "64TiB", "command": ["true"]})
    assert memory.status_code == 422 and memory.json()["error"]["code"] == "unschedulable", memory.text
    rows = api(server, "tok-ann").get("jobs").json()
    assert not [j for j in (rows["jobs"] if isinstance(rows, dict) else rows) if j["name"] == "n1ask"], rows
    fits = cli(server, "tok-ann", "submit", "--gpus", "0", "--cpu", str(cores), "--", "true")
    assert fits.code == EXIT_OK, fits.err


def test_newuser4_finding_12_a_lease_no_notebook_can_release_says_how_to_release_it(server: EmbeddedServer) -> None:
    """New user 4, finding 12: a lease for a kernel this server does not run (a typo) or for no
    kernel was granted and held, and the queue said "%gpu release" — which no notebook can do
    for it. A lease for no kernel says how to release it; one for a kernel this server does not
    run is refused, naming kernel_id (issue 20 (d): it was accepted with a warning)."""
    clear(server)
    ann = api(server, "tok-ann")
    stray = ann.post("leases", json={"gpus": 1, "kernel_id": "not-a-kernel"})
    assert stray.status_code == 400, stray.text
    assert stray.json()["error"]["field"] == "kernel_id"
    assert not [lease for lease in ann.get("leases").json() if lease.get("kernel_id") == "not-a-kernel"]
    loose = ann.post("leases", json={"gpus": 1}).json()
    assert loose["warnings"][0].startswith("this lease is bound to no kernel, so no notebook's %gpu release frees it")
    try:
        wait_state(server, "tok-ann", loose["id"], "running", "admitted")
        queue = cli(server, "tok-ann", "queue")
        assert f"GPUs held for no kernel: `jupyter-sched cancel {loose['id']}` releases them" in queue.out, queue.out
    finally:
        ann.delete(f"leases/{loose['id']}")


def test_the_blocking_lease_names_its_notebook_to_its_owner_and_admins_alone(server: EmbeddedServer) -> None:
    """Left open from new user 4 (#15): "your own kernel lease l-… (kernel-nb1) … %gpu release in
    that notebook" — which notebook? A lease carries its notebook (``kernel_notebook``, which %gpu
    sends) as a private field: its owner reads it in the reason of the job it blocks, admins see
    it on the lease, and another user sees neither the field nor the path anywhere in the queue."""
    clear(server)
    admin, ann, bob = api(server, "tok-boss"), api(server, "tok-ann"), api(server, "tok-bob")
    before = admin.get("quotas").json()
    path = "analysis/private-explore.ipynb"
    try:
        assert admin.put("quotas", json={"quotas": [{"team": "default", "gpu_model": "*", "guaranteed": 1,
                                                     "borrowing_limit": 0}]}).status_code == 200
        lease = ann.post("leases", json={"gpus": 1, "name": "kernel-nb1", "kernel_notebook": path,
                                         "kernel_id": start_kernel(server)}).json()  # a kernel's (N9)
        wait_state(server, "tok-ann", lease["id"], "running", "admitted")
        job = submit(server, "tok-ann", gpus=1)
        deadline = time.monotonic() + 60
        # a full cycle's reason (the live ledger's first answer is "Provisional", projected later: finding 15)
        while "notebook" not in json.dumps((mine := ann.get(f"jobs/{job['id']}").json())["reason"] or {}) or \
                ((mine["reason"] or {}).get("details") or {}).get("eta_code") in (None, "Provisional"):
            assert time.monotonic() < deadline, mine
            time.sleep(0.1)
        text = mine["reason"]["text"]
        assert text["unblock"].startswith(f"Your own kernel lease {lease['id']} (kernel-nb1, notebook {path}) holds 1 GPU")
        # the lease idles from its start: once the idle monitor has sampled it so (either state here, as in
        # finding 15 above), its reclaim time is the ETA (new user 20, N29); the notebook is named in both
        if ((mine["reason"]["details"].get("eta_idle_release") or {}).get(lease["id"]) or {}).get("at"):
            assert f"if your own kernel lease {lease['id']} (kernel-nb1, notebook {path}) stays idle" in text["eta"], \
                text["eta"]
        else:
            assert f"(kernel-nb1, notebook {path}), which holds 1 GPU, is released or reclaimed" in text["eta"], \
                text["eta"]
        assert ann.get(f"leases/{lease['id']}").json()["kernel_notebook"] == path
        assert admin.get(f"leases/{lease['id']}").json()["kernel_notebook"] == path
        # another user: not in the lease's line, not in the blocked job's reason, not anywhere
        seen_by_bob = bob.get("queue").text
        assert path not in seen_by_bob and "private-explore" not in seen_by_bob
        assert "kernel_notebook" not in seen_by_bob and "eta_waits_on_own" not in seen_by_bob
        assert "private-explore" not in cli(server, "tok-bob", "queue").out
        assert f"notebook {path}" in cli(server, "tok-ann", "queue").out
        refused = ann.post("jobs", json={"gpus": 1, "command": ["true"], "kernel_notebook": path})
        assert refused.status_code == 400 and refused.json()["error"]["field"] == "kernel_notebook", refused.text
    finally:
        admin.put("quotas", json={"quotas": before.get("quotas", []), "teams": before.get("teams", [])})
        clear(server)
        for row in ann.get("leases", params={"state": "pending,admitted,running"}).json():
            ann.delete(f"leases/{row['id']}")


_HEADLESS_KERNEL = """
import time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "jupyter_sched")
shell.run_line_magic("gpu", "request 1")
print("HOLDING", flush=True)
time.sleep(300)
"""


def test_newuser5_finding_3_a_stopped_headless_kernel_releases_its_lease(server: EmbeddedServer) -> None:
    """New user 5, finding 3 (IMPORTANT): a notebook job that ran ``%gpu request 1`` and was
    cancelled left its lease "held for no kernel" until idle reclaim — the stop (SIGTERM) ended
    the job's headless kernel without atexit, which is where such a kernel gives its GPUs back.
    Here the kernel is an IPython shell the server did not start (no kernel id), as nbclient's is."""
    clear(server)
    ann = api(server, "tok-ann")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_"))}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)})
    kernel = subprocess.Popen([sys.executable, "-c", _HEADLESS_KERNEL], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert kernel.stdout is not None
        said: list[str] = []
        while (line := kernel.stdout.readline()) and line.strip() != "HOLDING":  # the magic's lines, then ours
            said.append(line.strip())
        assert line.strip() == "HOLDING", (said, kernel.stderr.read() if kernel.poll() is not None else "")
        (lease,) = [row for row in ann.get("leases", params={"state": "admitted,running"}).json()]
        assert lease["kernel_id"] is None
        kernel.send_signal(signal.SIGTERM)  # what cancelling the notebook job does first
        assert kernel.wait(timeout=60) == -signal.SIGTERM  # it still stops as the signal says
        ended = ann.get(f"leases/{lease['id']}").json()
        assert ended["state"] == "cancelled", ended
        assert "kernel" in ended["message"] and "exited" in ended["message"], ended["message"]
    finally:
        if kernel.poll() is None:
            kernel.kill()
        for row in ann.get("leases", params={"state": "pending,admitted,running"}).json():
            ann.delete(f"leases/{row['id']}")


def _pids_of_job(job_id: str) -> list[int]:
    """The processes running ``job_id`` (``JUPYTER_SCHED_JOB_ID`` in their environment)."""
    mark = f"JUPYTER_SCHED_JOB_ID={job_id}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark in (entry / "environ").read_bytes().split(b"\0"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_newuser5_finding_3_a_job_killed_by_sigkill_ends_the_lease_its_kernel_took(server: EmbeddedServer) -> None:
    """New user 5, finding 3, the SIGKILL half: a job whose kernel ran ``%gpu request`` and was
    then killed outright (``kill -9``, the OOM killer) ran no code of its own, so its lease stayed
    "held for no kernel" until idle reclaim. The magic now names its job (``parent_job_id``, from
    ``JUPYTER_SCHED_JOB_ID``) and the scheduler ends the lease with the job, however it ends."""
    clear(server)
    ann = api(server, "tok-ann")
    env = {"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)}
    answer = ann.post("jobs", json={"gpus": 0, "time_limit": "10m", "name": "holder", "env": env,
                                    "command": [sys.executable, "-c", _HEADLESS_KERNEL]})
    assert answer.status_code == 201, answer.text
    job = answer.json()
    deadline = time.monotonic() + 90
    while not (leases := ann.get("leases", params={"state": "admitted,running"}).json()):
        state = ann.get(f"jobs/{job['id']}").json()
        assert time.monotonic() < deadline and state["state"] in ("pending", "admitted", "running"), state
        time.sleep(0.2)
    (lease,) = leases
    assert lease["parent_job_id"] == job["id"], lease
    pids = _pids_of_job(job["id"])
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    ended = wait_state(server, "tok-ann", job["id"], "failed", "succeeded", "cancelled", "lost")
    assert ended["state"] != "succeeded", ended
    deadline = time.monotonic() + 30
    while (after := ann.get(f"leases/{lease['id']}").json())["state"] != "cancelled":
        assert time.monotonic() < deadline, after
        time.sleep(0.2)
    assert after["message"] == (f"released by the scheduler: the job that asked for it (holder, {job['id']}) "
                                f"ended ({ended['state']})"), after["message"]
    assert not ann.get("leases", params={"state": "admitted,running"}).json()  # the GPU is free again


def test_a_lease_may_name_only_its_own_live_job_as_the_one_asking(server: EmbeddedServer) -> None:
    """``parent_job_id`` ends a lease with that job, so naming another user's job (or a finished
    job, or naming one on a batch job) is a 400 on the field — audited — and says nothing about
    whether another user's job exists."""
    clear(server)
    ann, bob, boss = api(server, "tok-ann"), api(server, "tok-bob"), api(server, "tok-boss")
    anns = submit(server, "tok-ann", gpus=0)
    foreign = bob.post("leases", json={"gpus": 1, "parent_job_id": anns["id"]})
    assert foreign.status_code == 400 and foreign.json()["error"]["field"] == "parent_job_id", foreign.text
    made_up = bob.post("leases", json={"gpus": 1, "parent_job_id": "j-nosuchjob-000000"})
    assert made_up.json()["error"]["message"].replace("j-nosuchjob-000000", anns["id"]) == \
        foreign.json()["error"]["message"]  # the same answer: existence is not revealed
    refusals = boss.get("audit", params={"user": "bob", "limit": 10}).json()
    assert any((r.get("details") or {}).get("field") == "parent_job_id" for r in refusals), refusals
    on_a_job = ann.post("jobs", json={"gpus": 0, "command": ["true"], "parent_job_id": anns["id"]})
    assert on_a_job.status_code == 400 and on_a_job.json()["error"]["field"] == "parent_job_id", on_a_job.text
    ann.delete(f"jobs/{anns['id']}")
    wait_state(server, "tok-ann", anns["id"], "cancelled")
    finished = ann.post("leases", json={"gpus": 1, "parent_job_id": anns["id"]})
    assert finished.status_code == 400 and "already cancelled" in finished.json()["error"]["message"], finished.text
    # a waiting job has no kernel to ask; its cancel ends it in the service's transaction, which
    # never ended the leases it named (a lease outlived its job: seen under load, session 9)
    fill = submit(server, "tok-ann", gpus=2)
    wait_state(server, "tok-ann", fill["id"], "running")
    waiting = submit(server, "tok-ann", gpus=1)
    assert wait_state(server, "tok-ann", waiting["id"], "pending")["state"] == "pending"
    early = ann.post("leases", json={"gpus": 1, "parent_job_id": waiting["id"]})
    assert early.status_code == 400 and early.json()["error"]["field"] == "parent_job_id", early.text
    assert "pending, not running" in early.json()["error"]["message"], early.text
    ann.delete(f"jobs/{waiting['id']}")
    ann.delete(f"jobs/{fill['id']}")
    wait_state(server, "tok-ann", fill["id"], "cancelled")
    own = submit(server, "tok-ann", gpus=0)
    wait_state(server, "tok-ann", own["id"], "running")
    lease = ann.post("leases", json={"gpus": 1, "parent_job_id": own["id"]})
    assert lease.status_code == 201 and lease.json()["parent_job_id"] == own["id"], lease.text
    ann.delete(f"jobs/{own['id']}")
    wait_state(server, "tok-ann", own["id"], "cancelled")
    deadline = time.monotonic() + 30
    while ann.get(f"leases/{lease.json()['id']}").json()["state"] not in ("cancelled",):
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_newuser4_finding_14_serve_without_jupyterhub_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """New user 4, finding 14: ``jupyter-sched serve`` after the README's install (``[all]``
    has no ``[hub]``) ended in a ModuleNotFoundError traceback — after two other refusals."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "jupyterhub" else real(name, *rest))
    from jupyter_sched.extras import install_extra

    err = io.StringIO()
    assert main(["serve", "--port", "1"], out=io.StringIO(), err=err) == EXIT_REFUSED
    assert err.getvalue() == ("jupyter-sched serve: hub mode needs JupyterHub, which comes with the [hub] extra: "
                              f"{install_extra('hub')}\n")
    # new user 5, finding 9: --help works without the extra, and the hint is a command that works
    # for this install — from a clone it names the clone (no index has jupyter_sched)
    out = io.StringIO()
    assert main(["serve", "--help"], out=out, err=io.StringIO()) == EXIT_OK
    assert out.getvalue().startswith("usage: jupyter-sched serve") and "--db-url" in out.getvalue()
    assert out.getvalue().rstrip().endswith(install_extra("hub"))
    folder = install_extra("hub").split("'")[1].removesuffix("[hub]")
    assert (Path(folder) / "pyproject.toml").is_file(), install_extra("hub")  # this venv installs from a checkout


def test_newuser4_finding_5_submit_errors_name_the_flag_and_say_negative(server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 4, finding 5: ``--workdir /nonexistent`` was told to "leave working_dir out";
    ``--time-limit -5`` read "cannot parse duration '-5'" (it parses; it is negative)."""
    missing = cli(server, "tok-ann", "submit", "--workdir", str(tmp_path / "nodir"), "--", "true")
    assert missing.code == EXIT_USAGE and "leave --workdir out" in missing.err and "working_dir" not in missing.err, \
        missing.err
    negative = cli(server, "tok-ann", "submit", "--time-limit", "-5", "--", "true")
    assert "--time-limit must not be negative (got '-5')" in negative.err, negative.err
    assert "cannot parse" not in negative.err


class _IdleServer:
    """The answers of a server where the caller's lease has an open idle warning (the wire's
    dicts; the real path needs a minute of idle telemetry — tests/integration covers that)."""

    def __init__(self, deadline: str) -> None:
        from types import SimpleNamespace

        self.connection = SimpleNamespace(url="http://127.0.0.1:1/")
        self.lease = {"id": "l-1", "name": "kernel-254d454a", "user": "ann", "kind": "lease", "state": "running",
                      "priority": "normal", "resources": {"gpus": 1}, "kernel_id": "k", "mine": True,
                      "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-1"], "gpu_milli": 1000}}
        self.warned = {"job_id": "l-1", "user": "ann", "kind": "lease", "stage": "warned", "action": "release",
                       "idle_since": "2026-12-02T09:58:00Z", "deadline": deadline,
                       "reason": "kernel idle and GPU < 5 % for 1 min"}

    def config(self) -> dict[str, Any]:
        return {"version": "x"}

    def me(self) -> dict[str, Any]:
        return {"user": "ann", "in_use": {"leases": 1, "gpus": 1}, "pending": 0}

    def inventory(self) -> dict[str, Any]:
        return {"gpus": [], "simulated": True}

    def idle_candidates(self) -> list[dict[str, Any]]:
        return [self.warned]

    def queue(self, limit: int | None = None) -> list[dict[str, Any]]:
        return [self.lease]

    def queue_head(self, limit: int) -> tuple[list[dict[str, Any]], int | None]:
        return self.queue(limit), None

    def jobs(self, **_: Any) -> list[dict[str, Any]]:
        return [self.lease]

    def jobs_upto(self, most: int, **_: Any) -> tuple[list[dict[str, Any]], bool]:
        return [self.lease][:most], most < 1


def test_newuser4_finding_23_an_idle_warned_lease_is_said_where_its_owner_looks() -> None:
    """New user 4, finding 23 (IMPORTANT): GET idle said "warned … deadline 10:09", but the CLI's
    queue and status and the kernel's %gpu said nothing — the user lost the GPU unwarned."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.cli.commands import queue, status
    from jupyter_sched.cli.main import Streams, build_parser
    from jupyter_sched.wording.jobs import idle_note

    deadline = datetime.now(timezone.utc) + timedelta(minutes=7)
    server = _IdleServer(deadline.isoformat())
    for command, argv in ((status, ["status"]), (queue, ["queue"])):
        out = io.StringIO()
        assert command(server, build_parser().parse_args(argv), Streams(out=out, err=io.StringIO(),
                                                                         stdin=io.StringIO())) == EXIT_OK
        said = " ".join(out.getvalue().split())
        day = "" if deadline.date() == datetime.now(timezone.utc).date() else f"{deadline:%b} {deadline.day} "
        assert "idle since " in said and "(rule: kernel idle and GPU < 5 % for 1 min): its GPUs are released at " \
            f"{day}{deadline:%H:%M} UTC (in " in said and "unless it is used — `%gpu keepalive` in its notebook keeps " \
            "them" in said, said  # a clock of tomorrow (7 minutes before midnight) carries its day
    # not warned yet: said all the same, as the waiter's ETA says it (new user 22, N6); a notify-only rule not
    assert idle_note({**server.warned, "stage": "idle"}, None) == idle_note(server.warned, None)
    assert idle_note({**server.warned, "stage": "idle", "action": "notify"}, None) == ""
    assert idle_note(server.warned, None, magic=True).endswith("unless it is used — %gpu keepalive keeps them")


def test_newuser18_n16_jobs_says_an_open_idle_warning_as_queue_does_and_n13_a_runs_time_stays() -> None:
    """New user 18, N16: 16 s before an idle lease's release `jobs` still said "held until released
    … no time limit" while `queue` and %gpu said when it goes; N13: every run of a definition read
    "every-min @ 2026-12-04 …" in the NAME column, the time that tells them apart cut off."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.cli.commands import jobs
    from jupyter_sched.cli.main import Streams, build_parser
    from jupyter_sched.wording.jobs import fit_name

    deadline = datetime.now(timezone.utc) + timedelta(seconds=16)
    server = _IdleServer(deadline.isoformat())
    out = io.StringIO()
    assert jobs(server, build_parser().parse_args(["jobs"]), Streams(out=out, err=io.StringIO(),
                                                                      stdin=io.StringIO())) == EXIT_OK
    said = " ".join(out.getvalue().split())
    assert f"its GPUs are released at {deadline:%H:%M} UTC (in " in said and "held until released" in said, said
    # the time stays, and (newuser42 N4) its date: the name shown is the name, typed back whole
    assert fit_name("every-min @ 2026-12-04 16:26 UTC") == "every-min @ 2026-12-04 16:26 UTC"
    assert fit_name("a-nightly-definition-name @ 2026-12-04 16:26 UTC") == "a-nightly-defini… @ 2026-12-04 16:26 UTC"


def test_newuser4_finding_9_a_restarted_job_says_so_in_its_line() -> None:
    from jupyter_sched.wording import job_line

    job = {"id": "j-1", "name": "lowjob", "state": "running", "attempts": 2, "preempted_by": "j-hi",
           "allocation": {"node": "vm", "gpu_uuids": ["GPU-1"]}}
    assert job_line(job, None) == "job j-1 (lowjob): running on vm: GPU-1 · start 2, after preemption by j-hi"
    assert job_line({**job, "attempts": 1}, None) == "job j-1 (lowjob): running on vm: GPU-1"


def test_newuser6_finding_12_wait_help_says_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    """New user 6, F12: `wait` exits 4 for a failed job and 5 when --for runs out, which neither
    `wait --help` nor the README said; scripts need them."""
    from jupyter_sched.cli.main import EXIT_JOB_FAILED, EXIT_TIMEOUT, build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["wait", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert f"Exit status: {EXIT_OK} the job succeeded; {EXIT_JOB_FAILED} it ended otherwise" in said, said
    assert f"{EXIT_TIMEOUT} it was still going when --for ran out" in said
    with pytest.raises(SystemExit):
        build_parser().parse_args(["submit", "--help"])
    assert "see `jupyter-sched wait --help`" in " ".join(capsys.readouterr().out.split())


def test_newuser6_finding_18_cancelling_a_kernels_lease_says_its_kernel_is_not_told(server: EmbeddedServer) -> None:
    """New user 6, F18 (b): `jupyter-sched cancel <lease>` from a terminal said only "released lease
    … gave back GPU-…" while the kernel's CUDA_VISIBLE_DEVICES still named that GPU."""
    clear(server)
    ann = api(server, "tok-ann")
    bound = ann.post("leases", json={"gpus": 1, "name": "nb-k", "kernel_id": start_kernel(server)}).json()
    loose = ann.post("leases", json={"gpus": 1, "name": "nb-loose"}).json()
    for lease in (bound, loose):
        wait_state(server, "tok-ann", lease["id"], "running", "admitted")
    said = cli(server, "tok-ann", "cancel", bound["id"]).out
    assert said.splitlines()[0].startswith(f"released lease {bound['id']} (was running; gave back GPU-"), said
    # what its kernel's magics do, and when (new user 23, N17: it said "not told … until %gpu status")
    assert "its kernel is told before the next cell it runs" in " ".join(said.split()), said
    assert "kernel is told" not in cli(server, "tok-ann", "cancel", loose["id"]).out  # no kernel, nothing to tell


def test_newuser7_finding_11_submit_runs_the_program_my_path_finds(server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 7, F11 (IMPORTANT): ``submit -- python …`` ran the server's ``python`` (pyenv's, without
    the packages of the venv on the terminal's PATH) and failed with ModuleNotFoundError. On a local
    server the CLI sends the program its own PATH finds, and says so; a path is sent as given."""
    clear(server)
    venv_bin = tmp_path / "venv-bin"
    venv_bin.mkdir()
    (venv_bin / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT),
                "PATH": f"{venv_bin}:{env.get('PATH', '')}"})
    done = subprocess.run([CLI, "--json", "submit", "--gpus", "0", "--", "python", "-c", "print(1)"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == EXIT_OK, done.stderr
    job = json.loads(done.stdout)
    assert job["command"] == [str(venv_bin / "python"), "-c", "print(1)"], job["command"]
    # the job's PATH (this shell's, sent with it) finds the same python: the note would tell nothing (newuser42 n3)
    assert "note: runs python as" not in done.stderr and "note: runs with your PATH" not in done.stderr, done.stderr
    other = subprocess.run([CLI, "--json", "submit", "--gpus", "0", "--env", f"PATH={tmp_path}", "--",
                            "python", "-c", "print(1)"], env=env, capture_output=True, text=True, timeout=120)
    assert f"note: runs python as {venv_bin / 'python'} (the one on your PATH; the job's PATH finds no python)" \
        in other.stderr, other.stderr
    assert "--env NAME passes one as set here, --env NAME=VALUE another value" in other.stderr
    given = subprocess.run([CLI, "--json", "submit", "--gpus", "0", "--", sys.executable, "-c", "print(1)"], env=env,
                           capture_output=True, text=True, timeout=120)
    # a path is sent as given: no "runs python as" note (the job's PATH is still said: newuser27 N2)
    assert json.loads(given.stdout)["command"][0] == sys.executable and "note: runs /" not in given.stderr
    assert "note: runs python" not in given.stderr and "note: runs with your PATH (" in given.stderr, given.stderr
    wait_state(server, "tok-ann", job["id"], "succeeded")


def test_newuser7_finding_17_a_token_on_the_command_line_is_warned_and_the_hints_lead_with_the_environment(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 7, F17 (IMPORTANT): the CLI's hints said "pass --token TOKEN"; done so, another local
    account read the token from ``ps`` (for hours under ``wait --for 2h``) and used the whole Jupyter
    server with it. The hints lead with JUPYTER_SCHED_TOKEN, --help says why, and a token on the
    command line (--token, or in --url) is warned about on stderr every time — a script's is as
    readable in ``ps`` as a person's (it was said at a terminal only). --token-file FILE gives the
    token where ``ps`` does not show it, with no note."""
    import io as stdio

    from jupyter_sched.cli.main import build_parser

    note = ("jupyter-sched: note: other local accounts can read --token in `ps` while this runs; JUPYTER_SCHED_TOKEN=… "
            "in the environment or --token-file FILE is not shown there\n")
    piped = stdio.StringIO()
    assert main(["--url", server.url, "--token", "tok-ann", "status"], out=stdio.StringIO(), err=piped) == EXIT_OK
    assert piped.getvalue() == note, piped.getvalue()
    in_url = stdio.StringIO()
    assert main(["--url", f"{server.url}lab?token=tok-ann", "status"], out=stdio.StringIO(), err=in_url) == EXIT_OK
    assert in_url.getvalue() == note.replace("read --token", "read the token in --url"), in_url.getvalue()
    (tmp_path / "token").write_text("tok-ann\n")
    out, quiet = stdio.StringIO(), stdio.StringIO()
    assert main(["--url", server.url, "--token-file", str(tmp_path / "token"), "status"], out=out, err=quiet) == EXIT_OK
    assert quiet.getvalue() == "" and "user       ann" in out.getvalue(), quiet.getvalue()
    (tmp_path / "wrong").write_text("wrong")
    refused = stdio.StringIO()
    assert main(["--url", server.url, "status", "--token-file", str(tmp_path / "wrong")], out=stdio.StringIO(),
                err=refused) == EXIT_REFUSED
    assert refused.getvalue().startswith(f"jupyter-sched status: the server at {server.url} refused the token in "
                                         f"--token-file {tmp_path / 'wrong'} — set JUPYTER_SCHED_TOKEN=TOKEN"), \
        refused.getvalue()
    for bad, why in (("missing", "no such file or directory"), ("empty", "its first line must be the token alone")):
        if bad == "empty":
            (tmp_path / bad).write_text("\n")
        usage = stdio.StringIO()
        with contextlib.redirect_stderr(usage):
            code = main(["--url", server.url, "--token-file", str(tmp_path / bad), "status"], out=stdio.StringIO(),
                        err=usage)
        assert code == EXIT_USAGE and f"--token-file {tmp_path / bad}: {why}" in usage.getvalue(), usage.getvalue()
    refused = stdio.StringIO()
    main(["--url", server.url, "--token", "wrong", "status"], out=stdio.StringIO(), err=refused)
    assert "— set JUPYTER_SCHED_TOKEN=TOKEN" in refused.getvalue() and "can read --token in `ps`" in refused.getvalue()
    assert refused.getvalue().count("`ps`") == 1, refused.getvalue()  # said once, in the note (new user 11, N13)
    assert "other local accounts can read --token in ps" in " ".join(build_parser().format_help().split())


def test_newuser7_finding_13_a_url_with_a_space_is_one_line_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """New user 7, F13: ``--url "not a url"`` ended in a 25-line http.client.InvalidURL traceback."""
    import io as stdio

    for url in ("not a url", "http://127.0.0.1:8888/la b", "http://127.0.0.1:8888/\x07"):
        err = stdio.StringIO()
        assert main(["--url", url, "status"], out=stdio.StringIO(), err=err) == EXIT_USAGE
        said = err.getvalue() + capsys.readouterr().err  # argparse's usage errors go to sys.stderr
        assert "Traceback" not in said and "is not a server URL (it has a space or control character in it)" in said, said


def test_newuser7_finding_18_an_env_the_scheduler_sets_is_said_to_be_replaced(server: EmbeddedServer) -> None:
    """New user 7, F18: ``--env CUDA_VISIBLE_DEVICES=0,1,2,3`` was accepted, stored and silently replaced
    by the allocation (right, but unsaid). The answer (REST ``warnings``, the CLI's note) says so for
    CUDA_DEVICE_ORDER; CUDA_VISIBLE_DEVICES is refused since red team 15, R1 (400 naming it)."""
    clear(server)
    run = cli(server, "tok-ann", "submit", "--gpus", "0", "--env", "CUDA_DEVICE_ORDER=FASTEST_FIRST", "--", "true")
    assert run.code == EXIT_OK, run.err
    assert ("jupyter-sched submit: note: env CUDA_DEVICE_ORDER is set by the scheduler from the job's allocation; "
            "the value given is not used") in run.err, run.err
    plain = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"], "env": {"SEED": "1"}}).json()
    assert plain.get("warnings") == [NO_LIMIT_NO_GPU_WARNING]  # nothing of env (new user 20, N23: no time limit)


def test_newuser34_n3_admin_only_lists_are_refused_in_the_clis_flags(server: EmbeddedServer) -> None:
    """newuser34 n3: ``usage --as-scenario`` and ``definitions list --all`` said "leave out user and all" — the
    REST parameters, neither typed; each now names what the user typed, as ``jobs --all`` does."""
    scenario = cli(server, "tok-bob", "usage", "--as-scenario")
    assert scenario.code == EXIT_REFUSED, scenario.err
    assert scenario.err.strip() == ("jupyter-sched usage: --as-scenario is for admins (it writes every user's jobs); "
                                    "bob is not an admin — your own usage: jupyter-sched usage [forbidden]")
    listed = cli(server, "tok-bob", "definitions", "list", "--all")
    assert listed.code == EXIT_REFUSED, listed.err
    assert "leave out --all to list your own [forbidden]" in listed.err and "user and all" not in listed.err, listed.err


def test_newuser34_n3_the_magics_define_list_all_refusal_says_the_flag(server: EmbeddedServer,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The magics share the renderer: ``%schedule define list --all`` as a non-admin names ``--all``."""
    from jupyter_sched.magics import core

    monkeypatch.setenv("JUPYTER_SCHED_URL", server.url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "tok-bob")
    magics = core.SchedMagics(None)
    with pytest.raises(Exception) as refused:
        magics.schedule("define list --all")  # the SchedClient of the env above, as a kernel makes it
    said = str(refused.value)
    assert said.endswith("bob is not an admin. Leave out --all to list your own."), said


def test_newuser36_n10nit_admin_md_gives_a_team_high_with_a_body_the_server_takes(server: EmbeddedServer) -> None:
    """newuser36 n10: docs/admin.md showed no team policy body nor ``priority_grants`` form — a team lead could not
    learn how to give a team ``high``. Its "Priority classes and team policies" body is PUT as written (this
    module's server) and GET quotas shows the policy; its config block sets the grant it says."""
    from traitlets.config import Config

    from .test_readme import ADMIN

    start = ADMIN.index("### Priority classes and team policies")
    said = ADMIN[start:ADMIN.index("\n#", start + 4)]
    assert "granted to nobody by default" in " ".join(said.split()), said
    (body,) = re.findall(r"```json\n(.*?)```", said, flags=re.S)
    (block,) = re.findall(r"```python\n(.*?)```", said, flags=re.S)
    boss = api(server, "tok-boss")
    before = boss.get("quotas").json()["teams"]
    try:
        put = boss.put("quotas", json=json.loads(body))
        assert put.status_code == 200, put.text
        (vision,) = [t for t in boss.get("quotas").json()["teams"] if t["team"] == "vision"]
        assert set(vision["allowed_priorities"]) == {"high", "normal", "low"}, vision
        assert (vision["weight"], vision["reclaim"]) == (2, "lower-or-equal"), vision
    finally:
        assert boss.put("quotas", json={"teams": before}).status_code == 200
    c = Config()
    exec(compile(block, "docs/admin.md", "exec"), {"c": c})  # a jupyter_server_config.py line
    assert c.SchedApp.priority_grants["teams"]["vision"] == ["high"], c.SchedApp.priority_grants
