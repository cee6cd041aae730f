"""Red team 23, R3 (issue 20; display/impersonation): names others read still let through characters
drawn as nothing that are not format characters (Cf) — Hangul fillers, the combining grapheme joiner,
variation selectors, the braille blank — and a letter under 150 combining accents. A job name could
look blank, look like another user's job, or smear over the rows around it in everyone's queue.

The one check of displayed text (``admission.rules.visible_text``) now refuses Unicode's
Default_Ignorable_Code_Point set and blank-looking characters, and caps combining marks per character;
the REST path is checked through a real submit in the services layer.
"""

from __future__ import annotations

import pytest

from jupyter_sched.admission.rules import MAX_COMBINING_MARKS, check_team_name, visible_text
from jupyter_sched.errors import ValidationError

RED23 = {
    "two Hangul fillers": "\u3164\u3164",
    "combining grapheme joiner": "nu13a\u034f-train",
    "Khmer inherent vowel": "x\u17b4y",
    "variation selector": "x\ufe0fy",
    "Hangul choseong filler": "x\u115fy",
    "braille blank": "x\u2800y",
    "supplementary variation selector": "x\U000e0100y",
    "soft hyphen": "x\u00ady",
}


@pytest.mark.parametrize("name", RED23.values(), ids=list(RED23))
def test_red23_r3_a_name_drawn_as_nothing_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(ValidationError, match="invisible character U\\+") as refused:
        visible_text(name, "name", limit=200)
    assert refused.value.field == "name"


def test_red23_r3_a_letter_under_a_stack_of_accents_is_refused_and_real_scripts_pass() -> None:
    with pytest.raises(ValidationError, match="combining marks") as refused:
        visible_text("a" + "\u0301" * 150, "name", limit=200)
    assert refused.value.field == "name" and str(MAX_COMBINING_MARKS) in refused.value.hint
    with pytest.raises(ValidationError, match="invisible character U\\+3164"):
        check_team_name("\u3164", "team")
    for ordinary in ("train-1", "Vi\u1ec7t", "\u0928\u092e\u0938\u094d\u0924\u0947", "cafe\u0301", "e\u0301\u0302", "\u65e5\u672c"):
        visible_text(ordinary, "name", limit=200)  # Vietnamese, Devanagari, decomposed accents, CJK: taken


def test_red23_r3_a_submit_with_such_a_name_is_a_400_and_nothing_is_stored(tmp_path: object) -> None:
    from pathlib import Path

    from jupyter_sched.engine import SchedulerService
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.store import Store, sqlite_url

    folder = Path(str(tmp_path))
    svc = SchedulerService(store=Store(sqlite_url(folder / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(folder / "jobs"), cycle_interval_s=0.0)
    try:
        with pytest.raises(ValidationError, match="invisible character U\\+034F") as refused:
            svc.submit({"gpus": 0, "command": ["true"], "name": "nu13a\u034f-train"}, user="red23d")
        assert refused.value.field == "name"
        assert svc.store.live_jobs() == []
    finally:
        svc.store.close()
