"""The README's test command: ``bash scripts/test-all`` (CI's ``.ci/run`` runs exactly that).

Issue 20, finding 1: the script stopped at the first failing stage, so one Python test failure
hid whether the frontend unit tests and the browser tests passed. Now every stage runs and the
summary lists every failure.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_stages(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in bash after sourcing the stage runner the way scripts/test-all does."""
    return subprocess.run(["bash", "-c", f"set -uo pipefail; source scripts/stages.sh; {script}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_every_stage_runs_after_a_failure_and_the_summary_names_each_failure() -> None:
    done = run_stages("""
        lint() { echo linting; false; echo never; }
        stage lint -- lint
        stage "python tests" -- bash -c 'exit 3'
        stage "frontend unit tests" -- echo frontend-ran
        stage "browser tests" --needs "frontend unit tests" -- echo browser-ran
        finish_stages 0
    """)
    assert done.returncode == 1
    out = done.stdout
    assert "linting" in out and "never" not in out  # set -e inside a stage
    assert "frontend-ran" in out and "browser-ran" in out  # later stages still ran
    last = out.strip().splitlines()[-1]
    assert last == "test-all: FAILED: lint (exit 1); python tests (exit 3)"


def test_a_stage_whose_prerequisite_failed_is_reported_not_run_and_fails_the_run() -> None:
    done = run_stages("""
        stage "python environment" -- false
        stage "python tests" --needs "python environment" -- echo ran
        finish_stages 0
    """)
    assert done.returncode == 1 and "\nran\n" not in done.stdout
    assert re.search(r"NOT RUN\s+-\s+-\s+python tests \(needs: python environment\)", done.stdout)
    assert done.stdout.strip().endswith("python tests (not run: needs python environment)")


def test_all_passing_stages_exit_zero_and_skips_are_listed_as_skips() -> None:
    done = run_stages("""
        stage a -- true
        skipped "browser tests" "SKIP_UI_TESTS is set"
        finish_stages 0
    """)
    assert done.returncode == 0, done.stdout
    assert "skipped" in done.stdout and done.stdout.strip().endswith("test-all: all stages passed")


def test_the_test_command_runs_lint_types_python_frontend_and_browser_stages() -> None:
    script = (ROOT / "scripts" / "test-all").read_text(encoding="utf-8")
    stages = re.findall(r'^\s*stage "([^"]+)"', script, flags=re.M)
    for want in ("lint (ruff)", "types (mypy --strict)", "import contracts", "python tests",
                 "frontend unit tests", "browser tests"):
        assert want in stages, stages
    assert "set -e\n" not in script and "set -euo" not in script  # a failing stage must not end the run
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))] == [
        "bash scripts/test-all"]


def test_the_summary_gives_each_stage_its_cpu_seconds_beside_its_wall_seconds() -> None:
    """CPU time is what a stage costs on any machine; on a loaded one wall time is mostly waiting."""
    done = run_stages("""
        spin() { python3 -c "sum(range(10 ** 8))"; }
        stage spin -- spin
        stage idle -- sleep 1
        finish_stages 0
    """)
    rows = {line.split()[-1]: line.split() for line in done.stdout.splitlines() if line.startswith("ok ")}
    wall, cpu = int(rows["spin"][1].rstrip("s")), int(rows["spin"][2].rstrip("s"))
    assert cpu >= 1 and wall >= cpu - 1, done.stdout
    assert rows["idle"][2] == "0s" and int(rows["idle"][1].rstrip("s")) >= 1  # sleeping costs no CPU
    assert "s CPU)" in done.stdout


def test_the_summary_at_the_end_repeats_failing_test_names_and_each_failed_stages_last_lines() -> None:
    """CI shows only the tail of the output: the last block alone must say what failed and where."""
    done = run_stages(r"""
        pytest_like() {
          for i in $(seq 200); do echo "tests/t.py::test_$i PASSED"; done
          echo "FAILED tests/core/test_a.py::test_one - AssertionError: boom"
          echo "ERROR tests/web/test_b.py::test_two - OSError: port in use"
          for i in $(seq 30); do echo "slowest $i"; done
          printf '\033[31m= 1 failed, 200 passed, 1 error =\033[0m\n'
          return 1
        }
        stage "python tests" --failures '^(FAILED|ERROR) ' -- pytest_like
        stage "frontend unit tests" -- bash -c 'echo "Test Files  1 failed"; exit 2'
        stage "browser tests" -- true
        finish_stages 0
    """)
    assert done.returncode == 1
    summary = done.stdout.split("== summary")[-1]
    assert "FAILED tests/core/test_a.py::test_one - AssertionError: boom" in summary
    assert "ERROR tests/web/test_b.py::test_two - OSError: port in use" in summary
    assert "= 1 failed, 200 passed, 1 error =" in summary  # last lines, colour codes taken out
    assert "slowest 1\n" not in summary and "test_5 PASSED" not in summary  # only the last lines
    assert "Test Files  1 failed" in summary  # a failed stage without a pattern: its last lines
    assert "browser tests" in summary and "--- browser tests" not in summary  # passed: no details


def test_a_server_left_behind_holding_the_output_does_not_keep_the_run_waiting(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    done = run_stages(f"""
        stage "leaves a server" -- bash -c 'sleep 300 & echo $! > {pid_file}; echo started'
        echo "next stage after $SECONDS s"
        kill "$(cat {pid_file})"  # the server this test started
        finish_stages 0
    """)
    assert done.returncode == 0, done.stdout
    waited = int(re.findall(r"next stage after (\d+) s", done.stdout)[0])
    assert waited < 30  # not the server's 300 s


def test_background_stages_run_beside_the_foreground_and_join_the_summary_with_their_failures() -> None:
    """CI on 01fe9ad took 1,884 s of its 1,800: the type check, frontend and browser stages now run
    beside the Python tests. Their results must still reach the summary and the exit status."""
    done = run_stages(r"""
        beside() {
          stage "types" -- bash -c 'sleep 2; echo types-ran'
          stage "browser tests" --failures '^ *✘ ' -- bash -c 'echo "  ✘ 3 panel > runs live"; exit 1'
          stage "needs types" --needs types -- echo needs-ran
        }
        background_stages "checks" -- beside
        stage "python tests" -- bash -c 'sleep 2; echo python-ran'
        join_background_stages "checks"
        finish_stages 0
    """)
    assert done.returncode == 1, done.stdout
    out = done.stdout
    # both ran at the same time: 2 s each, ~2 s in all (not 4)
    total = int(re.findall(r"== summary \((\d+) s wall", out)[0])
    assert total < 4, out
    # the background stages' output is printed whole after the foreground stage's, not interleaved
    assert out.index("python-ran") < out.index("types-ran") < out.index("needs-ran")
    summary = out.split("== summary")[-1]
    rows = re.findall(r"^(ok|FAILED)\s+\S+\s+\S+\s+(.+?)(?: \(exit \d+\))?$", summary, flags=re.M)
    assert rows == [("ok", "python tests"), ("ok", "types"), ("FAILED", "browser tests"), ("ok", "needs types")], rows
    assert "✘ 3 panel > runs live" in summary  # the failing browser test is named at the end
    assert out.strip().splitlines()[-1] == "test-all: FAILED: browser tests (exit 1)"


def test_a_background_stage_that_ends_meanwhile_does_not_add_its_cpu_to_the_foreground_stage() -> None:
    """Final runs of 91c34fb gave the Python tests 1,267 s of CPU: the browser tests' ~300 s, reaped by
    the shell while the Python tests ran, were counted in their figure too."""
    done = run_stages("""
        beside() { stage spin -- python3 -c "sum(range(10 ** 8))"; }
        background_stages "checks" -- beside
        stage idle -- sleep 4
        join_background_stages "checks"
        finish_stages 0
    """)
    assert done.returncode == 0, done.stdout
    rows = {line.split()[-1]: line.split() for line in done.stdout.splitlines() if line.startswith("ok ")}
    assert int(rows["spin"][2].rstrip("s")) >= 1, done.stdout  # the spin's CPU is its own
    assert rows["idle"][2] == "0s", done.stdout  # and not the idle stage's, which ran meanwhile


def python_tests_argv(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """The pytest arguments scripts/test-all's python stage gives for ``args`` (its functions, a stub pytest)."""
    script = (ROOT / "scripts" / "test-all").read_text(encoding="utf-8")
    functions = "".join(re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", script, flags=re.M | re.S).group(0)  # type: ignore[union-attr]
                        for name in ("python_tests", "in_parallel"))
    functions = re.search(r"^TEST_WORKERS=.*\n", script, flags=re.M).group(0) + functions  # type: ignore[union-attr]
    stub = tmp_path / "python"
    stub.write_text('#!/bin/bash\nprintf "%s\\n" "$@"\n')
    stub.chmod(0o755)
    done = subprocess.run(["bash", "-c", f'set -euo pipefail; PY={stub}\n{functions}\npython_tests "$@"', "test-all",
                           *args], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_s30_xdist_the_python_tests_run_in_3_processes_by_default_and_serially_on_request(tmp_path: Path) -> None:
    """``JUPYTER_SCHED_TEST_WORKERS=N`` runs the python stage in N pytest-xdist processes (3 when unset), one test file
    each (module fixtures start once), the caller's arguments after; with 0 or ``-p no:xdist`` it runs serially."""
    argv = python_tests_argv(tmp_path, "-k", "hub", "tests/hub", env={"JUPYTER_SCHED_TEST_WORKERS": "3"})
    assert argv[:2] == ["-m", "pytest"] and "--durations=60" in argv
    assert argv[-7:] == ["-n", "3", "--dist", "loadfile", "-k", "hub", "tests/hub"], argv  # the caller's last
    assert python_tests_argv(tmp_path, env={"JUPYTER_SCHED_TEST_WORKERS": "4"})[-4:] == ["-n", "4", "--dist",
                                                                                        "loadfile"]
    assert python_tests_argv(tmp_path, "-x")[-5:] == ["-n", "3", "--dist", "loadfile", "-x"]  # 3 by default
    for serial, env in ((("-x",), {"JUPYTER_SCHED_TEST_WORKERS": "0"}),
                        (("-p", "no:xdist", "-x"), {"JUPYTER_SCHED_TEST_WORKERS": "3"}),
                        (("-pno:xdist",), {"JUPYTER_SCHED_TEST_WORKERS": "3"})):
        argv = python_tests_argv(tmp_path, *serial, env=env)
        assert "-n" not in argv and "--dist" not in argv and argv[-len(serial):] == list(serial), (serial, env, argv)
    assert "-n" in python_tests_argv(tmp_path, "-p", "no:randomly", env={"JUPYTER_SCHED_TEST_WORKERS": "3"})


def test_s30_xdist_free_ports_lie_outside_the_ephemeral_range_and_are_free() -> None:
    """xdist run1: a hub's service port, picked by ``bind(0)`` from the range outgoing connections take their local
    ports from, was taken before the service started ("port 37405 is not available"); now drawn below it."""
    import socket

    from tests.pg import _free_port as pg_port
    from tests.ports import _ephemeral, free_port

    ephemeral = _ephemeral()
    for port in [free_port() for _ in range(20)] + [pg_port()]:
        assert port not in ephemeral, (port, ephemeral)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # free


def test_s30_xdist_what_test_processes_build_once_is_built_under_one_lock(tmp_path: Path) -> None:
    """The run-as venv and the proxy install are built under :func:`tests.locks.file_lock`: a second process waits."""
    from tests.locks import file_lock

    lock = tmp_path / "deep" / ".build.lock"
    probe = ("import fcntl, sys\nwith open(sys.argv[1], 'a') as f:\n    try:\n        fcntl.flock(f, fcntl.LOCK_EX | "
             "fcntl.LOCK_NB)\n    except BlockingIOError:\n        print('held')\n    else:\n        print('free')\n")
    import sys

    def other() -> str:
        return subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True, text=True,
                              timeout=60).stdout.strip()

    with file_lock(lock):
        assert other() == "held"
    assert other() == "free"
    source = (ROOT / "tests" / "runas_env.py").read_text() + (ROOT / "tests" / "hub" / "hub_harness.py").read_text()
    assert source.count("with file_lock(") == 2


def test_s31_flake_a_browser_test_server_whose_port_was_taken_starts_again_on_another(tmp_path: Path) -> None:
    """ui-tests/run.sh picked its servers' ports with ``bind(0)`` and closed them; a server binds its port
    seconds later (once its extensions loaded), and a port taken meanwhile ended that server while the
    other process's answer on the port passed for it ("up"): the tests then ran against no server of theirs.
    Now (ui-tests/servers.sh) a server is up only once its own page answers, and one that ended before
    starts again on another port. Real parts: ``jupyter lab`` with the browser tests' config, and another
    HTTP server that holds the first port drawn and answers ``/lab`` there; the draw is the one stand-in
    (the script's own ``ui_free_port``, made to hand out that port first, as a lost race would)."""
    import sys

    from tests.ports import free_port

    taken, pages = free_port(), tmp_path / "pages"
    pages.mkdir()
    (pages / "lab").write_text("<html>another process's page</html>")
    other = subprocess.Popen([sys.executable, "-m", "http.server", str(taken), "--bind", "127.0.0.1",
                              "--directory", str(pages)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import time
        import urllib.request

        deadline = time.monotonic() + 60
        while True:  # the other process answers on the port first
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{taken}/lab", timeout=5) as answer:
                    assert b"another process" in answer.read()
                    break
            except OSError:
                assert time.monotonic() < deadline, "the other HTTP server did not answer"
                time.sleep(0.1)
        venv = Path(sys.executable).parent.parent
        (tmp_path / "taken").write_text(str(taken))
        script = f"""
            set -euo pipefail
            VENV={venv} ROOT={ROOT} HERE={ROOT / 'ui-tests'} SCHED_UI_STATE={tmp_path / 'state'}
            mkdir -p "$SCHED_UI_STATE"
            export JUPYTER_CONFIG_DIR={tmp_path / 'config'} JUPYTER_DATA_DIR={tmp_path / 'data'}
            export JUPYTER_RUNTIME_DIR={tmp_path / 'runtime'} PATH="$VENV/bin:$PATH"
            source "$HERE/servers.sh"
            eval "drawn_$(declare -f ui_free_port)"
            ui_free_port() {{  # the first draw loses the race: {tmp_path / 'taken'} names a port now taken
              if [ -e {tmp_path / 'taken'} ]; then cat {tmp_path / 'taken'}; rm {tmp_path / 'taken'}; else drawn_ui_free_port; fi
            }}
            trap 'for pid in "${{SERVER_PIDS[@]}}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done' EXIT
            start_servers admin
            echo "admin up on ${{PORT_OF[admin]}}"
        """
        done = subprocess.run(["bash", "-c", script], cwd=ROOT / "ui-tests", capture_output=True, text=True,
                              timeout=400)
    finally:
        other.terminate()
        other.wait(timeout=30)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert f"the admin server ended before answering (port {taken} taken meanwhile?)" in out, out[-4000:]
    up = [line for line in done.stdout.splitlines() if line.startswith("admin up on ")]
    assert up and up[0] != f"admin up on {taken}", out[-4000:]


def test_s32_speed_a_run_writes_each_test_files_seconds_worker_and_span(tmp_path: Path) -> None:
    """``--durations=60`` named only the 60 slowest phases, so a whole run did not say where most of its minutes went
    nor how evenly the xdist workers ended. ``$JUPYTER_SCHED_FILE_SECONDS`` (scripts/test-all sets it beside its
    stage logs) now gets each file's summed seconds, the worker that ran it and when (tests/run_times.py).

    The inner run has its own ``--basetemp``: in CI's run of 2026-12-06 its tests ended at once, but the inner
    pytest, given no basetemp, made a numbered folder in /tmp/pytest-of-root and at its exit deleted the older
    numbered folders there (pytest keeps 3) — earlier whole runs' basetemps, hundreds of MB — past the 120-s
    timeout. It is serial (one interpreter, no execnet); which xdist worker ran a file is read from the
    controller's reports, checked in-process with reports shaped as xdist's controller receives them
    (``report.node.gateway.id``), a stand-in for a second xdist session inside this one."""
    import json
    import os
    import sys
    from types import SimpleNamespace

    from tests.run_times import FileSeconds

    suite = tmp_path / "suite"
    suite.mkdir()
    for name, tests in (("a", 1), ("b", 3)):  # the tests do not see the variable (nor what they start)
        (suite / f"test_{name}.py").write_text("import os\n" + "".join(
            f"\n\ndef test_{i}():\n    assert 'JUPYTER_SCHED_FILE_SECONDS' not in os.environ\n" for i in range(tests)))
    out = tmp_path / "seconds.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_SCHED_FILE_SECONDS": str(out)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "tests.conftest", f"--basetemp={tmp_path / 'inner'}"], cwd=suite, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(out.read_text())
    assert sorted(rows) == ["test_a.py", "test_b.py"], rows
    for row in rows.values():
        assert row["worker"] == "-" and 0 <= row["from_s"] <= row["to_s"] and row["seconds"] >= 0, rows

    collected = FileSeconds()
    for worker, nodeid, seconds in (("gw0", "tests/x.py::t1", 1.5), ("gw1", "tests/y.py::t1", 0.25),
                                    ("gw0", "tests/x.py::t2", 2.0)):
        node = SimpleNamespace(gateway=SimpleNamespace(id=worker))
        collected.add(SimpleNamespace(nodeid=nodeid, duration=seconds, node=node))
    assert {name: (row["worker"], row["seconds"]) for name, row in collected.files.items()} == {
        "tests/x.py": ("gw0", 3.5), "tests/y.py": ("gw1", 0.25)}
    script = (ROOT / "scripts" / "test-all").read_text(encoding="utf-8")
    assert "export JUPYTER_SCHED_FILE_SECONDS=${JUPYTER_SCHED_FILE_SECONDS:-$STAGE_LOGS/file-seconds.json}" in script


def test_s35_run_b_xdist_workers_draw_free_ports_from_disjoint_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run B (session 35): two workers drew port 31265 within a second — a hub's proxy API port and another test's
    listener — and a hub never started (8 errors) while the other test saw a connection it did not expect."""
    from tests import ports

    shares = []
    for worker in range(3):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
        shares.append(set(ports._own_share()))
        assert ports.free_port() in shares[-1]
    assert not (shares[0] & shares[1] or shares[0] & shares[2] or shares[1] & shares[2])
    assert all(len(share) >= 4000 for share in shares)
