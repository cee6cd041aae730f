"""New user 16's findings N8, N12, N13 (server side), N14 and new user 15's N12 remainder, each its
own test (/work/coord/notes/newuser16.md; branch s17-words): one job said in the same words by the
CLI, the magics and REST; a lease that preempts is called a lease; the single-user server has no
CPU-job cap unless set, the hub keeps its guard; the queue says how many more wait; ``%gpu request
abc`` says the server's rule after the magic's name."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.client import connect
from jupyter_sched.magics.core import MagicError
from jupyter_sched.magics.render import queue_frame
from jupyter_sched.model import JobKind
from jupyter_sched.model.units import relative_text
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.wording import gpus_text, render_reason
from tests.core.core_builders import T0, Scenario, make_job, make_node, running, snapshot
from tests.onboarding.test_cli_firsthour import api, clear, module_server, wait_state
from tests.onboarding.test_newuser10 import _cli, _env
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
RELATIVE = re.compile(r" \((?:in (?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?|now)\)")
"""``relative_text``'s words in brackets: ``(in 19m55s)``, ``(in 2h05m)``, ``(now)``."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu16w", USERS)


def _post(server: EmbeddedServer, body: dict[str, Any]) -> dict[str, Any]:
    made = api(server, "tok-ann").post("jobs", json=body)
    assert made.status_code == 201, made.text
    return dict(made.json())


def _today_dates_dropped(text: str, now: datetime) -> str:
    """REST's absolute clocks (``Dec 4 11:05 UTC``) as a reader's clock of today says them (``11:05 UTC``)."""
    return text.replace(f"{now:%b} {now.day} ", "")


def test_newuser16_n8_one_job_reads_the_same_in_the_cli_the_magics_and_rest(server: EmbeddedServer,
                                                                           tmp_path: Path) -> None:
    """N8: the same pending line said "reserved from Dec 4 11:05 UTC · ETA 11:05 UTC"; the CLI "in
    19m55s", the panel "in 19 min"; the reserved job by id only ("ahead of j-…") beside "when big (j-…)
    ends"; "0.5 GPUs" in the magic's table. Now the CLI's queue line and the magics' queue table say
    the same words (one clock style, one relative style: ``relative_text``), REST's sentences are those
    words with the date of each clock (absolute: they stay true while shown) and no relative time, the
    reserved job is named as the ETA names jobs, and a share is "0.5 GPU" everywhere."""
    clear(server)
    big = _post(server, {"gpus": 1, "name": "big", "time_limit": "20m", "command": ["sleep", "1500"]})
    wait_state(server, "tok-ann", big["id"], "running")
    waiter = _post(server, {"gpus": 2, "name": "waiter", "time_limit": "10m", "command": ["sleep", "300"]})
    half = _post(server, {"gpus": 0.5, "name": "half1", "command": ["sleep", "300"]})
    ann = api(server, "tok-ann")
    deadline = time.monotonic() + 60
    while True:  # the ETA and the reservation come with a scheduling cycle after the submits
        rows = ann.get("queue").json()
        row = next(r for r in rows if r["id"] == half["id"])
        text = (row.get("reason") or {}).get("text") or {}
        if "reserv" in text.get("summary", "") and re.match(r"ETA \w", text.get("eta", "")) and \
                not text["eta"].startswith("ETA not") and not text["eta"].startswith("ETA unknown"):
            break
        assert time.monotonic() < deadline, text
        time.sleep(0.2)
    now = datetime.now(timezone.utc)
    # REST: absolute clocks (with their day), jobs by name and id, no relative time
    assert f"waiter ({waiter['id']})" in text["summary"] and "(in " not in text["eta"], text
    # each clock with its day (today's, or tomorrow's when the 20-minute ETA passes midnight UTC)
    assert re.search(r"[A-Z][a-z]{2} \d{1,2} \d\d:\d\d UTC", text["summary"] + text["eta"]), text

    cli = _cli(_env(tmp_path, server), "queue")
    assert cli.returncode == 0, cli.stderr
    lines = cli.stdout.splitlines()
    said = lines[next(i for i, line in enumerate(lines) if line.startswith(half["id"])) + 1].strip()
    rows = connect(server.url, "tok-ann").queue()
    frame = queue_frame(rows, now).set_index("id")
    magic = f"{frame.loc[half['id'], 'detail']} · ETA {frame.loc[half['id'], 'eta']}"
    # one relative style in both (format_duration's "19m55s"), and the same words around it
    assert RELATIVE.search(said) and RELATIVE.search(magic), (said, magic)
    assert RELATIVE.sub("", said) == RELATIVE.sub("", magic), (said, magic)
    # REST's words are the same, with the day said on each clock
    rest = f"{text['summary'].rstrip('.')} · {text['eta']}"
    assert _today_dates_dropped(rest, now) == RELATIVE.sub("", said), (rest, said)
    assert not re.search(rf"{now:%b} {now.day} \d\d:\d\d UTC", said), said  # today's clocks: no date

    # a share: "0.5 GPU", as gpus_phrase and the panel say it (not "0.5 GPUs")
    assert frame.loc[half["id"], "gpus"] == "0.5 GPU"
    submitted = _cli(_env(tmp_path, server), "submit", "--gpus", "0.5", "--name", "half2", "--", "sleep", "1")
    assert submitted.returncode == 0, submitted.stderr
    assert "0.5 GPU" in submitted.stdout and "0.5 GPUs" not in submitted.stdout, submitted.stdout


def test_newuser16_n8_the_reserved_job_is_named_as_the_eta_names_jobs() -> None:
    """N8: "cannot start ahead of j-1m90ah3zt-9deyn8, whose GPUs are reserved from …" named the reserved
    job by id only, beside "when big (j-…) ends" in the same line: the core keeps its name (and another
    user's, its owner) with the reservation, and the words name it as every reason names work."""
    def named(job_id: str, name: str, **kw: Any) -> Any:
        job = make_job(job_id, **kw)
        return replace(job, spec=replace(job.spec, name=name))

    big = running(named("j-big", "big", gpus=2, time_limit_s=1200), "n1", [0, 1])
    waiter = named("j-wait", "waiter", gpus=4, time_limit_s=600, submitted=1)
    wide = named("j-wide", "wide", gpus=3, submitted=2)  # no time limit: it cannot go ahead of the reservation
    result = run_cycle(snapshot([make_node(gpus=4)], [big, waiter, wide]))
    reason = next(p.reason for p in result.pending if p.job_id == "j-wide")
    assert reason.details["backfill"]["reserved_for_name"] == "waiter", reason.details
    # the words: as N8's line, where the ETA names another job (big) than the reserved one
    details = {**reason.details, "eta_code": "Projected", "eta_waits_on": ["j-big"], "eta_waits_on_names": {"j-big": "big"}}
    wire = {"code": reason.code, "message": reason.message, "details": details, "eta": "2025-03-30T12:20:00Z"}
    text = render_reason(wire, now=T0)
    assert "cannot start ahead of waiter (j-wait), whose GPUs are reserved from 12:00 UTC" in text.summary, text
    assert text.eta == "ETA 12:20 UTC, when big (j-big) ends", text
    theirs = {**details, "backfill": {**details["backfill"], "reserved_for_owner": "bob"}}
    said = render_reason({**wire, "details": theirs}, now=T0).summary
    assert 'cannot start ahead of bob\'s job "waiter" (j-wait), whose GPUs' in said, said


def test_newuser16_n8_one_relative_time_style() -> None:
    """N8: "in 19m55s" (CLI) and "in 19 min" (panel): ``relative_text`` is the one style; the panel's
    ``relativeText`` mirrors it (labextension/test/format.test.ts pins the same table)."""
    table = {0.4: "now", -5: "now", 45: "in 45s", 1195: "in 19m55s", 1200: "in 20m", 7500: "in 2h05m",
             3 * 86400: "in 3d"}
    assert {s: relative_text(s) for s in table} == table
    assert gpus_text({"resources": {"gpus": 1, "gpu_milli": 500}}) == "0.5 GPU"
    assert gpus_text({"resources": {"gpus": 2, "gpu_milli": 1000}}) == "2 GPUs"
    assert gpus_text({"resources": {"gpus": 1, "gpu_milli": 500, "workers": 2}}) == "2 x 0.5 GPUs"


def test_newuser16_n12_a_lease_that_preempts_is_called_a_lease() -> None:
    """N12: "requeued after preemption by lease (l-…), a higher-priority normal job of team default".
    The preemptor is named by its kind in the victim's Preempted reason, the audit record, and the
    requeued reason after — and one's own default-named lease by its id (the clause says "lease")."""
    s = Scenario([make_node("n1", gpus=1)])
    low = make_job("lowjob", gpus=1, priority="low")
    lease = make_job("l-1", gpus=1, submitted=1)
    lease = replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE, name="lease"))
    s.submit(running(low, "n1"), lease)
    first = s.cycle()
    assert [p.reason for p in first.preemptions] == ["preempted by higher-priority normal lease l-1 of team default"]
    audit = next(a for a in first.audit if a.action == "preempt")
    assert audit.message.endswith("preempted by higher-priority normal lease l-1 of team default"), audit.message
    later = s.at(0.1).cycle()
    said = next(p.reason.message for p in later.pending if p.job_id == "lowjob")
    assert "requeued after preemption by l-1, a higher-priority normal lease of team default" in said, said
    assert "job of team" not in said, said


def test_newuser16_n12_a_share_is_of_team_x() -> None:
    """N12 (same family): "1 GPU holds a share of default (0.5 GPU)" — "of team default", as the
    preemption clause of the same line says."""
    share = running(make_job("share", milli=500, user="bob"), "n1", [0], milli=500)
    whole = running(make_job("whole", user="ann"), "n1", [1])
    result = run_cycle(snapshot([make_node(gpus=2)], [share, whole, make_job("more", user="ann", submitted=1)]),
                       SchedulingProfile(gpu_sharing="team"))
    said = next(p.reason.message for p in result.pending if p.job_id == "more")
    assert "1 GPU holds a share of team default (0.5 GPU)" in said, said


def test_newuser16_n14_the_cpu_job_cap_is_a_hub_guard() -> None:
    """N14: a single user's own server capped them at 8 CPU-only jobs, while the README listed the cap
    under JupyterHub only. The cap guards a hub's users from each other: 8 there unless set, none on a
    single-user server unless set (the setting still works there)."""
    from traitlets.config import Config

    from jupyter_sched.extension.app import SchedApp
    from jupyter_sched.hub.central import HubSchedApp

    assert SchedApp().max_running_cpu_jobs_per_user == 0
    assert HubSchedApp().max_running_cpu_jobs_per_user == 8
    set_cap = Config()
    set_cap.SchedApp.max_running_cpu_jobs_per_user = 3
    assert SchedApp(config=set_cap).max_running_cpu_jobs_per_user == 3
    assert HubSchedApp(config=set_cap).max_running_cpu_jobs_per_user == 3
    readme = (Path(__file__).parents[2] / "docs" / "admin.md").read_text()
    assert "on a single-user server (`jupyter lab`) it is 0 (no cap) unless you set it" in readme
    assert "0 on a\n        single-user server" in SchedApp.class_traits()["max_running_cpu_jobs_per_user"].help


def test_newuser16_n14_the_queue_says_how_many_more_wait(server: EmbeddedServer, tmp_path: Path) -> None:
    """N14: "More pending jobs wait behind these 50" gave no count (52 were pending). GET queue with a
    limit sends the whole queue's waiting count (``X-Total-Count``) when more follow; the CLI says it."""
    clear(server)
    hog = _post(server, {"gpus": 2, "name": "hog", "time_limit": "10m", "command": ["sleep", "300"]})
    wait_state(server, "tok-ann", hog["id"], "running")
    for i in range(5):
        _post(server, {"gpus": 1, "name": f"w{i}", "time_limit": "10m", "command": ["sleep", "300"]})
    head = api(server, "tok-ann").get("queue", params={"limit": 2})
    assert head.headers.get("X-Total-Count") == "5", dict(head.headers)
    assert "X-Total-Count" not in api(server, "tok-ann").get("queue", params={"limit": 5}).headers
    out = _cli(_env(tmp_path, server), "queue", "--limit", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == (
        "3 more pending jobs wait behind these 2: `jupyter-sched queue --all` lists every one (or --limit N).")
    mine = _cli(_env(tmp_path, server), "queue", "--mine", "--limit", "2")
    assert mine.stdout.splitlines()[-1].startswith("3 more of your pending jobs wait behind these 2"), mine.stdout


def test_newuser15_n12_gpu_request_abc_says_the_rule_after_the_magic_s_name(server: EmbeddedServer) -> None:
    """New user 15, N12 remainder (re-checked by new user 16): ``%gpu request abc`` → "N must be an
    integer" — a placeholder nobody typed. The words are the server's and the CLI's rule for ``gpus``
    (case 019's "must be an integer" for a word, with the hint naming fractions), after the magic's
    name, as a refusal from the server is said."""
    magics = _magics(server)
    with pytest.raises(MagicError) as word:
        magics.gpu("request abc --no-wait")
    assert str(word.value) == ('%gpu request: gpus must be an integer (got "abc"). Use a whole number such as '
                               '1 or 4, or a fraction below 1 such as 0.5.'), word.value
    with pytest.raises(MagicError) as above:
        magics.gpu("request 1.5 --no-wait")
    assert str(above.value).startswith("%gpu request: gpus must be a whole number or a fraction below 1 (got 1.5)")
    assert "N must" not in str(word.value) + str(above.value)
