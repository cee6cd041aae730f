"""red28 R5: a job kept any amount in its folder under the wrapper's own file names (``outcome.json``,
``wrapper.json``, ``executed.ipynb``) or ``.*.tmp`` — the red26 R4 sweep skipped them — and leftovers
under the sweep's bound (64 MiB a job) were summed per user nowhere (verify27 V3 counted output.log only).

Now the sweep removes the job's writes under the wrapper's names (a record over ``OWN_JSON_BYTES``,
``executed.ipynb`` of a job that is no notebook) and any ``.tmp``, and the per-user total counts each
finished job's whole folder: its oldest leftovers are removed first.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.wrapper import LEFT_BYTES, LEFT_FILES, OWN_JSON_BYTES
from jupyter_sched.model import Allocation
from tests.runtime.test_local_executor import job_for, wait_event

FIND_FOLDER = "folder = os.path.dirname(os.readlink('/proc/self/fd/1'))\n"  # its stdout is its folder's output.log
GPU = Allocation("n1", ("GPU-0",))
MIB = 1 << 20


def _sized(name: str, size: int) -> str:
    """Job lines making ``name`` in its folder ``size`` bytes long (sparse: no disk written)."""
    return f"with open(os.path.join(folder, {name!r}), 'wb') as fh:\n    fh.truncate({size})\n"


def _folder_bytes(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*"))


def test_red28_r5_a_jobs_big_writes_under_the_wrappers_names_and_tmp_are_removed_and_said(tmp_path: Path) -> None:
    """Failed before: ``.x.tmp`` and ``outcome.json`` (100 MiB each) were kept, nothing said."""
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, FIND_FOLDER + _sized(".x.tmp", 100 * MIB) + _sized("outcome.json", 100 * MIB)
                     + _sized("executed.ipynb", 1000) + "print('done', flush=True)\n"), GPU)
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    folder = ex.job_dir("j-1")
    assert sorted(p.name for p in folder.iterdir()) == ["exit.json", "output.log", "wrapper.json"]
    log = (folder / "output.log").read_text()
    assert f"[jupyter_sched] the job left 3 files (200 MiB) in its job folder {folder} beside its log, over the " \
           f"{LEFT_FILES} files / {LEFT_BYTES >> 20} MiB a job folder keeps: they were removed" in log, log


def test_red28_r5_an_outsized_record_alone_is_removed_small_files_kept(tmp_path: Path) -> None:
    """Under the sweep's bound: a ``wrapper.json`` past ``OWN_JSON_BYTES`` is the job's and goes, a
    ``.*.tmp`` too (the wrapper's atomic writes leave none); a small output of the job stays."""
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, FIND_FOLDER + _sized("wrapper.json", OWN_JSON_BYTES + 1) + _sized("a.txt", 10)
                     + _sized(".wrapper.json.1.ab.tmp", 10)), GPU)
    assert wait_event(ex, Exited).exit_code == 0  # type: ignore[attr-defined]
    folder = ex.job_dir("j-1")
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "exit.json", "output.log"]
    log = (folder / "output.log").read_text()
    assert f"[jupyter_sched] the job left 0.0625 MiB in its job folder {folder} under the service's own file names " \
           f"(.wrapper.json.1.ab.tmp, wrapper.json): they were removed" in log, log


def test_red28_r5_what_jobs_leave_in_their_folders_counts_in_the_users_total(tmp_path: Path) -> None:
    """Failed before: six jobs each leaving 3 MiB (under the sweep's 64 MiB) kept 18 MiB beside a 8 MiB
    total; now the oldest leftovers are removed before a launch, so the folders hold at most the total
    plus the last job's own leftovers."""
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=MIB, max_user_log_bytes=8 * MIB)
    for n in range(6):
        ex.start(job_for(tmp_path, FIND_FOLDER + _sized("keep.bin", 3 * MIB) + f"print('END {n}')\n",
                         job_id=f"j-{n}"), GPU)
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.exit_code == 0
    folders = {n: ex.job_dir(f"j-{n}") for n in range(6)}
    total = sum(_folder_bytes(f) for f in folders.values())
    assert total <= 8 * MIB + 3 * MIB + 64 * 1024, total  # was 18 MiB and more
    assert not (folders[0] / "keep.bin").exists() and (folders[5] / "keep.bin").exists()
    assert (folders[0] / "output.log").read_text().startswith("END 0")  # the log itself was not cut
    records = ("exit.json", "wrapper.json")
    assert ex.log_budget.kept("") == sum(p.lstat().st_size for f in folders.values() for p in f.iterdir()
                                         if p.name not in records)
