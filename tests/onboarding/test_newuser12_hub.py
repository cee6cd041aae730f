"""New user 12's REST / hub / hostile-user findings of branch nu12-fix2 (/work/coord/notes/newuser12.md,
steps 4 and 5) and session 11's leftovers of that area (nu11-fix2.md): each its own test, against a
real embedded server (simulated GPUs) or, for hub mode, a real JupyterHub with real OS accounts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.admission.gate import AUDIT_DETAILS_CHARS
from tests.accounts import skip_reason
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-amy": "amy", "tok-eve": "eve", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu12", USERS)


def _refusals(server: EmbeddedServer, user: str, field: str, count: int = 1) -> list[dict[str, Any]]:
    """``user``'s audited refusals naming ``field``, once ``count`` of them are on the record."""
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 15  # the refusal's audit record may land just after the answer
    while True:
        rows = boss.get("audit", params={"user": user, "action": "refused", "limit": 1000}).json()
        found = [r for r in rows if (r.get("details") or {}).get("field") == field]
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


# ---- session 11's leftover: the audit of a refused env names every key and why --------------------------

def test_nu11_leftover_the_audit_of_a_refused_env_records_every_key_and_why(server: EmbeddedServer) -> None:
    """The 400 of an env with several refused keys names them all (details.refused, grouped by why in
    its message), but its audit record kept only ``field = env.<first key>`` and the message's first
    500 characters: an admin reading the audit log of eve's probing could not see which keys she
    tried. The record keeps the answer's details whole: every refused key, grouped by why."""
    eve = api(server, "tok-eve")
    scheduler = [f"JUPYTER_SCHED_PROBE_NUMBER_{i:02d}_OF_A_LONG_LIST" for i in range(20)]
    keys = [*scheduler, "HOME", "USER", "NVIDIA_VISIBLE_DEVICES", "JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN"]
    refused = eve.post("jobs", json={"gpus": 0, "command": ["true"], "env": {"SEED": "1", **{k: "x" for k in keys}}})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert sorted(error["details"]["refused"]) == sorted(keys), error
    assert len(error["message"]) > 500  # the audit's message is cut there: the keys must be kept elsewhere
    (record,) = _refusals(server, "eve", error["field"])
    kept = record["details"]["error_details"]
    assert sorted(kept["refused"]) == sorted(keys), record
    why = kept["why"]
    assert sorted(k for names in why.values() for k in names) == sorted(keys), why
    assert len(why) == 4, why  # the scheduler's, the hub's, the device runtime's, the account's
    assert next(w for w, names in why.items() if "HOME" in names).startswith("names the account"), why
    assert next(w for w, names in why.items() if scheduler[0] in names).startswith("the scheduler's own"), why
    one = eve.post("jobs", json={"gpus": 0, "command": ["true"], "env": {"HOME": "/tmp"}})  # one key: the same
    assert one.status_code == 400 and one.json()["error"]["details"]["refused"] == ["HOME"], one.text


def test_nu11_leftover_a_refusals_audited_details_stay_bounded(server: EmbeddedServer) -> None:
    """Bounded rows (red-team 5 finding 1): an env of 2,500 refused keys (within the 64 KiB an env may
    hold) is answered whole, and its audit record keeps at most AUDIT_DETAILS_CHARS of details, saying
    how many keys it left off — the counts add up to every key."""
    eve = api(server, "tok-eve")
    keys = [f"JUPYTER_SCHED_K{i:04d}" for i in range(2500)]
    refused = eve.post("jobs", json={"gpus": 0, "command": ["true"], "env": dict.fromkeys(keys, "")})
    assert refused.status_code == 400, refused.text
    assert len(refused.json()["error"]["details"]["refused"]) == 2500
    (record,) = _refusals(server, "eve", "env.JUPYTER_SCHED_K0000")
    kept = record["details"]["error_details"]
    assert len(json.dumps(kept)) <= AUDIT_DETAILS_CHARS, len(json.dumps(kept))
    for names in (kept["refused"], *kept["why"].values()):
        shown = [n for n in names if not n.startswith("… ")]
        left_off = int(names[-1].split()[1])
        assert shown == keys[:len(shown)] and len(shown) + left_off == 2500, names[-3:]


# ---- N2: every problem of env in one answer -------------------------------------------------------------

def test_n2_every_problem_of_env_is_named_in_one_answer(server: EmbeddedServer) -> None:
    """N2: ``{"": "x", "B=": "y", "C": 5}`` was ``env.C must be a string (got 5)``, then, C fixed,
    ``env has an invalid variable name ''`` — 'B=' still unnamed, a third round needed (and a key
    like ``1X`` or a too-long value was refused by yet another check after those). One 400 names
    every problem, with each kind's names in details; the audit record keeps them."""
    amy = api(server, "tok-amy")
    env = {"": "x", "B=": "y", "C": 5, "1X": "1", "LONG": "v" * 40_000, "HOME": "/tmp", "SEED": "1"}
    refused = amy.post("jobs", json={"gpus": 0, "command": ["true"], "env": env})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "env", error
    for said in ("env.C must be a string (got 5)", "'', 'B=', '1X' are not variable names", "'LONG'", "HOME"):
        assert said in error["message"], (said, error["message"])
    assert error["details"]["not_text"] == ["C"] and error["details"]["invalid"] == ["", "B=", "1X"], error
    assert error["details"]["too_long"] == ["LONG"] and error["details"]["refused"] == ["HOME"], error
    assert "BATCH_SIZE" in error["hint"] and "remove HOME" in error["hint"], error
    (record,) = [r for r in _refusals(server, "amy", "env") if "not_text" in r["details"].get("error_details", {})]
    assert record["details"]["error_details"]["invalid"] == ["", "B=", "1X"], record
    for alone, field in (({"C": 5}, "env"), ({"1X": "1"}, "env"), ({"": "x"}, "env")):  # one problem: as before
        one = amy.post("jobs", json={"gpus": 0, "command": ["true"], "env": alone})
        assert one.status_code == 400 and one.json()["error"]["field"] == field, one.text
        assert ";" not in one.json()["error"]["message"], one.text


# ---- N3: working_dir shown resolved -------------------------------------------------------------------------

def test_n3_working_dir_is_shown_resolved_and_none_says_where_the_job_starts(server: EmbeddedServer) -> None:
    """N3: ``"working_dir": "../../../etc"`` answered ``/tmp/nu12/repo/../../../etc`` although the
    OpenAPI says the answer shows it resolved, and a job naming none answered ``null``. The answer
    (and the stored job, which is what starts) shows the folder: ``/etc``; none → the server's root
    directory, where an embedded server starts such a job."""
    amy = api(server, "tok-amy")
    root = str(server.workdir)
    depth = "../" * (len(server.workdir.parts) + 2)
    for given, want in ((f"{depth}etc", "/etc"), ("/tmp/../etc/", "/etc"), (".", root), ("sub/..", root),
                        (None, root)):
        made = amy.post("jobs", json={"gpus": 0, "command": ["true"], "working_dir": given})
        assert made.status_code == 201, made.text
        assert made.json()["working_dir"] == want, (given, made.json()["working_dir"])
        job_id = made.json()["id"]
        assert amy.get(f"jobs/{job_id}").json()["working_dir"] == want
        amy.delete(f"jobs/{job_id}")
    dry = amy.post("dryrun", json={"gpus": 0, "command": ["true"], "working_dir": "/tmp/./../etc"})
    assert dry.status_code == 200 and dry.json()["job"]["working_dir"] == "/etc", dry.text


# ---- N6: a variable the scheduler sets is not kept in the job's env -------------------------------------------

def test_n6_an_env_the_scheduler_sets_is_left_out_of_the_jobs_env(server: EmbeddedServer) -> None:
    """N6: ``--env CUDA_VISIBLE_DEVICES=0`` got the note "the value given is not used" but the job's
    answer still showed ``"env": {"CUDA_VISIBLE_DEVICES": "0"}``. The stored and shown env is what the
    job runs with: the note stays, the key is left out, and the job sees the allocation's value. (Red team
    15, R1: CUDA_VISIBLE_DEVICES itself is refused now; CUDA_DEVICE_ORDER keeps the note.)"""
    amy = api(server, "tok-amy")
    echo = "echo CVD=[$CUDA_VISIBLE_DEVICES] ORDER=$CUDA_DEVICE_ORDER SEED=$SEED"
    made = amy.post("jobs", json={"gpus": 0, "command": ["sh", "-c", echo],
                                  "env": {"CUDA_DEVICE_ORDER": "FASTEST_FIRST", "SEED": "7"}})
    assert made.status_code == 201, made.text
    job = made.json()
    assert job["env"] == {"SEED": "7"}, job["env"]
    for name in ("CUDA_DEVICE_ORDER",):
        assert f"env {name} is set by the scheduler from the job's allocation; the value given is not used" \
            in job["warnings"], job["warnings"]
    assert amy.get(f"jobs/{job['id']}").json()["env"] == {"SEED": "7"}
    deadline = time.monotonic() + 60
    while amy.get(f"jobs/{job['id']}").json()["state"] not in ("succeeded", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.3)
    assert "CVD=[] ORDER=PCI_BUS_ID SEED=7" in amy.get(f"jobs/{job['id']}/logs").json()["text"]  # 0 GPUs: none visible


# ---- N5: LD_PRELOAD / PATH are the owner's own process environment -----------------------------------------

@pytest.mark.skipif(skip_reason() is not None or shutil.which("gcc") is None,
                    reason=skip_reason() or "gcc is missing (a preload library is compiled for the test)")
def test_n5_ld_preload_and_path_reach_only_the_jobs_own_command(tmp_path: Path) -> None:
    """N5 (lead's decision): LD_PRELOAD, LD_LIBRARY_PATH, PATH, PYTHONPATH stay accepted (the user's own
    process, as Slurm's --export takes them), provided they never reach a process with other
    privileges than the submitter's. The executor switches to the owner in Popen(user=) before exec,
    so no root process ever starts with them; and now the wrapper (which records the job's end for the
    service) starts without them too: the launch line carries them, and the wrapper adds them to the
    command it starts. Real OS account, hub-style executor (clean environment, run as the owner):

    - a real preload library (compiled here) records the pid and euid of every process that loads
      it: loaded, only ever as the owner, never by the wrapper (its pid from wrapper.json);
    - ``LD_PRELOAD=/nonexistent.so``: the loader's complaint is in the job's own log, not in the
      wrapper's stderr (the service's file): the wrapper never saw it;
    - ``PATH=/tmp/evil-nu12:…``: the job's command sees it (the wrapper runs from the job python by
      its full path either way)."""
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.executors.runas import AccountMapping
    from jupyter_sched.model import Allocation
    from tests.accounts import account_python, os_accounts, shared_dir
    from tests.runtime.builders import make_job

    source = tmp_path / "probe.c"
    source.write_text('#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n'
                      '__attribute__((constructor)) static void probe(void) {\n'
                      '  const char *log = getenv("PRELOAD_LOG"); if (!log) return;\n'
                      '  FILE *f = fopen(log, "a"); if (!f) return;\n'
                      '  fprintf(f, "%d %d\\n", (int)getpid(), (int)geteuid()); fclose(f); }\n')
    python = account_python() or ""
    with shared_dir() as root, os_accounts(1) as (eve,):
        library = root / "probe.so"
        built = subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True,
                               text=True)
        assert built.returncode == 0, built.stderr
        library.chmod(0o755)
        executor = LocalExecutor(root / "jobs", job_python=python, base_env=dict(os.environ), clean_env=True,
                                 require_run_as=True)

        def run(job_id: str, env: dict[str, str], script: str) -> tuple[str, str, Path]:
            job = make_job(job_id, user=eve.name, gpus=0, command=("sh", "-c", script), env=env)
            handle = executor.start(job, Allocation("n1", ()), AccountMapping().resolve(eve.name))
            deadline = time.monotonic() + 60
            while not any(type(e).__name__ == "Exited" for e in executor.poll()):
                assert time.monotonic() < deadline, executor.logs(job_id)[0]
                time.sleep(0.1)
            err = executor.dirs.err_path(job_id)
            return executor.logs(job_id)[0], err.read_text() if err.exists() else "", Path(str(handle.data["job_dir"]))

        log = Path(eve.home) / "preload.log"
        text, wrapper_err, job_dir = run("j-preload", {"LD_PRELOAD": str(library), "PRELOAD_LOG": str(log)},
                                         "echo ran; true")
        loaded = [tuple(int(x) for x in line.split()) for line in log.read_text().splitlines()] if log.exists() else []
        wrapper_pid = json.loads((job_dir / "wrapper.json").read_text())["pid"]
        assert loaded and {euid for _, euid in loaded} == {eve.uid}, (loaded, text)  # only ever as eve
        assert wrapper_pid not in {pid for pid, _ in loaded}, (wrapper_pid, loaded)  # never the wrapper

        text, wrapper_err, _ = run("j-missing", {"LD_PRELOAD": "/nonexistent-nu12.so"}, "echo ran")
        assert "nonexistent-nu12.so" in text and "ran" in text, text  # the job's own processes complain
        assert "nonexistent-nu12.so" not in wrapper_err, wrapper_err  # the wrapper never loaded it

        text, wrapper_err, _ = run("j-path", {"PATH": "/tmp/evil-nu12:/usr/bin:/bin"}, 'echo "PATH=$PATH"')
        assert "PATH=/tmp/evil-nu12:/usr/bin:/bin" in text and not wrapper_err.strip(), (text, wrapper_err)
