"""red33 R2: a job's SysV shared memory and /dev/shm files outlived it — 200 MiB a job, past its memory cap, and the
host's RAM gone until root removed them; 4,096 one-byte segments would fill the host-wide SysV table (PostgreSQL
could no longer start). A hub job now starts in an IPC namespace and a /dev/shm of its own (the service's root step,
:data:`jupyter_sched.executors.runas.JOB_NAMESPACES`): what it made there ends with its last process, and its
/dev/shm holds at most its memory cap. Real service-side executor as root, a real account, a real job.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.runas import AccountMapping, job_namespaces_refused
from jupyter_sched.model import Allocation, ResourceRequest
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event

SKIP = skip_reason() or (f"this host refuses jobs their own namespaces: {job_namespaces_refused()}"
                         if job_namespaces_refused() else None)


def _shm_of(uid: int) -> list[str]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [line for line in lines if int(line.split()[7]) == uid]  # columns: key shmid perms size cpid lpid nattch uid


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_red33_r2_a_jobs_shared_memory_and_dev_shm_files_end_with_it() -> None:
    name = f"r33-{secrets.token_hex(4)}"
    body = ("import ctypes, json, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "shmid = libc.shmget(0, 1 << 20, 0o1600)\n"  # IPC_PRIVATE, IPC_CREAT | 0600; never IPC_RMID
            f"open('/dev/shm/{name}', 'w').write('x' * 4096)\n"
            "seen = [l.split()[1] for l in open('/proc/sysvipc/shm').read().splitlines()[1:]]\n"
            "v = os.statvfs('/dev/shm')\n"
            "print(json.dumps({'shmid': shmid, 'seen': str(shmid) in seen, 'shm_bytes': v.f_blocks * v.f_frsize}))\n")
    with os_accounts(1, prefix="s33i") as (owner,), shared_dir() as root:
        ex = LocalExecutor(root / "jobs", job_python=account_python() or "", clean_env=True, require_run_as=True)
        job = make_job("j-1", user=owner.name, command=(), script="j-1.py", source=body)
        job = replace(job, spec=replace(job.spec, resources=ResourceRequest(gpus=1, memory_mib=64)))
        ex.start(job, Allocation("n1", ("GPU-0",)), AccountMapping().resolve(owner.name))
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.exit_code == 0, ended
        said = json.loads(next(line for line in (ex.job_dir("j-1") / "output.log").read_text().splitlines()
                               if line.startswith("{")))
        assert said["shmid"] >= 0 and said["seen"], said  # the job made its segment and saw it
        assert said["shm_bytes"] == 64 << 20, said  # its own /dev/shm: its memory cap
        assert _shm_of(owner.uid) == []  # the host's table has none of the account's segments
        assert not Path(f"/dev/shm/{name}").exists()
