"""New user 13's rendering findings (/work/coord/notes/newuser13.md, N3 N4 N6 N8: the ``%gpu``
table, ``cancel --mine`` and leases, one renderer for a refusal, pending reasons beside their ETA),
each its own test, against a real embedded server (simulated GPUs), the installed
``jupyter-sched`` command and the magics driven in this process with a real client; the rendering
rules also on the reason data the core writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_USAGE
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
    empty = api(server, "tok-ann").post(route, json={"gpus": 0.5, "kind": "lease", "command": [], "env": {}})
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


# ---- N8: a pending reason and its ETA contradicted each other and named one job three times -----------------

def _queue_behind_big() -> dict[str, dict[str, Any]]:
    """The core's reasons (REST shape) for new user 13's queue on a 2-GPU node: ``short`` runs on
    both GPUs until its 10-minute limit; ``big`` (2 GPUs, no time limit) waits with the reservation;
    behind it a kernel's lease of 1 GPU and a job of 0.5 GPU with no time limit."""
    from dataclasses import replace

    from jupyter_sched.model import JobKind
    from jupyter_sched.model.codec import reason_to_dict
    from jupyter_sched.scheduling import run_cycle
    from tests.core.core_builders import make_job, make_node, running, snapshot

    short = running(make_job("j-short", gpus=2, time_limit_s=600), started=-1)
    big = make_job("j-big", gpus=2, submitted=-0.5, unlimited=True)
    lease = make_job("l-kern", gpus=1, submitted=-0.2)
    lease = replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE, command=(), kernel_id="k-1"))
    half = make_job("j-half", gpus=1, milli=500, submitted=-0.1, unlimited=True)
    result = run_cycle(snapshot([make_node(gpus=2)], [short, big, lease, half]))
    reasons = {p.job_id: reason_to_dict(p.reason) for p in result.pending}
    assert set(reasons) >= {"j-big", "l-kern", "j-half"}, reasons
    names = {"j-big": "big", "j-short": "short"}
    for reason in reasons.values():
        assert reason is not None
        reason["details"]["eta_waits_on_names"] = names  # as the server adds them (services.jobs)
    return {k: v for k, v in reasons.items() if v is not None}


@pytest.mark.parametrize("job_id, kind", [("l-kern", "lease"), ("j-half", "training")], ids=["lease", "half-GPU job"])
def test_newuser13_n8_a_reason_and_its_eta_name_the_blocking_job_once_and_agree(job_id: str, kind: str) -> None:
    """N8: ``needs 1 …, 0 free; a kernel's GPUs have no time limit, so it cannot start ahead of big
    (j-…), whose GPUs are reserved from 20:22 UTC; it waits until big (j-…) has started · ETA unknown:
    it can start only after big (j-…) ends, which has no time limit`` — "has started" against
    "ends", big three times. The summary says what blocks it, the ETA when: a job the ETA names is
    not named again, and the summary says nothing of when."""
    from datetime import datetime, timezone

    from jupyter_sched.wording import render_reason

    reason = _queue_behind_big()[job_id]
    text = render_reason(reason, now=datetime(2025, 3, 30, 12, 0, tzinfo=timezone.utc), kind=kind, mine=True)
    assert "big (j-big)" in text.eta, text
    assert text.line.count("j-big") == 1, text.line
    assert "has started" not in text.line and "waits until" not in text.summary, text.line
    assert text.line.count("no time limit") <= 1, text.line
    assert "reserved from 12:09 UTC" in text.summary, text.summary


# ---- N11: the CLI said things twice, named the wrong option, took empty values and a variable twice ----------

def _usage(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The CLI's answer to a command-line mistake (no server is asked): its one stderr line."""
    from jupyter_sched.cli.main import main

    capsys.readouterr()
    assert main(list(argv)) == EXIT_USAGE
    said = capsys.readouterr()
    assert said.out == "", said
    return said.err.strip()


def test_newuser13_n11_an_error_names_the_option_as_it_was_typed(capsys: pytest.CaptureFixture[str]) -> None:
    """N11: ``wait J --for -1s`` → ``--timeout: expected one argument … --timeout=VALUE``: the error
    named the option's other name. Of an option's names, the one typed is said."""
    said = _usage(capsys, "wait", "j-1", "--for", "-1s")
    assert said.startswith("jupyter-sched wait: --for: must not be negative (got -1s)"), said  # newuser23 N1
    assert "--timeout" not in said.split(" — usage:")[0], said
    assert "--timeout: must not be negative (got -1s)" in _usage(capsys, "wait", "j-1", "--timeout", "-1s")
    assert _usage(capsys, "logs", "j-1", "--follow", "--nope").startswith("jupyter-sched logs: --nope: not an option")


@pytest.mark.parametrize("option", ["--time-limit", "--model", "--team", "--mem-per-gpu", "--name", "--workdir"])
def test_newuser13_n11_an_empty_submit_option_is_refused_not_read_as_absent(server: EmbeddedServer,
                                                                           option: str) -> None:
    """N11: ``submit --time-limit "" -- true`` was accepted with no limit (``--time-limit 0`` is
    refused); ``--model ""`` ran on any model. An empty value is refused, naming the option: the
    server's rule for what it is sent (nu13-fix's N7), the CLI's own for ``--workdir``, which it
    reads itself."""
    said = cli(server, "tok-ann", "submit", option, "", "--gpus", "0", "--", "true")
    assert said.code in (EXIT_REFUSED, EXIT_USAGE) and said.out == "", said
    assert said.err.startswith(f"jupyter-sched submit: {option}") and "empty" in said.err, said.err


def test_newuser13_n11_an_env_variable_given_twice_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """N11: ``--env A=1 --env A=2`` was accepted and A=2 won, said nowhere."""
    said = _usage(capsys, "submit", "--env", "A=1", "--env", "B=0", "--env", "A=2", "--", "true")
    assert said.startswith("jupyter-sched submit: --env A is given twice (A=1, A=2): give it once"), said


def test_newuser13_n11_n17_cancel_says_each_id_once_and_json_errors_are_json(server: EmbeddedServer) -> None:
    """N11: ``cancel j-1 j-1`` printed the same refusal twice; N17: with ``--json`` a refusal was a
    text line a script cannot read. Ids are taken once each; with ``--json`` every refusal is one
    JSON object on stderr: the server's error body and the CLI's line beside it."""
    import json

    twice = cli(server, "tok-ann", "cancel", "j-nosuch1", "j-nosuch2", "j-nosuch1")
    assert twice.code == EXIT_REFUSED, twice.err
    lines = twice.err.strip().splitlines()
    assert len(lines) == 2 and "j-nosuch1" in lines[0] and "j-nosuch2" in lines[1], lines
    done = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"]}).json()["id"]
    wait_state(server, "tok-ann", done, "succeeded")
    for argv in (("--json", "cancel", done), ("cancel", done, "--json"), ("cancel", "j-nosuch1", done, "--json")):
        refused = cli(server, "tok-ann", *argv)
        assert refused.code == EXIT_REFUSED and refused.out == "", refused
        for line in refused.err.strip().splitlines():
            error = json.loads(line)["error"]
            assert {"code", "message", "field", "hint", "text"} <= set(error), error
            assert error["text"].startswith("jupyter-sched cancel: "), error


def test_newuser13_n17_submit_quiet_leaves_out_the_notes(server: EmbeddedServer) -> None:
    """N17: every ``submit`` printed the same two-sentence note (which program runs, that shell
    variables are not passed): five times in a loop of five. ``-q``/``--quiet`` leaves notes out."""
    noisy = cli(server, "tok-ann", "submit", "--gpus", "0", "--", "true")
    assert noisy.code == EXIT_OK and "note:" in noisy.err, noisy
    quiet = cli(server, "tok-ann", "submit", "-q", "--gpus", "0", "--", "true")
    assert quiet.code == EXIT_OK and quiet.err == "" and quiet.out.startswith("submitted j-"), quiet
