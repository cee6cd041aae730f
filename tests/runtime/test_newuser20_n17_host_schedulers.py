"""New user 20, N17: a second OS user's own ``jupyter server`` on the same machine ran a second
scheduler on the same GPUs, and nothing told either user. Each scheduler now leaves an entry in the
host's temporary folder and, at its start, says every other one still running (WARNING on real GPUs).

Real parts: the registry folder (a temporary one here), real processes of another account
(``nobody``, root runs the tests) for "the other scheduler", real file ownership; the inventory the
app reports is a stand-in (this machine has no GPU).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.extension.host_schedulers import (
    ENV_REGISTRY,
    FOLDER,
    PREFIX,
    announce,
    others,
    registry_folder,
    warning_for,
)
from tests.runtime.conftest import NOBODY

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="another account's process and files need root")


class _Inventory:
    def __init__(self, gpus: int, simulated: bool) -> None:
        self.source = "simulated" if simulated else "nvml"
        self.simulated = simulated
        self._gpus = gpus

    def gpus(self) -> Iterator[int]:
        return iter(range(self._gpus))


def _app(gpus: int = 4, simulated: bool = False, **extra: Any) -> Any:
    ctx = SimpleNamespace(inventory=lambda: _Inventory(gpus, simulated))
    return SimpleNamespace(**{"services": SimpleNamespace(ctx=ctx), "hub_service_url": "", **extra})


SERVER = SimpleNamespace(connection_url="http://127.0.0.1:18901/")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "tmp"
    path.mkdir(mode=0o1777)
    path.chmod(0o1777)
    return path



def _entry(folder: Path, uid: int, pid: int, owner: int, **fields: Any) -> Path:
    path = folder / f"{PREFIX}{uid}-{pid}.json"
    path.write_text(json.dumps({"user": "x", "url": "http://127.0.0.1:18900/", "gpus": 4, "simulated": False,
                                "kind": "jupyter lab", **fields}))
    os.chown(path, owner, owner)
    return path


def test_newuser20_n17_a_second_scheduler_on_real_gpus_warns_of_the_first_and_registers(
        folder: Path, nobodys: subprocess.Popen[bytes], caplog: pytest.LogCaptureFixture) -> None:
    # fails before the fix: nothing was written or said (no such module)
    _entry(folder, NOBODY, nobodys.pid, NOBODY)
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        mine = announce(_app(), SERVER, folder=folder)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [f"jupyter_sched: another jupyter_sched (jupyter lab of nobody, pid {nobodys.pid}, "
                      "http://127.0.0.1:18900/) schedules this host's 4 GPUs too: jobs of both will share them, "
                      "each scheduler blind to the other's (quotas, queues and \"why does my job wait\" cover only "
                      "its own); one scheduler per machine: for several people, run `jupyter-sched serve` under "
                      "JupyterHub (docs/admin.md: One GPU machine, several people)"], warned
    assert mine.path is not None and mine.path.name == f"{PREFIX}{os.getuid()}-{os.getpid()}.json"
    info = mine.path.lstat()
    assert stat.S_IMODE(info.st_mode) == 0o644 and info.st_uid == os.getuid()
    assert json.loads(mine.path.read_text()) == {"user": "root", "url": "http://127.0.0.1:18901/", "gpus": 4,
                                                 "simulated": False, "kind": "jupyter lab", "store": ""}
    # the other account's scheduler sees this one (as its own start would)
    seen = others(me_pid=nobodys.pid, folder=folder)
    assert [(s.user, s.pid, s.gpus, s.url) for s in seen] == [("root", os.getpid(), 4, "http://127.0.0.1:18901/")]
    mine.withdraw()
    assert not mine.path.exists() if mine.path else not list(folder.glob(f"{PREFIX}0-*"))
    assert others(me_pid=nobodys.pid, folder=folder) == []


def test_newuser20_n17_planted_stale_and_linked_entries_are_not_believed(
        folder: Path, nobodys: subprocess.Popen[bytes], tmp_path: Path) -> None:
    _entry(folder, 0, nobodys.pid, NOBODY)  # claims root, but the process is nobody's
    _entry(folder, NOBODY, 1, NOBODY)  # pid 1 is not nobody's
    _entry(folder, NOBODY, nobodys.pid + 1_000_000, NOBODY)  # no such process
    real = _entry(tmp_path, NOBODY, nobodys.pid, NOBODY)
    (folder / real.name).symlink_to(real)  # a link to a file elsewhere
    assert others(me_pid=os.getpid(), folder=folder) == []
    (folder / real.name).unlink()
    _entry(folder, NOBODY, nobodys.pid, 0)  # nobody's name and live pid, but a file of another account
    assert others(me_pid=os.getpid(), folder=folder) == []
    _entry(folder, NOBODY, nobodys.pid, NOBODY, url="y" * 5000)  # over 4 KiB: not read
    assert others(me_pid=os.getpid(), folder=folder) == []
    # the entry's own words are bounded and shown without control characters
    _entry(folder, NOBODY, nobodys.pid, NOBODY, url="http://x/\x1b[31mRED" + "y" * 3000, gpus=True, kind="\n" * 3)
    [seen] = others(me_pid=os.getpid(), folder=folder)
    assert "\x1b" not in seen.url and len(seen.url) <= 200 and seen.gpus == 0 and "\n" not in seen.kind, seen


def test_newuser20_n17_stale_entries_of_this_account_are_removed_and_simulated_gpus_are_said_not_warned(
        folder: Path, nobodys: subprocess.Popen[bytes], caplog: pytest.LogCaptureFixture) -> None:
    stale = _entry(folder, os.getuid(), nobodys.pid + 1_000_000, os.getuid())
    _entry(folder, NOBODY, nobodys.pid, NOBODY, simulated=True)
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        mine = announce(_app(simulated=True), SERVER, folder=folder)
    assert not stale.exists()
    said = [(r.levelno, r.getMessage()) for r in caplog.records if "another jupyter_sched" in r.getMessage()]
    assert len(said) == 1 and said[0][0] == logging.INFO, said
    assert "no GPU is handed out twice now — on real GPUs both would hand out the same ones" in said[0][1], said
    mine.withdraw()


def test_newuser20_n17_a_forwarding_hub_user_server_registers_nothing(folder: Path) -> None:
    assert announce(_app(hub_service_url="http://hub/services/s/"), SERVER, folder=folder).path is None
    assert list(folder.iterdir()) == []


def test_newuser20_n17_the_words_for_real_gpus_name_the_other_scheduler() -> None:
    from jupyter_sched.extension.host_schedulers import HostScheduler

    hub = HostScheduler(user="root", uid=0, pid=7, url="http://127.0.0.1:8000/services/s/", gpus=8, simulated=False,
                        kind="jupyter-sched serve")
    me = HostScheduler(user="ana", uid=1000, pid=9, url="http://127.0.0.1:8888/", gpus=8, simulated=False,
                       kind="jupyter lab")
    assert warning_for(hub, me).startswith("another jupyter_sched (jupyter-sched serve of root, pid 7, "
                                           "http://127.0.0.1:8000/services/s/) schedules this host's 8 GPUs too")


def test_newuser20_n17_the_scheduler_that_started_first_learns_of_a_later_one_once(
        folder: Path, nobodys: subprocess.Popen[bytes], caplog: pytest.LogCaptureFixture) -> None:
    # the first (here: this process) started alone; nobody's scheduler starts after it
    mine = announce(_app(), SERVER, folder=folder)
    assert mine.look() == []
    _entry(folder, NOBODY, nobodys.pid, NOBODY)
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        assert [other.pid for other in mine.look()] == [nobodys.pid]  # what the minute's look does
        assert mine.look() == []  # said once, not every minute
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "another jupyter_sched" in r.getMessage()]
    assert len(warned) == 1, warned
    mine.withdraw()


def test_newuser20_n17_a_running_scheduler_looks_again_on_its_loop(
        folder: Path, nobodys: subprocess.Popen[bytes]) -> None:
    import asyncio

    async def main() -> list[int]:
        mine = announce(_app(), SERVER, folder=folder)
        mine.withdraw()  # the minute's timer is stopped with it
        assert mine._timer is None
        mine = announce(_app(), SERVER, folder=folder)
        mine._timer.cancel()  # type: ignore[union-attr]
        mine.watch(0.05)
        _entry(folder, NOBODY, nobodys.pid, NOBODY)
        for _ in range(200):  # until the timer's look has said it (no time asserted)
            if mine.told:
                break
            await asyncio.sleep(0.05)
        told = [pid for _uid, pid in mine.told]
        mine.withdraw()
        return told

    assert asyncio.run(main()) == [nobodys.pid]


def test_verify20_v5_the_other_scheduler_is_said_through_the_app_s_logger_info_included(
        folder: Path, nobodys: subprocess.Popen[bytes], caplog: pytest.LogCaptureFixture) -> None:
    """Verify 20, V5: the lines went to the module's own logger, which has no handler in a server:
    Python's last resort printed the WARNING without the server log's ``[W … SchedApp]`` prefix and
    dropped the INFO (simulated GPUs) entirely. They go through the extension app's logger."""
    _entry(folder, NOBODY, nobodys.pid, NOBODY, simulated=True)
    app_log = logging.getLogger("test-v5-SchedApp")
    with caplog.at_level(logging.INFO, logger="test-v5-SchedApp"):
        mine = announce(_app(simulated=True, log=app_log), SERVER, folder=folder)
    said = [(r.name, r.levelno) for r in caplog.records if "another jupyter_sched" in r.getMessage()]
    mine.withdraw()
    assert said == [("test-v5-SchedApp", logging.INFO)], said


def test_s21_the_registry_folder_is_the_hosts_temporary_folder_unless_the_variable_names_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_REGISTRY, raising=False)
    # production: its own folder there, never the bare /tmp every account floods (red team 21, R3)
    assert registry_folder() == Path(tempfile.gettempdir()) / FOLDER
    monkeypatch.setenv(ENV_REGISTRY, "  ")
    assert registry_folder() == Path(tempfile.gettempdir()) / FOLDER
    monkeypatch.setenv(ENV_REGISTRY, str(tmp_path))
    assert registry_folder() == tmp_path
    mine = announce(_app(), SERVER)  # no folder given: the variable's
    try:
        assert mine.path is not None and mine.path.parent == tmp_path
    finally:
        mine.withdraw()
    assert list(tmp_path.iterdir()) == []


def test_s22_hubadmin22_h13_the_hub_service_is_told_to_stop_the_other_not_to_run_itself() -> None:
    from jupyter_sched.extension.host_schedulers import HostScheduler

    lab = HostScheduler(user="root", uid=0, pid=26209, url="http://localhost:32839/", gpus=2, simulated=False,
                        kind="jupyter lab")
    hub = HostScheduler(user="root", uid=0, pid=7, url="http://127.0.0.1:8000/services/s/", gpus=2, simulated=False,
                        kind="jupyter-sched serve")
    said = warning_for(lab, hub)  # the hub service starting, a personal jupyter lab scheduling too
    assert "run `jupyter-sched serve`" not in said, said
    assert said.startswith("another jupyter_sched (jupyter lab of root, pid 26209, http://localhost:32839/) "
                           "also schedules GPUs on this host")
    assert "stop it (pid 26209), or have root use the hub" in said and "c.SchedApp.hub_service_url" in said
    other_hub = warning_for(hub, hub)
    assert "run `jupyter-sched serve`" not in other_hub and "stop one of them" in other_hub
    ana = HostScheduler(user="ana", uid=1000, pid=9, url="http://127.0.0.1:8888/", gpus=2, simulated=False,
                        kind="jupyter lab")
    assert "a hub service (pid 7) already schedules this host: use it" in warning_for(hub, ana)
    assert "run `jupyter-sched serve` under JupyterHub" in warning_for(lab, ana), "two personal servers: set one up"
