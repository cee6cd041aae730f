"""Session 21: ``tests/runtime/test_runas.py`` failed in a targeted run with ``useradd jst… failed: useradd: cannot
lock /etc/passwd; try again later`` — another process of the host (another test run) was changing the account files
at that moment, and shadow-utils gives up at once. :func:`tests.accounts.os_accounts` now tries again while the lock
is held (and says when an account could not be removed, never leaving one silently).

Real parts: shadow-utils' own lock file (``/etc/passwd.lock`` naming a live process, as ``useradd`` makes it while
it writes), held by this test for a moment; real ``useradd``/``userdel``. Root only.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.accounts import os_accounts, skip_reason

LOCK = Path("/etc/passwd.lock")


@pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))
def test_s21_accounts_are_made_and_removed_while_another_process_briefly_holds_the_account_files() -> None:
    if LOCK.exists():
        pytest.skip("another process is changing the account files right now")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a live pid, as useradd's own
    released = threading.Event()
    try:
        fd = os.open(LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(str(holder.pid))
        assert subprocess.run(["useradd", "-M", "jstlockprobe"], capture_output=True, text=True).stderr.find(
            "cannot lock") >= 0, "the lock is what useradd meets"

        def release() -> None:
            LOCK.unlink(missing_ok=True)
            released.set()

        timer = threading.Timer(0.5, release)
        timer.start()
        with os_accounts(1) as (made,):  # failed before: RuntimeError "useradd … cannot lock /etc/passwd"
            assert released.is_set() and pwd.getpwnam(made.name).pw_uid == made.uid
        with pytest.raises(KeyError):
            pwd.getpwnam(made.name)
        timer.join()
    finally:
        if LOCK.exists() and LOCK.read_text().strip() == str(holder.pid):
            LOCK.unlink()
        subprocess.run(["userdel", "jstlockprobe"], capture_output=True)  # only if the lock did not hold it off
        holder.kill()
        holder.wait()
