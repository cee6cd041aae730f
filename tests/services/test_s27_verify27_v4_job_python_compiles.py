"""verify27 V4 (low): the script check compiled with the SERVICE's Python, not the job's.

Found in the code (this host has only Python 3.11): ``script_check`` ran ``[sys.executable, …]`` and the request's
check compiled in-process, while the refusal said "it would run with the job's Python" — with
``c.HubSchedApp.job_python`` a newer Python, ``def f[T](x: T): …`` would be refused; the reverse would pass and
fail at run time. Now :func:`~jupyter_sched.services.script_check.use_job_python` reads the job's interpreter's
version once at start; where it differs, every script (any size) is compiled by THAT interpreter in the child,
and none in the service's process.

This host has one Python version, so the plumbing is tested with a job "Python" that reports 3.99 and runs the
host's python3, noting each run: the child is run with it, the service compiles nothing itself.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched import userfiles
from jupyter_sched.errors import ValidationError
from jupyter_sched.services import Services, build_services, script_check
from jupyter_sched.services.models import SubmitJobRequest

HOST_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


@pytest.fixture
def job_python(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A job interpreter of another version (3.99 by its own word) that runs the host's python3, noting each run."""
    runs = tmp_path / "runs"
    fake = tmp_path / "python3.99"
    fake.write_text(f"""#!/bin/sh
echo "$@" >> {runs}
case "$*" in *version_info*) printf 3.99; exit 0;; esac
exec {HOST_PYTHON} "$@"
""")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    yield fake, runs
    script_check.use_job_python(None)


def test_verify27_v4_a_job_python_of_another_version_compiles_every_script(
        job_python: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, runs = job_python
    said = script_check.use_job_python(str(fake))
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert said == (f"script checks compile with the job's Python 3.99 ({fake}), not this service's {mine}: every "
                    "submitted script is compiled apart by it"), said
    assert script_check.job_python_differs()
    compiled_here: list[int] = []
    real_compile = compile

    def counting(source: bytes, *args: object, **kwargs: object) -> object:
        compiled_here.append(len(source))
        return real_compile(source, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.compile", counting)
    # before: compiled in this process with the service's Python (a small script never went to a child)
    assert script_check.script_problem_apart(b"def f(:\n", "small.py") == "line 1: invalid syntax"
    assert script_check.script_problem_apart(b"x = 1\n", "ok.py") is None
    assert compiled_here == [], compiled_here
    assert sum("small.py" in line for line in runs.read_text().splitlines()) == 1, runs.read_text()
    # the request's own (pure) check leaves a script's syntax to that Python
    assert userfiles.content_problem("script", b"def f(:\n", "small.py") is None


def test_verify27_v4_a_submit_is_refused_by_the_job_pythons_compile(
        tmp_path: Path, job_python: tuple[Path, Path]) -> None:
    fake, runs = job_python
    script_check.use_job_python(str(fake))
    services: Services = build_services({"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "l"),
                                         "simulated_gpus": 1, "telemetry_source": "off"})
    try:
        user = services.caller("v27", admin=False)
        with pytest.raises(ValidationError) as refused:
            services.jobs.dryrun(user, SubmitJobRequest(gpus=0, script="t.py", source="print('a'\n"))
        assert refused.value.field == "source", refused.value
        assert any("t.py" in line for line in runs.read_text().splitlines()), "not compiled by the job's Python"
    finally:
        services.store.close()


def test_verify27_v4_the_same_version_compiles_here_as_before() -> None:
    assert script_check.use_job_python(sys.executable) is None
    same = HOST_PYTHON if script_check.python_version(HOST_PYTHON) == f"{sys.version_info[0]}.{sys.version_info[1]}" else sys.executable
    assert script_check.use_job_python(same) is None and not script_check.job_python_differs()
    assert userfiles.content_problem("script", b"def f(:\n", "s.py") == "line 1: invalid syntax"
