"""Red team 17, R9 and new user 17, N4 (/work/coord/notes/red17.md, newuser17.md): a GPU's
readings are a non-admin's only for the times their own work held it or nobody's did — in
``telemetry/history?gpu=`` after the other user's work ended (R9), and in ``GET telemetry``,
``%gpu`` (which reads it) and the event stream while it runs (N4). Real embedded server
(simulated GPUs, SQLite); :class:`GpuReaders` is the one rule every route asks."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from jupyter_sched.services.visibility import WITHHELD_NOTE, GpuReaders
from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-cat": "cat", "tok-boss": "boss", OWNER_TOKEN: "boss"}
BUSY = "import time\nt = time.time()\nwhile time.time() - t < 600: pass"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "red17r9", USERS)


def _until(what: str, check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"{what}: never"
        time.sleep(0.3)


def _busy_job(ann: httpx.Client) -> tuple[str, str]:
    made = ann.post("jobs", json={"gpus": 1, "command": ["python3", "-c", BUSY], "name": "a-secret-run"})
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    job = _until("running", lambda: (j := ann.get(f"jobs/{job_id}").json())["state"] == "running"
                 and j.get("allocation") and j)
    return job_id, job["allocation"]["gpu_uuids"][0]


def _current(client: httpx.Client, gpu: str) -> dict[str, Any]:
    answer = client.get("telemetry", params={"gpu": gpu})
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["gpus"][0])


T0 = datetime(2026, 12, 4, 13, 0, tzinfo=timezone.utc)


def _t(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_red17_r9_one_rule_own_time_and_idle_time_readable_anothers_time_withheld() -> None:
    """The rule itself: ann's work held GPU-a 10-20, cat's 15-30 (a share), bo's 40-open."""
    holdings = {"GPU-a": [("ann", _t(10), _t(20)), ("cat", _t(15), _t(30)), ("bo", _t(40), None)],
                "MIG-a1": [("bo", _t(40), None)]}
    cat = GpuReaders("cat", holdings)
    assert not cat.hides(["GPU-a"], _t(0), _t(10))  # nobody's
    assert cat.hides(["GPU-a"], _t(5), _t(12))  # ann's 10-12, not cat's
    assert not cat.hides(["GPU-a"], _t(15), _t(20))  # ann's and cat's share: cat's too
    assert not cat.hides(["GPU-a"], _t(25))  # one instant in cat's own
    assert cat.hides(["GPU-a"], _t(12))  # one instant in ann's alone
    assert not cat.hides(["GPU-a"], _t(30), _t(40))  # idle again
    assert cat.hides(["GPU-a"])  # now: bo's open holding
    assert cat.hides(["GPU-a", "MIG-a1"], _t(45))
    assert not GpuReaders(None, holdings).hides(["GPU-a"])  # an admin reads everything
    assert not GpuReaders("bo", holdings).hides(["GPU-a"]) and GpuReaders("bo", holdings).hides(["GPU-a"], _t(12))


def _reading_between(client: httpx.Client, gpu: str, since: datetime, until: datetime) -> bool:
    """Whether ``client``'s ``telemetry/history`` of ``gpu`` has a utilization reading in ``[since, until)``."""
    if until <= since:
        return False
    answer = client.get("telemetry/history", params={"gpu": gpu, "since": since.isoformat(),
                                                     "until": until.isoformat(), "step_s": 1})
    assert answer.status_code == 200, answer.text
    return any(p["utilization_pct"] is not None and since <= datetime.fromisoformat(p["t"]) < until
               for p in answer.json()["points"])


def test_red17_r9_gpu_history_of_another_users_ended_run_is_withheld(server: EmbeddedServer) -> None:
    """R9: once ann's job ended, cat read its whole series by GPU id and time range (200 with ann's
    utilization; failed before the fix). Now every step ann's job held the GPU is a gap saying why;
    ann and the admin read the numbers; the steps before it (nobody's) stay cat's to read."""
    clear(server)
    ann, cat, boss = api(server, "tok-ann"), api(server, "tok-cat"), api(server, "tok-boss")
    job_id, gpu = _busy_job(ann)
    started = datetime.fromisoformat(ann.get(f"jobs/{job_id}").json()["started_at"])
    # a reading of ann's run in her own history at least 1 s old (so inside the run however soon it ends), in place
    # of a 6-s sleep "for a few busy samples" (s35-migr): the state the assertions below read
    _until("a reading of ann's run in her history", lambda: _reading_between(ann, gpu, started,
                                                                            datetime.now(timezone.utc)
                                                                            - timedelta(seconds=1)))
    assert ann.delete(f"jobs/{job_id}").status_code in (200, 202)
    job = _until("ended", lambda: (j := ann.get(f"jobs/{job_id}").json()).get("finished_at") and j)
    started = datetime.fromisoformat(job["started_at"])
    finished = datetime.fromisoformat(job["finished_at"])
    params = {"gpu": gpu, "since": (started - timedelta(seconds=20)).isoformat(),
              "until": (finished + timedelta(seconds=2)).isoformat(), "step_s": 1}
    theirs = cat.get("telemetry/history", params=params)
    assert theirs.status_code == 200, theirs.text
    inside = [p for p in theirs.json()["points"]
              if started <= datetime.fromisoformat(p["t"]) < finished - timedelta(seconds=1)]
    assert inside and all(p["utilization_pct"] is None and p["memory_used_mib"] is None
                          and p["note"] == WITHHELD_NOTE for p in inside), inside
    assert any(g["note"] == WITHHELD_NOTE for g in theirs.json()["gaps"])
    before = [p for p in theirs.json()["points"] if datetime.fromisoformat(p["t"]) < started - timedelta(seconds=2)]
    assert before and not any(p["note"] == WITHHELD_NOTE for p in before)
    for reader in (ann, boss):
        own = reader.get("telemetry/history", params=params).json()["points"]
        assert any(p["utilization_pct"] is not None for p in own
                   if started <= datetime.fromisoformat(p["t"]) < finished), own
        assert not any(p["note"] == WITHHELD_NOTE for p in own)


def test_newuser17_n4_live_telemetry_and_events_withhold_another_users_gpu(server: EmbeddedServer) -> None:
    """N4: while ann's job ran, cat's ``GET telemetry`` (and so ``%gpu status``), ``GET inventory`` and the event stream
    carried its GPU's readings and the last 60 s (failed before the fix: utilization and 60
    recent samples). Now cat gets the GPU's row with the readings withheld and no recent samples
    taken while ann's work holds it (those from before it stay); ann and the admin get the numbers; the free
    GPU stays readable."""
    clear(server)
    ann, cat, boss = api(server, "tok-ann"), api(server, "tok-cat"), api(server, "tok-boss")
    job_id, gpu = _busy_job(ann)
    try:
        _until("ann's readings", lambda: (_current(ann, gpu).get("current") or {}).get("utilization_pct") is not None)
        theirs = _current(cat, gpu)
        started = datetime.fromisoformat(ann.get(f"jobs/{job_id}").json()["started_at"])
        # the minute's samples from before ann's job (nobody's GPU) stay; none of its own
        assert all(datetime.fromisoformat(s["timestamp"]) < started for s in theirs["recent"]), theirs["recent"]
        current = theirs["current"]
        assert current is not None and current["utilization_pct"] is None and current["memory_used_mib"] is None
        assert current["note"] == WITHHELD_NOTE and current["processes"] == []
        assert _current(ann, gpu)["recent"] and _current(boss, gpu)["current"]["utilization_pct"] is not None
        every = {g["gpu_uuid"]: g for g in cat.get("telemetry").json()["gpus"]}
        assert every[gpu]["current"]["note"] == WITHHELD_NOTE
        free = next(g for u, g in every.items() if u != gpu)
        assert free["current"]["note"] != WITHHELD_NOTE and free["recent"]
        shown = cat.get("inventory").json()["telemetry"]["gpus"]  # GET inventory's reading, the panel's
        assert shown[gpu]["utilization"] == WITHHELD_NOTE and shown[gpu]["validity"] is None, shown[gpu]
        assert all(g["utilization"] != WITHHELD_NOTE for u, g in shown.items() if u != gpu)
        assert ann.get("inventory").json()["telemetry"]["gpus"][gpu]["utilization"] != WITHHELD_NOTE
        assert boss.get("inventory").json()["telemetry"]["gpus"][gpu]["utilization"] != WITHHELD_NOTE
        samples = _event_samples(cat)
        assert samples.get(gpu) is not None and samples[gpu]["utilization_pct"] is None
        assert samples[gpu]["note"] == WITHHELD_NOTE
        assert any(s["note"] != WITHHELD_NOTE for u, s in samples.items() if u != gpu)
        assert _event_samples(ann)[gpu]["note"] != WITHHELD_NOTE
    finally:
        ann.delete(f"jobs/{job_id}")


def _event_samples(client: httpx.Client) -> dict[str, dict[str, Any]]:
    """The first ``telemetry`` event's samples by GPU uuid, from the real event stream."""
    deadline = time.monotonic() + 30
    with client.stream("GET", "events", timeout=30) as stream:
        assert stream.status_code == 200
        kind = ""
        for line in stream.iter_lines():
            assert time.monotonic() < deadline, "no telemetry event"
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind == "telemetry":
                data = json.loads(line.split(":", 1)[1])
                return {str(s["gpu_uuid"]): s for s in data["gpus"]}
    raise AssertionError("the event stream ended")
