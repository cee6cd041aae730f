"""red38 R5: one browser origin for the hub, every user's server and the scheduler service. A page a user serves
from their own server (a kernelspec resource file, sent as HTML without a sandbox) runs its script at the hub's
origin for whoever opens it; there it can frame /services/jupyter-sched/ (silent OAuth with the example's
``oauth_no_confirm``) and act with the opener's scheduler rights. Nothing said so: the docs never named
``c.JupyterHub.subdomain_host``, the example config granted OAuth without asking, the service's log was silent.

Real parts: ``jupyter-sched serve`` started as JupyterHub starts its service (tests/hub/serve_start.py) with the
environment JupyterHub gives a service it starts — ``JUPYTERHUB_HOST`` and ``JUPYTERHUB_PUBLIC_URL`` as
jupyterhub.app/services.service compute them with and without ``subdomain_host`` — its log; the example config and
docs/admin.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.hub.origins import origin_line
from tests.accounts import shared_dir

from .serve_start import serve_env, serve_start_up_log

ROOT = Path(__file__).resolve().parents[2]
ONE = "one origin for the hub, every user's server and this service (no c.JupyterHub.subdomain_host)"
PREFIX = "/services/jupyter-sched/"


@pytest.mark.parametrize(("env", "want_warn", "want"), [
    ({"JUPYTERHUB_HOST": ""}, True, ONE),  # no public_url, no subdomain_host: the hub sets it empty
    ({"JUPYTERHUB_HOST": "https://hub.example.org", "JUPYTERHUB_PUBLIC_URL": "https://hub.example.org" + PREFIX},
     True, ONE),  # public_url only: the service's public URL is on the hub's own origin
    ({"JUPYTERHUB_HOST": "https://hub.example.org",
      "JUPYTERHUB_PUBLIC_URL": "https://jupyter-sched.hub.example.org" + PREFIX}, False,
     "origins: this service has an origin of its own (https://jupyter-sched.hub.example.org/services/jupyter-sched/; "
     "the hub at https://hub.example.org)"),
    ({}, False, "origins: not known to this service (JUPYTERHUB_HOST is not in its environment"),
], ids=["no subdomain_host", "public_url only", "subdomain_host", "external service, not said"])
def test_red38_r5_the_origin_line_reads_what_the_hub_gives_its_service(
        env: dict[str, str], want_warn: bool, want: str) -> None:
    warn, line = origin_line(env)
    assert warn is want_warn and line.startswith(want), line
    if warn:
        assert "an admin who opens one acts as a scheduler admin" in line, line
        assert 'c.JupyterHub.subdomain_host = "https://hub.example.org"' in line, line


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="hub mode with the local executor runs as root")
def test_red38_r5_serve_warns_at_start_up_of_one_origin() -> None:
    """Failed before: no start-up line said that the hub serves every server and the service from one origin."""
    with shared_dir() as folder:
        (folder / "config").mkdir()
        (folder / "config" / "jupyter_sched_serve_config.py").write_text(
            f"c.SchedApp.log_dir = {str(folder / 'jobs')!r}\nc.HubSchedApp.job_python = '/usr/bin/python3'\n")
        env = serve_env(folder, f"sqlite:///{folder / 'store.sqlite'}", JUPYTERHUB_HOST="")
        text = serve_start_up_log(folder, env, "scheduler admins:")
    said = [line for line in text.splitlines() if ONE in line]
    assert len(said) == 1 and said[0].startswith("[W "), text[-3000:]


def test_red38_r5_the_example_and_the_docs_name_subdomain_host() -> None:
    """Failed before: neither named subdomain_host; the example granted the service's OAuth without asking."""
    example = (ROOT / "server" / "jupyterhub_config.py").read_text()
    assert '# c.JupyterHub.subdomain_host = "https://hub.example.org"\n' in example
    assert '"oauth_no_confirm": True' not in example
    admin = " ".join((ROOT / "docs" / "admin.md").read_text().split())
    section = admin[admin.index("## JupyterHub"):admin.index("## Kubernetes")]
    assert "### One origin per server: `c.JupyterHub.subdomain_host`" in section
    assert 'set `c.JupyterHub.subdomain_host = "https://hub.example.org"`' in section
    assert "admins should not open users' servers" in section and ONE.split(" (")[0] in section
