"""Red team 21, R3: names planted in the host's registry folder froze every server's event loop.

The look for other schedulers on this host (new user 20, N17) globbed and sorted the whole of /tmp,
``stat``-ed ``/proc/<pid>`` for every entry-shaped name (``0001004`` read as uid 1004) and did it on the
server's IO loop once a minute: 100,000 planted names cost ~5 s of every minute for every user. Now
the registry has its own folder (sticky, not a link), a look reads a bounded number of names, checks a
bounded number of entries, refuses leading zeros, and runs in a worker thread.

Real parts: the registry folder (a temporary one), real files of another account (``nobody``: root runs
the tests) and a live process of it; the look's own cost is counted in ``/proc`` looks, not timed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.extension import host_schedulers as hs
from jupyter_sched.extension.host_schedulers import (
    MAX_ENTRIES,
    PER_UID,
    PREFIX,
    announce,
    others,
    register,
    usable_folder,
)
from tests.runtime.test_newuser20_n17_host_schedulers import NOBODY, SERVER, _app, _entry

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="another account's process and files need root")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "registry"
    assert usable_folder(path, create=True) == ""
    return path



def _plant(folder: Path, count: int, uid: int = NOBODY) -> None:
    """``count`` empty entry-shaped files (pids that do not run), as any account can plant them."""
    for i in range(count):
        fd = os.open(folder / f"{PREFIX}{uid}-{4_000_000 + i}.json", os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)


def test_red21_r3_a_flood_of_planted_names_costs_a_look_a_bounded_number_of_checks(
        folder: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    _plant(folder, 3000, uid=NOBODY)  # another account's flood (owned by it: the names are its own)
    for i in range(3000):  # and names claiming other accounts, owned by the planter
        fd = os.open(folder / f"{PREFIX}{1000 + i}-{5_000_000 + i}.json", os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)
        os.chown(folder / f"{PREFIX}{1000 + i}-{5_000_000 + i}.json", NOBODY, NOBODY)
    alive_calls: list[int] = []
    real_alive = hs._alive

    def counting(pid: int, uid: int) -> bool:
        alive_calls.append(pid)
        return real_alive(pid, uid)

    monkeypatch.setattr(hs, "_alive", counting)
    assert others(me_pid=os.getpid(), folder=folder) == []
    assert len(alive_calls) <= PER_UID + MAX_ENTRIES, len(alive_calls)  # before: one per name (6,000)
    mine = hs.Registration(None, me=hs.HostScheduler("root", 0, os.getpid(), "", 1, False, "jupyter lab"),
                           folder=folder)
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        mine.look()
        mine.look()
    short = [r.getMessage() for r in caplog.records if "more names than a look reads" in r.getMessage()]
    assert len(short) == 1, short  # said once, not every minute


def test_red21_r3_names_with_leading_zeros_are_no_entries(folder: Path, nobodys: subprocess.Popen[bytes]) -> None:
    for zeros in range(1, 10):
        path = folder / f"{PREFIX}{'0' * zeros}{NOBODY}-{nobodys.pid}.json"
        path.write_text('{"url": "http://fake/", "gpus": 8}')
        os.chown(path, NOBODY, NOBODY)
        path = folder / f"{PREFIX}{NOBODY}-{'0' * zeros}{nobodys.pid}.json"
        path.write_text('{"url": "http://fake/", "gpus": 8}')
        os.chown(path, NOBODY, NOBODY)
    assert others(me_pid=os.getpid(), folder=folder) == []  # before: 18 "other schedulers"
    _entry(folder, NOBODY, nobodys.pid, NOBODY)
    assert [s.pid for s in others(me_pid=os.getpid(), folder=folder)] == [nobodys.pid]  # the real one, once


def test_red21_r3_a_folder_others_could_swap_entries_in_is_not_used(tmp_path: Path,
                                                                   nobodys: subprocess.Popen[bytes]) -> None:
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)  # writable by every account, not sticky: any account renames another's entry
    _entry(open_folder, NOBODY, nobodys.pid, NOBODY)
    assert "sticky" in usable_folder(open_folder)
    assert others(me_pid=os.getpid(), folder=open_folder) == []
    me = hs.HostScheduler("root", os.getuid(), os.getpid(), "http://127.0.0.1:1/", 1, False, "jupyter lab")
    assert register(me, folder=open_folder).path is None
    real = tmp_path / "real"
    assert usable_folder(real, create=True) == ""
    assert stat.S_IMODE(real.lstat().st_mode) == 0o1777  # made sticky, whatever the umask
    link = tmp_path / "link"
    link.symlink_to(real)
    assert "link" in usable_folder(link)
    assert register(me, folder=link).path is None


def test_red21_r3_a_running_server_looks_in_a_worker_thread(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    real = hs._others

    def recording(me_pid: int, where: Path) -> Any:
        threads.append(threading.current_thread().name)
        return real(me_pid, where)

    monkeypatch.setattr(hs, "_others", recording)

    async def main() -> None:
        mine = announce(_app(), SERVER, folder=folder)  # its first look, on a running loop
        try:
            mine.look_off_loop(asyncio.get_running_loop())  # what the minute's timer calls
            for _ in range(200):  # until both looks ran (no time asserted)
                if len(threads) >= 2:
                    break
                await asyncio.sleep(0.02)
        finally:
            mine.withdraw()

    asyncio.run(main())
    assert len(threads) >= 1 and threading.main_thread().name not in threads, threads


def test_red21_r3_entries_of_one_account_are_checked_at_most_per_uid(
        folder: Path, nobodys: subprocess.Popen[bytes]) -> None:
    _plant(folder, PER_UID * 3, uid=NOBODY)
    seen = SimpleNamespace(n=0)
    real = hs._alive

    def counting(pid: int, uid: int) -> bool:
        seen.n += 1
        return real(pid, uid)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hs, "_alive", counting)
        others(me_pid=os.getpid(), folder=folder)
    assert seen.n <= PER_UID


def test_red21_r3_an_entry_planted_for_this_process_is_refused_and_said(
        folder: Path, caplog: pytest.LogCaptureFixture) -> None:
    planted = folder / f"{PREFIX}{os.getuid()}-{os.getpid()}.json"
    planted.write_text('{"url": "http://evil/", "gpus": 99}')
    os.chown(planted, NOBODY, NOBODY)  # nobody guessed this scheduler's pid before it started
    me = hs.HostScheduler("root", os.getuid(), os.getpid(), "http://127.0.0.1:1/", 1, False, "jupyter lab")
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        assert register(me, folder=folder).path is None
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and f"made by uid {NOBODY}" in warned[0], warned
    assert others(me_pid=1, folder=folder) == []  # and no scheduler believes it
