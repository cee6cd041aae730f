"""hubadmin26 B8: a GPU model retired with its node (node-b's L40S gone from the inventory). Before,
``definitions show`` of a definition asking ``--model L40S`` listed its next firings and nothing else —
every firing a refused run — and GET quotas told the admin nothing of definitions or pending jobs bound
to the model. Now ``definitions show/list`` say ``L40S: no such GPU model here now — edit --model`` (the
wire's ``warnings``) and GET quotas' admin warnings name each such definition (owner, name, model) and
pending job.

Real parts: the services over a SQLite store (definitions, jobs, quotas: the REST handlers' one call),
the simulated inventory (swapped as a node removal swaps it), the CLI's own printing of the answers."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

from jupyter_sched.cli.definitions import definitions as definitions_cli
from jupyter_sched.cli.main import Streams
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Inventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest, parse
from jupyter_sched.services.models.definitions import (
    CreateDefinitionRequest,
    GetDefinitionRequest,
    ListDefinitionsRequest,
)
from jupyter_sched.store import SortableIds, Store, sqlite_url
from tests.definitions.def_builders import at

NOTE = "L40S: no such GPU model here now — edit --model"


class Pool:
    """The inventory source; ``now`` swapped as an edited inventory file swaps it."""

    def __init__(self, now: SimulatedInventory) -> None:
        self.now = now

    def current(self) -> Inventory:
        inventory: Inventory = self.now.current()
        return inventory


class Client:
    """The CLI's client, answering its one call with ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def call(self, _request: Any) -> Any:
        return self.answer

    def definitions(self, **_filters: Any) -> Any:  # every page of GET definitions (red28 R6)
        return self.answer


def _cli(action: str, answer: Any, definition: str = "") -> str:
    out = io.StringIO()
    args = argparse.Namespace(action=action, json=False, all_users=action == "list", definition=definition)
    definitions_cli(Client(answer), args, Streams(out=out, err=io.StringIO(), stdin=io.StringIO()))
    return out.getvalue()


def test_s26_hubadmin26_b8_a_retired_model_is_said_on_its_definitions_and_to_the_admin(tmp_path: Path) -> None:
    clock = ManualClock(at("2026-12-05T18:00:00+00:00"))
    pool = Pool(SimulatedInventory(4, model="L40S", node="node-b"))
    services = Services(store=Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now), inventory=pool,
                        executor=LocalExecutor(tmp_path / "jobs"), clock=clock, ids=SortableIds(clock.now))
    try:
        script = tmp_path / "nightly.py"
        script.write_text("print('n')\n")
        owner = services.caller("h26739cd6", admin=False)
        body = {"name": "nightly", "script": str(script), "schedule": "0 2 * * *", "gpus": 1, "model": "L40S"}
        made = services.definitions.create(owner, parse(CreateDefinitionRequest, body)).to_wire()
        anyone = services.definitions.create(owner, parse(CreateDefinitionRequest, {
            **{k: v for k, v in body.items() if k != "model"}, "name": "anygpu"})).to_wire()
        job = services.jobs.submit(owner, SubmitJobRequest.model_validate(
            {"name": "sweep", "command": ["sleep", "1"], "gpus": 1, "model": "L40S"}))
        boss = services.caller("boss", admin=True)
        assert "no such GPU model" not in str(services.quotas.get(boss).to_wire().get("warnings"))

        pool.now = SimulatedInventory(4, model="A100-80GB", node="node-a")  # node-b removed for good

        listed = {d["name"]: d for d in services.definitions.list(boss, ListDefinitionsRequest(all=True)).definitions.to_wire()}
        assert listed["nightly"]["warnings"] == [NOTE] and not listed["anygpu"].get("warnings"), listed
        shown = services.definitions.get(owner, made["id"], GetDefinitionRequest()).to_wire()
        assert shown["warnings"] == [NOTE], shown
        said = services.quotas.get(boss).to_wire()["warnings"]
        assert [w for w in said if "no such" in w or "no GPU has now" in w] == [
            "definitions that ask only for a GPU model no GPU has now (every firing is a refused run): "
            f"{made['id']} (h26739cd6, nightly: L40S) — their owners change it with jupyter-sched definitions "
            "edit ID --model",
            f"pending jobs that ask only for a GPU model no GPU has now (they never start): {job.id} "
            "(h26739cd6: L40S) — cancel them, or resubmit with another --model"], said
        assert anyone["id"] not in str(said)

        lines = _cli("list", [listed["nightly"], listed["anygpu"]]).splitlines()
        assert lines[0].startswith(f"{made['id']}  h26739cd6  nightly  ") and lines[1] == f"  {NOTE}", lines
        assert lines[2].startswith(f"{anyone['id']}  h26739cd6  anygpu  ") and len(lines) == 3, lines
        assert _cli("show", shown, made["id"]).splitlines()[1] == f"  {NOTE}"
    finally:
        services.store.close()
