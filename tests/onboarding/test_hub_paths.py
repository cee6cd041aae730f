"""A job's paths are judged when it is submitted in hub mode too, as its owner (new user 7, F6).

Embedded, a ``working_dir``, ``script`` or ``notebook`` that is not there is refused at submit
(400 naming the field). Through a hub the same request was accepted, waited for GPUs, and failed
at its start ("failed, exit code 126 — cannot enter the working directory '/root/.nothere' as
mallory"). Now the service looks as the owner's account (``/bin/sh`` run with their uid and
groups: it learns only what they could) and answers as the embedded server does; a job that names
no directory starts in its owner's home (embedded: the server's root dir), which the refusal's
hint says. Real OS accounts (``useradd``; root only), a real local executor in hub mode and the
services layer — no mocks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.owner_paths import CLOSED_FOLDER
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import spec_from_request
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.accounts import Account, account_python, os_accounts, shared_dir, skip_reason

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture(scope="module")
def accounts() -> Iterator[list[Account]]:
    with os_accounts(2) as made:
        yield made


@pytest.fixture
def root() -> Iterator[Path]:
    with shared_dir() as path:
        yield path


def hub_executor(root: Path) -> LocalExecutor:
    python = account_python() or "/usr/bin/python3"
    executor = LocalExecutor(root / "jobs", job_python=python, clean_env=True, require_run_as=True)
    mapping = AccountMapping()
    executor.serve_hub(lambda job: mapping.resolve(job.spec.user), job_python=python)
    return executor


def owned(path: Path, account: Account, mode: int, text: str | None = None) -> Path:
    if text is None:
        path.mkdir()
    else:
        path.write_text(text)
    os.chown(path, account.uid, account.gid)
    path.chmod(mode)
    return path


def test_the_owner_is_told_what_they_cannot_use_and_nothing_of_what_they_can(accounts: list[Account],
                                                                           root: Path) -> None:
    alice, bob = accounts
    executor = hub_executor(root)
    bobs_private = owned(root / "bobs", bob, 0o700)
    owned(bobs_private / "train.py", bob, 0o644, "print(1)")
    shared = owned(root / "shared", bob, 0o755)
    bobs_secret = owned(shared / "secret.py", bob, 0o600, "print(2)")
    owned(shared / "open.py", bob, 0o644, "print(3)")
    owned(Path(alice.home) / "train.py", alice, 0o644, "print(4)")

    def check(user: Account, **body: object) -> tuple[str, str, str] | None:
        return executor.missing_path(spec_from_request({"gpus": 0, **body}, user=user.name))

    assert check(alice, working_dir=str(bobs_private), command=["true"]) == (
        "working_dir", str(bobs_private), f"cannot be entered as {alice.name}")
    assert check(bob, working_dir=str(bobs_private), command=["true"]) is None  # bob may
    assert check(alice, working_dir=str(root / "nothere"), command=["true"]) == (
        "working_dir", str(root / "nothere"), "does not exist")
    assert check(alice, working_dir="~/nothere", command=["true"]) == (
        "working_dir", f"{alice.home}/nothere", "does not exist")  # ~ is the owner's home
    assert check(alice, working_dir="~", script="train.py") is None
    # no working_dir: the job starts in its owner's home, where a relative script is looked for
    assert check(alice, script="train.py") is None
    assert check(bob, script="train.py") == ("script", f"{bob.home}/train.py", "does not exist")
    assert check(alice, script=str(bobs_private / "train.py")) == (  # alice cannot tell: never "does not exist"
        "script", str(bobs_private / "train.py"), f"cannot be found or read as {alice.name}{CLOSED_FOLDER}")
    assert check(alice, working_dir=str(shared), script="secret.py") == (
        "script", str(bobs_secret), f"cannot be read as {alice.name}")
    assert check(alice, working_dir=str(shared), script="open.py", notebook=None) is None
    assert check(alice, script="nothere.py", source="print(5)") is None  # carried with the job: nothing to look for


def test_a_hub_submit_is_answered_as_an_embedded_one(accounts: list[Account], root: Path, tmp_path: Path) -> None:
    alice, _ = accounts
    hub = Services(store=Store(sqlite_url(tmp_path / "hub.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                   executor=hub_executor(root))
    embedded = Services(store=Store(sqlite_url(tmp_path / "embedded.sqlite")),
                        inventory=SimulatedInventory(1, node="n1"),
                        executor=LocalExecutor(tmp_path / "jobs", default_cwd=tmp_path))
    try:
        answers = {}
        for name, services in (("hub", hub), ("embedded", embedded)):
            caller = services.caller(alice.name, admin=False)
            with pytest.raises(ValidationError) as refused:
                services.jobs.submit(caller, SubmitJobRequest(gpus=0, command=["true"], working_dir="/nothere"))
            answers[name] = refused.value
            assert refused.value.field == "working_dir"
            assert refused.value.message == "working_dir: directory '/nothere' does not exist on this server"
            with pytest.raises(ValidationError) as no_script:
                services.jobs.submit(caller, SubmitJobRequest(gpus=0, script="nothere.py"))
            assert no_script.value.field == "script" and "nothere.py' does not exist on this server" in \
                no_script.value.message
            # naming no directory is fine in both: it starts in the home / the root dir the hint names
            assert services.jobs.submit(caller, SubmitJobRequest(gpus=0, command=["true"])).state == "pending"
        # where a relative one is read, too (new user 11, N20)
        assert answers["hub"].hint == ("give an existing directory you can enter (a relative one is read in your "
                                       "home directory), or leave working_dir out (jobs start in your home directory)")
        assert answers["embedded"].hint == ("give an existing directory you can enter (a relative one is read in the "
                                            f"server's root directory, {tmp_path}), or leave working_dir out "
                                            f"(jobs start in the server's root directory, {tmp_path})")
        with pytest.raises(ValidationError) as private:
            hub.jobs.submit(hub.caller(alice.name, admin=False),
                            SubmitJobRequest(gpus=0, command=["true"], working_dir="/root"))
        assert private.value.message == f"working_dir: directory '/root' cannot be entered as {alice.name} on this server"
    finally:
        hub.store.close()
        embedded.store.close()


def test_newuser15_n1_a_path_behind_a_closed_folder_is_never_said_not_to_exist(accounts: list[Account],
                                                                               root: Path, tmp_path: Path) -> None:
    """N1: bob's file in bob's 0700 folder was "does not exist" for alice — false: it is there, and she
    can ``ls -ld`` the folder. Now one sentence that is true either way (and says nothing of bob's
    files); a path alice can look for and that is not there still "does not exist"."""
    alice, bob = accounts
    executor = hub_executor(root)
    closed = owned(root / "closed", bob, 0o700)
    owned(closed / "data.txt", bob, 0o644, "x")
    owned(closed / "tool", bob, 0o755, "#!/bin/sh\n")

    def check(**body: object) -> tuple[str, str, str] | None:
        return executor.missing_path(spec_from_request({"gpus": 0, **body}, user=alice.name))

    for there in ("data.txt", "not-there.txt"):  # the same answer whether or not it exists
        assert check(script=str(closed / there)) == (
            "script", str(closed / there), f"cannot be found or read as {alice.name}{CLOSED_FOLDER}")
    assert check(working_dir=str(closed / "sub"), command=["true"]) == (
        "working_dir", str(closed / "sub"), f"cannot be found or entered as {alice.name}{CLOSED_FOLDER}")
    assert check(working_dir="/proc/1/cwd", command=["true"]) == (  # a link she cannot follow
        "working_dir", "/proc/1/cwd", f"cannot be found or entered as {alice.name}{CLOSED_FOLDER}")
    assert check(command=[str(closed / "tool")]) == (
        "command", str(closed / "tool"), f"cannot be found or run as {alice.name}{CLOSED_FOLDER}")
    assert check(script=str(root / "nothere.py")) == ("script", str(root / "nothere.py"), "does not exist")

    hub = Services(store=Store(sqlite_url(tmp_path / "hub.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                   executor=executor)
    try:
        with pytest.raises(ValidationError) as refused:
            hub.jobs.submit(hub.caller(alice.name, admin=False), SubmitJobRequest(gpus=0, script=str(closed / "x.py")))
        assert refused.value.field == "script"
        assert refused.value.message == (f"script {str(closed / 'x.py')!r} cannot be found or read as {alice.name} "
                                         "on this server (a folder on its path may be closed to you)")
    finally:
        hub.store.close()


def test_s34_on_a_hub_a_notebook_whose_kernel_the_owner_has_not_is_refused_at_submit(accounts: list[Account],
                                                                                      root: Path, tmp_path: Path) -> None:
    """Session 33's leftover of newuser33 N4: a hub submit did not check a notebook's kernel (listing the owner's
    kernels took a Python run as the owner per submit), so a notebook with a kernel not installed for its owner
    waited for GPUs and failed at its start. The service reads the kernel folders the owner's runner searches, as
    the owner may list them: the owner's own kernels count, another account's never, and a folder the owner may
    not list makes it not known (nothing refused; the runner says it at start)."""
    alice, bob = accounts
    executor = hub_executor(root)

    def kernel(home: str, name: str, account: Account) -> None:
        folder = Path(home) / ".local" / "share" / "jupyter" / "kernels" / name
        folder.mkdir(parents=True)
        (folder / "kernel.json").write_text(json.dumps({"argv": ["python3", "-m", "ipykernel_launcher", "-f",
                                                                 "{connection_file}"], "display_name": name}))
        for path in (folder / "kernel.json", *folder.parents):
            if str(path) == home:
                break
            os.chown(path, account.uid, account.gid)

    def notebook(account: Account, kernel_name: str) -> str:
        nb = {"cells": [], "metadata": {"kernelspec": {"name": kernel_name, "display_name": kernel_name.title()}},
              "nbformat": 4, "nbformat_minor": 5}
        return str(owned(Path(account.home) / f"k-{kernel_name}.ipynb", account, 0o644, json.dumps(nb)))

    kernel(bob.home, "bobs-env", bob)
    Path(bob.home).chmod(0o700)
    hub = Services(store=Store(sqlite_url(tmp_path / "hub.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                   executor=executor)
    try:
        caller = hub.caller(alice.name, admin=False)
        for name in ("nosuchkernel", "bobs-env"):  # bob's kernel is bob's: alice's runner would not find it
            with pytest.raises(ValidationError) as refused:
                hub.jobs.submit(caller, SubmitJobRequest(gpus=0, notebook=notebook(alice, name)))
            assert refused.value.field == "notebook"
            assert f"cannot run: its kernel '{name}' ({name.title()}) is not installed where the job runs — " \
                   "kernels there: python3" in refused.value.message, refused.value.message
            assert "bobs-env" not in refused.value.message.split("kernels there:")[1]
            # newuser41 n12: registered from that kernel's own environment, never with the job's Python
            assert refused.value.hint.endswith(f"/path/to/that-env/bin/python -m ipykernel install --user --name {name}"
                                               ) and f"not with {executor.job_python}," in refused.value.hint, \
                refused.value.hint
        kernel(alice.home, "alices-env", alice)  # installed for her (`python -m ipykernel install --user`): taken
        assert hub.jobs.submit(caller, SubmitJobRequest(gpus=0, notebook=notebook(alice, "alices-env"))
                               ).state == "pending"
        assert hub.jobs.submit(caller, SubmitJobRequest(gpus=0, notebook=notebook(alice, "python3"))).state == "pending"
        closed = Path(alice.home) / ".local" / "share" / "jupyter" / "kernels"
        closed.chmod(0o000)  # a folder she may not list: what it holds is not known, so nothing is refused
        assert hub.jobs.submit(caller, SubmitJobRequest(gpus=0, notebook=notebook(alice, "nosuchkernel2"))
                               ).state == "pending"
        closed.chmod(0o755)
    finally:
        hub.store.close()
