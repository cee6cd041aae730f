"""New user 30, N4: a newcomer's first look at a waiting job read the scheduler's trade words — "elected: it
has waited …, so it goes first among its class's jobs and later jobs start ahead of it only where they end
before its reserved start", "(queued behind it, it fits the GPUs that free first and ends before this job's
reservation, so it runs first: backfill) (if it ends as estimated from past runs)" (two brackets in a row),
"team default has no quota line: no GPUs guaranteed, no limit". The one renderer of each now says plain words
first and the trade word after, in brackets; the README lists the words ("Words the panel uses") and the
panel explains them on the line (labextension/src/glossary.ts, vitest s30_newuser30_n4_glossary).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.quota import quota_lines

ROOT = Path(__file__).resolve().parents[2]
TRADE = ("its class's jobs", "reserved start", "this job's reservation", ": backfill", "quota line")


def test_newuser30_n4_elected_says_it_goes_first_then_the_word() -> None:
    queued = T0 - timedelta(minutes=12)
    promise = {"at": queued.isoformat(), "start": (queued + timedelta(minutes=15)).isoformat()}
    job = replace(make_job("b-train", user="bo", time_limit_s=900), submitted_at=queued,
                  reason=PendingReason(code="WaitingForCapacity", message="", details={PROMISE: promise}))
    hog = running(make_job("a-long", user="ana", gpus=4, time_limit_s=3600), started=-20)
    reason = {p.job_id: p.reason for p in run_cycle(snapshot([make_node("n1", gpus=4)], [hog, job])).pending}["b-train"]
    assert "elected" in reason.details, reason
    line = render_reason(reason_to_dict(reason), now=T0).line
    start = (queued + timedelta(minutes=15)).strftime("%H:%M")
    assert (f"; it goes first: it has waited 12m, past 0.75 x the 15m wait promised when it was queued (start by "
            f"{start} UTC); jobs queued later start ahead of it only if they end before its planned start (elected)") in line, line
    assert not any(word in line for word in TRADE), line


def test_newuser30_n4_backfill_said_last_in_plain_words_no_two_brackets_in_a_row() -> None:
    # #1 waits on a job queued behind it that the plan starts first, its end learnt from past runs
    reason = {"code": "WaitingForCapacity", "message": "needs 1 GPU, 0 free", "position": 1,
              "eta": (T0 + timedelta(minutes=17)).isoformat(),
              "details": {"eta_code": "Projected", "eta_waits_on": ["j-2"], "eta_waits_on_names": {"j-2": "s2-sweep-17"},
                          "eta_waits_on_owners": {"j-2": "ana"}, "eta_waits_on_backfilled": ["j-2"],
                          "eta_learned": ["j-2"]}}
    eta = render_reason(reason, now=T0).eta
    assert ") (" not in eta, eta
    assert eta.endswith("; s2-sweep-17 is queued behind this job but starts first: it fits the GPUs that free first, before "
                        "this job has all it needs (backfill)"), eta  # (words of newuser31 N6)
    assert eta.startswith("ETA 12:17 UTC, when ana's job \"s2-sweep-17\" (j-2) ends ("), eta
    assert not any(word in eta for word in TRADE), eta
    # two of them, and it waits on another job too
    two = {**reason, "details": {**reason["details"], "eta_waits_on": ["j-1", "j-2", "j-3"],
                                 "eta_waits_on_backfilled": ["j-2", "j-3"], "eta_learned": []}}
    said = render_reason(two, now=T0).eta
    assert said.endswith(", when j-1, ana's job \"s2-sweep-17\" (j-2) and j-3 end; s2-sweep-17 and j-3 are queued behind this job "
                         "but start first: they fit the GPUs that free first, before this job has all it needs (backfill)"), said


def test_newuser30_n4_no_quota_in_plain_words() -> None:
    me = {"user": "n30b", "team": "default", "teams": ["default"], "quotas": [], "team_in_use": 0, "in_use": {"gpus": 0},
          "by_team": [{"team": "default", "quotas": [], "team_in_use": 0, "in_use": 0}]}
    lines = quota_lines(me)
    assert lines[0].startswith("team default has no GPUs set aside and no limit (no quota)"), lines
    assert "quota line" not in " ".join(lines), lines


def test_newuser30_n4_readme_lists_the_words_the_panel_explains() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Words the panel uses", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- \*\*([^*]+)\*\*", section, flags=re.M)
    for word in ("queue", "pending reason", "ETA", "elected", "backfill", "reservation", "quota", "priority class",
                 "preempt", "lease", "reclaim", "GPU-hours", "simulated GPU"):
        assert word in listed, (word, listed)
    for word in ("guaranteed", "borrowing limit"):  # said under quota
        assert f"**{word}**" in section, word
    panel = (ROOT / "labextension" / "src" / "glossary.ts").read_text()
    for term in re.findall(r"\{ term: '([^']+)'", panel):  # every word the panel explains is in the README's list
        assert term in listed or f"**{term}**" in section or (term == "NVML" and "`NVML`" in section), term
