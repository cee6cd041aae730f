"""New user 20, N7, N8, N9, N14: a half-GPU lease said as a share on every line (N14), ``%gpu request
--team`` (N7), a bare per-GPU memory size (N8), what a job definition runs and what an edit changed (N9)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.jobs import cancel_outcome, job_line
from tests.runtime.builders import T0

NOW = datetime(2026, 12, 4, 23, 0, tzinfo=timezone.utc)
HALF = {"id": "l-1", "kind": "lease", "name": "lease for nb.ipynb", "state": "running", "mine": True,
        "resources": {"gpus": 1, "gpu_milli": 500},
        "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"], "gpu_milli": 500}}


def test_newuser20_n14_a_half_gpu_lease_is_a_share_in_status_and_at_release() -> None:
    """N14: ``%gpu`` said ``running on vm: GPU-sim-vm-0`` and ``%gpu release`` ``gave back
    GPU-sim-vm-0`` for a lease of 0.5 GPU — the grant alone said it was a share."""
    assert "running on vm: 0.5 of GPU-sim-vm-0 (shared, time-sliced)" in job_line(HALF, NOW), job_line(HALF, NOW)
    released = cancel_outcome(HALF, {**HALF, "state": "cancelled"})
    assert released.endswith("gave back 0.5 of GPU-sim-vm-0)"), released
    whole = {**HALF, "resources": {"gpus": 1, "gpu_milli": 1000}, "allocation": {"node": "vm", "gpu_uuids": ["GPU-a"]}}
    assert job_line(whole, NOW).endswith("running on vm: GPU-a"), job_line(whole, NOW)


def test_newuser20_n7_gpu_request_takes_team_and_queue_as_everywhere_else() -> None:
    """N7: ``%gpu request 1 --team vision`` was "unknown argument --team": a kernel's lease was always
    charged to the first team, even with that team at its limit and a free guarantee in the second."""
    from jupyter_sched.magics.parsing import lease_body, parse_gpu_line

    for spelling in ("--team vision", "--queue vision", "--team=vision"):
        cmd = parse_gpu_line(f"request 1 {spelling} --timeout 8s")
        assert lease_body(cmd.options, kernel_id="k-1")["team"] == "vision", spelling
    assert "team" not in lease_body(parse_gpu_line("request 1").options, kernel_id="k-1")


def test_newuser20_n8_a_bare_mem_per_gpu_reaches_the_server_as_typed_and_is_noted(tmp_path: object) -> None:
    """N8: ``%gpu request 2 --mem-per-gpu 20`` was sent as ``min_memory_mib: 20`` (20 MiB: no constraint),
    silently; the CLI's ``--mem-per-gpu 20`` got the server's note. Now the magic sends it as typed, and
    the lease's answer carries the note the notebook prints."""
    from jupyter_sched.magics.parsing import lease_body, parse_gpu_line
    from jupyter_sched.services.models import SubmitJobRequest

    body = lease_body(parse_gpu_line("request 2 --mem-per-gpu 20").options, kernel_id="k-1")
    assert body["mem_per_gpu"] == "20" and "min_memory_mib" not in body, body
    assert lease_body(parse_gpu_line("request 1 --mem-per-gpu 40GiB").options, kernel_id="k-1")["mem_per_gpu"] == "40GiB"
    services = _services(tmp_path)
    try:
        lease = services.leases.request(services.caller("bo", admin=False), SubmitJobRequest.model_validate(body))
        view = services.jobs.get(services.caller("bo", admin=False), lease.id).model_dump(mode="json")
        notes = [w for w in (getattr(lease, "warnings", None) or view.get("warnings") or ()) if "MiB" in w]
        assert notes and "20GiB" in notes[0], (lease, view)
    finally:
        services.store.close()


def _services(root: object) -> Services:
    path, clock = Path(str(root)), ManualClock(T0)
    return Services(store=Store(sqlite_url(path / "s.sqlite"), now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                    executor=LocalExecutor(path / "jobs"), clock=clock)


def test_newuser20_n9_show_says_what_a_definition_runs_and_edit_what_it_changed(tmp_path: object) -> None:
    """N9: ``definitions show`` said ``d-…  nightly  At 03:00 every day (UTC)`` and the next firings —
    no script, GPUs, team or time limit; ``edit --team ml`` echoed the same line, not the change."""
    from jupyter_sched.services.models.definitions import (
        CreateDefinitionRequest,
        GetDefinitionRequest,
        UpdateDefinitionRequest,
    )
    from jupyter_sched.wording.definitions import changes_text, runs_text

    services = _services(tmp_path)
    work = Path(str(tmp_path)) / "work"
    work.mkdir()
    (work / "train.py").write_text("print('hi')\n")
    try:
        al = services.caller("al", admin=False, groups=["vision", "ml"])
        made = services.definitions.create(al, CreateDefinitionRequest.model_validate(
            {"name": "nightly", "script": str(work / "train.py"), "args": ["3"], "schedule": "0 3 * * *", "gpus": 1,
             "time_limit": "5m", "team": "vision", "working_dir": str(work)}))
        shown = services.definitions.get(al, made.id, GetDefinitionRequest()).model_dump(mode="json")
        said = runs_text(shown)
        assert said == f"runs {work}/train.py 3 · 1 GPU · team vision · time limit 5m · in {work}", said
        edited = services.definitions.update(al, made.id, UpdateDefinitionRequest(team="ml", time_limit="10m"))
        changed = changes_text(shown, edited.model_dump(mode="json"))
        assert changed == "team vision → ml; time limit 5m → 10m", changed
    finally:
        services.store.close()
