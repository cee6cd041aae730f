"""New user 16's findings of branch r16-nu16 (/work/coord/notes/newuser16.md), each its own test,
against a real embedded server (simulated GPUs, SQLite) and the real CLI and magics."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import EXIT_USAGE
from jupyter_sched.magics.core import MagicError
from jupyter_sched.reclaim.idle import KERNEL_UNSEEN
from jupyter_sched.wording.jobs import UNSEEN_KERNEL_KEEP
from tests.notebook.nb_harness import cell_text  # a plain module: loads however pytest was started
from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-cat": "cat", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu16", USERS)


def _refusals(server: EmbeddedServer, user: str, field: str) -> list[dict[str, Any]]:
    """The audited refusals of ``user`` naming ``field``, polled with a deadline (written just after the answer)."""
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 30
    while True:
        rows = boss.get("audit", params={"user": user, "action": "refused", "limit": 1000}).json()
        found = [r for r in rows if (r.get("details") or {}).get("field") == field]
        if found:
            return found
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


def test_newuser16_n15_gpu_history_of_another_users_work_is_refused_like_its_job_history(
        server: EmbeddedServer) -> None:
    """N15: cat was refused ann's job series by job id but got the same series by the GPU id the queue
    shows. One rule now: a non-admin's ``telemetry/history?gpu=`` of a GPU that another user's live
    work holds is refused (403 naming the rule, audited); the owner, an admin and a free GPU answer."""
    clear(server)
    ann, cat, boss = api(server, "tok-ann"), api(server, "tok-cat"), api(server, "tok-boss")
    made = ann.post("jobs", json={"gpus": 1, "command": ["sleep", "120"], "name": "a-busy"})
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    deadline = time.monotonic() + 60
    while True:
        job = ann.get(f"jobs/{job_id}").json()
        if job["state"] == "running" and job.get("allocation"):
            break
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    held = job["allocation"]["gpu_uuids"][0]
    free = next(g["uuid"] for g in boss.get("inventory").json()["nodes"][0]["gpus"] if g["uuid"] != held)
    by_job = cat.get("telemetry/history", params={"job": job_id})
    assert by_job.status_code == 403, by_job.text  # another user's live job (newuser29 n5)
    by_gpu = cat.get("telemetry/history", params={"gpu": held})
    assert by_gpu.status_code == 403, by_gpu.text
    error = by_gpu.json()["error"]
    assert error["field"] == "gpu" and "another user's job" in error["message"] and job_id in error["message"], error
    assert "series" not in by_gpu.json() and "points" not in by_gpu.json()
    assert any(r["job_id"] == job_id for r in _refusals(server, "cat", "gpu"))
    for allowed, gpu in ((ann, held), (boss, held), (cat, free)):
        answer = allowed.get("telemetry/history", params={"gpu": gpu})
        assert answer.status_code == 200, answer.text
    ann.delete(f"jobs/{job_id}")


# ---- N2 N7 N11 N6: rules that contradicted their hint or the input ------------------------------------------

GPUS_HINT = "use a whole number such as 1 or 4, or a fraction below 1 such as 0.5"


def test_newuser16_n2_a_fraction_above_one_gpu_is_told_the_rule_it_breaks(server: EmbeddedServer, tmp_path: Path) -> None:
    """N2: ``--gpus 1.5`` said "must be an integer" while 0.5 and 0.55 are taken. A number above 1 that
    is not whole now reads the real rule on REST, the CLI and the magics; a word keeps handed case 019
    b3's words."""
    ann = api(server, "tok-ann")
    error = ann.post("jobs", json={"gpus": 1.5, "command": ["true"]}).json()["error"]
    assert (error["field"], error["message"], error["hint"]) == (
        "gpus", "gpus must be a whole number or a fraction below 1 (got 1.5)", GPUS_HINT), error
    said = _cli(_env(tmp_path, server), "submit", "--gpus", "1.5", "--", "true")
    assert said.returncode == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert said.stderr.strip().splitlines()[-1] == (
        f"jupyter-sched submit: --gpus must be a whole number or a fraction below 1 (got 1.5) — {GPUS_HINT} "
        "[validation_error]"), said.stderr
    with pytest.raises((MagicError, UsageError)) as refused:
        _magics(server).gpu("request 2.5 --no-wait")
    assert str(refused.value).startswith("%gpu request: gpus must be a whole number or a fraction below 1 (got 2.5)"), refused.value
    word = ann.post("jobs", json={"gpus": "two", "command": ["true"]}).json()["error"]
    assert word["message"] == 'gpus must be an integer (got "two")', word  # handed case 019 b3
    share = ann.post("jobs", json={"gpus": 0.55, "command": ["true"]})
    assert share.status_code == 201, share.text
    ann.delete(f"jobs/{share.json()['id']}")


def test_newuser16_n7_an_overlong_id_is_told_the_length_rule_and_echoed_short(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N7: a 300-character id was told "ids are letters, digits and '-'" (it was) and echoed whole."""
    said = _cli(_env(tmp_path, server), "logs", "j-" + "x" * 298)
    assert said.returncode == EXIT_USAGE, said.stderr
    line = said.stderr.strip().splitlines()[-1]
    assert "(300 characters) is not a job id: ids are at most 128 characters" in line, line
    assert "letters, digits" not in line and "x" * 100 not in line, line
    bad = _cli(_env(tmp_path, server), "logs", "j-a b")
    assert "is not a job id: ids are letters, digits and '-'" in bad.stderr, bad.stderr


def test_newuser16_n11_a_keyword_parameter_is_called_a_keyword(server: EmbeddedServer) -> None:
    """N11: ``-p class=1`` was "not a Python identifier" (it is one; it is a keyword papermill cannot assign)."""
    from jupyter_sched.definitions.parameters import validate_parameters
    from jupyter_sched.errors import ValidationError

    with pytest.raises(ValidationError) as keyword:
        validate_parameters({"class": 1})
    assert keyword.value.message == "parameter name 'class' is a Python keyword: a parameters cell cannot assign it"
    assert keyword.value.hint == "rename it, e.g. class_"
    with pytest.raises(ValidationError) as digit:
        validate_parameters({"1x": 1})
    assert "is not a Python identifier" in digit.value.message


def test_newuser16_n6_and_newuser41_n5_cli_workdir_hint_names_this_shells_folder(server: EmbeddedServer, tmp_path: Path) -> None:
    """N6: the CLI's ``--workdir /nonexist`` hint said leaving it out starts the job in the server's root;
    the CLI sends its own folder."""
    here = tmp_path / "here"
    here.mkdir()
    said = _cli(_env(tmp_path, server), "submit", "--workdir", "/nonexist-nu16", "--", "true", cwd=here)
    assert said.returncode == EXIT_USAGE, said.stderr  # bad input: 2 whoever finds it (newuser38 n2)
    line = said.stderr.strip().splitlines()[-1]
    assert f"leave --workdir out (jobs start in this shell's folder, {here}; a notebook's in its own folder)" in line, line
    assert "server's root" not in line, line
    # newuser41 n5: a relative one is read here too, and the line says so (it said nothing of it)
    said = _cli(_env(tmp_path, server), "submit", "--workdir", "nowhere-nu41", "--", "true", cwd=here)
    line = said.stderr.strip().splitlines()[-1]
    assert said.returncode == EXIT_USAGE and f"{here / 'nowhere-nu41'}" in line, said.stderr
    assert f"(a relative one is read in this shell's folder, {here})" in line and "server's root" not in line, line


# ---- N1: the lease of a kernel the server did not start (nbconvert / nbclient / papermill) -------------------

_NBCLIENT_CELLS = ["%load_ext jupyter_sched\nimport pandas\npandas.set_option('display.max_colwidth', None)\n"
                   "pandas.set_option('display.expand_frame_repr', False)",  # the magic's table, unabridged
                   "%gpu request 1", "!jupyter-sched queue", "%schedule queue", "%gpu"]


def test_newuser16_n1_an_nbclient_kernels_lease_is_held_by_that_kernel_not_by_no_kernel(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N1: a notebook run by ``jupyter nbconvert --execute`` (nbclient: a kernel the server did not start,
    so the magic sends no kernel id and releases the lease itself at exit) showed its own live lease as
    "GPUs held for no kernel: `cancel` releases them" in the CLI's and the magic's queue. Now the lease
    says it is released at the kernel's exit (``released_at_exit``, the owner's and admins' field only),
    its name is ``kernel lease``, and it is released when the notebook's kernel shuts down."""
    import nbformat
    from nbclient import NotebookClient

    clear(server)
    ann, cat, boss = api(server, "tok-ann"), api(server, "tok-cat"), api(server, "tok-boss")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in _NBCLIENT_CELLS])
    env = _env(tmp_path, server)
    # `!jupyter-sched queue` runs the CLI as a user's activated venv would (a fresh clone's test run has no venv on PATH)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    seen: dict[str, Any] = {}

    def look(cell: Any, cell_index: int, **_: Any) -> None:  # while the kernel lives: the lease from outside
        if cell_index == 1:  # s41 race41: the queue cells run only once the idle pass has seen the lease idle
            seen["idle"] = _idle_entry(ann)
        if cell_index == len(_NBCLIENT_CELLS) - 1:
            (seen["own"],) = ann.get("leases", params={"state": "admitted,running"}).json()
            seen["cat"] = [e for e in cat.get("queue").json() if e["id"] == seen["own"]["id"]]
            seen["boss"] = boss.get(f"leases/{seen['own']['id']}").json()

    client = NotebookClient(nb, timeout=180, kernel_name="python3", on_cell_executed=look)
    try:
        client.execute(env=env, cwd=str(tmp_path))
    finally:
        for row in ann.get("leases", params={"state": "pending,admitted,running"}).json():
            if "own" not in seen:
                ann.delete(f"leases/{row['id']}")
    texts = [" ".join(cell_text(cell).split()) for cell in nb.cells]  # the CLI wraps at its width
    lease = seen["own"]
    cli, magic = texts[2], texts[3]
    assert seen["idle"]["job_id"] == lease["id"], seen["idle"]
    for said in (cli, magic):
        assert lease["id"] in said, said
        assert "no kernel" not in said, said  # the idle rule too, once it is said (the CLI, below)
        assert "held by a kernel this server did not start" in said and "%gpu release or exits" in said, said
    assert "jupyter-sched cancel " + lease["id"] in cli, cli  # sooner, from a terminal
    assert "idle since" in cli and f", {KERNEL_UNSEEN})" in cli, cli  # the ordering that raced (s41 race41)
    # race41's leftover (s42-magics): a notebook run headless has no one to run a cell in it
    assert UNSEEN_KERNEL_KEEP in cli and "in its notebook keeps them" not in cli, cli
    assert lease["kernel_id"] is None and lease["released_at_exit"] is True, lease
    assert lease["name"] == "kernel lease", lease
    assert seen["boss"]["released_at_exit"] is True, seen["boss"]
    assert seen["cat"] and "released_at_exit" not in seen["cat"][0], seen["cat"]  # owner-only on the wire
    assert "bound to no kernel" not in texts[1], texts[1]  # no submit warning: its kernel releases it
    assert lease["id"] in texts[4], texts[4]  # %gpu: this kernel's lease
    deadline = time.monotonic() + 30  # the kernel's exit released it (written as the kernel shuts down)
    while (ended := ann.get(f"leases/{lease['id']}").json())["state"] not in ("cancelled", "completed"):
        assert time.monotonic() < deadline, ended
        time.sleep(0.2)
    assert "exited" in str(ended.get("message")), ended


def _idle_entry(owner: Any) -> dict[str, Any]:
    """The owner's one idle entry (``GET idle``), waited for: a granted lease on an unused simulated GPU is
    idle from the engine's next sample on. Drives the ordering the whole run raced (s41 race41): the queue
    read after the idle pass saw the lease, when its line carries the idle rule."""
    deadline = time.monotonic() + 60
    while not (entries := owner.get("idle").json()):
        assert time.monotonic() < deadline, "the granted lease never showed in GET idle"
        time.sleep(0.2)
    (entry,) = entries if isinstance(entries, list) else entries["idle"]
    return dict(entry)


@pytest.mark.parametrize("at_exit", [True, False], ids=["a kernel the server did not start", "no kernel"])
def test_s41_race_an_at_exit_leases_idle_rule_says_its_kernel_is_unseen_never_none(at_exit: bool) -> None:
    """s41 race41 (newuser16 n1 flaked under load): the idle rule of a lease held by a kernel this server did
    not start (``released_at_exit``, no ``kernel_id``) said "no kernel is bound to this lease", on the same
    queue line as "held by a kernel this server did not start" — whenever the idle pass saw the lease before
    the queue was read. Its rule now says the kernel's state is not seen; the window and mode are the
    kernel-less lease's (the GPU alone decides, as before); a lease asked with no kernel keeps its words."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.model import Allocation, Job, JobKind, JobSpec, JobState
    from jupyter_sched.model.samples import GpuSample
    from jupyter_sched.reclaim import IdlePolicy, ReclaimMode, default_idle_arbiter
    from jupyter_sched.reclaim.idle import NO_KERNEL_BOUND
    from jupyter_sched.wording.jobs import idle_note

    now = datetime(2026, 12, 7, 21, 0, tzinfo=timezone.utc)
    spec = JobSpec(name="kernel lease", user="ann", kind=JobKind.LEASE, released_at_exit=at_exit)
    lease = Job(id="l-1", spec=spec, state=JobState.RUNNING, started_at=now - timedelta(hours=1),
                allocation=Allocation(node="n1", gpu_uuids=("GPU-1",)))
    samples = [GpuSample(gpu_uuid="GPU-1", mig_instance=None, timestamp=now - timedelta(minutes=m),
                         utilization_pct=0.0, memory_used_mib=0.0, memory_total_mib=81920.0) for m in range(40)]
    policy = IdlePolicy(window_s=1800, warning_s=60, busy_kernel_window_s=7200, lease_mode=ReclaimMode.RELEASE,
                        busy_kernel_mode=ReclaimMode.NOTIFY)
    verdict = default_idle_arbiter(job=lease, samples=samples, kernel=None, now=now, policy=policy)
    assert verdict.idle and verdict.rule == "gpu_no_kernel", verdict
    assert verdict.limit_s == 1800 and verdict.mode is ReclaimMode.RELEASE, verdict
    assert verdict.reason.endswith(KERNEL_UNSEEN if at_exit else NO_KERNEL_BOUND), verdict.reason
    assert ("no kernel" in verdict.reason) is not at_exit, verdict.reason
    assert verdict.kernel_state == ("unknown" if at_exit else "none"), verdict
    entry = {"job_id": "l-1", "kind": "lease", "stage": "idle", "action": "release", "rule": verdict.reason,
             "idle_since": "2026-12-07T20:20:00+00:00", "deadline": "2026-12-07T20:50:00+00:00"}
    note = idle_note(entry, now, kernel=True if at_exit else False)  # client.status: kernel_id or released_at_exit
    assert f"(rule: {verdict.reason})" in note and ("no kernel" in note) is not at_exit, note


# ---- N3: a dash value after an option of two names ---------------------------------------------------------

@pytest.mark.parametrize(("line", "option", "joined"), [
    ("request 1 --timeout -5s", "--timeout", "(got -5s)"),
    ("request 1 --for -5s", "--for", "(got -5s)"),
])
def test_newuser16_n3_a_dash_value_is_told_for_the_option_typed_with_the_value_joined(
        line: str, option: str, joined: str) -> None:
    """N3: ``%gpu request 1 --timeout -5s`` was told "--timeout/--for: expected one argument … --for=VALUE":
    an option the user did not type, suggested to them. The option as typed, and the value joined to it."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.magics.parsing import parse_gpu_line

    with pytest.raises(ValidationError) as refused:
        parse_gpu_line(line)
    said = refused.value.message
    # a negative duration is refused as negative at once (newuser23 N1), naming the option typed
    assert said.startswith(f"{option}: must not be negative {joined}"), said
    assert refused.value.field == option
    other = "--for" if option == "--timeout" else "--timeout"
    assert other not in said, said
    with pytest.raises(ValidationError) as joined_refused:  # as suggested: the real rule
        parse_gpu_line(line.replace(f"{option} ", f"{option}="))
    assert joined_refused.value.message == f"{option} must be a positive duration (got '-5s')", joined_refused.value.message


# ---- N9: `jupyter-sched wait` on a lease its owner released ------------------------------------------------

def _granted_lease(server: EmbeddedServer) -> str:
    ann = api(server, "tok-ann")
    made = ann.post("leases", json={"gpus": 0.5})
    assert made.status_code == 201, made.text
    lease_id = str(made.json()["id"])
    deadline = time.monotonic() + 60
    while ann.get(f"leases/{lease_id}").json()["state"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return lease_id


def test_newuser16_n9_wait_on_a_lease_its_owner_released_succeeds_and_says_who_once(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N9: ``jupyter-sched wait l-…`` on a lease its owner gave back printed "released — released by root"
    and exited 4 ("it ended otherwise"). A lease's normal end is its owner's release: exit 0, said once,
    with when. One ended by someone else (an admin) still exits 4."""
    from jupyter_sched.cli.main import EXIT_JOB_FAILED, EXIT_OK

    clear(server)
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    env = _env(tmp_path, server)
    mine = _granted_lease(server)
    assert ann.delete(f"leases/{mine}").status_code == 200
    said = _cli(env, "wait", mine, "--for", "5s")
    assert said.returncode == EXIT_OK, said.stdout + said.stderr
    line = said.stdout.strip().splitlines()[-1]
    # who, as its reader reads it (new user 23, N17: "released by ann" to ann herself)
    assert line.startswith(f"lease {mine}: released by you at ") and line.endswith(" UTC"), line
    assert line.count("released") == 1, line
    taken = _granted_lease(server)
    assert boss.delete(f"leases/{taken}").status_code == 200  # an admin ends ann's lease
    said = _cli(env, "wait", taken, "--for", "5s")
    assert said.returncode == EXIT_JOB_FAILED, said.stdout + said.stderr
    assert f"lease {taken}: released by an admin (boss) at " in said.stdout, said.stdout


# ---- N10: a bad choice setting on Jupyter's own command line -------------------------------------------------

def test_newuser16_n10_a_bad_choice_on_jupyters_command_line_is_told_its_choices_and_jupyters_file(
        tmp_path: Path) -> None:
    """N10: ``jupyter lab --SchedApp.gpu_sharing=sometimes`` was told that a list or dict setting cannot be
    given as text on the command line, and to edit ``jupyter-sched serve``'s config file. A choice names its
    choices and the option that sets one, and the file is the one the starting app reads."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "jupyter_server", "--no-browser", "--port=0", "--allow-root",
                           f"--ServerApp.root_dir={tmp_path}", "--IdentityProvider.token=t",
                           f"--SchedApp.db_url=sqlite:///{tmp_path / 'mine.sqlite'}",
                           "--SchedApp.gpu_sharing=sometimes"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    (line,) = [x for x in done.stderr.splitlines() if "bad configuration, not starting" in x]
    said = line.split("not starting: ", 1)[1]
    assert said == ("c.SchedApp.gpu_sharing = 'sometimes': must be one of team, any, none. Fix: "
                    "--SchedApp.gpu_sharing=team on the command line, or c.SchedApp.gpu_sharing = 'team' in "
                    "jupyter_server_config.py in your Jupyter config folder (~/.jupyter, or $JUPYTER_CONFIG_DIR)"), said
    assert "Traceback" not in done.stderr
    assert "list or dict" not in said and "jupyter_sched_serve_config" not in said


# ---- N4: an empty notebook path for a definition ------------------------------------------------------------

def test_newuser16_n4_cli_an_empty_notebook_or_script_is_told_it_is_empty(server: EmbeddedServer, tmp_path: Path) -> None:
    """N4 (CLI): ``definitions create '' --cron …`` read ``NOTEBOOK_OR_SCRIPT : <cwd> is a folder, not a file``
    (a stray space; an empty string was typed, not a folder). The panel's form refuses the empty field
    itself (labextension/test/definitions.test.ts, "new user 16 N4")."""
    said = _cli(_env(tmp_path, server), "definitions", "create", "", "--cron", "0 7 * * *", cwd=tmp_path)
    assert said.returncode == EXIT_USAGE, said.stderr
    line = said.stderr.strip().splitlines()[-1]
    assert line == ("jupyter-sched definitions create: NOTEBOOK_OR_SCRIPT must not be empty — give the notebook or "
                    "script each firing runs, e.g. reports/daily.ipynb [usage_error]"), line
    assert api(server, "tok-ann").get("definitions").json() == []


def test_newuser41_N1_a_sigkilled_nbclient_kernels_pending_lease_is_withdrawn_never_granted(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """newuser41 N1 (here for this module's server: no server of its own): an nbclient kernel asks with all GPUs
    busy (``%gpu request 1 --no-wait``) and is SIGKILLed — no exit hook runs. Its lease is withdrawn by the server
    within a cycle or two (its asking process is gone), never granted once the GPUs free. Failed before: pending,
    then granted to nobody."""
    import nbformat
    from nbclient import NotebookClient

    from jupyter_sched.services.leases_alive import ASKER_GONE

    clear(server)
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    blocker = boss.post("leases", json={"gpus": 2}).json()["id"]
    cells = ["%load_ext jupyter_sched", "%gpu request 1 --no-wait", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
    before = {r["id"] for r in ann.get("leases", params={"state": "pending,cancelled"}).json()}
    try:
        with pytest.raises(Exception, match=r"(?i)dead|died"):
            NotebookClient(nb, timeout=180, kernel_name="python3").execute(env=_env(tmp_path, server), cwd=str(tmp_path))
        (lease,) = [r for r in ann.get("leases", params={"state": "pending,cancelled"}).json()
                    if r.get("released_at_exit") and r["id"] not in before]
        deadline = time.monotonic() + 30
        while (seen := ann.get(f"leases/{lease['id']}").json())["state"] == "pending":
            assert time.monotonic() < deadline, seen
            time.sleep(0.2)
        assert seen["state"] == "cancelled", seen
        assert seen["message"] == f"request withdrawn by the server before any GPU was granted: {ASKER_GONE}", seen
    finally:
        boss.delete(f"leases/{blocker}")
