"""red32 R8 (medium): the path checks a hub submit runs as its owner (``/bin/sh`` / ``head -c`` with the owner's uid,
up to 5 s) ran on the service's shared request threads, and the owner may SIGSTOP them (same uid): with 8 submits
in flight whose checks were held stopped, every other user's ``GET me`` went from 0.04 s to 0.7 to 2.6 s (median).
Now one check per account runs at a time: while one of an account's checks is held, its other submits are taken
unchecked (a check that cannot run says nothing; the job's start tells), so an account holds at most one thread so.
Another account's checks are not held up.

Real OS accounts, the real checks, a real SIGSTOP sent to the check as it appears (as the owner's loop did); the order
of events is the check, never a time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

import psutil
import pytest

from jupyter_sched.executors.owner_paths import missing_as_owner
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.model import spec_from_request
from tests.accounts import Account, os_accounts, skip_reason

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture(scope="module")
def accounts() -> Iterator[list[Account]]:
    with os_accounts(2) as made:
        yield made


def _spec(user: str) -> object:
    return spec_from_request({"command": ["python3", "nosuch.py"], "gpus": 0, "time_limit": "1m",
                              "working_dir": "/tmp"}, user=user)


def test_red32_r8_a_held_check_holds_one_thread_of_its_account_and_none_of_another(accounts: list[Account]) -> None:
    mallory, ann = accounts
    as_mallory, as_ann = AccountMapping().resolve(mallory.name), AccountMapping().resolve(ann.name)
    held: list[int] = []
    first: list[object] = []

    def stop_checks() -> None:  # the owner's loop: SIGSTOP their check the moment it exists
        me = psutil.Process()
        deadline = time.monotonic() + 60
        while not held and time.monotonic() < deadline:
            for child in me.children():
                try:
                    if child.uids().real == mallory.uid:
                        os.kill(child.pid, signal.SIGSTOP)
                        held.append(child.pid)
                        return
                except (psutil.Error, ProcessLookupError):  # that check ended first: the next one is caught
                    continue

    def submits() -> None:  # the owner's submits, one after another until one's check is caught
        deadline = time.monotonic() + 60
        while not held and time.monotonic() < deadline:
            first[:] = [missing_as_owner(_spec(mallory.name), as_mallory, "/usr/bin:/bin")]

    stopper = threading.Thread(target=stop_checks, daemon=True)
    stopper.start()
    checking = threading.Thread(target=submits, daemon=True)
    checking.start()
    stopper.join(60)
    try:
        assert held, "the first check was held stopped"
        assert checking.is_alive()
        # the same account's next submit: not checked, not held (returns while the first is still stopped)
        assert missing_as_owner(_spec(mallory.name), as_mallory, "/usr/bin:/bin") is None
        assert checking.is_alive()
        # another account's check runs as ever, and finds its missing script
        found = missing_as_owner(_spec(ann.name), as_ann, "/usr/bin:/bin")
        assert found is not None and found[0] == "command" and found[2] == "does not exist", found
    finally:
        for pid in held:
            with contextlib.suppress(ProcessLookupError):  # its 5-s timeout may have ended it first (a loaded run)
                os.kill(pid, signal.SIGCONT)
        checking.join(30)
    # once it ended, that account's checks run again
    assert missing_as_owner(_spec(mallory.name), as_mallory, "/usr/bin:/bin") == ("command", "/tmp/nosuch.py",
                                                                                  "does not exist")
