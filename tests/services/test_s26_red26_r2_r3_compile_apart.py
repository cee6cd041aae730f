"""Red team 26, R2 (high) and R3: the service compiled users' scripts in its own process.

R2: a submit or dry run naming a big script (8 MiB of ``x=1``, by path or carried as ``source``) was
compiled in the service process — CPython's compile holds the GIL for the whole parse, so every user's
requests and the engine stopped for 15 to 35 s, and the process kept ~3 GiB. Now a script past
``userfiles.IN_PROCESS_BYTES`` is compiled in a child process (``services.script_check``) with CPU and memory limits, one at a time
service-wide (a check that finds the child busy is skipped: the job's run tells).
R3: a script whose compile recursed too deep (``x=1+1+…+1``) was a 500 with a traceback; now a 400
naming the field.

Real parts: the application services on a real SQLite store (tests/services/conftest.py's), real child processes, files on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched import userfiles
from jupyter_sched.errors import ValidationError
from jupyter_sched.services import Services, script_check
from jupyter_sched.services.models import SubmitJobRequest


@pytest.fixture
def compiled_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of what ``userfiles`` compiled in this process (its ``compile`` is the builtin otherwise)."""
    sizes: list[int] = []

    def spy(source: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(source))
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(userfiles, "compile", spy, raising=False)
    return sizes


BIG = b"x = 1\n" * 40_000 + b"def broken(:\n"  # 240 KB: past IN_PROCESS_BYTES, a syntax error on its last line


def test_red26_r2_a_big_script_by_path_is_compiled_apart_and_still_refused_naming_its_line(
        services: Services, tmp_path: Path, compiled_here: list[int]) -> None:
    assert len(BIG) > userfiles.IN_PROCESS_BYTES
    script = tmp_path / "big.py"
    script.write_bytes(BIG)
    user = services.caller("r26a", admin=False)
    with pytest.raises(ValidationError) as refused:
        services.jobs.dryrun(user, SubmitJobRequest(gpus=0, script=str(script)))
    assert refused.value.field == "script" and "line 40001: " in refused.value.message, refused.value.message
    assert all(size <= userfiles.IN_PROCESS_BYTES for size in compiled_here), compiled_here
    script.write_bytes(b"x = 1\n" * 40_000)  # the same size, correct: accepted
    services.jobs.dryrun(user, SubmitJobRequest(gpus=0, script=str(script)))
    assert all(size <= userfiles.IN_PROCESS_BYTES for size in compiled_here), compiled_here


def test_red26_r2_a_big_carried_source_is_compiled_apart(services: Services, compiled_here: list[int]) -> None:
    user = services.caller("r26a", admin=False)
    with pytest.raises(ValidationError) as refused:
        services.jobs.submit(user, SubmitJobRequest(gpus=0, script="big.py", source=BIG.decode()))
    assert refused.value.field == "source" and "line 40001: " in refused.value.message, refused.value.message
    assert all(size <= userfiles.IN_PROCESS_BYTES for size in compiled_here), compiled_here
    assert services.list_jobs(user=None, state=None) == []


def test_red26_r2_the_child_is_limited_and_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # a compile past the child's CPU limit is no refusal (not checked: the run tells), and nothing here waits on it
    monkeypatch.setattr(script_check, "APART_CPU_S", 1)
    heavy = b"x = [" + b"1," * 3_000_000 + b"]\n"  # ~6 MB: well past one CPU second to compile
    assert script_check.script_problem_apart(heavy, "heavy.py") is None
    gate = script_check._GATE
    assert gate.acquire(blocking=False)  # another large check in flight: this one is skipped, not queued
    try:
        assert script_check.script_problem_apart(BIG, "big.py") is None
    finally:
        gate.release()
    assert script_check.script_problem_apart(BIG, "big.py") == "line 40001: invalid syntax"


@pytest.mark.parametrize("body", ["x=" + "1+" * 50_000 + "1", "x=" + "-" * 100_000 + "1"])
def test_red26_r3_a_too_deep_script_is_a_400_naming_the_field(services: Services, body: str) -> None:
    # a check another test's server left in flight holds the one child (a busy child skips a check, which
    # test_red26_r2_the_child_is_limited_and_one_at_a_time shows): wait until it is free (the whole-suite run)
    assert script_check._GATE.acquire(timeout=60)
    script_check._GATE.release()
    user = services.caller("r26a", admin=False)
    with pytest.raises(ValidationError) as refused:
        services.jobs.dryrun(user, SubmitJobRequest(gpus=0, script="t.py", source=body))
    assert refused.value.field == "source", refused.value
    assert ("nests an expression too deeply" in refused.value.message
            or "too large for Python to compile" in refused.value.message), refused.value.message


def test_red26_r3_small_deep_scripts_in_the_cli_and_magics_path_are_words_too() -> None:
    said = userfiles.content_problem("script", ("x=" + "1+" * 30_000 + "1").encode(), "t.py")
    assert said is not None and "too deeply" in said


def test_verify26_v12_a_valid_script_the_child_runs_out_of_memory_on_is_not_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """verify26 V12: a valid 8 MiB script Python runs was refused "not a Python script: it is too large for Python to
    compile" — the child's memory limit, not the script. Out of its limits is "not checked" (the run tells)."""
    monkeypatch.setattr(script_check, "APART_MEMORY_BYTES", 256 << 20)
    monkeypatch.setattr(script_check, "APART_CPU_S", 30)
    valid = b"x = 1\n" * 600_000  # 3.6 MB: compiling it takes more than 256 MiB
    assert script_check.script_problem_apart(valid, "gen.py") is None


def test_red26_r3_a_deep_chain_is_said_from_a_large_parent_too() -> None:
    """The child told the parser's stack (a long unary chain) from its own memory limit by getrusage's peak,
    which Linux keeps across exec from a larger parent: from a service (or a test run) past 256 MiB the
    deep chain was "not checked" (the whole-suite run's failure). Told by VmHWM, reset at exec."""
    ballast = b"\x01" * (300 << 20)  # this process past a quarter of the child's limit
    assert len(ballast) and script_check.script_problem_apart(("x=" + "-" * 100_000 + "1").encode(), "t.py") == \
        userfiles.TOO_DEEP
