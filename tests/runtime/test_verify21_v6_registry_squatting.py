"""Verify 21, V6: any account could make the host's scheduler registry folder first and own it.

The registry (``<tmp>/.jupyter_sched-schedulers``, red team 21, R3) is made by the first scheduler; an account
that makes it before (sticky, its own) may delete every other scheduler's entry or lock them out, and the
schedulers still used it. Now a folder owned by another account than root and the scheduler's own (or
writable by others without the sticky bit) is not used: one WARNING names it, its owner and the fix, and
the scheduler registers in its own ``<folder>-<uid>``.

Real parts: a real second OS account (tests/accounts.py) makes the folder with its own ``mkdir``.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY, FOLDER, PREFIX, announce, own_folder
from tests.accounts import Account, os_accounts, shared_dir, skip_reason
from tests.runtime.test_newuser20_n17_host_schedulers import SERVER, _app

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))


@pytest.fixture
def tmp_like() -> Iterator[Path]:
    """A folder like /tmp: mode 1777, owned by root."""
    with shared_dir("jsched-v6-") as path:
        path.chmod(0o1777)
        yield path


@pytest.fixture
def squatter() -> Iterator[Account]:
    with os_accounts(1) as (account,):
        yield account


def _mkdir_as(account: Account, path: Path, mode: str = "1777") -> None:
    done = subprocess.run(["mkdir", "-m", mode, str(path)], user=account.uid, group=account.gid,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert path.lstat().st_uid == account.uid


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_verify21_v6_a_registry_folder_another_account_made_first_is_not_used_and_said_once(
        tmp_like: Path, squatter: Account, caplog: pytest.LogCaptureFixture) -> None:
    # fails before the fix: the scheduler registered in the squatter's folder, and nothing was said
    squat = tmp_like / FOLDER
    _mkdir_as(squatter, squat)
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        mine = announce(_app(), SERVER, folder=squat)
        try:
            own = tmp_like / f"{FOLDER}-{os.getuid()}"
            assert mine.path is not None and mine.path.parent == own
            assert mine.path.name == f"{PREFIX}{os.getuid()}-{os.getpid()}.json" and mine.path.is_file()
            assert mine.folder == own  # it looks there too, never in the squatted folder
            info = own.lstat()
            assert info.st_uid == os.getuid() and stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o022
            assert list(squat.iterdir()) == []  # nothing written where the squatter may delete it
            announce(_app(), SERVER, folder=squat).withdraw()  # a second start says nothing more (same pid)
        finally:
            mine.withdraw()
    said = [m for m in _warnings(caplog) if str(squat) in m]
    assert len(said) == 1, said
    assert f"owned by {squatter.name} (uid {squatter.uid})" in said[0]
    assert f"remove {squat}" in said[0] and f"${ENV_REGISTRY}" in said[0] and "root" in said[0]
    assert str(tmp_like / f"{FOLDER}-{os.getuid()}") in said[0]


def test_verify21_v6_when_the_own_folder_is_squatted_too_nothing_is_registered_and_it_is_said(
        tmp_like: Path, squatter: Account, caplog: pytest.LogCaptureFixture) -> None:
    squat = tmp_like / FOLDER
    _mkdir_as(squatter, squat)
    _mkdir_as(squatter, tmp_like / f"{FOLDER}-{os.getuid()}", mode="0777")
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        mine = announce(_app(), SERVER, folder=squat)
    mine.withdraw()
    assert mine.path is None
    assert list(squat.iterdir()) == [] and list((tmp_like / f"{FOLDER}-{os.getuid()}").iterdir()) == []
    said = _warnings(caplog)
    assert len(said) == 1 and "is not registered" in said[0] and f"{FOLDER}-{os.getuid()}" in said[0], said


def test_verify21_v6_root_made_and_own_folders_are_used_others_writable_without_sticky_is_not(
        tmp_like: Path) -> None:
    made = tmp_like / FOLDER
    assert own_folder(made) == made  # made here by this scheduler (1777, sticky)
    assert stat.S_IMODE(made.lstat().st_mode) == 0o1777
    mine = tmp_like / "mine"
    mine.mkdir(mode=0o700)
    assert own_folder(mine) == mine
    loose = tmp_like / "loose"
    loose.mkdir()
    loose.chmod(0o777)  # own, but any account may delete the entries in it
    assert own_folder(loose) == tmp_like / f"loose-{os.getuid()}"
    link = tmp_like / "link"
    link.symlink_to(mine)
    assert own_folder(link) == tmp_like / f"link-{os.getuid()}"
