"""Red team 16, R1: a hub user's notebook server and kernels on the GPU host opened every GPU (the
devices fence covered batch jobs only). With ``jupyter_sched.hub.fence.FencedLocalProcessSpawner``
each server starts in its account's devices group: no GPU but those of the user's own granted
kernel leases, allowed by the central service while held and denied again at release.

Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm),
real OS accounts whose servers the fenced spawner starts, ``jupyter-sched serve`` as root on
PostgreSQL (2 simulated GPUs: device minors 0 and 1), real kernels driven over their websockets,
real cgroup v1 devices groups. GPU device files are real character devices made by root (major 195,
mode 0666, in the hub's 0755 folder); with no NVIDIA driver an open the devices cgroup lets through
fails with ENXIO, one it denies with EPERM.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.executors.limits import NVIDIA_MAJOR
from jupyter_sched.executors.server_fence import ServerFence, server_fence_problem
from tests.accounts import Account, remove_group_when_empty

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub
from .kernel_ws import execute

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(server_fence_problem() is not None, reason=server_fence_problem() or "")]

SPAWNER = "jupyter_sched.hub.fence.FencedLocalProcessSpawner"
MINORS = (0, 1)

PROBE = """
import errno, json, os
out = {}
for minor in %r:
    try:
        os.close(os.open(os.path.join(%r, "nvidia%%d" %% minor), os.O_RDWR))
        out[str(minor)] = "opened"
    except OSError as exc:
        out[str(minor)] = errno.errorcode[exc.errno]
try:
    with open("/sys/fs/cgroup/devices/cgroup.procs", "w") as fh:
        fh.write(str(os.getpid()))
    out["leave"] = "left"
except OSError as exc:
    out["leave"] = errno.errorcode[exc.errno]
out["group"] = [g.split(":", 2)[2] for g in open("/proc/self/cgroup").read().split() if ":devices:" in g][0]
out["pids"] = [g.split(":", 2)[2] for g in open("/proc/self/cgroup").read().split() if ":pids:" in g][0]
try:
    out["pids_max"] = open("/sys/fs/cgroup/pids" + out["pids"] + "/pids.max").read().strip()
except OSError as exc:
    out["pids_max"] = errno.errorcode[exc.errno]
print("PROBE" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "red16r1", spawner_class=SPAWNER)
    for account in users.values():  # the servers are stopped: their accounts' groups go with the accounts
        remove_group_when_empty(ServerFence().group(account.uid))


def _devices(hub: Hub) -> Path:
    folder = hub.base / "dev"
    folder.mkdir(mode=0o755, exist_ok=True)
    for minor in MINORS:
        node = folder / f"nvidia{minor}"
        if not node.exists():
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(NVIDIA_MAJOR, minor))
        node.chmod(0o666)  # as the driver makes them
    return folder


def _probe(hub: Hub, user: str, token: str, kernel: str, folder: Path) -> dict[str, str]:
    done = execute(hub.server_url(user), token, kernel, PROBE % (MINORS, str(folder)), timeout_s=120)
    line = next((x for x in done.stdout.splitlines() if x.startswith("PROBE")), None)
    assert line is not None, done.text
    seen: dict[str, str] = json.loads(line[len("PROBE"):])
    return seen


def _opens(seen: dict[str, str]) -> set[int]:
    """The minors the devices cgroup let through (anything but EPERM)."""
    return {m for m in MINORS if seen[str(m)] != "EPERM"}


def _until(hub: Hub, user: str, token: str, kernel: str, folder: Path, want: set[int], what: str) -> dict[str, str]:
    """Probe until the kernel opens exactly ``want`` (the service's reconcile pass writes the group
    a moment after the grant or release: waited for with a deadline, never raced)."""
    deadline = time.monotonic() + 60
    while True:
        seen = _probe(hub, user, token, kernel, folder)
        if _opens(seen) == want or time.monotonic() > deadline:
            assert _opens(seen) == want, f"{what}: {seen}\n{hub.log_tail(3000)}"
            return seen
        time.sleep(0.5)


def _lease_minor(hub: Hub, token: str, lease_id: str) -> int:
    """The simulated GPU's index (= its device minor) of a running lease, waited for."""
    deadline = time.monotonic() + 60
    while True:
        job = httpx.get(f"{hub.service_url}api/sched/jobs/{lease_id}", timeout=30,
                        headers={"Authorization": f"token {token}"}).json()
        if job.get("state") == "running" or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert job.get("state") == "running", job
    uuids = (job.get("allocation") or {}).get("gpu_uuids") or []
    assert len(uuids) == 1 and uuids[0].startswith("GPU-sim-"), job  # simulated: GPU-sim-<node>-<index>
    return int(uuids[0].rsplit("-", 1)[1])


def test_red16_r1_a_hub_users_kernel_opens_only_the_gpus_of_her_own_granted_leases(
        hub: Hub, users: dict[str, Account]) -> None:
    amy, eve = users["amy"].name, users["eve"].name
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    boss = {"Authorization": f"token {tokens['carol']}"}
    folder = _devices(hub)
    # idle rules off: these kernels run only probes, and an idle lease must not be reclaimed mid-test
    before = httpx.get(f"{hub.service_url}api/sched/idle-policy", headers=boss, timeout=60).json()
    off = httpx.put(f"{hub.service_url}api/sched/idle-policy", json={"default": {**before["default"], "enabled": False}},
                    headers=boss, timeout=60)
    assert off.status_code == 200, off.text
    leases: dict[str, str] = {}
    try:
        hub.start_servers(amy, eve)
        said = (hub.base / "service.log").read_text(errors="replace")
        assert "user servers are fenced: this hub's spawner is " + SPAWNER in said, said[-3000:]  # new user 22
        kernels = {}
        for user in (amy, eve):
            made = httpx.post(f"{hub.server_url(user)}api/kernels", json={}, timeout=60,
                              headers={"Authorization": f"token {tokens[user]}"})
            assert made.status_code == 201, made.text
            kernels[user] = made.json()["id"]

        # no lease: every GPU denied to both kernels, each in its account's group, which it cannot leave
        for user, account in ((amy, users["amy"]), (eve, users["eve"])):
            seen = _probe(hub, user, tokens[user], kernels[user], folder)
            assert _opens(seen) == set(), seen
            assert seen["group"] == f"/jupyter_sched/servers/u{account.uid}", seen
            assert seen["leave"] == "EACCES", seen
            # red32 R4: a fork loop in a cell is held to the account's servers' task cap, not the host's pid_max
            assert seen["pids"] == f"/jupyter_sched/servers/u{account.uid}", seen
            assert seen["pids_max"] == "4096", seen

        def lease(user: str) -> int:
            made = httpx.post(f"{hub.server_url(user)}api/sched/leases", timeout=60,
                              json={"gpus": 1, "kernel_id": kernels[user]},
                              headers={"Authorization": f"token {tokens[user]}"})
            assert made.status_code == 201, made.text
            leases[user] = made.json()["id"]
            return _lease_minor(hub, tokens[user], leases[user])

        def release(user: str) -> None:
            gone = httpx.delete(f"{hub.server_url(user)}api/sched/leases/{leases.pop(user)}", timeout=60,
                                headers={"Authorization": f"token {tokens[user]}"})
            assert gone.status_code == 200, gone.text

        amys = lease(amy)
        _until(hub, amy, tokens[amy], kernels[amy], folder, {amys}, "amy's kernel after her lease")
        assert _opens(_probe(hub, eve, tokens[eve], kernels[eve], folder)) == set()  # amy's GPU never opens for eve

        eves = lease(eve)
        assert eves != amys
        _until(hub, eve, tokens[eve], kernels[eve], folder, {eves}, "eve's kernel after her lease")
        assert _opens(_probe(hub, amy, tokens[amy], kernels[amy], folder)) == {amys}

        release(eve)
        _until(hub, eve, tokens[eve], kernels[eve], folder, set(), "eve's kernel after her release")
        assert _opens(_probe(hub, amy, tokens[amy], kernels[amy], folder)) == {amys}  # amy's lease still held
        release(amy)
        _until(hub, amy, tokens[amy], kernels[amy], folder, set(), "amy's kernel after her release")
    finally:
        for lease_id in leases.values():
            httpx.delete(f"{hub.service_url}api/sched/jobs/{lease_id}", headers=boss, timeout=60)
        restored = {k: before[k] for k in ("default", "by_priority", "by_kind") if k in before}
        httpx.put(f"{hub.service_url}api/sched/idle-policy", json=restored, headers=boss, timeout=60)
