"""red31 R1 variant: a running job wrote 315 MB into its owner's own FINISHED job's folder
(``<log_dir>/users/<account>/<old job id>/``, the account's, mode 0700): on the log disk, beside no running
job's folder — so neither the job-folder bound nor the low-disk rule counted it — and kept after the writer
ended (the leftovers' sweep runs at that folder's own job's end; retention after 400 days). Now a job's
folder is the service's once its job ended (:mod:`jupyter_sched.executors.sealing`): its account can add
nothing there, by path or through a folder below it held open from before; the service still reads it
(logs, the per-account log total, the retention of single files) and gives it back when the job runs again.

Real service side (root), real OS accounts, real wrapper and jobs; counts and outcomes, never times.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.log_budget import folder_extra
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.model import Allocation
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event, wait_until

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

HEAD = ("import errno, json, os, time\n"
        "def wait_gate(name):\n    while not os.path.exists(name):\n        time.sleep(0.02)\n")

FIRST = HEAD + ("os.makedirs({sub!r}, exist_ok=True)\n"
                "open({keep!r}, 'w').write('a small output\\n')\n"
                "print('one-done', flush=True)\n"
                "open({ready!r}, 'w').close()\n"
                "wait_gate({go!r})\n")

SECOND = HEAD + ("wait_gate({ready!r})\n"
                 "held = os.open({sub!r}, os.O_RDONLY | os.O_DIRECTORY)  # opened while the first job ran\n"
                 "open({holding!r}, 'w').close()\n"
                 "wait_gate({ended!r})\n"
                 "tried = {{}}\n"
                 "def attempt(name, fn):\n"
                 "    try:\n        fn(); tried[name] = 'wrote'\n"
                 "    except OSError as exc:\n        tried[name] = errno.errorcode.get(exc.errno, str(exc.errno))\n"
                 "attempt('new file', lambda: open({blob!r}, 'wb').write(b'x' * 4096))\n"
                 "attempt('its log', lambda: open({log!r}, 'ab').write(b'x' * 4096))\n"
                 "attempt('below', lambda: open({below!r}, 'wb').write(b'x'))\n"
                 "attempt('held folder', lambda: os.close(os.open('more.bin', os.O_CREAT | os.O_WRONLY, 0o600, "
                 "dir_fd=held)))\n"
                 "print('tried ' + json.dumps(tried, sort_keys=True), flush=True)\n")

AGAIN = "open({again!r}, 'w').write('a second run writes here again\\n')\nprint('again-done', flush=True)\n"


def test_red31_r1_a_finished_job_folder_takes_no_more_writes_from_its_account() -> None:
    with os_accounts(1) as (owner,), shared_dir() as root:
        gates = root / "gates"
        gates.mkdir(mode=0o777)
        gates.chmod(0o777)
        ex = LocalExecutor(root / "jobs", job_python=account_python() or "", clean_env=True, require_run_as=True,
                           max_log_bytes=64 << 20, max_user_log_bytes=256 << 20)
        who = AccountMapping().resolve(owner.name)
        mine = ex.dirs.user_dir(who)
        old = mine / "j-old"  # an older version's finished folder: still the account's
        old.mkdir(mode=0o700)
        os.chown(old, owner.uid, owner.gid)
        one = mine / "j-one"
        names = {"sub": str(one / "sub"), "keep": str(one / "keep.txt"), "blob": str(one / "blob.bin"),
                 "log": str(one / "output.log"), "below": str(one / "sub" / "below.bin"),
                 **{g: str(gates / g) for g in ("ready", "go", "holding", "ended")}}
        ex.start(make_job("j-one", user=owner.name, command=(), script="one.py", source=FIRST.format(**names)),
                 Allocation("n1", ("GPU-0",)), who)
        assert ex.settle(60)  # sealed beside the engine (red35 R1)
        assert os.stat(old).st_uid == 0, "an account's finished folders are sealed at its first launch"
        ex.start(make_job("j-two", user=owner.name, command=(), script="two.py", source=SECOND.format(**names)),
                 Allocation("n1", ("GPU-1",)), who)
        wait_until(Path(names["holding"]).exists, "the second job holding a folder of the first open")
        Path(names["go"]).touch()
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.job_id == "j-one" and ended.exit_code == 0, ended
        info = os.stat(one)
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700)
        assert os.stat(one / "sub").st_uid == 0 and not os.stat(one / "sub").st_mode & 0o022
        Path(names["ended"]).touch()
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.job_id == "j-two" and ended.exit_code == 0, ended
        text, _ = ex.logs("j-two")
        tried = json.loads(text.split("tried ", 1)[1].splitlines()[0])
        assert tried == {"new file": "EACCES", "its log": "EACCES", "below": "EACCES", "held folder": "EACCES"}, tried
        assert not (one / "blob.bin").exists() and os.listdir(one / "sub") == []
        # the service reads a sealed folder as before: the log, the account's total, one file's retention
        assert "one-done" in ex.logs("j-one")[0]
        assert folder_extra(one, owner.uid) >= len("a small output\n")  # 0 where the sealed folder were refused
        assert ex.dirs.remove_old("keep.txt", time.time() + 60, lambda seen: {job for job, _ in seen}) == 1
        # the same job run again (a preempted job): its folder is the account's again, then sealed again
        again = one / "sub" / "again.txt"
        ex.start(make_job("j-one", user=owner.name, command=(), script="again.py",
                          source=AGAIN.format(again=str(again))), Allocation("n1", ("GPU-0",)), who)
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.job_id == "j-one" and ended.exit_code == 0, ended
        assert again.read_text() == "a second run writes here again\n" and again.stat().st_uid == owner.uid
        assert "again-done" in ex.logs("j-one")[0] and os.stat(one).st_uid == 0


HOLDER = HEAD + ("wait_gate({ready!r})\n"
                 "fh = open({big!r}, 'wb')  # opened while the first job ran: its seal cannot take it back\n"
                 "open({holding!r}, 'w').close()\n"
                 "wait_gate({ended!r})\n"
                 "for _ in range(80):\n    fh.write(b'x' * (1 << 20)); fh.flush()\n"
                 "wait_gate({never!r})\n")


def test_red31_r1_what_a_job_writes_into_another_job_folder_counts_against_its_own_folder_bound() -> None:
    """The one way left to write into a sealed folder — a file opened there before that job ended — counts, as the
    job's own folder would, against the writer's bound (64 MiB here), and ends it naming what it wrote where."""
    with os_accounts(1) as (owner,), shared_dir() as root:
        gates = root / "gates"
        gates.mkdir(mode=0o777)
        gates.chmod(0o777)
        ex = LocalExecutor(root / "jobs", job_python=account_python() or "", clean_env=True, require_run_as=True,
                           max_log_bytes=1 << 20)
        who = AccountMapping().resolve(owner.name)
        first = ex.dirs.user_dir(who) / "j-first"
        names = {"big": str(first / "big.bin"),
                 **{g: str(gates / g) for g in ("ready", "go", "holding", "ended", "never")}}
        ex.start(make_job("j-first", user=owner.name, command=(), script="first.py",
                          source=HEAD + "open({ready!r}, 'w').close()\nwait_gate({go!r})\n".format(**names)),
                 Allocation("n1", ("GPU-0",)), who)
        ex.start(make_job("j-writer", user=owner.name, command=(), script="writer.py", source=HOLDER.format(**names)),
                 Allocation("n1", ("GPU-1",)), who)
        wait_until(Path(names["holding"]).exists, "the writer holding a file of the first job's folder")
        Path(names["go"]).touch()
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.job_id == "j-first" and os.stat(first).st_uid == 0, ended
        Path(names["ended"]).touch()
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.job_id == "j-writer", ended
        assert "into 1 file of other job folders beside its own" in ended.message, ended.message
        assert "over the 64 MiB a running job's folder may hold" in ended.message, ended.message
