"""New user 14's findings N6 to N18 of the second split (/work/coord/notes/newuser14.md): what the
audit records, the bulk cancel of another's job, the CLI's token lines, ``serve`` as root, ETA
accuracy with nothing measured, a reclaimed job's reason, a lease's end state, the ETA wordings
of one job, the magics on another user's job, and long time limits — each its own test, against
a real embedded server (simulated GPUs), the installed ``jupyter-sched`` command and the magics
driven in this process with a real client; rendering rules also on the data the server sends."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu14r", USERS)


def _audit(server: EmbeddedServer, want: Callable[[dict[str, Any]], bool], **params: Any) -> dict[str, Any]:
    """The newest audit record that ``want`` picks, polled for: a record written just after the answer
    (the engine's admit, a refusal) may land a moment later (CI's slower host)."""
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 30
    while True:
        rows = boss.get("audit", params={"limit": 1000, **params}).json()
        found = [r for r in rows if want(r)]
        if found:
            return dict(found[-1])
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


# ---- N6: the audit's submit record said "gpus": 1 for a 0.5-GPU job ------------------------------------------

@pytest.mark.parametrize(("gpus", "want"), [(0.5, 0.5), (0.3, 0.3), (2, 2), (0, 0)])
def test_newuser14_n6_the_submit_record_says_the_gpus_as_asked(server: EmbeddedServer, gpus: float, want: float) -> None:
    """N6: ``{"gpus": 0.3}`` was audited ``"gpus": 1`` (the whole-GPU count; the share lives in
    gpu_milli): an admin reading who asked for how much read 1 GPU. The record says 0.3."""
    clear(server)
    answer = api(server, "tok-ann").post("jobs", json={"gpus": gpus, "command": ["sleep", "30"], "name": "frac",
                                                       "time_limit": "5m"})
    assert answer.status_code == 201, answer.text
    job_id = answer.json()["id"]
    record = _audit(server, lambda r: r.get("action") == "submit", job_id=job_id)
    assert record["details"]["gpus"] == want, record


def test_newuser14_n6_a_cpu_only_jobs_admit_record_holds_no_gpu_share(server: EmbeddedServer) -> None:
    """N6 (related): the ``admit`` record of a ``gpus: 0`` job read ``"allocation": {"gpu_milli":
    1000, "gpu_uuids": []}`` — a whole GPU's share of no GPU. It says 0, as the job object does."""
    clear(server)
    answer = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["sleep", "30"], "time_limit": "5m"})
    assert answer.status_code == 201, answer.text
    job_id = answer.json()["id"]
    record = _audit(server, lambda r: r.get("action") == "admit", job_id=job_id)
    assert record["details"]["allocation"]["gpu_uuids"] == [] and record["details"]["allocation"]["gpu_milli"] == 0
    half = api(server, "tok-ann").post("jobs", json={"gpus": 0.5, "command": ["sleep", "30"], "time_limit": "5m"})
    record = _audit(server, lambda r: r.get("action") == "admit", job_id=half.json()["id"])
    assert record["details"]["allocation"]["gpu_milli"] == 500, record


# ---- N11: ETA accuracy said coverage 0.0 when no job had been measured ------------------------------------------

def test_newuser14_n11_eta_coverage_is_unknown_not_zero_when_no_job_waited() -> None:
    """N11: 16 admissions, none waited → ``coverage: 0.0`` ("no waiting job got an ETA", issue 16's
    goal being 100 %) beside ``median_abs_error_s: null`` for the same reason. Both unknown."""
    from datetime import datetime, timezone

    from jupyter_sched.backfill.accuracy import accuracy_from_admits

    at = datetime(2026, 12, 3, 23, 58, tzinfo=timezone.utc)
    started_at_once = [(at, {"waited_s": 0.2, "queued": False, "predicted_start": None})] * 16
    acc = accuracy_from_admits(started_at_once)
    assert acc.jobs == 0 and acc.coverage is None and acc.median_abs_error_s is None
    waited = [(at, {"waited_s": 60.0, "queued": True, "predicted_start": None})]
    assert accuracy_from_admits(waited).coverage == 0.0  # one waited with no ETA: 0 % is then true


def test_newuser14_n11_rest_and_metrics_say_nothing_measured(server: EmbeddedServer) -> None:
    """N11 over the wire: ``GET eta-accuracy`` answers ``coverage: null`` and ``GET metrics`` has no
    ``jupyter_sched_eta_coverage_ratio`` sample while no job has waited (a job that started at once)."""
    clear(server)
    answer = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"]})
    assert answer.status_code == 201, answer.text
    _audit(server, lambda r: r.get("action") == "admit", job_id=answer.json()["id"])
    accuracy = api(server, "tok-boss").get("eta-accuracy").json()
    assert accuracy["jobs"] == 0 and accuracy["coverage"] is None, accuracy
    metrics = api(server, "tok-ann").get("metrics").text
    assert "jupyter_sched_eta_coverage_ratio" not in metrics, metrics
    assert "jupyter_sched_queue_length" in metrics  # the scrape itself answered


# ---- N18: a long time limit's end read "tomorrow"; days printed as thousands of hours -------------------------

def _running(limit_s: float, started: Any) -> dict[str, Any]:
    return {"id": "j-long", "kind": "training", "state": "running", "time_limit_s": limit_s,
            "started_at": started.isoformat(), "resources": {"gpus": 0}, "allocation": {"node": "vm", "gpu_uuids": []}}


def test_newuser14_n18_a_year_long_limit_ends_in_another_year_and_in_days() -> None:
    """N18: at 23:58 on Dec 3 2026, ``--time-limit 366d`` read ``ends by Dec 4 23:58 UTC (in 8783h59m),
    its 8784h00m time limit`` — the same words as the 1-day job's, a year early. Its year and days."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.wording.jobs import ends_by

    now = datetime(2026, 12, 3, 23, 58, 30, tzinfo=timezone.utc)
    year = ends_by(_running(366 * 86400, now - timedelta(seconds=30)), now)
    assert year == "ends by Dec 4 2027 23:58 UTC (in 365d23h), its 366d time limit", year
    day = ends_by(_running(86400, now - timedelta(seconds=30)), now)
    assert day == "ends by Dec 4 23:58 UTC (in 23h59m), its 24h00m time limit", day
    week = ends_by(_running(7 * 86400, now), now)
    assert week == "ends by Dec 10 23:58 UTC (in 7d), its 7d time limit", week


def test_newuser14_n18_every_clock_carries_the_year_when_far_off() -> None:
    """The kind: every clock of a sentence (an ETA, an idle reclaim's time) is written by the one
    formatter, so a date more than six months away says its year wherever it is shown."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.model.units import clock_text
    from jupyter_sched.wording.reasons import eta_sentence

    now = datetime(2026, 12, 3, 23, 58, tzinfo=timezone.utc)
    assert clock_text(now, now) == "23:58 UTC"
    assert clock_text(now + timedelta(days=1), now) == "Dec 4 23:58 UTC"
    assert clock_text(now + timedelta(days=366), now) == "Dec 4 2027 23:58 UTC"
    assert clock_text(now - timedelta(days=400), now) == "Oct 29 2025 23:58 UTC"
    far = {"code": "WaitingForCapacity", "eta": (now + timedelta(days=366)).isoformat(),
           "eta_reason": "when j-1 ends (by its 366d time limit)"}
    assert eta_sentence(far, now=now).startswith("ETA Dec 4 2027 23:58 UTC"), eta_sentence(far, now=now)


def test_newuser14_n18_cli_and_magics_queue_say_the_same_end(server: EmbeddedServer) -> None:
    """N18's cause: the CLI had its own ``ends_by`` (no days, no year) while the magics' queue table
    used the shared one. One renderer: the CLI's queue line and the magics' ``eta`` cell agree."""
    from datetime import datetime, timezone

    from jupyter_sched.magics.render import queue_frame
    from tests.onboarding.test_cli_firsthour import cli, wait_state

    clear(server)
    answer = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["sleep", "120"], "time_limit": "366d",
                                                       "name": "yearlong"})
    assert answer.status_code == 201, answer.text
    job_id = answer.json()["id"]
    wait_state(server, "tok-ann", job_id, "running")
    year = str(datetime.now(timezone.utc).year + 1)
    queue = cli(server, "tok-ann", "queue")
    assert "its 366d time limit" in queue.out and "8784h" not in queue.out, queue.out
    assert f" {year} " in queue.out, queue.out
    rows = api(server, "tok-ann").get("queue").json()  # what %schedule queue renders
    frame = queue_frame(rows, datetime.now(timezone.utc))
    eta = frame[frame["id"] == job_id]["eta"].tolist()[0]
    assert eta.endswith("its 366d time limit") and f" {year} " in eta, eta
    import re

    def timeless(text: str) -> str:  # the two clocks read a moment apart: "(in 366d)" / "(in 365d23h)"
        return re.sub(r" \(in [^)]*\)", "", text)

    assert timeless(eta) in timeless(queue.out), (eta, queue.out)


# ---- N15: the magics on another user's job named the read's rule, and a cancel was audited as a read --------------

@pytest.mark.parametrize(("line", "said", "request_audited"), [
    ("cancel {id}", "you may cancel only your own", "cancel job"),
    ("logs {id}", "you may read only your own jobs' logs", "read logs"),
], ids=["cancel", "logs"])
def test_newuser14_n15_a_magic_on_anothers_job_names_its_own_rule_and_is_audited_as_it(
        server: EmbeddedServer, line: str, said: str, request_audited: str) -> None:
    """N15: ``%schedule cancel j-…`` (another user's running job) answered "you may look into only
    your own jobs" and the audit had only ``read job`` refusals — the magic read the job first and
    stopped, so no cancel attempt from a notebook was ever recorded as one. The magic sends the
    cancel (logs) request and says the service's refusal, as ``jupyter-sched cancel`` does."""
    from jupyter_sched.magics.core import MagicError
    from tests.onboarding.test_cli_firsthour import wait_state
    from tests.onboarding.test_newuser11 import _magics

    clear(server)
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["sleep", "60"], "name": "anns"})
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    wait_state(server, "tok-ann", job_id, "running")
    with pytest.raises(MagicError) as refused:
        _magics(server, "tok-bob").schedule(line.format(id=job_id))
    assert said in str(refused.value) and "look into" not in str(refused.value), refused.value
    record = _audit(server, lambda r: (r.get("details") or {}).get("request") == request_audited,
                    user="bob", job_id=job_id)
    assert record["details"]["status"] == 403, record  # another user's live job (newuser29 n5)
    assert api(server, "tok-ann").get(f"jobs/{job_id}").json()["state"] == "running"  # untouched


# ---- N7: bulk cancel of another user's job: 200 with outcome not_found, the rule not named -----------------------

def test_newuser14_n7_bulk_cancel_names_the_rule_the_single_cancel_names(server: EmbeddedServer) -> None:
    """N7: ``POST jobs/cancel {"ids": [<ann's running job>]}`` as bob answered ``not_found`` with no
    message, while ``DELETE jobs/{id}`` says "… is another user's job: you may cancel only your own":
    a REST client could not tell a typo from another's job. The per-id outcome is ``refused`` with the
    single route's message; a typo stays ``not_found`` with its own; both audited as the single route."""
    from tests.onboarding.test_cli_firsthour import wait_state

    clear(server)
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["sleep", "60"], "name": "anns"})
    job_id = made.json()["id"]
    wait_state(server, "tok-ann", job_id, "running")
    single = api(server, "tok-bob").delete(f"jobs/{job_id}")
    assert single.status_code == 403, single.text
    bulk = api(server, "tok-bob").post("jobs/cancel", json={"ids": [job_id, "j-typo"]})
    assert bulk.status_code == 200, bulk.text
    answer = bulk.json()
    assert answer["jobs"][0] == {"id": job_id, "outcome": "refused", "was": None, "state": None,
                                 "message": single.json()["error"]["message"]}, answer
    assert answer["jobs"][1]["outcome"] == "not_found" and "j-typo" in answer["jobs"][1]["message"], answer
    assert answer["counts"]["refused"] == 1 and answer["counts"]["not_found"] == 1 and answer["cancelled"] == 0
    records = api(server, "tok-boss").get("audit", params={"user": "bob", "job_id": job_id, "limit": 100}).json()
    assert sum(1 for r in records if (r.get("details") or {}).get("request") == "cancel job") == 2, records
    assert api(server, "tok-ann").get(f"jobs/{job_id}").json()["state"] == "running"


def test_newuser14_n7_the_bulk_summary_says_a_refused_one() -> None:
    """The CLI's and the magics' one line of a bulk answer counts a refused id as what it is, not as
    "had already ended" (the old reading of not_found)."""
    from jupyter_sched.wording.jobs import bulk_cancel_answers

    answer = {"counts": {"removed": 1, "refused": 1, "not_found": 0}, "grace_s": 10.0, "jobs": [{}, {}]}
    said = bulk_cancel_answers([answer])
    assert said == "cancelled 1 job: 1 pending removed from the queue; 1 is another user's: you may cancel only your own"


# ---- N9: `jupyter-sched serve` as root without --allow-root ended with "Running as root is not recommended" ------

def test_newuser14_n9_serve_as_root_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """N9: the README says the service must run as root with ``--allow-root`` and "refuses to start
    otherwise, with one line saying what to set"; as root without it, the last line was
    jupyter_server's "Running as root is not recommended. Use --allow-root to bypass." — root
    discouraged where hub mode with the local executor needs it. One line of ours, exit 2, before
    the server starts (the process's uid is the OS's answer: root is simulated only where the
    test does not run as root)."""
    import io
    import os

    from jupyter_sched.hub import serve

    for name, value in {"JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api", "JUPYTERHUB_API_TOKEN": "x",
                        "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:45999"}.items():
        monkeypatch.setenv(name, value)
    if os.geteuid() != 0:
        monkeypatch.setattr(os, "geteuid", lambda: 0)
    err = io.StringIO()
    assert serve.main(["--db-url", "sqlite:////nonexistent/x.db"], err=err) == 2
    assert err.getvalue() == serve.ROOT_REFUSAL + "\n"
    assert "--allow-root" in serve.ROOT_REFUSAL and "not recommended" not in serve.ROOT_REFUSAL


# ---- N8: CLI token/URL refusals named a source the user did not use -------------------------------------------

def _cli_env(**extra: str) -> dict[str, str]:
    import os

    from tests.onboarding.test_cli_firsthour import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"PYTHONPATH": str(ROOT), **extra})
    return env


def test_newuser14_n8_another_users_server_from_the_hub_url_variable_names_that_variable(tmp_path: Any) -> None:
    """N8: with ``JUPYTER_SCHED_HUB_URL=…/user/nu14a/`` (no --url given) the CLI said "leave --url out
    in your hub terminal". It names the variable and the hub's scheduler to set it to. The 403 is the
    one amy's hub server gives (hub/forward.py's "request refused"), from a stand-in HTTP server (a
    real JupyterHub is tests/hub's harness, minutes to start)."""
    import subprocess

    from tests.onboarding.fake_hub import refusing_hub
    from tests.onboarding.test_cli_firsthour import CLI

    with refusing_hub() as base:
        env = _cli_env(JUPYTERHUB_USER="nu14b", JUPYTER_SCHED_TOKEN="bs-token", JUPYTER_RUNTIME_DIR=str(tmp_path),
                       JUPYTER_SCHED_HUB_URL=f"{base}/user/nu14a/")
        said = subprocess.run([CLI, "status"], env=env, capture_output=True, text=True, timeout=120)
    assert said.returncode != 0 and said.stderr.strip() == (
        f"jupyter-sched status: {base}/user/nu14a/ is nu14a's Jupyter server: your token may not use it — "
        f"JUPYTER_SCHED_HUB_URL points at it: set it to the hub's scheduler, {base}/services/jupyter-sched/ "
        "[forbidden]"), said.stderr
    assert "--url" not in said.stderr


def test_newuser14_n8_no_token_for_the_hub_url_says_none_was_set(server: EmbeddedServer, tmp_path: Any) -> None:
    """N8: ``JUPYTER_SCHED_HUB_URL`` set and no token: "refused the token of its runtime file" — the
    service has no runtime file and no token was sent. It says which variable is missing."""
    import subprocess

    from tests.onboarding.test_cli_firsthour import CLI

    env = _cli_env(JUPYTER_SCHED_HUB_URL=server.url, JUPYTER_RUNTIME_DIR=str(tmp_path))
    said = subprocess.run([CLI, "status"], env=env, capture_output=True, text=True, timeout=120)
    assert said.returncode != 0, said.stdout
    assert "needs a token (JUPYTER_SCHED_HUB_URL is set but JUPYTER_SCHED_TOKEN is not)" in said.stderr, said.stderr
    assert "runtime file" not in said.stderr, said.stderr


# ---- N13: a lease's end state: released in the lists, cancelled in status/wait lines and REST ---------------------

def test_newuser17_n23_an_ended_leases_line_says_cancelled_as_the_lists_and_rest_do() -> None:
    """N13: ``%schedule jobs`` / ``jupyter-sched jobs`` said ``released`` while ``%schedule status l-…``
    and ``jupyter-sched wait l-…`` (one line, :func:`job_line`) said ``lease l-…: cancelled — …``; new
    user 17, N23: every REST body says ``cancelled`` (the documented state) — one word everywhere."""
    from jupyter_sched.wording import job_line, state_word

    lease = {"id": "l-1", "kind": "lease", "name": "notebook lease", "state": "cancelled",
             "message": "request withdrawn: no GPUs granted within its 5s timeout; nothing was held"}
    assert state_word(lease) == "cancelled"
    assert job_line(lease, None) == ("lease l-1: cancelled — request withdrawn: no GPUs granted "
                                     "within its 5s timeout; nothing was held"), job_line(lease, None)
    job = {"id": "j-1", "kind": "training", "state": "cancelled", "message": "cancelled by ann"}
    assert job_line(job, None) == "job j-1: cancelled by ann"  # a job's word, said once (newuser26 n9)


def test_newuser14_n13_rest_lists_released_leases_by_the_word_clients_show(server: EmbeddedServer) -> None:
    """N13: ``GET jobs?state=released`` answered 400 "unknown state 'released'" for the word the CLI,
    magics and panel print (``jupyter-sched jobs --state released`` worked). It lists ended leases —
    not cancelled jobs — as the CLI's filter does; mixed with other states it counts as cancelled."""
    clear(server)
    ann = api(server, "tok-ann")
    lease = ann.post("leases", json={"gpus": 1})
    assert lease.status_code in (200, 201), lease.text
    lease_id = lease.json()["id"]
    job = ann.post("jobs", json={"gpus": 0, "command": ["sleep", "60"]}).json()["id"]
    assert ann.delete(f"leases/{lease_id}").status_code in (200, 204)
    assert ann.delete(f"jobs/{job}").status_code in (200, 202, 204)
    deadline = time.monotonic() + 30
    while ann.get(f"jobs/{job}").json()["state"] != "cancelled":  # a running job ends after its SIGTERM
        assert time.monotonic() < deadline
        time.sleep(0.2)
    listed = ann.get("jobs", params={"state": "released"})
    assert listed.status_code == 200, listed.text
    rows = listed.json()["jobs"] if isinstance(listed.json(), dict) else listed.json()
    assert [r["id"] for r in rows] == [lease_id], rows
    assert [r["state"] for r in rows] == ["cancelled"], rows  # one word: its state (new user 17, N23)
    assert [r["id"] for r in ann.get("leases", params={"state": "released"}).json()] == [lease_id]
    both = ann.get("jobs", params={"state": "released,cancelled"}).json()
    both = both["jobs"] if isinstance(both, dict) else both
    assert {r["id"] for r in both} >= {lease_id, job}
    unknown = ann.get("jobs", params={"state": "finished"})
    # the hint lists states only: 'released' is a filter, not a state any body says (new user 17, N23)
    hint = unknown.json()["error"]["hint"]
    assert unknown.status_code == 400 and "cancelled" in hint and "released" not in hint, unknown.text


# ---- N14: a REST job carried two ETA wordings and two unblocks that disagreed ----------------------------------

def test_newuser14_n14_a_queued_job_says_its_eta_and_unblock_once(server: EmbeddedServer) -> None:
    """N14: ``GET queue`` for a job waiting on work with no time limit had ``reason.eta_reason`` in
    words, the top-level ``eta_reason`` in the core's ("it fits only after jobs without a time limit
    end (j-…)"), and ``reason.unblock: "starts when running jobs finish (see ETA)"`` beside
    ``reason.text.unblock: ""``. Each field now says what ``reason.text`` says."""
    from tests.onboarding.test_cli_firsthour import wait_state

    clear(server)
    ann = api(server, "tok-ann")
    hog = ann.post("jobs", json={"gpus": 2, "command": ["sleep", "120"], "name": "hog"}).json()["id"]
    wait_state(server, "tok-ann", hog, "running")
    big = ann.post("jobs", json={"gpus": 2, "command": ["true"], "time_limit": "5m", "name": "big"}).json()["id"]
    deadline = time.monotonic() + 30
    while True:
        entry = next(e for e in ann.get("queue").json() if e["id"] == big)
        reason = entry.get("reason") or {}
        if (reason.get("text") or {}).get("eta", "").startswith("ETA unknown"):
            break
        assert time.monotonic() < deadline, entry
        time.sleep(0.2)
    text = reason["text"]
    assert entry["eta_reason"] == reason["eta_reason"] == text["eta"].removeprefix("ETA unknown: "), entry
    assert "it fits only after jobs without a time limit" not in entry["eta_reason"], entry
    assert reason["unblock"] == text["unblock"], reason
    assert "see ETA" not in str(reason), reason
    own = ann.get(f"jobs/{big}").json()["reason"]
    assert own["unblock"] == own["text"]["unblock"] and own["eta_reason"] == own["text"]["eta"].removeprefix(
        "ETA unknown: "), own


def test_newuser14_n14_an_ended_jobs_reason_has_no_eta_left() -> None:
    """N14 / N13: a finished lease's REST reason still carried its pending-time ``unblock`` and core
    ``eta_reason`` ("starts when running jobs finish (see ETA)"). Rendered as history (no ETA), those
    fields are empty as ``text.eta`` / ``text.unblock`` are."""
    from jupyter_sched.wording.reasons import reason_in_words, render_reason

    reason = {"code": "WaitingForCapacity", "message": "needs 4 GPUs, 0 free", "details": {},
              "unblock": "starts when running jobs finish (see ETA)", "position": 1, "eta": None,
              "eta_reason": "it fits only after jobs without a time limit end (j-1)"}
    out = reason_in_words(reason, render_reason(reason, never=True))
    assert out["unblock"] == out["text"]["unblock"] and out["eta_reason"] in ("", out["text"]["eta"]), out
    assert "see ETA" not in str(out) and "it fits only after" not in str(out), out


# ---- N12: a reclaimed borrower's reason said its cause twice, and "all 1 GPU" -----------------------------------

def test_newuser14_n12_a_borrowers_reason_says_what_unblocks_it_once() -> None:
    """N12: teama (guaranteed 2) at 3 GPUs, teamb at its guarantee of 1: teama's next job read "…; it can
    start when teamb's jobs free 1 GPU (teamb uses all 1 GPU of its guarantee) or teama's own running
    work frees 1 GPU · ETA unknown: it can start only after one or more of a1, a2, a3 and 1 more end,
    none of which has a time limit" — the event said twice, and "all 1 GPU". The summary names the
    event once, with "its whole guarantee of 1 GPU"; the ETA adds only why it has no time. The core's
    reason, rendered as every surface renders it."""
    from jupyter_sched.model import Quota
    from jupyter_sched.model.codec import reason_to_dict
    from jupyter_sched.scheduling import run_cycle
    from jupyter_sched.wording import render_reason
    from tests.core.core_builders import make_job, make_node, quotas, running, snapshot

    q = quotas(Quota(team="teama", guaranteed=2, borrowing_limit=2), Quota(team="teamb", guaranteed=1, borrowing_limit=0))
    jobs = [running(make_job(f"a{i}", gpus=1, team="teama", user="nu14a"), "n1", [i]) for i in range(3)]
    jobs += [running(make_job("b1", gpus=1, team="teamb", user="nu14b"), "n1", [3]),
             make_job("a-borrow", gpus=1, team="teama", user="nu14a", submitted=5)]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q))
    reason = next(p.reason for p in result.pending if p.job_id == "a-borrow")
    text = render_reason(reason_to_dict(reason))
    assert "all 1 GPU" not in text.summary and "teamb uses its whole guarantee of 1 GPU" in text.summary, text.summary
    assert text.summary.count("it can start") == 1, text.summary
    assert text.eta == "ETA unknown: none of the running work it waits for has a time limit", text.eta
    assert text.line.count("it can start") == 1, text.line
