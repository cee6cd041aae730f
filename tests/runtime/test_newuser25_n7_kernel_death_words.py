"""newuser25 N7: a notebook whose cell ran ``os.kill(os.getpid(), 9)`` failed with ``kernel died
(signal 9; likely out of memory) during cell 3 (cell starts: import os); peak memory 51 MiB`` — no job
memory limit, GBs free: the line's own figure contradicted its guess. Memory is named only with
evidence: the memory cgroup's OOM-kill count, or a sampled peak near the memory limit.
(The run itself, a real kernel killing itself: tests/notebook/test_nb_case_028.py.)
"""

from __future__ import annotations

from jupyter_sched.executors.outcome import kernel_death_sentence

CELL = {"cell_index": 3, "first_line": "import os"}


def test_newuser25_n7_a_sigkill_with_no_evidence_of_memory_is_said_as_it_is() -> None:
    counted = kernel_death_sentence(9, peak_mib=51.0, oom_killed=False, limit_mib=None, oom_counted=True, **CELL)
    assert counted == ("kernel died (signal 9, SIGKILL; no out-of-memory kill was counted) during cell 3 "
                       "(cell starts: import os); peak memory 51 MiB"), counted
    unknown = kernel_death_sentence(9, peak_mib=51.0, oom_killed=False, **CELL)  # no counter readable
    assert unknown == "kernel died (signal 9, SIGKILL) during cell 3 (cell starts: import os); peak memory 51 MiB"
    far = kernel_death_sentence(9, peak_mib=51.0, oom_killed=False, limit_mib=4096.0, oom_counted=True, **CELL)
    assert "memory" not in far.split(";")[0] and "memory limit" not in far, far  # a limit far above the peak


def test_newuser25_n7_memory_is_named_with_evidence() -> None:
    killed = kernel_death_sentence(9, peak_mib=1900.0, oom_killed=True, limit_mib=2048.0, oom_counted=True, **CELL)
    assert killed == ("kernel died (signal 9; killed by the out-of-memory killer) during cell 3 (cell starts: "
                      "import os); peak memory 1.9 GiB; memory limit 2.0 GiB — ask for more memory than its 2.0 GiB, e.g. "
                      "--memory 4GiB (jupyter-sched submit, %%schedule; the job card's Resubmit, Memory field), or make it use less"), killed
    near = kernel_death_sentence(9, peak_mib=1900.0, oom_killed=False, limit_mib=2048.0, oom_counted=False, **CELL)
    assert near == ("kernel died (signal 9; likely out of memory: its peak reached its memory limit) during cell 3 "
                    "(cell starts: import os); peak memory 1.9 GiB; memory limit 2.0 GiB — ask for more memory than its 2.0 GiB, "
                    "e.g. --memory 4GiB (jupyter-sched submit, %%schedule; the job card's Resubmit, Memory field), or make it use less"), near
    segv = kernel_death_sentence(11, peak_mib=None, oom_killed=False, **CELL)
    assert segv == "kernel died (signal 11, SIGSEGV) during cell 3 (cell starts: import os)", segv
