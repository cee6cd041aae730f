"""red33 R1 (high): a user's job made root's service take the user's terminal as its controlling terminal, then
stopped the service at will (closing the terminal's master: SIGHUP; ^C ^C; ^\\).

Two faults together: (a) the service — a session leader with no controlling terminal, as a hub-managed service or
a systemd unit is — opened ``/proc/<wrapper>/fd/1`` (the log cut, :func:`~jupyter_sched.executors.outside_caps.cut_log`)
without ``O_NOCTTY``: when that is a terminal, the kernel makes it the opener's controlling terminal; (b) the wrapper,
the job owner's process, was dumpable, so the job (same account) could ptrace it and make its stdout anything.

Now every open goes through :func:`jupyter_sched.safefd.open_fd` (``O_NOCTTY | O_CLOEXEC | O_NONBLOCK``, the kind
checked before use; ``tests/test_architecture_opens.py`` keeps bare ``os.open`` out) and the wrapper makes itself
non-dumpable first thing. Real processes, a real pty, a real OS account (``s33c…``) and real wrapper; no hub.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.outside_caps import Running, cut_log
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.model import Allocation
from jupyter_sched.safefd import open_fd
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_until

CAP = 4096


def _in_a_new_session(job: Running) -> dict[str, object]:
    """In a forked child that calls ``setsid()`` (a session leader with no controlling terminal, as the service is
    under systemd or JupyterHub): ``cut_log(job, CAP)``, then whether the child has a controlling terminal."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only system calls and already-imported code (the parent has threads)
        code = 1
        try:
            os.close(read_end)
            os.setsid()
            size = cut_log(job, CAP)
            try:
                os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
                tty = "opened"
            except OSError as exc:
                tty = errno.errorcode.get(exc.errno or 0, str(exc.errno))
            with open("/proc/self/stat", "rb") as fh:
                tty_nr = int(fh.read().rsplit(b")", 1)[1].split()[4])
            os.write(write_end, json.dumps({"size": size, "tty": tty, "tty_nr": tty_nr}).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        said = fh.read()  # EOF once the child exited
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and said, f"the child failed ({status})"
    return dict(json.loads(said))


def test_red33_r1_a_terminal_behind_a_wrapper_stdout_is_not_taken(tmp_path: Path) -> None:
    master, slave = os.openpty()
    # the "wrapper": a process whose stdout is a pty slave (what the job made the real wrapper's fd 1 by ptrace)
    wrapper = subprocess.Popen(["sleep", "600"], stdout=slave, stdin=subprocess.DEVNULL)
    try:
        job_dir = tmp_path / "j-1"
        job_dir.mkdir()
        with open(job_dir / "output.log", "wb") as fh:  # over the cap (sparse): the service's look would cut it
            fh.truncate(CAP * 64)
        got = _in_a_new_session(Running("j-1", wrapper.pid, job_dir, None, CAP, "c.SchedApp.max_log_mib"))
    finally:
        wrapper.kill()
        wrapper.wait()
        os.close(slave)
        os.close(master)
    assert got["tty"] == "ENXIO" and got["tty_nr"] == 0, f"the session leader took the pty as its terminal: {got}"
    assert isinstance(got["size"], int) and CAP < got["size"] < CAP * 2, got  # the log at the job's folder still cut
    assert b"log truncated" in (job_dir / "output.log").read_bytes()[CAP:]


# the job: as its own account, look at its parent — the wrapper — as a same-account attacker would
_PROBE = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
parent = os.getppid()
if libc.ptrace(16, parent, None, None) == 0:  # PTRACE_ATTACH
    os.waitpid(parent, 0)
    libc.ptrace(17, parent, None, None)  # PTRACE_DETACH: put it back as it was
    print("attach 0", flush=True)
else:
    print("attach", errno.errorcode[ctypes.get_errno()], flush=True)
try:
    os.close(os.open(f"/proc/{parent}/fd/1", os.O_RDONLY | os.O_NOCTTY))
    print("fd1 opened", flush=True)
except OSError as exc:
    print("fd1", errno.errorcode[exc.errno], flush=True)
print("own dumpable", libc.prctl(3, 0, 0, 0, 0), flush=True)  # PR_GET_DUMPABLE of the job itself
"""


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_red33_r1_a_job_cannot_trace_or_open_its_wrapper() -> None:
    with os_accounts(1, prefix="s33c") as (owner,), shared_dir() as root:
        ex = LocalExecutor(root / "jobs", job_python=account_python() or "", clean_env=True, require_run_as=True)
        ex.start(make_job("j-1", user=owner.name, command=("python3", "-c", _PROBE)),
                 Allocation("n1", ("GPU-0",)), AccountMapping().resolve(owner.name))
        seen: list[object] = []

        def ended() -> bool:
            seen.extend(ex.poll())
            return any(isinstance(e, Exited) for e in seen)

        wait_until(ended, "the job's end")  # (a job left running is ended with the account, by os_accounts)
        end = next(e for e in seen if isinstance(e, Exited))
        log = (ex.job_dir("j-1") / "output.log").read_text()
        assert end.exit_code == 0, (end, log[-2000:])
    assert "attach EPERM" in log, log[-2000:]  # today: "attach 0" (no Yama here: same uid may trace)
    assert "fd1 EACCES" in log, log[-2000:]  # today: "fd1 opened" (the owner could read/replace its stdout)
    assert "own dumpable 1" in log, log[-2000:]  # the job's own processes stay dumpable (core dumps, debuggers)


def test_red34_r3_a_device_or_fifo_named_where_a_file_is_read_is_never_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """red34 R3: root's ``open_fd`` opened what a job's owner named, then checked its kind — a ``pyvenv.cfg`` linked
    to a device (``/dev/watchdog``: its open starts a host's hardware watchdog, a close without its magic byte
    reboots the host) ran the driver's open and release as root. What is there is looked at through ``O_PATH``
    (no driver's open) and opened only when it is the kind asked for: every ``os.open`` of the device's link
    is an ``O_PATH`` one (counted); a link refused by ``O_NOFOLLOW`` is ELOOP as before; the file looked at is
    the file read."""
    opened: list[tuple[str, int]] = []
    real_open = os.open

    def counted(path: object, flags: int, *args: object, **kwargs: object) -> int:
        opened.append((os.fsdecode(path), flags))  # type: ignore[arg-type]
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    link = tmp_path / "pyvenv.cfg"
    link.symlink_to("/dev/null")  # a device harmless to open: the count says whether it was
    monkeypatch.setattr(os, "open", counted)
    with pytest.raises(OSError) as refused:
        open_fd(link, os.O_RDONLY)
    assert refused.value.errno == errno.EINVAL and "not a regular file" in str(refused.value), refused.value
    assert opened and all(flags & os.O_PATH for path, flags in opened), opened
    monkeypatch.undo()
    fifo = tmp_path / "site.pth"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        open_fd(fifo, os.O_RDONLY)
    real = tmp_path / "real.cfg"
    real.write_text("home = /usr/bin\n")
    (tmp_path / "to-real").symlink_to(real)
    with pytest.raises(OSError) as loop:
        open_fd(tmp_path / "to-real", os.O_RDONLY | os.O_NOFOLLOW)
    assert loop.value.errno == errno.ELOOP, loop.value
    fd = open_fd(tmp_path / "to-real", os.O_RDONLY)
    try:
        assert os.read(fd, 100) == b"home = /usr/bin\n"
    finally:
        os.close(fd)
    # writing, truncating and creating as before
    fd = open_fd(real, os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    assert real.read_text() == ""
    fd = open_fd(tmp_path / "new.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    os.close(fd)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640
