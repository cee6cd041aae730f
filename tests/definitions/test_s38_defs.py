"""Session 38 (s38-defs): definitions' leftovers from session 37, on the real services over a real store.

Real services (:class:`def_builders.Server`: the composition root the server uses) on SQLite and PostgreSQL, a manual
clock; the CLI's and REST's end to end is ``tests/web/test_s38_defs_cli_one_server.py``.

- item 1: a definition's parameters in a list, compact (:func:`~jupyter_sched.wording.definitions.parameters_brief`,
  the CLI list's and the magics' column).
- item 2: a notebook definition stored with arguments before they were refused keeps firing as it always did (its
  runs never had them: a notebook run takes no argv) and every read of it says so and how to drop them.
- item 5: a definition's ``no_preempt`` reaches the job of each scheduled firing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.store import definitions as stored
from jupyter_sched.wording.definitions import parameters_brief


@pytest.mark.parametrize("parameters, want", [
    ({}, ""),
    ({"epochs": 3, "region": "eu"}, "parameters epochs=3 region=eu"),
    ({"title": "two words"}, "parameters 'title=two words'"),
    ({"flags": [1, 2], "on": True}, "parameters 'flags=[1, 2]' on=true"),
    ({"note": "y" * 30}, f"parameters note={'y' * 23}…"),
    ({f"k{n}": n for n in range(20)}, "parameters k0=0 k1=1 k2=2 k3=3 k4=4 k5=5 k6=6 k7=7 k8=8 k9=9 k10=10 "
                                      "… and 9 more"),
], ids=["none: nothing said", "as show writes them", "a value with a blank is quoted as typed",
        "a list and a bool as JSON", "a long value is cut", "past the line's share: counted"])
def test_s38_defs_1_parameters_brief_is_compact_and_counts_what_it_leaves_out(parameters: dict[str, object],
                                                                              want: str) -> None:
    assert parameters_brief({"parameters": parameters}) == want


def test_s38_defs_1_the_magics_list_has_the_parameters_column() -> None:
    from jupyter_sched.magics.define import definitions_frame

    frame = definitions_frame([{"id": "d-1", "name": "nightly", "notebook": "a.ipynb", "schedule": "0 6 * * *",
                                "timezone": "UTC", "paused": False, "parameters": {"epochs": 2}}])
    row = frame.iloc[0] if hasattr(frame, "iloc") else frame.data.iloc[0]
    assert row["parameters"] == "epochs=2"


def _notebook(path: Path) -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "epochs = 3", "outputs": [],
                                           "metadata": {"tags": ["parameters"]}, "execution_count": None}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_s38_defs_2_a_stored_notebook_definition_with_args_keeps_firing_and_says_so(db_url: str,
                                                                                    tmp_path: Path) -> None:
    """Decided: keep firing. Its runs never had the arguments (a notebook run is given no argv: run_body leaves them
    out), so refusing its firings now would stop a schedule that has worked, for a field that never did anything.
    Every read says it (GET / list ``warnings``), with the way to drop them; an edit of another field is taken, an
    edit that keeps a notebook with arguments is refused."""
    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    nb = _notebook(tmp_path / "old.ipynb")
    d_id = server.create({"name": "old-nb", "notebook": str(nb), "schedule": "* * * * *", "gpus": 0,
                          "overlap": "allow"}, user="ann")["id"]
    with server.store.transaction() as tx:  # as a row saved before session 38 refused them
        row = stored.get_definition(tx, d_id)
        stored.update_definition(tx, replace(row, args=("--epochs", "3")))
    warnings = server.get(d_id, user="ann").get("warnings") or []
    said = next(w for w in warnings if "a notebook takes none" in w)
    assert said.startswith("args '--epochs 3' are a script's arguments: a notebook takes none: its runs leave them out")
    assert f"definitions edit {d_id} --args ''" in said, said
    listed = next(d for d in server.list(user="ann") if d["id"] == d_id)
    assert said in (listed.get("warnings") or []), listed
    clock.advance(60)
    report = server.fire_due()
    assert len(report.created) == 1, report
    job = server.store.get_job(report.created[0]).job
    assert job.spec.notebook == str(nb) and not job.spec.command, job.spec  # it ran as it always did
    assert server.update(d_id, {"gpus": 0, "time_limit": "5m"}, user="ann")["job"]["time_limit"] == "5m"
    from jupyter_sched.errors import ValidationError

    with pytest.raises(ValidationError) as refused:
        server.update(d_id, {"args": ["--epochs", "4"]}, user="ann")
    assert refused.value.field == "args"
    cleared = server.update(d_id, {"args": []}, user="ann")
    assert cleared["args"] == [] and not any("notebook takes none" in w for w in cleared.get("warnings") or [])
    assert not any("notebook takes none" in w for w in server.get(d_id, user="ann").get("warnings") or [])


def test_s38_defs_5_a_scheduled_firing_submits_what_the_definition_says_no_preempt_included(
        db_url: str, tmp_path: Path) -> None:
    clock = ManualClock(at("2026-12-07T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    nb = _notebook(tmp_path / "np.ipynb")
    made = server.create({"name": "np", "notebook": str(nb), "schedule": "* * * * *", "gpus": 1, "no_preempt": True,
                          "overlap": "allow"}, user="ann")
    assert made["job"]["no_preempt"] is True
    clock.advance(60)
    first = server.fire_due().created
    assert len(first) == 1 and server.store.get_job(first[0]).job.spec.no_preempt is True
    server.update(made["id"], {"no_preempt": False}, user="ann")
    clock.advance(60)
    second = server.fire_due().created
    assert len(second) == 1 and server.store.get_job(second[0]).job.spec.no_preempt is False
