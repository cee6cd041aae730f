"""hubadmin24 (s25 drain): ``jupyter-sched nodes cordon|drain|uncordon`` — the words an admin reads.

The CLI asks the server what happens to the work on the node first (``dry_run``), prints it, and asks
before going on, as ``teams move`` does; without a terminal it refuses rather than guess (``--yes`` goes
ahead). Answers come from in-process services (the REST route's own answer), as :mod:`.as_client` does.
"""

from __future__ import annotations

import io
import sys
import time
from typing import Any

import pytest

from jupyter_sched.cli.main import Streams, build_parser
from jupyter_sched.cli.nodes import nodes
from jupyter_sched.errors import NotFoundError, ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest, parse
from jupyter_sched.services.models.nodes import CordonNodeRequest, UncordonNodeRequest


class NodesClient:
    """``client.call(Req)`` for the two node routes, answered by ``services`` as ``user``."""

    def __init__(self, services: Services, user: str = "boss", *, admin: bool = True) -> None:
        self.services, self.caller = services, services.caller(user, admin=admin)
        self.bodies: list[dict[str, Any]] = []

    def call(self, req: Any) -> dict[str, Any]:
        if req.path == "inventory":  # nodes list (hubadmin26 B18)
            return dict(self.services.system.inventory(self.caller).to_wire())
        _, node, action = req.path.split("/")
        self.bodies.append(dict(req.body))
        if action == "cordon":
            return dict(self.services.nodes.cordon(self.caller, node, parse(CordonNodeRequest, req.body)).to_wire())
        return dict(self.services.nodes.uncordon(self.caller, node, parse(UncordonNodeRequest, req.body)).to_wire())


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(client: NodesClient, *argv: str, stdin: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = nodes(client, build_parser().parse_args(["nodes", *argv]), Streams(out=out, err=err, stdin=stdin or io.StringIO()))
    return code, out.getvalue(), err.getvalue()


def test_s25_drain_cli_cordon_shows_the_plan_and_asks_refusing_without_a_terminal(services: Services) -> None:
    client = NodesClient(services)
    code, out, err = run(client, "cordon", "vm", "--reason", "PSU swap")
    assert code == 2
    assert out == "node vm would be cordoned for maintenance: PSU swap, by boss at 12:00 UTC: no new work is placed on it.\n"
    assert err == "jupyter-sched nodes cordon: not asking without a terminal — add --yes to go ahead\n"
    assert services.store.node_cordons() == {} and [b["dry_run"] for b in client.bodies] == [True]

    code, out, err = run(client, "cordon", "vm", "--reason", "PSU swap", stdin=Terminal("n\n"))
    assert (code, err, out.splitlines()[-1]) == (0, "Cordon node vm? [y/N] ", "nothing changed")
    assert services.store.node_cordons() == {}

    code, out, err = run(client, "cordon", "vm", "--reason", "PSU swap", stdin=Terminal("y\n"))
    assert code == 0 and out.splitlines()[-1] == (
        "node vm is cordoned for maintenance: PSU swap, by boss at 12:00 UTC: no new work is placed on it.")
    assert list(services.store.node_cordons()) == ["vm"]

    code, out, err = run(client, "uncordon", "vm")
    assert (code, out, err) == (0, "node vm is uncordoned: new work may be placed on it again.\n", "")
    assert services.store.node_cordons() == {}


def test_s25_drain_cli_drain_lists_the_work_and_each_ones_fate(services: Services) -> None:
    ann = services.caller("ann", admin=False)
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    job = services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=sleeper, name="long", time_limit="3h"))
    deadline = time.monotonic() + 30
    while services.jobs.get(ann, job.id).state != "running":
        assert time.monotonic() < deadline
        services.engine.tick()
        time.sleep(0.05)
    try:
        client = NodesClient(services)
        code, out, _ = run(client, "drain", "vm", "--evict-after", "2h", "--reason", "PSU swap", "--dry-run")
        assert code == 0 and services.store.node_cordons() == {}
        assert out.splitlines() == [
            f"node vm would be cordoned for maintenance: PSU swap, by boss at 12:00 UTC; work still on it is stopped at "
            f"14:00 UTC (requeued): no new work is placed on it; 1 running there ({job.id}).",
            f"  {job.id}  ann  job  1 GPU: stopped at 14:00 UTC (grace 1m), then requeued"]
        assert client.bodies == [{"reason": "PSU swap", "evict_after_s": 7200.0, "dry_run": True}]
        code, out, _ = run(client, "drain", "vm", "--evict-after", "2h", "--reason", "PSU swap", "--yes")
        assert code == 0 and services.store.node_cordons()["vm"].evict_at is not None
        with pytest.raises(ValidationError) as bad:
            run(client, "drain", "vm", "--evict-after", "soon", "--reason", "x", "--yes")
        assert bad.value.field == "--evict-after"
    finally:
        services.jobs.cancel(ann, job.id)
        deadline = time.monotonic() + 30
        while services.jobs.get(ann, job.id).state not in ("cancelled", "failed"):
            assert time.monotonic() < deadline
            services.engine.tick()
            time.sleep(0.05)


def test_s25_drain_cli_help_is_in_the_clis_own_words(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, want in ((["--help"], "admin: cordon, drain or uncordon a node for maintenance"),
                       (["nodes", "--help"], "cordon place no new work on NODE; what runs there runs on to its end"),
                       (["nodes", "drain", "--help"], 'jupyter-sched nodes drain gpu-node-3 --evict-after 2h --reason'),
                       (["nodes", "cordon", "--help"], "--reason REASON")):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
        assert want in " ".join(capsys.readouterr().out.split()), argv


def test_hubadmin26_b18_nodes_list_and_drain_now_and_a_quiet_uncordon(services: Services) -> None:
    """hubadmin26 B18: no command listed the nodes (the refusals said "jupyter-sched status lists them": it does
    not); ``--evict-after 0`` was refused "must be a positive duration … (or "0": now)"; an uncordon of a node
    that was not cordoned listed its running work after "nothing changed"."""
    client = NodesClient(services)
    code, out, _ = run(client, "list")
    assert code == 0 and out.splitlines() == ["vm  4 x Simulated GPU 80GB (0 in use)  ready", "1 node, 4 GPUs"], out
    code, out, _ = run(client, "drain", "vm", "--evict-after", "0", "--reason", "PSU swap", "--dry-run")
    assert code == 0 and client.bodies[-1] == {"reason": "PSU swap", "evict_after_s": 0.0, "dry_run": True}, out
    run(client, "cordon", "vm", "--reason", "PSU swap", "--yes")
    code, out, _ = run(client, "list")
    assert out.splitlines()[0].startswith("vm  4 x Simulated GPU 80GB (0 in use)  cordoned for maintenance: PSU swap, "
                                          "by boss at ") and out.splitlines()[0].endswith("12:00 UTC"), out
    with pytest.raises(NotFoundError) as unknown:
        run(client, "cordon", "nosuch", "--reason", "x", "--yes")
    assert "jupyter-sched nodes list lists them" in str(unknown.value.message) + str(unknown.value.hint), unknown.value
    run(client, "uncordon", "vm")
    ann = services.caller("ann", admin=False)
    job = services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=[sys.executable, "-c", "import time; time.sleep(60)"],
                                                     name="long"))
    services.engine.tick()
    try:
        code, out, _ = run(client, "uncordon", "vm")
        assert code == 0 and len(out.splitlines()) == 1 and "nothing changed" in out, out  # no "runs on" lines
    finally:
        services.jobs.cancel(ann, job.id)
        for _ in range(100):
            services.engine.tick()
            if services.jobs.get(ann, job.id).state in ("cancelled", "failed", "succeeded"):
                break
            time.sleep(0.05)
