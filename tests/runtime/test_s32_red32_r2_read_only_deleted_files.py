"""red32 R2: the running-folder bound counted EVERY deleted file a job held open or mapped on its log's disk, whoever
owned it and whatever the job did with it. Another account replaced a world-readable 1.2 GiB dataset a reader's job
had open (``mv data.new data.bin``) and the reader's job was ended at once, told to "write a job's outputs and
scratch files into your home" — it had written nothing; an admin's upgrade of a library every torch job maps
(``pip install -U torch`` rewrites ``libtorch_cuda.so``) would end them all.

A deleted file now counts against a job only when it is the job account's and the job may have written it: a
descriptor open for writing, a shared writable mapping, or modified since the job started. Real executor, real
wrapper, real jobs (embedded: the job runs as this test's account), real files spending real blocks; counts, never
times. A job writing into its own deleted file is still stopped (tests/runtime/test_s30_red30_r9_unlinked.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outside_caps import STOPPED_LOOKS
from jupyter_sched.executors.wrapper import LEFT_BYTES
from jupyter_sched.model import Allocation
from tests.runtime.test_local_executor import job_for, wait_event, wait_until
from tests.runtime.test_s30_red30_r3_outside_caps import CAP

OVER = (LEFT_BYTES >> 20) + 6  # MiB: past the running folder's bound (LEFT_BYTES where the log cap is smaller)


def _dataset(path: Path) -> Path:
    """A file spending OVER MiB of real blocks (what a dataset or a library holds on disk)."""
    with open(path, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, OVER << 20)
    return path


def _replace(path: Path) -> None:
    """Its owner replaces it the atomic way (a new file renamed over it): the file the job holds has no link left."""
    _dataset(path.with_suffix(".new")).rename(path)


def _reads_then_waits(tmp_path: Path, ex: LocalExecutor, body: str) -> Path:
    """Start a job running ``body`` (``data`` names the dataset), then saying so and waiting for a gate; return the gate
    once it said so."""
    gate, ready = tmp_path / "gate", tmp_path / "ready"
    ex.start(job_for(tmp_path, f"data = {str(tmp_path / 'data.bin')!r}\n" + body
                     + f"open({str(ready)!r}, 'w').close()\nwait_gate({str(gate)!r})\n"), Allocation("n1", ("GPU-0",)))
    wait_until(ready.exists, "the job's opening of the dataset")
    return gate


def _runs_on_after_replace(tmp_path: Path, ex: LocalExecutor, gate: Path) -> None:
    _replace(tmp_path / "data.bin")
    for _ in range(3 * STOPPED_LOOKS):
        assert ex.poll() == []  # looked at, not ended
    assert ex.tracked() == {"j-1"}
    gate.touch()
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended


def test_red32_r2_a_dataset_its_owner_replaces_does_not_end_the_job_reading_it(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    _dataset(tmp_path / "data.bin")
    gate = _reads_then_waits(tmp_path, ex, "fh = open(data, 'rb'); fh.read(65536)\n")
    _runs_on_after_replace(tmp_path, ex, gate)


def test_red32_r2_a_library_an_upgrade_replaces_does_not_end_the_job_that_maps_it(tmp_path: Path) -> None:
    """What ``import torch`` does with libtorch_cuda.so: open, map read-only (private), close the descriptor."""
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    _dataset(tmp_path / "data.bin")
    gate = _reads_then_waits(tmp_path, ex, "import mmap\nfh = open(data, 'rb')\n"
                             "m = mmap.mmap(fh.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)\n"
                             "fh.close(); m[:4096]\n")
    _runs_on_after_replace(tmp_path, ex, gate)


def test_red32_r2_another_accounts_deleted_file_is_not_the_jobs_write(tmp_path: Path) -> None:
    """Held open for writing, but another account's (a shared scratch file it may write): its owner's disk use,
    not the job's — the job runs on. (Its owner here: uid 65534, nobody; root makes it so.)"""
    if os.geteuid() != 0:
        import pytest

        pytest.skip("giving a file to another account takes root")
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    data = _dataset(tmp_path / "data.bin")
    os.chown(data, 65534, 65534)
    data.chmod(0o666)
    gate = _reads_then_waits(tmp_path, ex, "fh = open(data, 'r+b'); fh.read(65536)\n")
    data.unlink()  # its owner removes it
    for _ in range(3 * STOPPED_LOOKS):
        assert ex.poll() == []
    gate.touch()
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended


def test_red32_r2_its_own_file_held_for_writing_and_deleted_is_still_counted(tmp_path: Path) -> None:
    """The other side of the line: the job's own file, made before it started, opened for writing and unlinked by the
    job — the disk it holds is the job's to answer for: stopped at the folder's bound."""
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    _dataset(tmp_path / "data.bin")
    _reads_then_waits(tmp_path, ex, "fh = open(data, 'r+b'); os.unlink(data)\n")
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code != 0, ended
    assert ended.message.startswith(f"it held 1 deleted file open on the disk of its job folder {ex.job_dir('j-1')} "
                                    f"({OVER} MiB on disk"), ended.message
