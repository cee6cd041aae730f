"""red35 R3 (medium): the engine's per-tick look at the files running jobs' processes hold counted one read of a
process's whole ``/proc/<pid>/maps`` as one item of its ``FDS_PER_TICK`` budget — a process may hold 65,530 mappings
(5.6 MB of lines; one read took 275 ms), and a job may run thousands of processes: others' starts went from 0.47 to
2.9 s median. Now each line read is an item (the maps are read across ticks), and a process's descriptors are listed
as they are looked at.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.executors import outside_caps
from jupyter_sched.executors.outside_caps import _open_files

MAPPINGS = 6_000
# a process of many mappings: alternating protections keep the kernel from merging neighbours into one
MANY_MAPS = f"""
import ctypes, mmap, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
for i in range({MAPPINGS}):
    prot = mmap.PROT_READ | (mmap.PROT_WRITE if i % 2 else 0)
    libc.mmap(None, 4096, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
print('ready', flush=True)
time.sleep(600)
"""


class _Lines:
    """A ``/proc/<pid>/maps`` file that counts the lines handed out (by iteration or ``readline``)."""

    def __init__(self, raw: Any, seen: list[int]) -> None:
        self._raw, self._seen = raw, seen

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self._raw.close()

    def __iter__(self) -> Iterator[bytes]:
        for line in self._raw:
            self._seen[0] += 1
            yield line

    def readline(self) -> bytes:
        line: bytes = self._raw.readline()
        self._seen[0] += bool(line)
        return line


def test_red35_r3_a_jobs_process_mappings_bound_the_ticks_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: the first item of a process's mappings read all its 6,000+ lines. Now a tick's budget of items
    reads at most that many lines, and the rest is read at the next ticks."""
    proc = subprocess.Popen([sys.executable, "-c", MANY_MAPS], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        lines = [0]
        real_open = open

        def counting_open(path: Any, *args: Any, **kwargs: Any) -> Any:
            raw = real_open(path, *args, **kwargs)
            return _Lines(raw, lines) if str(path).endswith("/maps") else raw

        monkeypatch.setattr(outside_caps, "open", counting_open, raising=False)
        items = _open_files([proc.pid], device=0, skip=None, since=None, job_dir=tmp_path)
        budget = 500
        assert len(list(itertools.islice(items, budget))) == budget
        assert 0 < lines[0] <= budget, lines[0]  # was every line at the first item of the maps
        rest = sum(1 for _ in items)  # the next ticks go on where this one stopped
        assert lines[0] >= MAPPINGS and rest >= MAPPINGS - budget  # the mappings are real: none merged
    finally:
        proc.kill()
        proc.wait()

