"""red33 R4: the service measured a running job's log through its wrapper's stdout and the folder walk left out
the entry NAMED ``output.log``; a job that renamed a file of its own over that name wrote 512 MiB past a 32 MiB
cap counted by nothing, and a FOLDER named ``output.log`` (30,000 files, 257 MiB) ran on and was kept after the
end by its name. Now the walk leaves out only the log the service measures (a regular file, that inode), the
wrapper's end sweep and the finished folder's trim keep the log's name only as a regular file. Real executor,
real wrapper, real jobs; sizes by sparse files (what is counted is a file's size), never times.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.log_budget import folder_extra, remove_extra
from jupyter_sched.executors.outside_caps import running_folder_use
from jupyter_sched.executors.wrapper import LEFT_BYTES, _own_file, _sweep_left, held_bytes
from tests.runtime.test_local_executor import wait_event
from tests.runtime.test_s30_red30_r3_outside_caps import CAP, FIND_FOLDER, start_writer

OVER = LEFT_BYTES + (2 << 20)  # past a running folder's bound (LEFT_BYTES with a 2 MiB log cap)
RENAME_OVER_LOG = (FIND_FOLDER + "new = os.path.join(folder, 'output.log.new')\n"
                   f"with open(new, 'wb') as f: f.truncate({OVER})\n"
                   "os.rename(new, os.path.join(folder, 'output.log'))\n")
FOLDER_AS_LOG = (FIND_FOLDER + "os.unlink(os.path.join(folder, 'output.log'))\n"
                 "os.mkdir(os.path.join(folder, 'output.log'))\n"
                 f"with open(os.path.join(folder, 'output.log', 'big'), 'wb') as f: f.truncate({OVER})\n")


def _stopped_for_its_folder(ex: LocalExecutor) -> str:
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code != 0, ended
    assert ended.message.startswith(f"its job folder {ex.job_dir('j-1')} held "), ended.message
    assert "beside its log while it ran, over the 10,000 files / 64 MiB a running job's folder may hold" in ended.message
    return ended.message


def test_red33_r4_a_file_renamed_over_the_log_is_counted_against_the_folder_bound(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    start_writer(ex, tmp_path, RENAME_OVER_LOG)
    assert "66 MiB in 1 files and folders" in _stopped_for_its_folder(ex)


def test_red33_r4_a_folder_named_output_log_is_counted_with_all_below_it(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=CAP)
    start_writer(ex, tmp_path, FOLDER_AS_LOG)
    assert "66 MiB in 2 files and folders" in _stopped_for_its_folder(ex)


def test_red33_r4_the_log_is_left_out_of_the_walk_only_as_the_measured_file(tmp_path: Path) -> None:
    folder = tmp_path / "j-1"
    folder.mkdir()
    log = folder / "output.log"
    log.write_bytes(b"x" * 1000)
    key = (log.stat().st_dev, log.stat().st_ino)
    assert running_folder_use(folder, None, log_key=key) == (0, 0)  # the log itself: the log cap's
    other = folder / "other"
    other.write_bytes(b"y" * 3000)
    os.rename(other, log)  # a job's file under the log's name, while the wrapper writes the old inode
    assert running_folder_use(folder, None, log_key=key) == (1, held_bytes(log.stat()))  # its disk (red35 R1)


def test_red33_r4_the_sweep_and_the_finished_trim_keep_the_logs_name_only_as_a_regular_file(tmp_path: Path) -> None:
    folder = tmp_path / "j-1"
    (folder / "output.log").mkdir(parents=True)
    (folder / "output.log" / "big").write_bytes(b"z" * 5000)
    (folder / "exit.json").write_text("{}")
    with os.scandir(folder) as entries:
        own = {entry.name: _own_file(entry, notebook=False) for entry in entries}
    assert own == {"output.log": False, "exit.json": True}  # the folder is the job's, swept as any other
    # counted as the disk they hold where that is more (red35 R1): the folder's own blocks and the file's
    held = held_bytes(os.lstat(folder / "output.log")) + held_bytes(os.lstat(folder / "output.log" / "big"))
    assert held >= 5000 and folder_extra(folder, None) == held
    assert remove_extra(folder, None) == held
    assert sorted(p.name for p in folder.iterdir()) == ["exit.json"]


def test_red33_r4_the_wrappers_sweep_keeps_only_its_own_log_under_the_logs_name(tmp_path: Path) -> None:
    folder = tmp_path / "j-1"
    folder.mkdir()
    log = folder / "output.log"
    log.write_text("the wrapper's log\n")
    key = (log.stat().st_dev, log.stat().st_ino)
    assert _sweep_left(folder, set(), log_key=key) is None  # its own log stays, nothing said
    with open(folder / "output.log.new", "wb") as f:
        f.truncate(OVER)
    os.rename(folder / "output.log.new", log)  # the job's file under the log's name
    said = _sweep_left(folder, set(), log_key=key)
    assert said is not None and "(66 MiB) in its job folder" in said and "they were removed" in said, said
    assert list(folder.iterdir()) == []
