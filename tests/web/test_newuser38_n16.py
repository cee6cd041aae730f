"""newuser38 n16: a hub user with no OS account to run their jobs as saw ``jupyter-sched status`` all
green; only ``submit`` refused, with an admin's fix (useradd, the service config) addressed to them.
Now ``GET me`` says ``jobs_cannot_run`` and ``status`` a ``jobs: cannot run — …`` line; both, and the
refusal, say "ask an admin to …".

Real parts: the ``jupyter-sched`` program as a subprocess against a real Jupyter server with the
scheduler extension (tests/web/conftest.py: ivan a user), with hub mode's run-as check and account
check over this host's real account database (``ivan`` has no account here; ``cloudsdk``, uid 1000, is
looked up where the host has it).
"""

from __future__ import annotations

import pwd
import sys
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.hub.account_said import AccountSaid
from jupyter_sched.hub.central import refuse_unrunnable
from tests.accounts import os_accounts
from tests.accounts import skip_reason as accounts_skip

from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_newuser38_n16_status_says_jobs_cannot_run_and_whom_to_ask(cli: Any, sched_app: Any,  # noqa: F811
                                                                        api: Any) -> None:
    with pytest.raises(KeyError):
        pwd.getpwnam("ivan")  # the test's user has no OS account on this host
    mapping = AccountMapping()
    sched_app.services.admission.run_as_check = refuse_unrunnable(mapping)
    sched_app.services.admission.account_said = AccountSaid(mapping)

    code, me = await api("GET", "me")
    assert code == 200 and me["jobs_cannot_run"].startswith(
        "cannot run — hub user 'ivan' has no OS account 'ivan' on this host"), me
    assert "ask an admin to create the account 'ivan' (useradd)" in me["jobs_cannot_run"], me
    status = await cli("status")
    assert status.code == EXIT_OK, status.err
    line = next((ln for ln in status.out.splitlines() if ln.startswith("jobs ")), "")
    assert line.split(None, 1)[1].startswith("cannot run — hub user 'ivan' has no OS account"), status.out
    refused = await cli("submit", "--gpus", "1", "--", sys.executable, "-c", "print(1)")
    said = refused.err + refused.out
    assert refused.code != EXIT_OK and "ask an admin to create the account 'ivan'" in said, said
    assert "create the account (useradd), or map the user" not in said, said


@pytest.mark.skipif(accounts_skip() is not None, reason=f"OS accounts: {accounts_skip()}")
def test_newuser38_n16_an_account_that_exists_says_nothing() -> None:
    with os_accounts(1, prefix="n38x") as [account]:  # a real account, made for the test
        said = AccountSaid(AccountMapping(accounts={"n38x": account.name}))
        assert said("n38x") == "" and said.kept("n38x") == ""
    assert said("no-such-account-n38") and said.kept("no-such-account-n38") is not None
