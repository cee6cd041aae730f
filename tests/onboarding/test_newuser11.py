"""New user 11's findings of branch nu11-fix2 (/work/coord/notes/newuser11.md: N20, N2/N5, N8, N18, N9,
N10/N6, N13, N14, N3, N17, N21), each its own test, against a real embedded server (simulated GPUs),
the installed ``jupyter-sched`` command, the magics driven in this process with a real client, real
OS accounts for the hub-mode paths (root only) and a real JupyterHub for N14."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import EXIT_NO_SERVER, EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.core import MagicError, SchedMagics
from tests.onboarding.test_cli_firsthour import api, clear, module_server, wait_state
from tests.onboarding.test_newuser8_more import hub  # noqa: F401  (the fixture: a real JupyterHub)
from tests.onboarding.test_newuser10 import _env  # the same CLI environment as new user 10's tests
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu11", USERS)




def _cli(env: dict[str, str], *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120, cwd=cwd)


def _magics(server: EmbeddedServer, token: str = "tok-ann") -> SchedMagics:
    """The magics of a kernel of ``token``'s user (no IPython shell is needed for %schedule/%gpu lines)."""
    from jupyter_sched.client import connect

    return SchedMagics(None, client_factory=lambda: connect(server.url, token))


def _submit(server: EmbeddedServer, token: str, name: str, *command: str) -> str:
    made = api(server, token).post("jobs", json={"gpus": 0, "name": name, "command": list(command) or ["true"]})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def _audited(server: EmbeddedServer, user: str, field: str) -> dict[str, Any]:
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 15  # the refusal's audit record may land just after the answer
    while True:
        rows = boss.get("audit", params={"user": user, "limit": 1000}).json()
        found = [r for r in rows if (r.get("details") or {}).get("field") == field]
        if found:
            return dict(found[-1])
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


# ---- N20: a relative --workdir / working_dir ---------------------------------------------------------

def test_newuser11_n20_a_relative_workdir_is_read_from_the_callers_folder(server: EmbeddedServer,
                                                                           tmp_path: Path) -> None:
    """N20 (CLI): ``jupyter-sched submit --workdir sub -- pwd`` in a folder holding sub/ was refused
    "directory 'sub' does not exist on this server": sent as typed, read by the server elsewhere. The
    CLI makes it absolute against its own folder, as its default (the current folder) already is."""
    (tmp_path / "sub").mkdir()
    env = _env(tmp_path, server)
    made = _cli(env, "submit", "--gpus", "0", "--workdir", "sub", "--", "pwd", cwd=tmp_path)
    assert made.returncode == EXIT_OK, made.stdout + made.stderr
    job_id = made.stdout.split()[1].rstrip(":")
    assert api(server, "tok-ann").get(f"jobs/{job_id}").json()["working_dir"] == str(tmp_path / "sub")
    wait_state(server, "tok-ann", job_id, "succeeded")
    assert _cli(env, "logs", job_id).stdout.strip() == str(tmp_path / "sub")
    missing = _cli(env, "submit", "--gpus", "0", "--workdir", "nothere", "--", "pwd", cwd=tmp_path)
    assert missing.returncode == EXIT_USAGE, missing.stdout + missing.stderr
    assert f"'{tmp_path / 'nothere'}' does not exist" in missing.stderr, missing.stderr  # the path it looked at
    # the CLI's relative paths are its folder's, and it says so — never the server's rule (newuser41 n5)
    assert f"(a relative one is read in this shell's folder, {tmp_path})" in missing.stderr, missing.stderr
    assert "server's root" not in missing.stderr, missing.stderr


def test_newuser11_n20_rest_reads_a_relative_working_dir_where_a_job_without_one_starts(server: EmbeddedServer) -> None:
    """N20 (REST): a relative ``working_dir`` is read where a job that names none starts — embedded, the
    server's root directory (a relative script is read in working_dir: one rule) — and the answer shows
    it resolved; a missing one's hint says where relative ones are read. It was read in the server
    process's own current directory, which the refusal did not name."""
    root = server.workdir
    (root / "rel-nu11").mkdir(exist_ok=True)
    ann = api(server, "tok-ann")
    made = ann.post("jobs", json={"gpus": 0, "command": ["true"], "working_dir": "rel-nu11"})
    assert made.status_code == 201, made.text
    assert made.json()["working_dir"] == str(root / "rel-nu11"), made.json()
    dotted = ann.post("jobs", json={"gpus": 0, "command": ["true"], "working_dir": "./rel-nu11/"})
    assert dotted.status_code == 201 and dotted.json()["working_dir"] == str(root / "rel-nu11"), dotted.text
    refused = ann.post("jobs", json={"gpus": 0, "command": ["true"], "working_dir": "nothere-nu11"})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "working_dir" and str(root / "nothere-nu11") in error["message"], error
    assert f"a relative one is read in the server's root directory, {root}" in error["hint"], error
    clear(server)


def test_newuser11_n20_on_a_hub_a_relative_working_dir_is_the_owners_home_and_reaches_nothing_more(
        tmp_path: Path) -> None:
    """N20 (hub): a relative working_dir is read in the owner's home (``data`` = ``~/data``), looked at
    as the owner, so ``../<another user>/private`` is refused exactly as its absolute path is — it
    reaches nothing the owner's account could not. Real OS accounts and the hub-mode local executor."""
    from tests.accounts import os_accounts, shared_dir, skip_reason

    if skip_reason() is not None:
        pytest.skip(skip_reason() or "")
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.services import Services
    from jupyter_sched.services.models import SubmitJobRequest
    from jupyter_sched.store import Store, sqlite_url
    from tests.onboarding.test_hub_paths import hub_executor, owned

    with os_accounts(2) as (alice, bob), shared_dir() as root:
        owned(Path(alice.home) / "data", alice, 0o755)
        private = owned(Path(bob.home) / "private", bob, 0o700)
        services = Services(store=Store(sqlite_url(tmp_path / "hub.sqlite")),
                            inventory=SimulatedInventory(1, node="n1"), executor=hub_executor(root))
        try:
            caller = services.caller(alice.name, admin=False)
            job = services.jobs.submit(caller, SubmitJobRequest(gpus=0, command=["pwd"], working_dir="data"))
            assert job.working_dir == "~/data", job
            relative = os.path.relpath(private, alice.home)  # ../<bob>/private
            for given in (relative, str(private)):
                with pytest.raises(ValidationError) as refused:
                    services.jobs.submit(caller, SubmitJobRequest(gpus=0, command=["true"], working_dir=given))
                assert refused.value.field == "working_dir"
                assert refused.value.message.endswith(f"cannot be entered as {alice.name} on this server"), \
                    refused.value.message
            with pytest.raises(ValidationError) as missing:
                services.jobs.submit(caller, SubmitJobRequest(gpus=0, command=["true"], working_dir="nothere"))
            assert missing.value.message == (f"working_dir: directory '{alice.home}/nothere' does not exist on this "
                                             "server")
            assert "a relative one is read in your home directory" in (missing.value.hint or "")
        finally:
            services.store.close()


# ---- N2/N5: a unique name of mine for its id, everywhere ---------------------------------------------

def test_newuser11_n5_cli_cancel_takes_a_unique_name_of_mine(server: EmbeddedServer, tmp_path: Path) -> None:
    """N5: ``jupyter-sched cancel amy-long2`` (the owner's own job) said "no job has the id …: jobs are
    named by their ids …, not their names" while ``wait amy-long2`` worked. Cancel resolves a name as
    logs and wait do; several of that name → their ids."""
    env = _env(tmp_path, server)
    job_id = _submit(server, "tok-ann", "long-nu11", "sleep", "120")
    done = _cli(env, "cancel", "long-nu11")
    assert done.returncode == EXIT_OK and done.stdout.startswith(f"cancelled {job_id} ("), done.stdout + done.stderr
    twice = [_submit(server, "tok-ann", "twice-nu11", "sleep", "120") for _ in range(2)]
    both = _cli(env, "cancel", "twice-nu11")
    assert both.returncode == EXIT_USAGE and "2 of your jobs are named 'twice-nu11'" in both.stderr, both.stderr
    assert twice[0] in both.stderr and twice[1] in both.stderr, both.stderr
    assert "jobs are named by their ids" not in done.stderr
    clear(server)  # another user's name: test_newuser32_n3_cli_… (whose it is, as the queue shows it)


def test_newuser11_n2_the_magics_take_a_unique_name_in_wait_cancel_status_and_logs(server: EmbeddedServer,
                                                                                  capsys: pytest.CaptureFixture[str]
                                                                                  ) -> None:
    """N2: ``%schedule wait nbjob`` / ``%schedule cancel nbjob`` said "no job has the id 'nbjob': jobs
    are named by their ids (j-…), not their names" while ``%schedule logs nbjob`` printed its log. One
    resolver (the client's) for every command that takes a job id."""
    magics = _magics(server)
    done = _submit(server, "tok-ann", "nbjob-nu11", "echo", "hello nu11")
    wait_state(server, "tok-ann", done, "succeeded")
    capsys.readouterr()
    magics.schedule("wait nbjob-nu11 --for 30s")
    assert f"{done}" in capsys.readouterr().out
    magics.schedule("status nbjob-nu11")
    assert done in capsys.readouterr().out
    magics.schedule("logs nbjob-nu11")
    assert "hello nu11" in capsys.readouterr().out
    running = _submit(server, "tok-ann", "nbrun-nu11", "sleep", "120")
    magics.schedule("cancel nbrun-nu11")
    assert f"ancelled {running}" in capsys.readouterr().out
    assert api(server, "tok-ann").get(f"jobs/{running}").json()["state"] in ("cancelled", "admitted", "running")
    assert api(server, "tok-ann").get(f"jobs/{running}").json().get("stop_requested") or \
        api(server, "tok-ann").get(f"jobs/{running}").json()["state"] == "cancelled"
    with pytest.raises(MagicError) as unknown:
        magics.schedule("wait nosuch-nu11")
    assert "none of your jobs is named 'nosuch-nu11'" in str(unknown.value), unknown.value
    assert "jobs are named by their ids" not in str(unknown.value)
    clear(server)


# ---- newuser32 n3: the name of another user's job in the queue --------------------------------------------

def test_newuser32_n3_cli_a_name_only_another_users_live_job_has_says_whose_it_is(server: EmbeddedServer,
                                                                                   tmp_path: Path) -> None:
    """newuser32 n3: ``jupyter-sched cancel b-x`` (bob's job, which the queue lists with its name and owner) said
    "none of your jobs is named 'b-x', and no job has that id", while its id was answered "another user's job:
    you may cancel only your own". By name it now says whose it is — what the queue shows everyone — and what
    to do, in each command's words; an admin is given its id to type; another user's ENDED job (not in the
    queue) stays unnamed; the job is left alone."""
    env = _env(tmp_path, server)
    live = _submit(server, "tok-bob", "bx-n32n3", "sleep", "120")
    ended = _submit(server, "tok-bob", "gone-n32n3", "true")
    wait_state(server, "tok-bob", ended, "succeeded")
    cancel = _cli(env, "cancel", "bx-n32n3")
    assert cancel.returncode == EXIT_REFUSED, cancel.stdout + cancel.stderr
    assert cancel.stderr.startswith(f"jupyter-sched cancel: 'bx-n32n3' is bob's job {live} ("), cancel.stderr
    assert "), not yours: you may cancel only your own — ask bob or an admin [forbidden]" in cancel.stderr, cancel.stderr
    logs = _cli(env, "logs", "bx-n32n3")
    assert logs.returncode == EXIT_REFUSED and "not yours: you may read only your own jobs' logs — ask bob or an " \
        "admin" in logs.stderr, logs.stderr
    gone = _cli(env, "cancel", "gone-n32n3")
    assert "none of your jobs is named 'gone-n32n3', and no job has that id" in gone.stderr, gone.stderr
    assert ended not in gone.stderr and "bob" not in gone.stderr, gone.stderr
    admin = _cli(_env(tmp_path, server, "tok-boss"), "cancel", "bx-n32n3")
    assert admin.returncode == EXIT_USAGE, admin.stdout + admin.stderr
    assert f"'bx-n32n3' is bob's job {live} (" in admin.stderr and "a name is looked for among your own jobs " \
        f"only — give its id: `jupyter-sched cancel {live}`" in admin.stderr, admin.stderr
    job = api(server, "tok-bob").get(f"jobs/{live}").json()
    assert job["state"] in ("pending", "admitted", "running") and not job.get("stop_requested"), job
    clear(server)


def test_newuser32_n3_magics_a_name_only_another_users_live_job_has_says_whose_it_is(server: EmbeddedServer) -> None:
    """newuser32 n3 (magics): ``%schedule cancel b-x`` / ``status b-x`` of bob's queued job say whose it is and
    what the caller may do, as the CLI does; an admin's ``%schedule wait b-x`` is given ``%schedule wait j-…``."""
    live = _submit(server, "tok-bob", "bm-n32n3", "sleep", "120")
    magics = _magics(server)
    with pytest.raises(MagicError) as cancel:
        magics.schedule("cancel bm-n32n3")
    said = str(cancel.value)
    assert said.startswith(f"'bm-n32n3' is bob's job {live} (") and \
        "), not yours: you may cancel only your own. Ask bob or an admin" in said, said
    with pytest.raises(MagicError) as status:
        magics.schedule("status bm-n32n3")
    assert "not yours: you may look into only your own jobs (the queue shows what others see of it)" in \
        str(status.value), status.value
    with pytest.raises(MagicError) as admin:
        _magics(server, "tok-boss").schedule("wait bm-n32n3")
    assert f"`%schedule wait {live}`" in str(admin.value), admin.value
    clear(server)


def test_newuser32_n3_several_users_work_of_one_name_is_listed_with_owners_and_the_callers_own_lines_left_out(
) -> None:
    """newuser32 n3 (the words, pure): a name several of others' queue lines have lists whose each is (three,
    then a count) and whom to ask; an admin gets the ids to type. The caller's own are never among them: the
    server lists others' (test_newuser39_n6_the_server_looks_a_name_up_among_others_live_work_only)."""
    from jupyter_sched.wording.not_yours import named_by_others

    others = [{"id": f"j-{i}", "user": user, "state": "pending", "kind": "training"}
              for i, user in ((0, "bob"), (2, "cy"), (3, "bob"), (4, "dee"))]
    message, hint = named_by_others("train", others, admin=False, command="jupyter-sched hold")
    assert message == ("'train' is the name of 4 jobs of other users in the queue, none of them yours: bob's job j-0 "
                       "(pending), cy's job j-2 (pending), bob's job j-3 (pending) and 1 more: you may hold, release "
                       "or change only your own (an admin changes anyone's)"), message
    assert hint == "ask their owners or an admin", hint
    _, hint = named_by_others("train", others, admin=True, command="%schedule hold")
    assert hint == ("give the id of the one you mean: `%schedule hold j-0` or `%schedule hold j-2` or "
                    "`%schedule hold j-3`"), hint


def test_newuser11_n2_the_rest_route_no_longer_says_names_are_never_accepted(server: EmbeddedServer) -> None:
    """N2: the sentence "jobs are named by their ids (j-…), not their names" was untrue (the CLI and the
    magics take names); the route says what it takes and where names work."""
    refused = api(server, "tok-ann").get("jobs/nbjob/logs")
    assert refused.status_code == 404, refused.text
    error = refused.json()["error"]
    assert "not their names" not in error["message"] and "this route takes an id" in error["message"], error
    assert "also take the name of one of your jobs" in error["hint"], error


# ---- N8: a 0-GPU job holds no share of a GPU -----------------------------------------------------------

def test_newuser11_n8_a_zero_gpu_job_is_not_told_it_has_a_gpu(server: EmbeddedServer, tmp_path: Path) -> None:
    """N8: ``--gpus 0 -- env`` printed ``JUPYTER_SCHED_GPU_MILLI=1000`` and the 201 said ``"gpus": 0,
    "gpu_milli": 1000``. The model keeps gpu_milli as the share of *each* GPU; the job object says 0
    when there is none, and so does the job's environment. A 1-GPU job keeps 1000."""
    env = _env(tmp_path, server)
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["env"]})
    assert made.status_code == 201, made.text
    assert made.json()["resources"]["gpus"] == 0 and made.json()["resources"]["gpu_milli"] == 0, made.json()
    job = wait_state(server, "tok-ann", made.json()["id"], "succeeded")
    assert job["allocation"]["gpu_uuids"] == [] and job["allocation"]["gpu_milli"] == 0, job["allocation"]
    printed = _cli(env, "logs", job["id"]).stdout
    assert "JUPYTER_SCHED_GPU_MILLI=0\n" in printed, printed
    whole = api(server, "tok-ann").post("jobs", json={"gpus": 1, "command": ["env"]}).json()
    assert whole["resources"]["gpu_milli"] == 1000, whole
    ran = wait_state(server, "tok-ann", whole["id"], "succeeded")
    assert ran["allocation"]["gpu_milli"] == 1000 and "JUPYTER_SCHED_GPU_MILLI=1000\n" in _cli(env, "logs", ran["id"]).stdout
    clear(server)


# ---- N18 / N17: leases in `jupyter-sched jobs`, named as leases -------------------------------------------

def test_newuser11_n18_cli_jobs_lists_my_leases_too(server: EmbeddedServer, tmp_path: Path) -> None:
    """N18: ``jupyter-sched jobs`` ("ids for logs, wait, cancel") never listed leases, running or
    released, while ``%schedule jobs`` did and the queue's hint says ``cancel l-…`` releases them."""
    ann = api(server, "tok-ann")
    lease = ann.post("leases", json={"gpus": 1}).json()
    wait_state(server, "tok-ann", lease["id"], "running", "admitted")
    env = _env(tmp_path, server)
    listed = _cli(env, "jobs")
    assert listed.returncode == EXIT_OK and lease["id"] in listed.stdout, listed.stdout
    assert "Kernel leases are left out" not in _cli(env, "jobs", "--help").stdout
    assert _cli(env, "cancel", lease["id"]).returncode == EXIT_OK
    released = _cli(env, "jobs")
    assert lease["id"] in released.stdout, released.stdout  # released ones too, as finished jobs are
    clear(server)


def test_newuser11_n17_a_lease_asked_for_without_a_name_is_named_lease(server: EmbeddedServer) -> None:
    """N17: ``POST leases {"gpus": 1}`` made a lease named ``job`` in the queue. A lease's default name
    is ``lease``; a job's stays ``job``; a name given is kept."""
    ann = api(server, "tok-ann")
    assert ann.post("leases", json={"gpus": 0.5}).json()["name"] == "lease"
    assert ann.post("leases", json={"gpus": 0.5, "name": "mine"}).json()["name"] == "mine"
    assert ann.post("jobs", json={"gpus": 0, "command": ["true"]}).json()["name"] == "job"
    clear(server)
    for row in ann.get("leases", params={"state": "pending,admitted,running"}).json():
        ann.delete(f"leases/{row['id']}")


# ---- N9: every refused env key at once, one rule for JUPYTER_SCHED_* -----------------------------------

def test_newuser11_n9_every_refused_env_key_is_named_in_one_answer(server: EmbeddedServer) -> None:
    """N9: ``--env JUPYTER_SCHED_JOB_MARKER=zz --env JUPYTER_SCHED_HUB_URL=…`` took two failed submits
    to learn both were refused; JUPYTER_SCHED_JOB_ID / _GPU_MILLI were accepted with a note while the
    rest of the family was refused. One 400 names every refused key; of JUPYTER_SCHED_* only a
    client's connection (URL, TOKEN) passes, said in the message; the refusal is audited."""
    ann = api(server, "tok-ann")
    keys = ["JUPYTER_SCHED_JOB_MARKER", "JUPYTER_SCHED_HUB_URL", "JUPYTER_SCHED_JOB_ID", "JUPYTER_SCHED_GPU_MILLI",
            "HOME", "JUPYTERHUB_USER"]
    refused = ann.post("jobs", json={"gpus": 0, "command": ["true"], "env": {"SEED": "1", **{k: "x" for k in keys}}})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert all(k in error["message"] for k in keys), error
    assert sorted(error["details"]["refused"]) == sorted(keys), error
    assert error["field"] == f"env.{sorted(keys)[0]}" and all(k in error["hint"] for k in keys), error
    assert "may set only JUPYTER_SCHED_URL and JUPYTER_SCHED_TOKEN" in error["message"], error
    audited = _audited(server, "ann", f"env.{sorted(keys)[0]}")
    assert "JUPYTER_SCHED_HUB_URL" in audited["message"] and "HOME" in audited["message"], audited
    for key in ("JUPYTER_SCHED_JOB_ID", "JUPYTER_SCHED_GPU_MILLI"):  # one key: the answer as before, its own field
        alone = ann.post("jobs", json={"gpus": 0, "command": ["true"], "env": {key: "1"}})
        assert alone.status_code == 400 and alone.json()["error"]["field"] == f"env.{key}", alone.text
    fine = ann.post("jobs", json={"gpus": 0, "command": ["true"], "env": {
        "JUPYTER_SCHED_URL": "http://x/", "JUPYTER_SCHED_TOKEN": "t", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}})
    assert fine.status_code == 201, fine.text
    clear(server)


# ---- N10 / N6: the lease routes' words ------------------------------------------------------------------

def test_newuser11_n10_n6_every_lease_route_names_lease_id_and_says_leases(server: EmbeddedServer) -> None:
    """N10: GET/DELETE leases/{id} answered ``"field": "job_id"``, keepalive ``"lease_id"``: one name,
    the path parameter's, on every lease route (openapi names it so). N6: ``GET leases?user=bob`` as a
    non-admin said "listing other users' jobs"."""
    import yaml

    ann = api(server, "tok-ann")
    for method, path in (("GET", "leases/l-nothere-nu11"), ("DELETE", "leases/l-nothere-nu11"),
                         ("POST", "leases/l-nothere-nu11/keepalive")):
        answer = ann.request(method, path, json={} if method == "POST" else None)
        assert answer.status_code == 404 and answer.json()["error"]["field"] == "lease_id", (method, answer.text)
    spec = yaml.safe_load((ROOT / "jupyter_sched/extension/openapi.yaml").read_text())
    lease_paths = [p for p in spec["paths"] if p.startswith("/leases/")]
    assert lease_paths and all(p.startswith("/leases/{lease_id}") for p in lease_paths), lease_paths
    others = ann.get("leases", params={"user": "bob"})
    assert others.status_code == 403, others.text
    error = others.json()["error"]
    assert error["message"] == "listing other users' leases needs admin rights; ann is not an admin", error
    assert error["field"] == "user" and "leases" in error["hint"], error
    assert "listing other users' jobs" in ann.get("jobs", params={"user": "bob"}).json()["error"]["message"]


# ---- N13 / N14: the CLI's connection messages ----------------------------------------------------------

def test_newuser11_n13_a_refused_token_warns_about_ps_once(server: EmbeddedServer, tmp_path: Path) -> None:
    """N13: ``jupyter-sched --token wrong status`` said the `ps` warning twice (the note, then the error's
    tail); once is enough. Without --token the error still mentions it (no note was printed)."""
    env = _env(tmp_path, server)
    del env["JUPYTER_SCHED_TOKEN"]
    wrong = _cli(env, "--token", "wrong", "status")
    assert wrong.returncode == EXIT_REFUSED, wrong.stdout + wrong.stderr
    assert wrong.stderr.count("`ps`") == 1 and "refused the token given with --token" in wrong.stderr, wrong.stderr
    from_env = _cli({**env, "JUPYTER_SCHED_TOKEN": "wrong"}, "status")
    assert from_env.returncode == EXIT_REFUSED and from_env.stderr.count("`ps`") == 1, from_env.stderr


def test_newuser11_n14_a_hub_url_set_to_the_hubs_root_is_told_what_to_set_it_to(hub: str,  # noqa: F811
                                                                                  tmp_path: Path) -> None:
    """N14: with JUPYTER_SCHED_HUB_URL set to the hub's root the fix said "(or set JUPYTER_SCHED_HUB_URL)"
    — it was set. It says what it is and what to set it to. A real JupyterHub."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT),
                "JUPYTER_SCHED_HUB_URL": hub, "JUPYTER_SCHED_TOKEN": "a-hub-token"})
    for given in (hub, f"{hub}user/eve/"):
        said = _cli({**env, "JUPYTER_SCHED_HUB_URL": given}, "status")
        assert said.returncode == EXIT_NO_SERVER, said.stdout + said.stderr
        line = said.stderr.strip().splitlines()[-1]
        assert line.endswith(f"JUPYTER_SCHED_HUB_URL is {given}; set it to {hub}services/jupyter-sched/"), line
        assert "(or set JUPYTER_SCHED_HUB_URL)" not in line, line


# ---- N3: %gpu request N -------------------------------------------------------------------------------

def test_newuser11_n3_gpu_request_n_is_refused_naming_n(server: EmbeddedServer) -> None:
    """N3: ``%gpu request 99`` answered ``--gpus: needs 99 GPUs …``, an option %gpu request N does not
    have; it names N, as ``%gpu request 1.5`` does. ``--gpus 99`` keeps ``--gpus``."""
    magics = _magics(server)
    with pytest.raises(MagicError) as refused:
        magics.gpu("request 99 --no-wait")
    assert str(refused.value).startswith("%gpu request: needs 99 GPUs"), refused.value  # not "N:" (new user 15, N12)
    assert "--gpus" not in str(refused.value).split(".")[0], refused.value
    with pytest.raises((MagicError, UsageError)) as flagged:
        magics.gpu("request --gpus 99 --no-wait")
    assert str(flagged.value).startswith("--gpus"), flagged.value


@contextlib.contextmanager
def team_quota_and_a_lease_of_bobs(server: EmbeddedServer) -> Iterator[str]:
    """Ann's team guaranteed 1 GPU with a borrowing limit of 1, and bob (same team) holding a 1-GPU
    lease; yields the team. Afterwards the quotas are put back and the module's work is stopped."""
    boss = api(server, "tok-boss")
    before = boss.get("quotas").json()
    team = str(api(server, "tok-ann").get("me").json()["team"])
    try:
        assert boss.put("quotas", json={"quotas": [{"team": team, "gpu_model": "*", "guaranteed": 1,
                                                    "borrowing_limit": 1}]}).status_code == 200
        lease = api(server, "tok-bob").post("leases", json={"gpus": 1}).json()  # bob is in ann's team
        wait_state(server, "tok-bob", lease["id"], "running", "admitted")
        yield team
    finally:
        boss.put("quotas", json={"quotas": before.get("quotas", []), "teams": before.get("teams", [])})
        clear(server)
        for row in api(server, "tok-bob").get("leases", params={"state": "pending,admitted,running"}).json():
            api(server, "tok-bob").delete(f"leases/{row['id']}")


# ---- N21: the team's quota in `jupyter-sched status` ---------------------------------------------------

def test_newuser11_n21_status_shows_my_teams_quota_and_use(server: EmbeddedServer, tmp_path: Path) -> None:
    """N21: nothing in the CLI showed a user their team's quota; the first time they met the limit was
    a pending reason or a 422. ``status`` has a quota line from ``GET me``: guaranteed, borrowing
    limit, GPUs in use by the team and the caller's share — the team's sum, naming no one."""
    ann = api(server, "tok-ann")
    env = _env(tmp_path, server)
    with team_quota_and_a_lease_of_bobs(server) as team:
        me = ann.get("me").json()
        assert me["team_in_use"] == 1.0 and me["in_use"]["gpus"] == 0, me
        status = _cli(env, "status")
        assert status.returncode == EXIT_OK, status.stderr
        (line,) = [ln for ln in status.stdout.splitlines() if ln.startswith("quota")]
        assert line == (f"quota      team {team}: guaranteed 1 GPU, borrowing limit 1 GPU (at most 2 GPUs); 1 GPU in use by "
                        "the team, 0 GPUs of them yours"), line
        assert "bob" not in status.stdout
    plain = _cli(env, "status")
    assert f"quota      team {team} has no GPUs set aside and no limit (no quota)" in plain.stdout, plain.stdout


# ---- newuser37 n6: words behind the magic's options that went to the script --------------------------

def test_newuser37_nit6_schedule_run_names_the_option_words_it_gave_the_script(
        server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """newuser37 n6: ``%schedule run train_ok.py --steps 3 --gpus 1 --after J`` gave ``--after J`` to the
    script unsaid (it failed a second later: "unrecognized arguments"). The submit still passes it (the
    script may take it) and says so: not an option of %schedule run, script arguments after ``--``.
    ``train_ok.py --lr 0.1`` (the script's own words, before ours) gets no such note."""
    (tmp_path / "train_ok.py").write_text("import sys\nprint(sys.argv[1:])\n")
    monkeypatch.chdir(tmp_path)
    magics = _magics(server)
    job_id = magics.schedule("run train_ok.py --steps 3 --gpus 0 --after j-none-n37n6 --name n37n6")
    said = capsys.readouterr().out
    assert ("Note: --after j-none-n37n6 goes to train_ok.py as its argument: not an option of %schedule run "
            "(%schedule run --help lists its options); to say they are the script's, put them after --: "
            "%schedule run [OPTIONS] train_ok.py -- ARGS") in said, said
    assert said.index("Submitted ") < said.index("Note: --after"), said
    command = api(server, "tok-ann").get(f"jobs/{job_id}").json()["command"]
    assert command[-4:] == ["--steps", "3", "--after", "j-none-n37n6"], command
    magics.schedule("run train_ok.py --lr 0.1 --gpus 0 --name n37n6-own")
    assert "as its argument" not in capsys.readouterr().out
    clear(server)
