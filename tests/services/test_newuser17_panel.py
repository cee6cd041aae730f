"""New user 17's panel findings where the server's words change (issue 20: N6, N10, N17): what REST
says is what the panel shows, and the CLI and the magics say the same.

Real parts: a SQLite store, the local executor (real files, real modes), the service's own cycle.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.model.units import clock_text
from jupyter_sched.reclaim.candidates import standing_text
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SubmitJobRequest
from jupyter_sched.wording.quota import quota_text

# ---- N17: the panel's Quota says the server's sentence ------------------------------------------

def test_newuser17_n17_get_me_says_the_quota_sentence_of_status_and_the_magic_with_no_quota(services: Services) -> None:
    """The panel's fixed "No quota lines for default: you may use idle GPUs, preemptible" beside the
    CLI's "no GPUs guaranteed, no limit": ``GET me`` carries the one sentence, which the panel shows."""
    bo = services.caller("bo", admin=False)
    services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "30"]))
    services.engine.tick()
    me = services.accounting.me(bo)
    wire = me.model_dump(mode="json")
    assert wire["quota_text"] == quota_text(wire)  # the CLI's `status` and `%gpu` render this function
    assert wire["quota_text"] == (f"team {me.team} has no GPUs set aside and no limit (no quota); "
                                  "1 GPU in use by the team, 1 GPU of them yours")
    assert "preemptible" not in wire["quota_text"]


def test_newuser17_n17_get_me_says_a_quota_line_and_follows_what_is_held(services: Services) -> None:
    bo = services.caller("bo", admin=False)
    team = services.accounting.me(bo).team
    with services.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(Quota(team=team, guaranteed=2, borrowing_limit=1),)))
    before = services.accounting.me(bo).quota_text
    assert before == f"team {team}: guaranteed 2 GPUs, borrowing limit 1 GPU (at most 3 GPUs); 0 GPUs in use by the team, 0 GPUs of them yours"
    services.jobs.submit(bo, SubmitJobRequest(gpus=2, command=["sleep", "30"]))
    services.engine.tick()
    assert services.accounting.me(bo).quota_text.endswith("2 GPUs in use by the team, 2 GPUs of them yours")


# ---- N10: "not executable" says its fix once; the GPU ceiling has one hint -----------------------

def test_newuser17_n10_not_executable_says_its_fix_once_with_the_rule_as_data(services: Services, tmp_path: Path) -> None:
    """``'/etc/passwd' is not executable (chmod +x, or run it with its interpreter) on this server —
    make it executable, or run it with its interpreter, e.g. python FILE``: the fix twice. Now the
    rule says the problem, the hint the fix, and ``details.rule`` lets the panel say its own."""
    program = tmp_path / "data.txt"
    program.write_text("not a program\n")
    program.chmod(0o644)
    bo = services.caller("bo", admin=False)
    with pytest.raises(ValidationError) as info:
        services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=[str(program)]))
    err = info.value
    assert err.message == f"command: {str(program)!r} is not executable on this server"
    assert err.hint == "chmod +x it, or run it with its interpreter (CLI: -- python FILE)"
    assert f"{err.message} {err.hint}".count("interpreter") == 1
    assert err.field == "command" and (err.details or {}).get("rule") == "not_executable"
    # the dry run (the panel's Check fit) says the same
    with pytest.raises(ValidationError) as dry:
        services.jobs.dryrun(bo, SubmitJobRequest(gpus=1, command=[str(program)]))
    assert (dry.value.message, dry.value.hint) == (err.message, err.hint)


def test_newuser17_n10_check_fit_says_the_gpu_ceiling_as_submit_does(services: Services) -> None:
    """The panel's Check fit (``POST dryrun``) said ``must be <= 4096 (got 1e+308) — ask for at most
    the GPUs of one node`` where a submit (REST, CLI) said the largest node's number."""
    bo = services.caller("bo", admin=False)
    said = []
    for call in (services.jobs.submit, services.jobs.dryrun):
        with pytest.raises(ValidationError) as info:
            call(bo, SubmitJobRequest.model_validate({"gpus": 1e308, "command": ["true"]}))
        said.append((info.value.message, info.value.hint))
    assert said[0] == said[1], said
    assert said[1] == ("gpus must be <= 4 (got 1e308)", "the largest node here has 4 GPUs: ask for at most 4 per worker")


# ---- N6: the audit's words in the one time formatter ----------------------------------------------

def test_newuser17_n6_a_cpu_only_admission_is_said_cpu_only_not_the_wildcard(services: Services) -> None:
    root = services.caller("root", admin=True)
    bo = services.caller("bo", admin=False)
    cpu = services.jobs.submit(bo, SubmitJobRequest(gpus=0, command=["sleep", "30"]))
    gpu = services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=["sleep", "30"]))
    services.engine.tick()
    said = {r.job_id: r.message for r in services.audit.list(root, GetAuditRequest(action="admit")).root}
    assert said[cpu.id] == "admitted on vm (CPU only): fits", said
    assert said[gpu.id].startswith("admitted on vm (") and "(*)" not in said[gpu.id] and "CPU only" not in said[gpu.id]


def test_newuser17_n6_two_times_of_one_sentence_in_one_minute_carry_their_seconds() -> None:
    """A 1-min idle window read "warning at 13:51 UTC, its GPUs are released at 13:51 UTC" (13:51:01
    and 13:51:31): one moment to the reader."""
    from jupyter_sched.model.units import clock_pair

    now = datetime(2026, 12, 4, 13, 50, 40, tzinfo=timezone.utc)
    warn, deadline = now + timedelta(seconds=21), now + timedelta(seconds=51, microseconds=376737)
    said = standing_text(idle_s=40, rule="kernel idle and GPU < 5 % for 1 min", grace_s=30, stage="idle",
                         action="release", warn_at=warn, deadline=deadline, now=now)
    assert said.endswith("warning at 13:51:01 UTC, its GPUs are released at 13:51:31 UTC"), said
    # in different minutes, minutes only, as before
    assert clock_pair(now, now + timedelta(minutes=10), now) == ("13:50 UTC", "14:00 UTC")
    # a record's time: its date and seconds, never ISO with microseconds
    assert clock_text(deadline, None, seconds=True) == "Dec 4 13:51:31 UTC"
    assert not re.search(r"\d{4}-\d{2}-\d{2}T", said)


def test_newuser28_nit2_a_non_executable_sh_is_told_to_run_it_with_bash(services: Services, tmp_path: Path) -> None:
    """newuser28 nit n2: ``submit -- ./noexec.sh`` was told "(CLI: -- python FILE)"; the hint names its kind's
    interpreter as ``run_file_hint`` does for a file found in the working directory."""
    bo = services.caller("bo", admin=False)
    for name, runs in (("noexec.sh", "-- bash"), ("noexec.py", "-- python")):
        program = tmp_path / name
        program.write_text("echo hi\n")
        program.chmod(0o644)
        with pytest.raises(ValidationError) as info:
            services.jobs.submit(bo, SubmitJobRequest(gpus=1, command=[str(program)]))
        assert info.value.hint.startswith(f"chmod +x it, or run it with its interpreter (CLI: {runs} {program}"), \
            info.value.hint
        assert (info.value.details or {}).get("rule") == "not_executable"
