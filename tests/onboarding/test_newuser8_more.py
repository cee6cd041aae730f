"""New user 8's findings left after session 8 (/work/coord/notes/newuser8.md, nu8-cli.md), each its own test:
N12 (the CLI given a JupyterHub's address), N13's remainders, and issue 20's follow-ups in the magics,
the reasons and the quota settings."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_NO_SERVER, EXIT_OK
from tests.hub.hub_harness import HUB_CONFIG_HEAD, VENV_BIN, binaries_skip_reason, chp_command
from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A shell with no server to discover (an empty runtime dir) and only the variables given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT), **extra})
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


# ---- N12: a JupyterHub's address given to the CLI ---------------------------------------------------

_HUB_CONFIG = HUB_CONFIG_HEAD + """c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.services = [{{"name": "driver", "api_token": s["driver_token"]}}]
c.JupyterHub.load_roles = [{{"name": "driver", "scopes": ["admin:users"], "services": ["driver"]}}]
"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real JupyterHub (PyPI ``jupyterhub`` with ``configurable-http-proxy``, dummy authenticator,
    SQLite) with one user, eve, whose server is not running; yields the proxy's URL. No service and
    no user server: what N12 is about is what the hub itself answers."""
    why = binaries_skip_reason()
    if why is not None:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("nu8hub")
    proxy_port = _free_port()
    settings = {"base": str(base), "proxy_port": proxy_port, "hub_port": _free_port(), "chp_api_port": _free_port(),
                "chp": chp_command(), "driver_token": "driver-token-nu8"}
    config = base / "jupyterhub_config.py"
    config.write_text(_HUB_CONFIG.format(settings=json.dumps(settings)))
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    with (base / "hub.log").open("wb") as log:
        process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(config)], cwd=base, stdout=log,
                                   stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{proxy_port}/"
    try:
        deadline = time.monotonic() + 90
        while True:
            with contextlib.suppress(httpx.HTTPError):
                made = httpx.post(f"{url}hub/api/users/eve", headers={"Authorization": "token driver-token-nu8"})
                if made.status_code in (201, 409):
                    break
            assert process.poll() is None and time.monotonic() < deadline, (base / "hub.log").read_text()[-3000:]
            time.sleep(0.3)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_newuser8_n12_the_cli_given_a_jupyterhub_url_names_the_hubs_scheduler(hub: str, tmp_path: Path) -> None:
    """N12: ``--url`` the hub (redirects to ``/hub/…``), a stopped server's ``/user/NAME/`` (the same)
    and the hub's own ``/hub/`` page were told "give the Jupyter server's root URL … without /lab"."""
    env = _env(tmp_path, JUPYTER_SCHED_TOKEN="a-hub-token")
    for given in (hub, f"{hub}user/eve/", f"{hub}hub/", f"{hub}hub/home"):
        said = _cli(env, "--url", given, "status")
        assert said.returncode == EXIT_NO_SERVER, said.stdout + said.stderr
        line = said.stderr.strip().splitlines()[-1]
        assert "is a JupyterHub" in line, (given, line)
        assert line.endswith(f"use {hub}services/jupyter-sched/ (or set JUPYTER_SCHED_HUB_URL)"), (given, line)
        assert "without /lab" not in line, line


def test_newuser8_n12_no_server_found_names_jupyter_sched_hub_url(tmp_path: Path) -> None:
    """N12: "no JupyterHub service is configured" — by what? The line names the variable, and how to
    reach a hub's scheduler from a shell; the README says the same in its CLI paragraph."""
    said = _cli(_env(tmp_path), "status")
    assert said.returncode == EXIT_NO_SERVER, said.stdout + said.stderr
    assert "no JupyterHub service is configured" not in said.stderr, said.stderr
    assert "nor JUPYTER_SCHED_HUB_URL" in said.stderr, said.stderr
    assert "JUPYTER_SCHED_HUB_URL=HUB/services/jupyter-sched/" in said.stderr, said.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cli = readme[readme.index("From a terminal"):readme.index("Recurring notebook jobs")]
    assert "export JUPYTER_SCHED_HUB_URL=https://HUB/services/jupyter-sched/" in cli
    assert "hub/token" in cli


# ---- against a real server -----------------------------------------------------------------------

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu8more"), users=USERS, admin_users=["boss"],
                               stop_grace_s=30, preemption_grace_s=1, simulated_gpus=2,
                               priority_grants={"users": {"boss": ["high"]}})
    try:
        yield srv
    finally:
        clear(srv)  # jobs outlive a killed server by design: stop this module's before killing it
        srv.kill()


_STUBBORN = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(300)\n"


def _submit(env: dict[str, str], *argv: str) -> str:
    made = _cli(env, "submit", *argv)
    assert made.returncode == EXIT_OK, made.stdout + made.stderr
    return made.stdout.split()[1].rstrip(":")


def _until(what: str, ready: Any, timeout_s: float = 60) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (got := ready()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return got


def test_newuser8_n13_status_my_work_counts_stopping_jobs_apart(server: EmbeddedServer, tmp_path: Path) -> None:
    """N13 remainder: during a cancel's grace ``jupyter-sched status`` said "my work  1 job running"
    (it counts from ``GET me``, which had no count of stopping jobs)."""
    (tmp_path / "stubborn.py").write_text(_STUBBORN)
    env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann")
    ann = api(server, "tok-ann")
    try:
        stub = _submit(env, "--gpus", "1", "--name", "stubborn", "--workdir", str(tmp_path), "--", sys.executable,
                       "stubborn.py")
        _submit(env, "--gpus", "1", "--name", "calm", "--workdir", str(tmp_path), "--", sys.executable, "-c",
                "import time; time.sleep(300)")
        _until("both running", lambda: ann.get("me").json()["in_use"]["jobs"] == 2
               and "up" in ann.get(f"jobs/{stub}/logs").text)
        assert ann.get("me").json()["in_use"]["stopping"] == 0
        assert "my work    2 jobs running, on 2 GPUs" in _cli(env, "status").stdout
        assert "stopping" in _cli(env, "cancel", stub).stdout
        _until("the stop", lambda: ann.get(f"jobs/{stub}").json().get("stopping_since"))
        me = ann.get("me").json()
        assert me["in_use"] == {"gpus": 2, "jobs": 2, "leases": 0, "stopping": 1}, me  # both still hold GPUs
        said = _cli(env, "status").stdout
        (line,) = [ln for ln in said.splitlines() if ln.startswith("my work")]
        assert line.startswith("my work    1 job running, 1 stopping (cancel requested by ann at "), said
        assert "UTC if still running), on 2 GPUs" in line, line
    finally:
        clear(server)


_BULK_CANCEL = r"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
from jupyter_sched.client import _http
sent = []
request = _http.StdlibHttp.request
def counted(self, method, path, **kw):
    sent.append(f"{method} {path}")
    return request(self, method, path, **kw)
_http.StdlibHttp.request = counted  # observes the requests; the real server answers them
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "jupyter_sched")
shell.run_line_magic("schedule", "cancel --mine")
print("=====", json.dumps(sent), flush=True)
sent.clear()
shell.run_line_magic("schedule", "cancel --mine --yes")
print("=====", json.dumps(sent), flush=True)
"""


def test_newuser8_schedule_cancel_mine_is_one_bulk_request(server: EmbeddedServer, tmp_path: Path) -> None:
    """``%schedule cancel --mine --yes`` sent one ``DELETE jobs/{id}`` per job (and a config read,
    and a listing per page); ``jupyter-sched cancel --mine --yes`` sends one ``POST jobs/cancel``.
    The listing without ``--yes`` and the summary line stay as they were."""
    env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann",
               IPYTHONDIR=str(tmp_path / "ipython"))
    ann = api(server, "tok-ann")
    try:
        ids = [_submit(env, "--gpus", "1", "--name", f"w{n}", "--workdir", str(tmp_path), "--", sys.executable, "-c",
                       "import time; time.sleep(300)") for n in range(4)]
        _until("two running", lambda: ann.get("me").json()["in_use"]["jobs"] == 2)
        done = subprocess.run([sys.executable, "-c", _BULK_CANCEL], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        listing, asked, yes = done.stdout.split("=====")
        asked_sent = json.loads(asked.strip().splitlines()[0])
        summary = "\n".join(asked.strip().splitlines()[1:])
        assert "Would cancel your 4 jobs (2 pending, 2 running):" in listing, done.stdout
        assert not any(s.startswith(("DELETE", "POST")) for s in asked_sent), asked_sent  # nothing cancelled yet
        assert json.loads(yes) == ["POST jobs/cancel"], yes  # one request (was GET me, GET jobs, a DELETE per job)
        assert summary == "Cancelled 4 jobs: 2 pending removed from the queue; 2 running jobs are stopping " \
                          "(30 s grace).", done.stdout
        rows = [ann.get(f"jobs/{i}").json() for i in ids]
        assert all(r["state"] == "cancelled" or r.get("stop_requested") for r in rows), rows
    finally:
        clear(server)


def test_newuser8_a_restarted_job_names_its_preemptor_by_name_and_id(server: EmbeddedServer, tmp_path: Path) -> None:
    """Issue 20 follow-up of N9: a job started again after a preemption read "start 2, after
    preemption by j-1m8x162ph-dgvt2x" — the one place a reason still named another job by a bare id."""
    ann_env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-ann")
    boss_env = _env(tmp_path, JUPYTER_SCHED_URL=server.url, JUPYTER_SCHED_TOKEN="tok-boss")
    ann = api(server, "tok-ann")
    try:
        victim = _submit(ann_env, "--gpus", "2", "--priority", "low", "--name", "sweep", "--workdir", str(tmp_path),
                         "--", sys.executable, "-c", "import time; time.sleep(300)")
        _until("the victim running", lambda: ann.get(f"jobs/{victim}").json()["state"] == "running")
        # past the engine's poll interval (1 s): a stop sooner is no attempt and no "start 2" (new user 24, N1)
        time.sleep(1.5)
        urgent = _submit(boss_env, "--gpus", "2", "--priority", "high", "--name", "urgent-eval", "--workdir",
                         str(tmp_path), "--", sys.executable, "-c", "import time; time.sleep(1)")
        row = _until("the victim running again", lambda: (r := ann.get(f"jobs/{victim}").json())["state"] == "running"
                     and r["attempts"] == 2 and r, timeout_s=120)
        assert row["preempted_by"] == urgent and row["preempted_by_name"] == "urgent-eval", row
        jobs = _cli(ann_env, "jobs")
        after = jobs.stdout.split(victim, 1)[1].split("\nj-", 1)[0]  # its line and the detail line below
        assert f"start 2, after preemption by urgent-eval ({urgent})" in after, jobs.stdout
        listed = [j for j in ann.get("jobs").json() if j["id"] == victim]
        assert listed[0]["preempted_by_name"] == "urgent-eval"  # the panel's list too
    finally:
        clear(server)


# ---- team names in the configuration -------------------------------------------------------------

@pytest.mark.parametrize("trait, value, said", [
    ("quotas", [{"team": "ml", "guaranteed": 1}, {"team": "ml\u202e", "guaranteed": 1}],
     "c.SchedApp.quotas[1].team = 'ml\\u202e': contains the invisible character U+202E. Fix: use printable characters"),
    ("quotas", [{"team": "x" * 5000, "guaranteed": 1}],
     "c.SchedApp.quotas[0].team = '" + "x" * 40 + "…': is too long (5000 characters, at most 64). Fix: use at most 64"),
    ("quotas", [{"team": "  ", "guaranteed": 1}], "c.SchedApp.quotas[0].team = '  ': is empty. Fix: name the team"),
    ("user_teams", {"ann": ["ml", "cv\u202e"]}, "user_teams.ann[1] contains the invisible character U+202E. Fix:"),
    ("default_team", "ops\x1b[31m", "c.SchedApp.default_team = 'ops\\x1b[31m': contains the invisible character U+001B"),
], ids=["a quota line's bidi override", "a 5000-character quota team", "a blank quota team", "a user_teams entry",
        "default_team"])
@pytest.mark.parametrize("app", ["SchedApp", "HubSchedApp"])
def test_newuser8_team_names_in_the_config_are_checked_as_put_quotas_checks_them(
        app: str, trait: str, value: Any, said: str) -> None:
    """N10 follow-up: ``PUT quotas`` refuses a team with U+202E or 5,000 characters; the same names in
    ``c.SchedApp.quotas`` (the hub service's too), ``user_teams`` or ``default_team`` were accepted
    when the config loaded (a quota line only failed later, and only when it differed from the
    stored one). Now the config load stops with the key and the fix."""
    from traitlets import TraitError

    from jupyter_sched.extension import SchedApp
    from jupyter_sched.hub.central import HubSchedApp

    cls = SchedApp if app == "SchedApp" else HubSchedApp
    with pytest.raises(TraitError) as caught:
        cls(**{trait: value})
    assert said in str(caught.value), str(caught.value)
    cls(**{trait: {"ann": ["ml", "cv"]} if trait == "user_teams" else "ops" if trait == "default_team" else
               [{"team": "ml", "guaranteed": 1}]})  # a good name passes


def test_newuser8_a_server_with_a_bad_team_name_in_its_config_stops_with_one_line(tmp_path: Path) -> None:
    """The real server: ``c.SchedApp.user_teams = {"ann": "ml\\u202e"}`` started and served."""
    conf = tmp_path / "config"
    conf.mkdir()
    (conf / "jupyter_server_config.py").write_text(
        f'c.SchedApp.db_url = "sqlite:///{tmp_path / "mine.sqlite"}"\n'
        'c.SchedApp.inventory_source = "simulated"\n'
        'c.SchedApp.user_teams = {"ann": "ml\\u202e"}\n', encoding="utf-8")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(conf), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "jupyter_server", "--no-browser", "--port=0",
                           f"--ServerApp.root_dir={tmp_path}", "--IdentityProvider.token=t", "--allow-root"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "jupyter_sched: bad configuration, not starting: c.SchedApp.user_teams" in done.stderr, done.stderr[-2000:]
    assert "user_teams.ann contains the invisible character U+202E. Fix: use printable characters" in done.stderr
    assert "Traceback" not in done.stderr
