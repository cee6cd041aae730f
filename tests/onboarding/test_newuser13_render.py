"""New user 13's rendering findings (/work/coord/notes/newuser13.md, N3 N4 N6 N8: the ``%gpu``
table, ``cancel --mine`` and leases, one renderer for a refusal, pending reasons beside their ETA),
each its own test, against a real embedded server (simulated GPUs), the installed
``jupyter-sched`` command and the magics driven in this process with a real client; the rendering
rules also on the reason data the core writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE
from tests.onboarding.test_cli_firsthour import api, clear, cli, module_server, start_kernel, wait_state
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu13r", USERS)


def _granted(job: dict[str, Any], node: str = "n") -> dict[str, Any]:
    return {**job, "state": "running", "allocation": {"node": node, "gpu_uuids": ["GPU-0"]}}


# ---- N3: %gpu listed this kernel's own lease twice ----------------------------------------------------------

def test_newuser13_n3_a_job_given_twice_is_one_holder_of_its_gpu() -> None:
    """The table's rule: one holder per job id, whichever lists gave it (the queue and this
    kernel's lease both carry the kernel's lease); two different jobs on a shared GPU stay two."""
    from jupyter_sched.magics.render import gpu_frame

    gpu = {"node": "n", "index": 0, "model": "A100", "memory_mib": 81920, "uuid": "GPU-0", "health": "healthy"}
    lease = _granted({"id": "l-1", "user": "ann", "kind": "lease", "name": "notebook lease"})
    frame = gpu_frame({"gpus": [gpu]}, [lease, dict(lease)])
    assert list(frame["allocated_to"]) == ["ann: lease l-1 (notebook lease)"]
    half = {"resources": {"gpus": 1, "gpu_milli": 500}, "user": "ann", "kind": "training"}
    shared = [_granted({"id": "j-1", "name": "a", **half}), _granted({"id": "j-2", "name": "b", **half})]
    frame = gpu_frame({"gpus": [gpu]}, shared + shared[:1])
    assert list(frame["allocated_to"]) == ["ann: training j-1 (a) 0.5 GPU; ann: training j-2 (b) 0.5 GPU"]


def test_newuser13_n3_gpu_names_this_kernels_lease_once(server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """N3: ``%gpu request 1`` then ``%gpu`` showed ``root: lease l-… (lease); root: lease l-… (lease)``
    on the kernel's GPU — read as two holders sharing one whole GPU. A real kernel of the server,
    its magics in this process (the kernel's id as the server gives it to the kernels it starts)."""
    clear(server)
    monkeypatch.setenv("JUPYTER_SCHED_KERNEL_ID", start_kernel(server))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # %gpu sets them here: put back after the test
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    magics = _magics(server, OWNER_TOKEN)
    magics.gpu("request 1")
    try:
        lease = magics.lease
        assert lease is not None and lease.get("kernel_id"), lease
        frame = magics.gpu("")
        held = [cell for cell in frame["allocated_to"] if cell]
        assert len(held) == 1 and held[0].startswith(f"boss: lease {lease['id']} ("), held
        assert held[0].count(str(lease["id"])) == 1, held
        assert list(frame["this_kernel"]).count(True) == 1
    finally:
        magics.gpu("release")
        capsys.readouterr()


# ---- N6: a refusal's reason rendered two ways (REST message in MiB, magic and details in GiB) ------------------

NEVER_FIT = {
    "memory per GPU above any GPU's": {"gpus": 1, "mem_per_gpu": "200GiB"},
    "more GPUs than any node has": {"gpus": 9},
    "more workers than the nodes hold": {"gpus": 2, "workers": 3},
}


@pytest.mark.parametrize("body", NEVER_FIT.values(), ids=NEVER_FIT.keys())
def test_newuser13_n6_a_refusals_message_is_its_reason_in_the_shared_words(server: EmbeddedServer,
                                                                           body: dict[str, Any]) -> None:
    """N6: a 422 for ``mem_per_gpu: 200GiB`` said ``the job asks for 204800 MiB per GPU; the most any
    GPU here has is 81920 MiB`` (hint ``… 81920 MiB …``) while its own ``details.reason`` and the magic
    said ``200 GiB`` / ``80 GiB``. Every refusal that carries a reason now has that reason's rendered
    words as its message and hint (:func:`jupyter_sched.wording.refusal_text`), cut as clauses."""
    from jupyter_sched.wording.reasons import as_clause

    answer = api(server, "tok-ann").post("jobs", json={**body, "command": ["sleep", "1"]})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    text = error["details"]["reason"]["text"]
    assert error["message"] == as_clause(text["summary"]), error
    assert error["hint"] == as_clause(text["unblock"]), error
    assert "MiB" not in error["message"] + error["hint"], error


def test_newuser13_n6_memory_refusal_reads_the_same_over_rest_and_in_the_magic(
        server: EmbeddedServer, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.magics.core import MagicError

    answer = api(server, "tok-ann").post("jobs", json={"gpus": 1, "mem_per_gpu": "200GiB", "command": ["true"]})
    error = answer.json()["error"]
    assert (error["message"], error["hint"], error["field"]) == (
        "asks for 200 GiB of memory per GPU; the most any GPU here has is 80 GiB",
        "ask for at most 80 GiB per GPU", "mem_per_gpu"), error
    with pytest.raises(MagicError) as refused:
        _magics(server).gpu("request 1 --mem-per-gpu 200GiB --no-wait")
    assert error["message"] in str(refused.value), refused.value


# ---- N4: a lease with a command; cancel --mine skipped leases bound to no kernel -----------------------------

JOB_ONLY = {"command": ["sleep", "1"], "script": "train.py", "notebook": "run.ipynb", "env": {"SEED": "1"},
            "working_dir": "/tmp", "port": 8000, "args": ["--epochs", "3"]}


@pytest.mark.parametrize("route", ["jobs", "leases"])
@pytest.mark.parametrize("field", JOB_ONLY)
def test_newuser13_n4_a_lease_refuses_what_only_a_job_runs(server: EmbeddedServer, route: str, field: str) -> None:
    """N4: ``{"gpus": 1, "command": ["sleep", "1"], "kind": "lease"}`` was a 201 lease that stored the
    command and never ran it. Every field that says what a job runs is refused on a lease (400,
    the field named), as a job refuses ``kernel_id``; empty values say nothing and pass."""
    body = {"gpus": 1, "kind": "lease", field: JOB_ONLY[field]}
    answer = api(server, "tok-ann").post(route, json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["field"] == field and error["message"].startswith(f"{field} is for jobs: a lease runs nothing"), error
    empty = api(server, "tok-ann").post(route, json={"gpus": 0, "kind": "lease", "command": [], "env": {}})
    assert empty.status_code == 201, empty.text
    api(server, "tok-ann").delete(f"jobs/{empty.json()['id']}")


def test_newuser13_n4_cancel_mine_ends_leases_bound_to_no_kernel_not_a_kernels(
        server: EmbeddedServer, capsys: pytest.CaptureFixture[str]) -> None:
    """N4: ``jupyter-sched cancel --mine --yes`` said ``cancelled 17 jobs`` and silently skipped a
    pending lease POSTed without a kernel, which then started and held a GPU with no kernel and no
    time limit — no notebook's ``%gpu release`` can end such a lease. Now ``--mine`` (listed or
    ``--yes``) takes leases bound to no kernel and still leaves a kernel's lease to its notebook."""
    clear(server)
    boss = api(server, OWNER_TOKEN)
    kernel = start_kernel(server)

    def lease(**body: Any) -> str:
        made = boss.post("leases", json={"gpus": 1, **body})
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    kept = lease(kernel_id=kernel)
    held = lease()
    wait_state(server, OWNER_TOKEN, kept, "running")
    wait_state(server, OWNER_TOKEN, held, "running")
    waiting = lease()  # no GPU left: it waits
    job = boss.post("jobs", json={"gpus": 1, "command": ["sleep", "60"], "time_limit": "5m"}).json()["id"]

    listed = cli(server, OWNER_TOKEN, "cancel", "--mine")  # no terminal: lists, cancels nothing
    assert listed.code == EXIT_USAGE, listed.err
    assert held in listed.err and waiting in listed.err and job in listed.err and kept not in listed.err, listed.err
    assert "would cancel 1 job and 2 leases (" in listed.err and "kernel leases are left alone: 1" in listed.err, listed.err

    capsys.readouterr()
    _magics(server, OWNER_TOKEN).schedule("cancel --mine")  # the magic's listing: the same rule
    said = capsys.readouterr().out
    assert said.startswith("Would cancel your 1 job and 2 leases (2 pending, 1 running):"), said
    assert held in said and waiting in said and kept not in said, said

    done = cli(server, OWNER_TOKEN, "cancel", "--mine", "--yes")
    assert done.code == EXIT_OK, done.err
    assert done.out.strip() == ("cancelled 1 job and 2 leases: 1 pending removed from the queue; "
                                "2 leases bound to no kernel released"), done.out
    states = {i: boss.get(f"jobs/{i}").json()["state"] for i in (kept, held, waiting, job)}
    assert states == {kept: "running", held: "cancelled", waiting: "cancelled", job: "cancelled"}, states
    boss.delete(f"jobs/{kept}")
