"""The notebook runner's outcomes with real kernels: a real out-of-memory kill, parameters, timeouts.

The OOM test runs the runner (and so its kernel) in a memory cgroup limited to 256 MiB and lets a
cell touch 1 GiB: the kernel's OOM killer sends SIGKILL, the cgroup counts the kill, and the reason
says so. It needs a writable cgroup memory controller (v1 here, v2 elsewhere) and skips naming it
when there is none (the SIGKILL path itself is covered by case 028 everywhere).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_sched.executors.outcome import describe_exit
from jupyter_sched.executors.run_notebook import EXIT_CELL_ERROR, EXIT_KERNEL_DIED, EXIT_TIMEOUT
from jupyter_sched.wording.kernels import install_in_its_env

pytestmark = pytest.mark.slow

LIMIT_MIB = 256


def notebook(path: Path, *sources: str, parameters: str | None = None) -> Path:
    cells = [new_code_cell(s) for s in sources]
    if parameters is not None:
        cell = new_code_cell(parameters)
        cell.metadata["tags"] = ["parameters"]
        cells.insert(0, cell)
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def run(nb: Path, out: Path, *args: str, cgroup_procs: Path | None = None) -> tuple[int, dict[str, object]]:
    def enter_cgroup() -> None:
        if cgroup_procs is not None:
            cgroup_procs.write_text(str(os.getpid()))

    proc = subprocess.run([sys.executable, "-m", "jupyter_sched.executors.run_notebook", str(nb), str(out), *args],
                          capture_output=True, text=True, timeout=180, preexec_fn=enter_cgroup)
    outcome = json.loads((out.parent / "outcome.json").read_text())
    return proc.returncode, outcome


@pytest.fixture
def memory_cgroup() -> Iterator[Path]:
    """A fresh memory cgroup limited to 256 MiB (v1 or v2); its ``cgroup.procs`` path."""
    name = f"jupyter_sched_test_{secrets.token_hex(4)}"
    v1, v2 = Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")
    limit = str(LIMIT_MIB * 1024 * 1024)
    group = None
    try:
        if (v1 / "cgroup.procs").exists():
            group = v1 / name
            group.mkdir()
            (group / "memory.limit_in_bytes").write_text(limit)
            swap = group / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text(limit)
        elif (v2 / "cgroup.controllers").exists() and "memory" in (v2 / "cgroup.controllers").read_text():
            group = v2 / name
            group.mkdir()
            (group / "memory.max").write_text(limit)
            (group / "memory.swap.max").write_text("0")
        else:
            pytest.skip("no cgroup memory controller on this machine")
    except OSError as exc:
        pytest.skip(f"cannot create a memory cgroup here ({exc}); run as root on a cgroup v1/v2 host")
    try:
        yield group / "cgroup.procs"
    finally:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                import time

                time.sleep(0.1)


def test_a_real_oom_kill_is_named_with_the_cell_and_the_peak_memory(tmp_path: Path, memory_cgroup: Path) -> None:
    nb = notebook(tmp_path / "big.ipynb", "import os", "rows = 10",
                  "buf = bytearray(1 << 30)\nbuf[::4096] = b'x' * (len(buf) // 4096)  # touch every page",
                  "print('never')")
    code, outcome = run(nb, tmp_path / "out" / "executed.ipynb", cgroup_procs=memory_cgroup)
    assert code == EXIT_KERNEL_DIED
    reason = str(outcome["reason"])
    assert reason.startswith("kernel died (signal 9; killed by the out-of-memory killer) during cell 3 "
                             "(cell starts: buf = bytearray(1 << 30))"), reason
    assert f"; memory limit {LIMIT_MIB} MiB — ask for more memory than its {LIMIT_MIB} MiB" in reason, reason
    peak = outcome["kernel"]["peak_memory_mib"]  # type: ignore[index]
    assert 0 < peak <= LIMIT_MIB + 16, "the kernel's sampled peak (a lower bound), within the limit"
    assert outcome["kernel"]["oom_killed"] is True  # type: ignore[index]


def test_parameters_are_injected_and_reported_with_the_run(tmp_path: Path) -> None:
    nb = notebook(tmp_path / "p.ipynb", "print(region, limit * 2)", parameters="region = 'us'\nlimit = 1")
    out = tmp_path / "out" / "executed.ipynb"
    code, outcome = run(nb, out, "--parameters", json.dumps({"region": "eu", "limit": 21}))
    assert code == 0 and outcome["status"] == "succeeded"
    assert outcome["parameters"] == {"region": "eu", "limit": 21}
    executed = nbformat.read(str(out), as_version=4)
    assert executed.cells[1].metadata.tags == ["injected-parameters"]
    assert executed.cells[2].outputs[0]["text"] == "eu 42\n"


def test_a_cell_failing_after_the_injected_cell_is_numbered_as_in_the_users_notebook(tmp_path: Path) -> None:
    nb = notebook(tmp_path / "f.ipynb", "x = 1", "raise ValueError(f'bad {region}')", parameters="region = 'us'")
    code, outcome = run(nb, tmp_path / "out" / "executed.ipynb", "--parameters", '{"region": "eu"}')
    assert code == EXIT_CELL_ERROR
    assert outcome["reason"] == ("cell 3 (In [4] in the executed notebook) raised ValueError: bad eu "
                                 "(cell starts: raise ValueError(f'bad {region}'))")


def test_newuser17_n16_the_cell_that_raised_is_failed_in_the_log_named_both_ways_with_no_tcp_warning(
        tmp_path: Path) -> None:
    """New user 17, N16: the log said "cell 3/3 done" for the cell that raised, its reason "cell 3"
    beside the traceback's "Cell In[4]" (the injected parameters cell counts there), and every notebook
    job's log began with ipykernel's "Kernel is running over TCP without encryption" warning."""
    nb_path = notebook(tmp_path / "n16.ipynb", "x = 1", "raise KeyError('ok')",
                       "raise ValueError(f'unknown region {region!r}')", parameters="region = 'us'")
    nb = nbformat.read(str(nb_path), as_version=4)
    nb.cells[2].metadata["tags"] = ["raises-exception"]  # an error the notebook expects is no failure
    nbformat.write(nb, str(nb_path))
    out = tmp_path / "out" / "executed.ipynb"
    proc = subprocess.run([sys.executable, "-m", "jupyter_sched.executors.run_notebook", str(nb_path), str(out),
                           "--parameters", '{"region": "mars"}'], capture_output=True, text=True, timeout=180)
    log = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_CELL_ERROR, log
    assert "over TCP" not in log and "eavesdropping" not in log, log
    assert "[jupyter_sched] cell 3/4 done" in log, log  # the raises-exception cell
    assert "[jupyter_sched] cell 4/4 failed" in log and "cell 4/4 done" not in log, log
    assert "In[5]" in log, log  # the traceback's numbering: parameters, injected, x = 1, the tagged cell, this one
    outcome = json.loads((out.parent / "outcome.json").read_text())
    said = "cell 4 (In [5] in the executed notebook) raised ValueError: unknown region 'mars'"
    assert str(outcome["reason"]).startswith(said + " (cell starts: "), outcome["reason"]
    assert f"[jupyter_sched] failed: {said}" in proc.stderr, proc.stderr
    assert nbformat.read(str(out), as_version=4).cells[-1].execution_count == 5


def test_s34_a_notebook_jobs_misspelled_import_is_asked_about_against_its_kernels_python(tmp_path: Path) -> None:
    """Session 33's leftover of newuser33 N1: a notebook job's ``import nump`` (numpy installed in its kernel's
    Python) was told only "check the spelling first" — the service did not know the kernel's Python. The runner
    names it in ``outcome.json`` and the fix asks about the near name, as a script job's does."""
    pytest.importorskip("numpy", reason="the near name asked about is numpy's; the test extra installs it")
    nb = notebook(tmp_path / "typo.ipynb", "import nump")
    code, outcome = run(nb, tmp_path / "out" / "executed.ipynb")
    assert code == EXIT_CELL_ERROR
    python = outcome["kernel"]["python"]  # type: ignore[index]
    assert os.path.isabs(python) and os.path.basename(python).startswith("python"), outcome
    said = describe_exit(EXIT_CELL_ERROR, job_dir=tmp_path / "out")
    assert said.startswith("cell 1 raised ModuleNotFoundError: No module named 'nump'"), said
    assert f"did you mean numpy? its kernel's Python, {python}, has numpy (and no nump)" in said, said
    assert "pip install nump" not in said, said
    # the file is its owner's to write: what is not one plain absolute path names no Python
    for forged in ("python3", "/tmp/python\x1b[2J", ["/usr/bin/python3"]):
        (tmp_path / "out" / "outcome.json").write_text(json.dumps({**outcome, "kernel": {"python": forged}}))
        said = describe_exit(EXIT_CELL_ERROR, job_dir=tmp_path / "out")
        assert "its kernel's Python has no nump" in said and "\x1b" not in said, said


def test_a_cell_timeout_names_the_limit(tmp_path: Path) -> None:
    nb = notebook(tmp_path / "t.ipynb", "import time", "time.sleep(60)")
    code, outcome = run(nb, tmp_path / "out" / "executed.ipynb", "--timeout", "2")
    assert code == EXIT_TIMEOUT
    assert outcome["reason"] == "cell 2 did not finish within the 2 s cell time limit (cell starts: time.sleep(60))"


def test_bad_parameters_fail_the_run_with_the_field(tmp_path: Path) -> None:
    nb = notebook(tmp_path / "b.ipynb", "x = 1")
    code, outcome = run(nb, tmp_path / "out" / "executed.ipynb", "--parameters", '{"1x": 3}')
    assert code == 2 and "1x" in str(outcome["reason"])


def test_a_stopped_run_says_which_cell_it_stopped_in_not_nbclients_cleanup(tmp_path: Path) -> None:
    """New user 5, finding 5: a cancelled notebook job's outcome was nbclient's cleanup traceback
    ("assert self.km is not None", exit code 1). SIGTERM — what cancel, a time limit and preemption
    send first — now ends the run with the cell it stopped in, the executed copy kept, and the
    signal as the exit status."""
    import signal
    import time

    nb = notebook(tmp_path / "sleepy.ipynb", "x = 1", "import time\nprint('sleeping', flush=True)\ntime.sleep(120)",
                  "print('never')")
    out = tmp_path / "out" / "sleepy.ipynb"
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_sched.executors.run_notebook", str(nb), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while "cell 1/3 done" not in (proc.stdout.readline() or ""):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    time.sleep(1.0)  # in cell 2 now
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == -signal.SIGTERM
    stderr = proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in stderr and "AssertionError" not in stderr, stderr
    outcome = json.loads((out.parent / "outcome.json").read_text())
    assert outcome["status"] == "stopped"
    assert outcome["reason"] == "stopped in cell 2 of 3 by SIGTERM (cell starts: import time)", outcome
    assert out.is_file()  # the executed copy, up to where it stopped


def test_newuser33_n4_a_kernel_that_cannot_start_is_one_sentence_not_jupyter_clients_traceback(tmp_path: Path) -> None:
    """N4: a notebook saved with a kernel not installed where it runs failed with jupyter_client's ``NoSuchKernel``
    traceback as its "last lines". The runner (itself, no server) now ends with one sentence naming the kernel,
    the kernels there are and the fix; a kernel whose ``kernel.json`` names a program that is gone (a deleted
    env) says that. Exit status 2 (bad input), ``failed`` in outcome.json, never ``succeeded``."""
    kernels = tmp_path / "share" / "kernels" / "gone"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({"argv": ["/nonexistent-env/bin/python", "-m", "ipykernel_launcher",
                                                              "-f", "{connection_file}"],
                                                     "display_name": "Old env", "language": "python"}))
    env = {**os.environ, "JUPYTER_PATH": str(tmp_path / "share")}
    for name, display, want in (
            ("nosuchkernel", "X", "its kernel 'nosuchkernel' (X) is not installed where the job runs — kernels there: "
                                  "gone, python3; change the notebook's kernel (Kernel → Change Kernel…, then save) or "
                                  f"{install_in_its_env('nosuchkernel', sys.executable)}"),
            ("gone", "Old env", "its kernel 'gone' (Old env) could not start: its program /nonexistent-env/bin/python "
                                "does not exist; change the notebook's kernel (Kernel → Change Kernel…, then save), "
                                "or reinstall that kernel in the Python it should use")):
        nb = new_notebook(cells=[new_code_cell("print(1)")])
        nb.metadata["kernelspec"] = {"name": name, "display_name": display, "language": "python"}
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, str(path))
        out = tmp_path / name / "executed.ipynb"
        proc = subprocess.run([sys.executable, "-m", "jupyter_sched.executors.run_notebook", str(path), str(out)],
                              capture_output=True, text=True, timeout=180, env=env)
        outcome = json.loads((out.parent / "outcome.json").read_text())
        assert (proc.returncode, outcome["status"]) == (2, "failed"), (proc.stderr, outcome)
        assert outcome["reason"] == f"notebook {path} cannot run: {want}", outcome["reason"]
        assert "Traceback" not in proc.stderr and "NoSuchKernel" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == f"[jupyter_sched] failed: {outcome['reason']}", proc.stderr
