"""Red team 16, R1: hub users' notebook servers (and everything they start) sit in their account's
devices group, which denies every GPU but those of the account's granted kernel leases.

Real cgroup v1 groups of this host (skipped with the reason on cgroup v2, without root) and a
real long-lived process that enters its group as root and drops to an unused uid before it runs
anything, as :class:`jupyter_sched.hub.fence.FencedLocalProcessSpawner` starts a server; the GPU
device files are real character devices (major 195, mknod in the test's folder): with no NVIDIA
driver, an allowed one fails with ENXIO past the devices cgroup, a denied one with EPERM at it.
The whole hub route (JupyterHub, real accounts, leases): tests/hub/test_red16_r1_fence.py.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.limits import NVIDIA_MAJOR
from jupyter_sched.executors.server_fence import ServerFence, server_fence_problem
from tests import accounts
from tests.runtime.test_local_isolation import CGROUP, needs_v1

PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
"""Another account's interpreter (this session's may sit in a private folder); the probe needs the stdlib only."""

PROBE = r"""
import errno, json, os, sys
folder = sys.argv[1]
for line in sys.stdin:
    out = {}
    for name in sorted(os.listdir(folder)):
        try:
            os.close(os.open(os.path.join(folder, name), os.O_RDWR))
            out[name] = "opened"
        except OSError as exc:
            out[name] = errno.errorcode[exc.errno]
    try:  # leave the group: back to the host's root devices group
        with open("/sys/fs/cgroup/devices/cgroup.procs", "w") as fh:
            fh.write(str(os.getpid()))
        out["leave"] = "left"
    except OSError as exc:
        out["leave"] = errno.errorcode[exc.errno]
    out["group"] = [g.split(":", 2)[2] for g in open("/proc/self/cgroup").read().split() if ":devices:" in g][0]
    print(json.dumps(out), flush=True)
"""


def _devices(folder: Path, minors: range) -> Path:
    folder.mkdir(mode=0o755)
    for minor in minors:
        os.mknod(folder / f"nvidia{minor}", 0o666 | stat.S_IFCHR, os.makedev(NVIDIA_MAJOR, minor))
        (folder / f"nvidia{minor}").chmod(0o666)  # as the driver makes them (past the umask)
    return folder


class _Server:
    """A long-lived process of ``uid`` started in its servers' group (the spawner's way)."""

    def __init__(self, fence: ServerFence, uid: int, script: Path, devices: Path) -> None:
        enter = fence.enter_fn(uid)

        def preexec() -> None:
            enter()
            os.setgid(uid)
            os.setuid(uid)

        self.process = subprocess.Popen([PYTHON, str(script), str(devices)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, preexec_fn=preexec, cwd="/")

    def probe(self) -> dict[str, str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("probe\n")
        self.process.stdin.flush()
        seen: dict[str, str] = json.loads(self.process.stdout.readline())
        return seen

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)




@pytest.fixture
def uids() -> Iterator[tuple[int, int]]:
    base = 3_900_000 + (os.getpid() % 50_000) * 2  # no account has these: groups of their own
    yield base, base + 1
    for uid in (base, base + 1):
        accounts.remove_group_when_empty(ServerFence().group(uid))


@needs_v1
def test_red16_r1_a_server_opens_no_gpu_until_its_accounts_lease_and_never_anothers(uids: tuple[int, int]) -> None:
    with accounts.shared_dir("jsched-r16r1-") as folder:  # pytest's tmp folders are out of other uids' reach
        _fenced_servers(folder, uids)


def _fenced_servers(tmp_path: Path, uids: tuple[int, int]) -> None:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    script.chmod(0o644)
    devices = _devices(tmp_path / "dev", range(3))
    record = tmp_path / "state" / ".server-fence.json"
    record.parent.mkdir(mode=0o700)
    fence = ServerFence(record=record)
    amy, eve = uids
    servers = {amy: _Server(fence, amy, script, devices), eve: _Server(fence, eve, script, devices)}
    denied = dict.fromkeys(("nvidia0", "nvidia1", "nvidia2"), "EPERM")
    try:
        for uid, server in servers.items():
            seen = server.probe()
            assert {k: seen[k] for k in denied} == denied, seen  # no lease: every GPU denied
            assert seen["group"] == f"/jupyter_sched/servers/u{uid}", seen
            assert seen["leave"] == "EACCES", seen  # the account cannot move itself out

        fence.sync({amy: {1}})  # amy's kernel lease holds GPU minor 1
        assert {k: servers[amy].probe()[k] for k in denied} == {**denied, "nvidia1": "ENXIO"}
        assert {k: servers[eve].probe()[k] for k in denied} == denied  # amy's lease never opens for eve

        fence.sync({amy: {1}, eve: {2}})  # eve's lease granted: minor 2, hers only
        assert {k: servers[eve].probe()[k] for k in denied} == {**denied, "nvidia2": "ENXIO"}
        assert {k: servers[amy].probe()[k] for k in denied} == {**denied, "nvidia1": "ENXIO"}

        fence.sync({amy: {1}})  # eve's released: denied again; amy's still held
        assert {k: servers[eve].probe()[k] for k in denied} == denied
        assert servers[amy].probe()["nvidia1"] == "ENXIO"

        # a service restart (kill -9: a new ServerFence with the same record): amy's lease ended while it was
        # down, and its first pass closes her group, which its record says it opened
        assert json.loads(record.read_text()) == {"opened": [amy]}
        ServerFence(record=record).sync({})
        assert {k: servers[amy].probe()[k] for k in denied} == denied
        assert json.loads(record.read_text()) == {"opened": []}

        # amy's server gone and its group removed; her next spawn makes it again, closed, and the next
        # pass says her held lease again (the first ServerFence still remembers having allowed it)
        servers.pop(amy).close()
        accounts.remove_group_when_empty(fence.group(amy))
        servers[amy] = _Server(fence, amy, script, devices)
        assert {k: servers[amy].probe()[k] for k in denied} == denied
        fence.sync({amy: {1}})
        assert {k: servers[amy].probe()[k] for k in denied} == {**denied, "nvidia1": "ENXIO"}
    finally:
        for server in servers.values():
            server.close()


@needs_v1
def test_s36_another_service_on_the_host_never_closes_a_group_it_did_not_open(uids: tuple[int, int]) -> None:
    """Session 36 (CI and runs B, C: red16 R1's hub test saw amy's held GPU denied right after eve's release):
    each hub service's pass wrote every account's group on the host, so a second service (another hub, or
    another test's) that started while amy held a lease wrote "every GPU denied" into her group."""
    with accounts.shared_dir("jsched-s36fence-") as folder:
        script = folder / "probe.py"
        script.write_text(PROBE)
        script.chmod(0o644)
        devices = _devices(folder / "dev", range(3))
        for name in ("ours", "theirs", "upgraded"):
            (folder / name).mkdir(mode=0o700)
        ours = ServerFence(record=folder / "ours" / ".server-fence.json")
        amy, eve = uids
        servers = {amy: _Server(ours, amy, script, devices), eve: _Server(ours, eve, script, devices)}
        try:
            ours.sync({amy: {1}})
            assert servers[amy].probe()["nvidia1"] == "ENXIO"
            theirs = ServerFence(record=folder / "theirs" / ".server-fence.json")  # a second service starts
            theirs.sync({})
            theirs.sync({eve: {2}})  # ... and opens a group of its own accounts: the same host, its own leases
            assert servers[amy].probe()["nvidia1"] == "ENXIO", "another service closed amy's held GPU"
            assert servers[eve].probe()["nvidia2"] == "ENXIO"
            theirs.sync({})
            assert servers[eve].probe()["nvidia2"] == "EPERM"
            assert servers[amy].probe()["nvidia1"] == "ENXIO"
            # a service that ran before records were kept (its log_dir has job records, no fence record): its first
            # pass closes every group it finds, as it may have opened any; a fresh service's first pass closes none
            ServerFence(record=folder / "fresh" / ".server-fence.json").sync({})
            assert servers[amy].probe()["nvidia1"] == "ENXIO"
            ServerFence(record=folder / "upgraded" / ".server-fence.json", adopt_without_record=True).sync({})
            assert servers[amy].probe()["nvidia1"] == "EPERM"
        finally:
            for server in servers.values():
                server.close()


@needs_v1
def test_s36_an_unwritable_record_opens_no_group_and_an_unreadable_one_closes_them_all(uids: tuple[int, int]) -> None:
    """The record is written before a group is opened: where it cannot be, the group stays closed (never open
    and unrecorded, which a restart would leave open); where it is not JSON, every group is managed once."""
    with accounts.shared_dir("jsched-s36record-") as folder:
        script = folder / "probe.py"
        script.write_text(PROBE)
        script.chmod(0o644)
        devices = _devices(folder / "dev", range(3))
        amy = uids[0]
        fence = ServerFence(record=folder / "no-such-folder" / ".server-fence.json")
        server = _Server(fence, amy, script, devices)
        try:
            fence.sync({amy: {1}})
            assert server.probe()["nvidia1"] == "EPERM"
            (folder / "ok").mkdir(mode=0o700)
            record = folder / "ok" / ".server-fence.json"
            ServerFence(record=record).sync({amy: {1}})
            assert server.probe()["nvidia1"] == "ENXIO"
            record.write_text("{not json")
            ServerFence(record=record).sync({})
            assert server.probe()["nvidia1"] == "EPERM"
            assert json.loads(record.read_text()) == {"opened": []}
        finally:
            server.close()


@needs_v1
def test_red16_r1_a_group_is_made_closed_under_a_temporary_name_and_a_second_spawn_reuses_it(
        uids: tuple[int, int]) -> None:
    fence = ServerFence()
    uid = uids[0]
    first = fence.ensure(uid)
    assert first == CGROUP / "devices" / "jupyter_sched" / "servers" / f"u{uid}"
    assert fence.ensure(uid) == first
    assert not [p for p in fence.base.iterdir() if p.name.startswith(".new-")]  # no temporary group left
    assert oct(first.stat().st_mode & 0o777) == "0o755" and first.stat().st_uid == 0
    assert oct((first / "cgroup.procs").stat().st_mode & 0o777) == "0o644"


def test_red16_r1_where_servers_cannot_be_fenced_it_says_why(tmp_path: Path) -> None:
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cgroup.controllers").write_text("cpu io memory pids\n")
    assert "cgroup v2" in (server_fence_problem(v2) or "") and "BPF device program" in (server_fence_problem(v2) or "")
    bare = tmp_path / "bare"
    bare.mkdir()
    assert "no cgroup v1 devices controller" in (server_fence_problem(bare) or "")
    if not CGROUP.joinpath("cgroup.controllers").exists() and os.geteuid() == 0:
        assert server_fence_problem() is None  # this host: v1 devices, root


def test_s36_left_server_fence_reads_its_groups_in_one_place_and_only_names_it_writes(tmp_path: Path) -> None:
    """Session 36's review: the groups were listed in two places (each pass, and a record-less first pass), each
    reading ``u0012`` or ``u1\u0662`` (an Arabic-Indic digit: ``str.isdigit`` and ``int`` take it) as uid 12, whose
    write then went to ``u12``. One helper reads the names :meth:`ServerFence.group` makes, and both use it.
    A plain folder stands in for the cgroup mount (only its names are read)."""
    base = tmp_path / "devices" / "jupyter_sched" / "servers"
    for name in ("u7", "u1000", "u0012", "u1\u0662", "u12x", "u", ".new-u9-1-abcd", "v8"):
        (base / name).mkdir(parents=True)
    assert ServerFence(root=tmp_path).accounts() == {7, 1000}
    record = tmp_path / "state" / ".server-fence.json"
    record.parent.mkdir()
    record.write_text("{not json")  # which groups it opened is unknown: it manages every group it finds
    for name in ("u7", "u1000"):
        (base / name / "devices.deny").write_text("")
        (base / name / "devices.allow").write_text("")
    ServerFence(root=tmp_path, record=record).sync({})
    assert (base / "u7" / "devices.deny").read_text().startswith(f"c {NVIDIA_MAJOR}:0 rwm")
    assert not (base / "u12").exists()
    assert ServerFence(root=tmp_path / "absent").accounts() == frozenset()
