"""New user 13's rendering findings (/work/coord/notes/newuser13.md, N3 N4 N6 N8: the ``%gpu``
table, ``cancel --mine`` and leases, one renderer for a refusal, pending reasons beside their ETA),
each its own test, against a real embedded server (simulated GPUs), the installed
``jupyter-sched`` command and the magics driven in this process with a real client; the rendering
rules also on the reason data the core writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.onboarding.test_cli_firsthour import api, clear, module_server, start_kernel, wait_state
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
