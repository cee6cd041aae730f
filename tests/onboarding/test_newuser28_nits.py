"""newuser28's nits (issue 20: a new user's first hour turns up nothing odd in the CLI's words, the magics, the
pending reasons, the README). Each test failed before its fix and asserts the words a new user now reads.

Real parts: the CLI commands over a client double at the wire (``call(Req) -> JSON``, the server's answers as
they come), the wording renderers, the README.
"""

from __future__ import annotations

import argparse
import io
from types import SimpleNamespace
from typing import Any

from jupyter_sched.cli.admin_views import usage


class _UsageWire:
    """GET me and GET usage/report's answers, as ``client.call`` returns them."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def config(self) -> dict[str, Any]:
        return {"features": {"hub": True}}

    def pages(self, req: Any) -> Any:  # the report is one page here (SchedClient.pages follows Link: red30 R8)
        yield self.call(req)

    def call(self, req: Any) -> Any:
        if req.path == "me":
            return {"user": "ana", "is_admin": False}
        return self.rows


def test_newuser28_n15_usage_says_under_one_percent_not_zero() -> None:
    """Failed before: 0.004 of 1.553 GPU-hours used (0.26 %) read ``0 %`` — "never used the GPU"."""
    rows = [{"user": "ana", "allocated_gpu_hours": 1.553, "utilized_gpu_hours": 0.004, "efficiency": 0.004 / 1.553,
             "cost": None, "jobs": 3},
            {"user": "bo", "allocated_gpu_hours": 1.0, "utilized_gpu_hours": 0.0, "efficiency": 0.0, "cost": None,
             "jobs": 1},
            {"user": "cy", "allocated_gpu_hours": 1.0, "utilized_gpu_hours": 0.998, "efficiency": 0.998,
             "cost": None, "jobs": 1},
            {"user": "di", "allocated_gpu_hours": 1.0, "utilized_gpu_hours": 0.42, "efficiency": 0.42, "cost": None,
             "jobs": 1}]
    out = io.StringIO()
    args = argparse.Namespace(by="user", since=None, csv=False, json=False)
    assert usage(_UsageWire(rows), args, SimpleNamespace(out=out, err=io.StringIO())) == 0
    cells = {line.split()[0]: line for line in out.getvalue().splitlines()[1:5]}
    assert "  <1 %  " in cells["ana"] and " 0 %" not in cells["ana"], out.getvalue()
    assert "  0 %  " in cells["bo"], out.getvalue()  # none at all is 0 %
    assert "  >99 %  " in cells["cy"], out.getvalue()  # short of all is not 100 %
    assert "  42 %  " in cells["di"], out.getvalue()


class _NodesWire:
    """GET inventory's answer: one node of two GPUs, one of them held."""

    def call(self, req: Any) -> Any:
        assert (req.method, req.path) == ("GET", "inventory"), req
        return {"nodes": [{"name": "vm", "gpus": [{"uuid": "GPU-0", "model": "A100"}, {"uuid": "GPU-1", "model": "A100"}]}],
                "allocations": {"GPU-0": ["j-1"]}}


def test_newuser28_n14_nodes_alone_lists_the_nodes() -> None:
    """Failed before: ``jupyter-sched nodes`` alone was ``nodes: ACTION: missing — usage: …`` [usage_error],
    though its help says "list the nodes" (``definitions`` alone lists, as ``sinfo`` needs no verb)."""
    from jupyter_sched.cli.main import Streams, build_parser
    from jupyter_sched.cli.nodes import nodes

    for argv in (["nodes"], ["nodes", "list"]):
        out, err = io.StringIO(), io.StringIO()
        args = build_parser().parse_args(argv)
        assert nodes(_NodesWire(), args, Streams(out=out, err=err, stdin=io.StringIO())) == 0, argv
        assert out.getvalue().splitlines() == ["vm  2 x A100 (1 in use)  ready", "1 node, 2 GPUs"], (argv, out.getvalue())
        assert err.getvalue() == "", err.getvalue()


def test_newuser28_n12_a_day_budgets_warning_says_today(tmp_path: Any) -> None:
    """Failed before: the budget warning (audited, pushed as an event) said "… GPU-hours this day" where the gate's
    reason, the PUT/submit warnings and ``status`` say "today" (newuser27 n4)."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.engine import ManualClock, SchedulerService
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.hub.budgets import BUDGET_ACTION, warn_budgets
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.store import Store, sqlite_url

    day = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(day + timedelta(hours=1)))
    try:
        svc.set_quotas({"budgets": [{"team": "ml", "gpu_hours": 2, "period": "day"},
                                    {"team": "ml", "user": "ana", "gpu_hours": 2, "period": "week"}],
                        "user_teams": {"ana": "ml"}}, actor="admin")
        with svc.store.transaction(now=day) as tx:  # 2 GPUs for 0:48 -> 1.6 GPU-hours = 80 %
            tx.open_usage(job_id="j-1", attempt=1, user="ana", team="ml", kind="training",
                          gpus=[("GPU-0", "A100", 1.0), ("GPU-1", "A100", 1.0)], started_at=day)
            tx.close_usage("j-1", day + timedelta(minutes=48))
        said = sorted(w["message"] for w in warn_budgets(svc))
        # the server's own words, which readers in every zone read: "this UTC day" (newuser30 n11)
        assert said == ["ml used 1.60 of 2 GPU-hours this UTC day (80 %, warning at 80 %)",
                        "user ana in team ml used 1.60 of 2 GPU-hours this week (80 %, warning at 80 %)"], said
        assert sorted(e["message"] for e in svc.audit(action=BUDGET_ACTION)) == said
    finally:
        svc.store.close()


class _JobsWire:
    """``client.jobs_upto``: two finished jobs shown, older ones there."""

    def __init__(self, submitted: list[str]) -> None:
        self.submitted = submitted

    def jobs_upto(self, limit: int, **_: Any) -> tuple[list[dict[str, Any]], bool]:
        rows = [{"id": f"j-{i}", "state": "succeeded", "priority": "normal", "gpus": 1, "name": f"run{i}",
                 "submitted_at": at, "finished_at": at, "exit_code": 0} for i, at in enumerate(self.submitted)]
        return rows[:limit], len(rows) > limit


def test_newuser28_n7_jobs_footer_says_the_oldest_as_the_clis_other_times() -> None:
    """Failed before: the footer said "(the oldest shown was submitted 2026-12-06T01:29:53.024250Z)" — raw ISO with
    microseconds in a sentence; now the CLI's clock (the caller's zone), the exact value kept for ``--until``."""
    from datetime import datetime, timezone

    from jupyter_sched.cli.commands import jobs
    from jupyter_sched.cli.main import Streams, build_parser
    from jupyter_sched.model.units import clock_text, shown_in

    oldest = "2026-12-06T01:29:53.024250Z"
    wire = _JobsWire(["2026-12-06T01:31:00.000001Z", oldest, "2026-12-06T01:20:00Z"])
    for zone, abbreviation in ((None, "UTC"), ("Europe/Berlin", "CET")):
        out = io.StringIO()
        with shown_in(zone):
            assert jobs(wire, build_parser().parse_args(["jobs", "--limit", "2"]),
                        Streams(out=out, err=io.StringIO(), stdin=io.StringIO())) == 0
            said = clock_text(datetime(2026, 12, 6, 1, 29, 53, tzinfo=timezone.utc), datetime.now(timezone.utc))
        footer = out.getvalue().splitlines()[-1]
        assert said.endswith(("01:29 UTC", "02:29 CET")) and said.endswith(abbreviation), said
        assert footer == (f"Older jobs are not shown (the oldest shown was submitted {said}): --limit 4 shows more, "
                          f"or --until {oldest} the next ones; --since, --state, --team and --user narrow it."), footer


def test_newuser28_n1_a_program_not_found_names_the_path_sent_not_the_servers(tmp_path: Any) -> None:
    """Failed before: ``submit -- nosuchcmd`` from the CLI (which sends the submitter's PATH since newuser27 N2) was
    told "the job runs with the server's PATH, not your shell's" — it ran with the shell's PATH, as sent."""
    import pytest

    from jupyter_sched.errors import ValidationError
    from jupyter_sched.services import build_services
    from jupyter_sched.services.models import SubmitJobRequest

    services = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off"})
    ana = services.caller("ana", admin=False)
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    sent = f"{tmp_path / 'venv' / 'bin'}:/usr/bin:/bin"
    try:
        with pytest.raises(ValidationError) as told:
            services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["nosuchcmd-n1", "--x"], env={"PATH": sent}))
        assert told.value.field == "command" and told.value.message == (
            "command: 'nosuchcmd-n1' is not a program on the job's PATH on this server"), told.value.message
        assert told.value.hint == ("give its full path, or check the spelling: the job runs with the PATH sent with it "
                                   f"({tmp_path / 'venv' / 'bin'} first, 3 folders) and none of its folders holds it"), \
            told.value.hint
        with pytest.raises(ValidationError) as told:  # no PATH sent (a REST client): the server's, as before
            services.jobs.submit(ana, SubmitJobRequest(gpus=0, command=["nosuchcmd-n1"]))
        assert told.value.hint == ("give its full path, or check the spelling: the job runs with the server's PATH, "
                                   "not your shell's (env PATH sets its own)"), told.value.hint
    finally:
        services.store.close()


def _limits_services(tmp_path: Any) -> Any:
    from jupyter_sched.services import build_services

    return build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                           "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off",
                           "time_limits": [{"default_s": 600, "max_s": 1800}]})


def _pending(services: Any, user: str, body: dict[str, Any]) -> str:
    from jupyter_sched.services.models import SubmitJobRequest

    request = SubmitJobRequest.model_validate({"gpus": 0, "command": ["true"], **body})
    return str(services.jobs.submit(services.caller(user, admin=False), request).id)


def _update(services: Any, job_id: str, body: dict[str, Any]) -> Any:
    from jupyter_sched.services.models import UpdateJobRequest

    return services.jobs.update(services.caller("ana", admin=False), job_id, UpdateJobRequest.model_validate(body))


def test_newuser28_n5_plus_one_hour_of_a_job_that_gave_no_limit_moves_its_queues_default(tmp_path: Any) -> None:
    """Failed before: ``update JOB --time-limit +1h`` of a pending job that gave no limit, in a queue with a 10m
    default, was refused "'+1h' moves the current limit, but the job has none" — it gets 10m at its start. Now
    "+1h" moves that 10m: 1h10m is said above the 30m maximum with the sum; "+15m" gives 25m."""
    import pytest

    from jupyter_sched.errors import AuthorizationError, ValidationError

    services = _limits_services(tmp_path)
    try:
        job_id = _pending(services, "ana", {})
        with pytest.raises(AuthorizationError) as over:
            _update(services, job_id, {"time_limit": "+1h"})
        assert over.value.field == "time_limit" and over.value.message == (
            "time limit 1h10m is above the maximum of team default's queue (30m)"), over.value.message
        assert over.value.hint == (f"give at most 30m (jupyter-sched update {job_id} --time-limit 30m), or ask an "
                                   "admin to lengthen it"), over.value.hint
        done = _update(services, job_id, {"time_limit": "+15m"})
        assert services.store.get_job(job_id).job.spec.time_limit_s == 1500
        assert "time limit 10m (queue default; none given) → 25m" in str(done.to_wire()), done.to_wire()
        unlimited = _pending(services, "ana", {"time_limit": 0})  # asked for none: nothing to move
        with pytest.raises(ValidationError) as none:
            _update(services, unlimited, {"time_limit": "+1h"})
        assert none.value.message == ("time_limit '+1h' moves the current limit, but the job has none: it asked for "
                                      "none (time limit 0)"), none.value.message
    finally:
        services.store.close()


def test_newuser28_n6_time_limit_zero_of_a_job_that_gave_none_says_what_it_gets(tmp_path: Any) -> None:
    """newuser28 n6: ``update a-pend --time-limit 0`` (not an admin) was refused "none is above the maximum of
    default's queue" — since newuser28 N2 it is taken (case 033: planned unlimited, stopped at the queue's
    maximum once it starts). Failed before: the change read "time limit none → none"; now it says the 10m it had
    from its queue and the 30m maximum it is stopped at."""
    services = _limits_services(tmp_path)
    try:
        job_id = _pending(services, "ana", {})
        done = _update(services, job_id, {"time_limit": 0})
        assert done.to_wire()["changed"] == [
            "time limit 10m (queue default; none given) → none (team default's queue stops it at its maximum, 30m, "
            "once it starts)"], done.to_wire()["changed"]
        assert services.store.get_job(job_id).job.spec.unlimited
    finally:
        services.store.close()


def test_newuser28_n4_the_readme_says_where_jupyter_reads_the_config_file() -> None:
    """Failed before: "For example, in `jupyter_server_config.py`:" said no folder; a new admin wrote it in the
    project folder, where Jupyter reads none (since jupyter_core 4.11.2), and nothing happened, silently. The
    folders the README names are ones Jupyter reads, and the one it warns of is not."""
    import os
    import sys
    from pathlib import Path

    from jupyter_core.application import base_aliases
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "admin.md").read_text(encoding="utf-8")
    config = readme[readme.index("## Configuring it"):readme.index("```python", readme.index("## Configuring it"))]
    flat = " ".join(config.split())
    assert "`~/.jupyter/` (`.venv/bin/jupyter --config-dir` prints it)" in flat, flat
    assert "`.venv/etc/jupyter/`" in flat and "`.venv/bin/jupyter --paths`" in flat, flat
    assert "Not the project folder you start `jupyter lab` in: Jupyter reads no config from the current folder" in flat
    assert "`.venv/bin/jupyter lab --config=./jupyter_server_config.py`" in flat, flat
    # what it says is so: ~/.jupyter (for this user) and the environment's etc/jupyter are read, the current folder
    # not; --config names a file
    read = [os.path.normpath(p) for p in jupyter_config_path()]
    assert os.path.normpath(os.path.join(sys.prefix, "etc", "jupyter")) in read, read
    assert os.path.normpath(jupyter_config_dir()) in read, read
    assert os.path.normpath(os.getcwd()) not in read, read
    assert base_aliases["config"] == "JupyterApp.config_file"


def test_newuser28_n9_quickstart_says_no_lease_when_cell_2_got_no_gpu(monkeypatch: Any, capsys: Any) -> None:
    """Failed before: on a busy machine cell 2 (``%gpu request 1 --timeout 5m``) gave up, saying why, and the next
    cell failed with a bare ``StopIteration`` (``next(…)`` over no lease). Now it says there is no lease and what
    to do; with one it checks CUDA_VISIBLE_DEVICES as before. The cell's own source, run as the kernel runs it."""
    import json
    from pathlib import Path

    import jupyter_sched.client

    notebook = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb").read_text())
    (cell,) = [c for c in notebook["cells"] if c["cell_type"] == "code" and "sched.leases()" in "".join(c["source"])]

    class Sched:
        kernel_id = "k-1"

        def __init__(self, leases: list[dict[str, Any]]) -> None:
            self._leases = leases

        def leases(self) -> list[dict[str, Any]]:
            return self._leases

    for leases, said in (([], "no lease: cell 2 got no GPU (see its message); run it again when a GPU is free "
                               "(%gpu shows who holds them)\n"),
                         ([{"kernel_id": "k-1", "allocation": {"gpu_uuids": ["GPU-a"]}}], "granted:              GPU-a\n")):
        monkeypatch.setattr(jupyter_sched.client, "connect", lambda leases=leases: Sched(leases))
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-a")
        monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
        exec(compile("".join(cell["source"]), "quickstart-cell", "exec"), {})
        assert capsys.readouterr().out.startswith(said), said


def test_newuser28_n11_a_personal_labs_start_says_the_oom_floor_at_info_the_hub_warns(
        tmp_path: Any, caplog: Any, monkeypatch: Any) -> None:
    """Failed before: a personal lab started as root without CAP_SYS_RESOURCE logged its isolation line as a
    WARNING ("oom_score_adj 500, no floor … a job may set its own back to 0 …") — the first WARNING a new user saw,
    about other accounts' jobs, on a lab that runs only its user's own. Now INFO there (the GPUs fenced); the
    hub, which runs other accounts' jobs as root, warns (``oom_floor_warning``, called where it starts them)."""
    import inspect
    import logging

    from jupyter_sched.executors import limits
    from jupyter_sched.hub import central
    from jupyter_sched.services import build_services

    monkeypatch.setattr(limits, "holds_cap_sys_resource", lambda: False)
    monkeypatch.setattr(limits.os, "geteuid", lambda: 0)
    monkeypatch.setattr(limits.LocalLimits, "fences_gpus", property(lambda self: True))
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        services = build_services({"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "jobs"),
                                   "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off"})
    services.store.close()
    (line,) = [r for r in caplog.records if "local jobs: GPUs fenced by" in r.getMessage()]
    assert line.levelno == logging.INFO and "no floor" in line.getMessage(), (line.levelname, line.getMessage())
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "oom_score_adj" in r.getMessage()]
    assert limits.oom_floor_warning(0) is not None and limits.oom_floor_warning(1000) is None
    assert "oom_floor_warning()" in inspect.getsource(central.HubSchedApp)


class _NamedWire:
    """``client.job_named``: two live jobs named ``rerun`` (a re-run), newest first."""

    def job_named(self, ref: str, command: str = "") -> Any:
        from jupyter_sched.client._wire import job_named

        return job_named(ref, [{"id": "j-2", "name": "rerun", "state": "running"},
                               {"id": "j-1", "name": "rerun", "state": "running"}])


def test_newuser28_n13_two_live_jobs_of_a_name_are_refused_with_the_commands_to_type() -> None:
    """Failed before: ``%schedule wait rerun`` with two of that name running was told "give the id of the one you
    mean (newest first)" — the ids were in the message, not the commands; now the hint is the command with each id,
    for the CLI and the magics alike (a cancel, hold or wait of the wrong one stays the user's choice)."""
    import pytest

    from jupyter_sched.cli.main import Streams, job_of
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.magics.core import SchedMagics

    with pytest.raises(ValidationError) as cli:
        job_of(_NamedWire(), "rerun", "wait", Streams(out=io.StringIO(), err=io.StringIO(), stdin=io.StringIO()))
    assert cli.value.message == "2 of your jobs are named 'rerun' and pending or running: j-2 (running), j-1 (running)"
    assert cli.value.hint == ("give the id of the one you mean: `jupyter-sched wait j-2` (the newest) or "
                              "`jupyter-sched wait j-1`"), cli.value.hint
    magics = SchedMagics(None, client_factory=_NamedWire)
    with pytest.raises(ValidationError) as magic:
        magics._job_of("rerun", "wait")
    assert magic.value.hint == ("give the id of the one you mean: `%schedule wait j-2` (the newest) or "
                                "`%schedule wait j-1`"), magic.value.hint


def test_newuser38_n33_a_personal_labs_environment_only_fence_is_said_at_info_the_hubs_at_warning(
        tmp_path: Any, caplog: Any, monkeypatch: Any) -> None:
    """newuser38 n33: an ordinary user's own ``jupyter lab`` logged at WARNING on every start "GPUs fenced by
    environment only …: a job that sets CUDA_VISIBLE_DEVICES itself can open every GPU of this host" — its jobs are
    that user's own processes: hub-admin advice in a newcomer's first log. Said at INFO there; the hub's service
    (other accounts' jobs run here: ``warns_oom_floor``, set by HubSchedApp.service_settings) keeps the WARNING."""
    import logging

    from jupyter_sched.executors import limits
    from jupyter_sched.services import build_services

    monkeypatch.setattr(limits.LocalLimits, "fences_gpus", property(lambda self: False))  # this VM: cgroup v2
    levels = {}
    for hub in (False, True):
        caplog.clear()
        settings = {"db_url": f"sqlite:///{tmp_path / f'{hub}.sqlite'}", "log_dir": str(tmp_path / f"jobs{hub}"),
                    "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off",
                    **({"warns_oom_floor": True} if hub else {})}
        with caplog.at_level(logging.INFO, logger="jupyter_sched"):
            services = build_services(settings)
        services.store.close()
        (line,) = [r for r in caplog.records if "local jobs: GPUs fenced by environment only" in r.getMessage()]
        levels[hub] = line.levelno
    assert levels == {False: logging.INFO, True: logging.WARNING}, levels
