"""hubadmin23 A8: who is a scheduler admin on a hub. The service honours three sources — hub admins,
holders of the admin scope (``c.HubIdentityProvider.admin_scope``) and ``c.SchedApp.admin_users`` —
but the trait help said "hub mode takes admins from the hub instead" (an admin trusting it leaves a
stale admin_users line granting admin), the README named none of them, and the start-up log said
nothing. Now the help, the README and the start-up log say all three.

Real parts: ``jupyter-sched serve`` started as JupyterHub starts its service (tests/hub/serve_start.py),
its log; the trait help as ``--help-all`` prints it; README.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.extension.app import SchedApp
from jupyter_sched.hub.identity import ADMIN_SCOPE
from tests.accounts import shared_dir

from .serve_start import serve_env, serve_start_up_log

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"), reason="hub mode with the local executor runs as root")
def test_s23_hubadmin23_a8_the_start_up_log_names_every_source_of_admins() -> None:
    """Failed before: no start-up line said who is admin."""
    with shared_dir() as folder:
        (folder / "config").mkdir()
        (folder / "config" / "jupyter_sched_serve_config.py").write_text(
            f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}\nc.SchedApp.admin_users = {{'boss', 'ha23c'}}\n"
            "c.HubSchedApp.job_python = '/usr/bin/python3'\n")
        env = serve_env(folder, f"sqlite:///{folder / 'store.sqlite'}")
        text = serve_start_up_log(folder, env, "scheduler admins:")
    said = [line for line in text.splitlines() if "scheduler admins:" in line]
    assert len(said) == 1 and said[0].startswith("[I "), text[-3000:]
    # by name since newuser38 n7 (the hub's admins at the first read of its users: no hub answers here)
    assert said[0].endswith("jupyter_sched: scheduler admins: boss (c.SchedApp.admin_users), ha23c "
                            "(c.SchedApp.admin_users), and the hub's admins (named here once the hub's user list is "
                            f"read); also any caller whose token holds the scope {ADMIN_SCOPE} "
                            "(c.HubIdentityProvider.admin_scope), named here at their first request"), said


def test_s23_hubadmin23_a8_the_help_and_the_readme_say_the_same_three() -> None:
    """Failed before: the help said hub mode ignores admin_users; the README named no source."""
    helped = " ".join(str(SchedApp.class_traits()["admin_users"].help).split())
    assert "takes admins from the hub instead" not in helped, helped
    assert "On a hub (jupyter-sched serve) these names are admins too, besides the hub's admins" in helped, helped
    assert ADMIN_SCOPE in helped and "c.HubIdentityProvider.admin_scope" in helped, helped
    readme = " ".join((ROOT / "docs" / "admin.md").read_text().split())
    assert ("**Scheduler admins** on a hub are the hub's admins (`admin` in the hub's users), holders of the scope "
            f"`{ADMIN_SCOPE}` (`c.HubIdentityProvider.admin_scope`") in readme
    assert "and the names in `c.SchedApp.admin_users` of the service's config — all three count" in readme
