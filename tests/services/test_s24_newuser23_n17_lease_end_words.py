"""New user 23, N17: ``jupyter-sched cancel l2`` (a notebook's granted lease) said "its kernel is not told:
CUDA_VISIBLE_DEVICES there still names those GPUs until %gpu status (or %gpu release) runs in its notebook" —
yet the kernel's very next cell printed "This kernel's lease l-… ended (released by root) … it is now ''"; and
a lease its owner released was listed ``l-…  cancelled … released by root`` (``jobs``, ``%schedule jobs``, the
panel) while ``wait --help`` said "a lease released by its owner counts as succeeded".

Now the cancel says what the kernel's magics do and when (``jupyter-sched cancel`` and ``%schedule cancel``,
:data:`~jupyter_sched.wording.jobs.KERNEL_TOLD`), and an ended lease's line says who released it as its reader
reads it — ``released by you``, ``released by its owner``, ``released by an admin (root)`` — in the one renderer
of the CLI's and the magics' lines (:func:`~jupyter_sched.wording.jobs.lease_end_words`; the panel's
``leaseEndWords`` is its twin, labextension/test/s24_newuser23_n17.test.ts). The state stays REST's
``cancelled`` (new user 17, N23: one word on every surface and in every body); the server's own releases, an
idle reclaim and a request withdrawn at its timeout keep their words.

Real parts: the application services on a real SQLite store (ended leases as the engine stores them), the
CLI's ``jobs`` command and the magics' table over the services' own answers; the cancel paths against the
wire answers of a release.
"""

from __future__ import annotations

import argparse
import io
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.cli.cancel import cancel
from jupyter_sched.cli.commands import jobs
from jupyter_sched.cli.main import EXIT_OK, WAIT_EXIT_CODES, Streams
from jupyter_sched.client._wire import NamedJob
from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.magics.render import queue_frame
from jupyter_sched.model import Allocation, JobKind, JobState
from jupyter_sched.services import Services
from jupyter_sched.store.codec import JobRecord
from jupyter_sched.wording.jobs import KERNEL_TOLD, lease_end_words
from tests.runtime.builders import make_job
from tests.services.as_client import AsClient, said

GRANTED = {"id": "l-2", "kind": "lease", "name": "l2", "user": "root", "state": "running", "kernel_id": "k-1",
           "mine": True, "resources": {"gpus": 1}, "started_at": "2026-12-05T09:00:00Z",
           "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"], "gpu_milli": 1000}}
RELEASED = {**GRANTED, "state": "cancelled", "message": "released by root"}


@pytest.mark.parametrize(("job", "want"), [
    ({**RELEASED}, "released by you"),
    ({**RELEASED, "mine": False}, "released by its owner"),
    ({**RELEASED, "user": "ann", "mine": True}, "released by an admin (root)"),
    ({**RELEASED, "message": "released by root: granted only after its 5s timeout had passed"},
     "released by you: granted only after its 5s timeout had passed"),
    ({**RELEASED, "message": "released by the server: its kernel was shut down"},
     "released by the server: its kernel was shut down"),
    ({**RELEASED, "message": "released by scheduler"}, "released by scheduler"),
    ({**RELEASED, "message": "reclaimed while idle: kernel idle for 4 min"}, "reclaimed while idle: kernel idle for 4 min"),
    ({**RELEASED, "message": "request withdrawn: no GPUs granted within its 5s timeout; nothing was held"},
     "request withdrawn: no GPUs granted within its 5s timeout; nothing was held"),
    ({**RELEASED, "kind": "training", "message": "released by root"}, "released by root"),
], ids=["own release", "an admin reads the owner's", "an admin released ann's", "cause kept", "the server's",
        "the scheduler's", "idle reclaim", "timed out", "a job's message is its own"])
def test_s24_newuser23_n17_an_ended_lease_says_who_released_it_as_its_reader_reads_it(
        job: dict[str, Any], want: str) -> None:
    assert lease_end_words(job) == want


def test_s24_newuser23_n17_jobs_and_schedule_jobs_say_released_by_you_or_by_an_admin(services: Services) -> None:
    leases = {"l-own": "released by ann", "l-adm": "released by root"}
    for lease_id, message in leases.items():
        job = make_job(lease_id, user="ann", state=JobState.RUNNING, kind=JobKind.LEASE,
                       allocation=Allocation("vm", ("GPU-sim-vm-0",)))
        ended = replace(job, state=JobState.CANCELLED, message=message,
                        finished_at=datetime(2026, 11, 29, 12, 5, tzinfo=timezone.utc))
        services.store.insert_job(JobRecord(job=ended, executor="local"))
    ann = AsClient(services, "ann")
    text = said(jobs, ann, "jobs")
    # failed before: "l-own cancelled … released by ann" (the reader's own name) and "released by root"
    assert "released by you" in text and "released by an admin (root)" in text, text
    assert "released by ann" not in text, text
    rows = {row["id"]: row["detail"] for row in queue_frame(ann.jobs(), datetime.now(timezone.utc)).to_dict("records")}
    assert rows == {"l-own": "released by you", "l-adm": "released by an admin (root)"}, rows  # %schedule jobs
    admin = said(jobs, AsClient(services, "root", admin=True), "jobs", "--all")
    assert "released by its owner" in admin and "released by an admin (root)" in admin, admin
    assert "released by you" in WAIT_EXIT_CODES, WAIT_EXIT_CODES  # `wait --help` names the listed words


class _Release:
    """The wire of a release of another kernel's granted lease: the lease as read, the server's answer."""

    def job_id_of(self, ref: str, command: str = "") -> str:
        return ref

    def job_named(self, ref: str, command: str = "") -> NamedJob:
        return NamedJob(ref)

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(GRANTED)

    def cancel(self, job_id: str) -> dict[str, Any]:
        return dict(RELEASED)

    release_lease = cancel

    def config(self) -> dict[str, Any]:
        return {"stop_grace_s": 10}


def test_s24_newuser23_n17_cancel_of_a_kernels_lease_says_its_next_cell_is_told(
        capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    args = argparse.Namespace(mine=False, everyone=False, job_ids=["l-2"], json=False)
    assert cancel(_Release(), args, Streams(out=out, err=io.StringIO(), stdin=io.StringIO())) == EXIT_OK
    text = " ".join(out.getvalue().split())
    assert "released lease l-2 (was running; gave back GPU-sim-vm-0)" in text, text
    assert KERNEL_TOLD in text and "is not told" not in text, text  # failed before: "its kernel is not told: …"
    assert "before the next cell it runs" in KERNEL_TOLD and "a cell running now keeps" in KERNEL_TOLD
    magics = SchedMagics(None, client_factory=lambda: _Release())  # type: ignore[arg-type,return-value]
    magics.schedule("cancel l-2")  # %schedule cancel of another kernel's lease: failed before (said nothing of it)
    shown = " ".join(capsys.readouterr().out.split())
    assert KERNEL_TOLD[:1].upper() + KERNEL_TOLD[1:] in shown, shown


def test_newuser33_n4_the_kernels_note_of_a_lease_released_from_the_panel_says_by_you(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser33 n4: after its owner's Release in the GPUs sidebar the kernel's next cell printed "This kernel's lease
    l-… ended (released by root)" — the server's account, read as a stranger. The note says who as its reader reads
    it (:func:`lease_end_words`: ``released by you``), as ``jobs`` and ``%schedule jobs`` do. (No server: the
    note's words from the lease row as the wire gives it; CUDA_VISIBLE_DEVICES only in this process.)"""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-sim-vm-0")
    monkeypatch.setenv("JUPYTER_SCHED_GPU_MILLI", "1000")
    magics = SchedMagics(None, client_factory=lambda: None)  # type: ignore[arg-type,return-value]
    magics._applied, magics._ended = ("GPU-sim-vm-0",), dict(RELEASED)
    magics._forget_ended()
    said = capsys.readouterr()
    assert "This kernel's lease l-2 ended (released by you); CUDA_VISIBLE_DEVICES named GPU-sim-vm-0" in (
        said.out + said.err), said


def test_newuser33_n4_a_leases_submit_audit_names_it_as_its_card_does(services: Services) -> None:
    """newuser33 n4: the admin's Audit log said ``lease 'notebook lease' submitted`` (the stored default name) while
    the lease's card and Release dialog say ``lease for …/nb2.ipynb``: the submit's record says the display name
    (:func:`~jupyter_sched.wording.jobs.work_name`); a named job reads ``job 'train' submitted`` (newuser38 n4)."""
    lease = make_job("l-nb", user="ann", kind=JobKind.LEASE, command=(), kernel_id="k-12345678",
                     kernel_notebook="/home/ann/nb2.ipynb")
    lease = replace(lease, spec=replace(lease.spec, name="notebook lease"))
    services.store.insert_job(JobRecord(job=lease, executor="local"))
    train = make_job("j-tr", user="ann")
    services.store.insert_job(JobRecord(job=replace(train, spec=replace(train.spec, name="train")), executor="local"))
    said = {e.job_id: e.message for e in services.store.list_events() if e.action == "submit"}
    assert said == {"l-nb": "lease for /home/ann/nb2.ipynb submitted", "j-tr": "job 'train' submitted"}, said
