"""New user 27, N1: a notebook job's output reached its log only when the cell ended — `logs -f` of a
one-cell training notebook said "no output yet" for its whole run, and a run stopped mid-cell (time
limit, cancel, preemption) logged none of that cell's output. The runner now prints each output as the
kernel sends it (real kernel, through nbclient)."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from tests.notebook.test_nb_outcomes import notebook

pytestmark = pytest.mark.slow

DEADLINE_S = 120  # how long a loaded machine may take to start a kernel; never a speed claim


def _read_until(lines: queue.Queue[str], want: str, seen: list[str]) -> None:
    """Lines from the reader thread until one holds ``want`` (a blocked read never hangs the test)."""
    deadline = time.monotonic() + DEADLINE_S
    while not any(want in line for line in seen):
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no {want!r} in {DEADLINE_S} s: {seen}") from None
        assert line, f"the run ended before {want!r}: {seen}"
        seen.append(line)


def _reader(stream: IO[str], lines: queue.Queue[str]) -> threading.Thread:
    def pump() -> None:
        for line in iter(stream.readline, ""):
            lines.put(line)
        lines.put("")

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def test_newuser27_n1_a_cells_output_is_in_the_log_while_it_runs_and_kept_when_stopped_mid_cell(
        tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    nb = notebook(tmp_path / "train.ipynb", "print('setup ok')",
                  # the stderr line first: the kernel sends its output in order, so it has reached the runner's
                  # stderr when "epoch 1" is read (after it, the SIGTERM could come first: seen under load)
                  "import os, sys, time\nprint('warn', file=sys.stderr, flush=True)\n"
                  "for i in range(2):\n    print('epoch', i, flush=True)\n"
                  f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)\nprint('after the gate')",
                  "print('never')")
    out = tmp_path / "out" / "executed.ipynb"
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_sched.executors.run_notebook", str(nb), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None and proc.stderr is not None
    reader = _reader(proc.stdout, lines)
    try:
        _read_until(lines, "epoch 1", seen)  # before: only at the cell's end, which the gate holds back
        assert not gate.exists()
        proc.send_signal(signal.SIGTERM)  # a cancel / time limit in the middle of the cell
        assert proc.wait(timeout=60) == -signal.SIGTERM
    finally:
        if proc.poll() is None:  # failed: stop the runner as a cancel does (it shuts its kernel down)
            gate.touch()
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    reader.join(timeout=DEADLINE_S)
    while not lines.empty():
        seen.append(lines.get())
    log = "".join(seen)
    assert log.count("epoch 0\n") == 1 and log.count("epoch 1\n") == 1, log  # once: not again at the end
    assert log.index("setup ok") < log.index("[jupyter_sched] cell 1/3 done") < log.index("epoch 0"), log
    assert "cell 2/3 done" not in log and "after the gate" not in log and "never" not in log, log
    stderr = proc.stderr.read()
    assert stderr.count("warn\n") == 1, stderr
    assert "[jupyter_sched] stopped in cell 2 of 3 by SIGTERM" in stderr, stderr


def test_newuser27_n1_a_run_to_its_end_prints_each_output_once_and_the_cell_lines(tmp_path: Path) -> None:
    nb = notebook(tmp_path / "ok.ipynb", "print('a')\nprint('b')", "import sys\nprint('c', file=sys.stderr)",
                  "1 / 0")
    out = tmp_path / "out" / "executed.ipynb"
    proc = subprocess.run([sys.executable, "-m", "jupyter_sched.executors.run_notebook", str(nb), str(out)],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("a\nb\n[jupyter_sched] cell 1/3 done\n[jupyter_sched] cell 2/3 done\n"
                                  "[jupyter_sched] cell 3/3 failed\n"), proc.stdout
    assert proc.stderr.count("c\n") == 1 and proc.stderr.count("ZeroDivisionError") >= 1, proc.stderr
    assert proc.stderr.index("ZeroDivisionError") < proc.stderr.index("[jupyter_sched] failed:"), proc.stderr
