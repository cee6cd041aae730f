"""Red team 16, R7: folders the service (or the test harness, as root) reuses must be its own.

A folder another account made first under a world-writable parent (/var/tmp, /tmp) can hold what
it planted: a venv whose interpreter the hub tests run as root (tests/runas_env.py), job records
the service reads back at restart (``<log_dir>/.state``). Real folders, really chowned to another
account of this host; skipped where this process cannot chown (not root).
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from jupyter_sched.errors import ExecutorError
from jupyter_sched.executors.jobdirs import JobDirs
from jupyter_sched.executors.safeopen import unsafe_folder
from tests.runas_env import build


def _other_uid() -> int:
    for entry in pwd.getpwall():
        if entry.pw_uid not in (0, os.geteuid()) and entry.pw_uid >= 1000:
            return entry.pw_uid
    return 65534


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown a folder to another account")


@needs_root
def test_red16_r7_runas_env_refuses_a_base_owned_by_another_account(tmp_path: Path) -> None:
    other = _other_uid()
    base = tmp_path / "jupyter_sched-runas"
    base.mkdir(mode=0o755)
    planted = base / "anything"
    planted.mkdir()
    (planted / "ready").write_text("ok\n")
    os.chown(base, other, other)
    with pytest.raises(RuntimeError) as info:
        build(base)
    assert f"owned by uid {other}" in str(info.value)
    assert "remove" in str(info.value) and str(base) in str(info.value)
    assert sorted(p.name for p in base.iterdir()) == ["anything"]  # nothing built or reused there


@needs_root
def test_red16_r7_runas_env_refuses_a_world_writable_base(tmp_path: Path) -> None:
    base = tmp_path / "jupyter_sched-runas"
    base.mkdir()
    os.chmod(base, 0o777)
    with pytest.raises(RuntimeError, match="group/other-writable"):
        build(base)


@needs_root
def test_red16_r7_log_dir_owned_by_another_account_is_refused(tmp_path: Path) -> None:
    other = _other_uid()
    root = tmp_path / "jobs"
    root.mkdir(mode=0o755)
    os.chown(root, other, other)
    with pytest.raises(ExecutorError) as info:
        JobDirs(root)
    assert info.value.field == "log_dir"
    assert f"owned by uid {other}" in str(info.value) and str(root) in str(info.value)


@needs_root
def test_red16_r7_state_folder_planted_by_another_account_is_refused(tmp_path: Path) -> None:
    other = _other_uid()
    root = tmp_path / "jobs"
    root.mkdir(mode=0o755)
    (root / ".state").mkdir(mode=0o700)
    os.chown(root / ".state", other, other)
    with pytest.raises(ExecutorError, match=r"\.state is owned by uid"):
        JobDirs(root)


def test_red16_r7_ancestors_need_the_sticky_bit_when_world_writable(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    mine = shared / "jobs"
    mine.mkdir(mode=0o755)
    assert "without the sticky bit" in (unsafe_folder(mine) or "")
    os.chmod(shared, 0o1777)  # as /tmp and /var/tmp: others cannot rename or remove what is mine
    assert unsafe_folder(mine) is None
    dirs = JobDirs(mine)
    assert dirs.root == mine.resolve()
    os.chmod(shared, 0o755)


def test_red16_r7_a_symlinked_log_dir_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o755)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert "not a directory" in (unsafe_folder(link) or "")
