"""Red team 24, R2 (low; display/impersonation): names others read still took characters drawn as what they
are not — a hair or mathematical space (``train\u200arun`` reads as ``train run``), a Cyrillic a (U+0430) among Latin
letters (``tr\u0430in`` reads as ``train``), an unassigned or private-use code point (each screen draws its own
glyph, or a box) and a combining mark with no letter under it (drawn over the column left of the name).

The one check of displayed text (``admission.rules.visible_text``: job and lease names and teams, definition
names through their runs' check, team names in PUT quotas and the config) now refuses them with a 400 naming
the field and the rule (:mod:`jupyter_sched.admission.lookalikes`: Unicode TR39's mixed-script test restricted
to the alphabets that share look-alike letters — no library with Unicode's script property is a dependency,
so a small check reads a letter's script from its Unicode name). Names stored before stay readable.

Real parts: the application services on a real SQLite store (submit, create definition, PUT quotas, the
queue read back), the admission rules themselves.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from jupyter_sched.admission.lookalikes import CONFUSABLE_SCRIPTS
from jupyter_sched.admission.rules import check_team_name, visible_text
from jupyter_sched.errors import ValidationError
from jupyter_sched.model import JobState
from jupyter_sched.services import Services, build_services
from jupyter_sched.services.models import GetQueueRequest, SubmitJobRequest, parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest
from jupyter_sched.services.models.quotas import SetQuotasRequest
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job

RED24 = {  # name -> (what the refusal says, the rule its hint gives)
    "train\u200arun": ("U+200A (hair space) at character 6, a space other than the plain space", "U+0020"),
    "train\u205frun": ("U+205F (medium mathematical space)", "U+0020"),
    "train\u00a0run": ("U+00A0 (no-break space)", "U+0020"),
    "tr\u0430in": ("mixes Latin and Cyrillic letters in the word 'tr\u0430in' (\u0430 is cyrillic small letter a)",
                   "one alphabet"),
    "pr\u03bfd-run": ("mixes Latin and Greek letters in the word 'pr\u03bfd'", "one alphabet"),
    "x\ue000y": ("U+E000 at character 2, a private-use code point", "characters Unicode assigns"),
    "x\U000f0000y": ("a private-use code point", "characters Unicode assigns"),
    "x\u0378y": ("U+0378 at character 2, a code point Unicode assigns to no character", "characters Unicode assigns"),
    "\u0301train": ("the combining mark U+0301 (combining acute accent) at character 1 with no letter under it",
                    "accent right after its letter"),
    "run \u0308x": ("combining mark U+0308 (combining diaeresis) at character 5", "accent right after its letter"),
}
ORDINARY = ("train-1", "train run", "Vi\u1ec7t", "caf\u00e9", "cafe\u0301", "\u041c\u043e\u0441\u043a\u0432\u0430-train",
            "\u65e5\u672c\u30c6\u30b9\u30c8", "model\u65e5\u672c", "\u0928\u092e\u0938\u094d\u0924\u0947", "\u00b5s-bench",
            "\u0395\u03bb\u03bb\u03ac\u03b4\u03b1 v2", "\U0001f600 run", "x\u0308", "resnet-x\u00b2", "\ud55c\uad6d\uc5b4")


VERIFY25_V5 = {  # styled letters and digits NFKC turns into plain ones (verify 25, V5: read as "train")
    "tr\U0001d41ain": "U+1D41A (mathematical bold small a) at character 3, a styled form of 'a'",
    "tr\uff41in": "U+FF41 (fullwidth latin small letter a) at character 3, a styled form of 'a'",
    "\ufb01ne-tune": "U+FB01 (latin small ligature fi) at character 1, a styled form of 'fi'",
    "run-\uff11": "U+FF11 (fullwidth digit one) at character 5, a styled form of '1'",
}


@pytest.mark.parametrize("name", list(VERIFY25_V5), ids=[ascii(n) for n in VERIFY25_V5])
def test_verify25_v5_a_styled_letter_or_digit_is_refused_naming_its_plain_form(name: str) -> None:
    with pytest.raises(ValidationError) as refused:  # each passed before (one script, no odd space)
        visible_text(name, "name", limit=200)
    assert VERIFY25_V5[name] in refused.value.message and refused.value.field == "name", refused.value.message
    assert "itself" in (refused.value.hint or ""), refused.value.hint


@pytest.mark.parametrize("name", list(RED24), ids=[ascii(n) for n in RED24])
def test_red24_r2_a_lookalike_name_is_refused_naming_the_field_and_the_rule(name: str) -> None:
    said, rule = RED24[name]
    with pytest.raises(ValidationError) as refused:
        visible_text(name, "name", limit=200)
    assert said in refused.value.message and refused.value.field == "name", refused.value.message
    assert rule in (refused.value.hint or ""), refused.value.hint
    with pytest.raises(ValidationError):
        check_team_name(name, "team")


def test_red24_r2_real_scripts_single_script_words_and_mixes_outside_the_lookalike_alphabets_pass() -> None:
    for ordinary in ORDINARY:  # Vietnamese, decomposed accents, Russian then Latin words, Japanese, Devanagari…
        visible_text(ordinary, "name", limit=200)


def test_red24_r2_no_letter_names_two_lookalike_alphabets() -> None:
    """The script of a letter is the one its Unicode name states: no letter of this Python's Unicode database
    names two of them (else its script would be a guess)."""
    for code in range(0x110000):
        char = chr(code)
        if unicodedata.category(char).startswith("L"):
            named = {word for word in unicodedata.name(char, "").split() if word in CONFUSABLE_SCRIPTS}
            assert len(named) <= 1, (hex(code), unicodedata.name(char))


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    built = build_services({"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                            "simulated_gpus": 1, "telemetry_source": "off"})
    try:
        yield built
    finally:
        built.store.close()


def test_red24_r2_submit_definition_and_quotas_refuse_them_and_stored_names_stay_readable(
        services: Services, tmp_path: Path) -> None:
    user = services.caller("red24c", admin=False)
    with pytest.raises(ValidationError, match="mixes Latin and Cyrillic") as refused:
        services.jobs.submit(user, parse(SubmitJobRequest, {"gpus": 0, "command": ["true"], "name": "tr\u0430in"}))
    assert refused.value.field == "name"
    (tmp_path / "nightly.py").write_text("print('nightly')\n")
    with pytest.raises(ValidationError, match="hair space") as refused:
        services.definitions.create(user, parse(CreateDefinitionRequest, {
            "name": "nightly\u200areport", "script": str(tmp_path / "nightly.py"), "schedule": "0 7 * * *",
            "timezone": "UTC", "gpus": 0}))
    assert refused.value.field == "name"
    admin = services.caller("root", admin=True)
    with pytest.raises(ValidationError, match="mixes Latin and Cyrillic") as refused:
        services.quotas.set(admin, parse(SetQuotasRequest, {"quotas": [{"team": "visi\u043en", "guaranteed": 1}]}))
    assert refused.value.field == "quotas[0].team", refused.value.field
    assert services.store.live_jobs() == []
    # a name stored before the rule (an older version took it) is listed and shown as it is
    old = make_job("j-old", user="red24c", gpus=0, state=JobState.PENDING)
    services.store.insert_job(JobRecord(job=replace(old, spec=replace(old.spec, name="tr\u0430in")), executor="local"))
    listed = services.jobs.queue(services.caller("red24d", admin=False), GetQueueRequest()).to_wire()
    assert [(row["id"], row["name"]) for row in listed] == [("j-old", "tr\u0430in")], listed


VERIFY26_V1 = {  # characters whose NFKC holds a letter, not styled letters by category (verify 26, V1)
    "tra\u2170n": "U+2170 (small roman numeral one) at character 4, a styled form of 'i'",
    "\u216fodel": "U+216F (roman numeral one thousand) at character 1, a styled form of 'M'",
    "tr\u24d0in": "U+24D0 (circled latin small letter a) at character 3, a styled form of 'a'",
    "tr\u249cin": "U+249C (parenthesized latin small letter a) at character 3, a styled form of '(a)'",
    "5\u338f": "U+338F (square kg) at character 2, a styled form of 'kg'",
}


@pytest.mark.parametrize("name", list(VERIFY26_V1), ids=[ascii(n) for n in VERIFY26_V1])
def test_verify26_v1_a_roman_numeral_circled_or_squared_letter_is_refused_naming_its_plain_form(name: str) -> None:
    with pytest.raises(ValidationError) as refused:  # each passed before: not a letter or digit by category
        visible_text(name, "name", limit=200)
    assert VERIFY26_V1[name] in refused.value.message and refused.value.field == "name", refused.value.message
    visible_text("resnet-x\u00b2 \u00bd-size", "name", limit=200)  # superscripts and fractions read as they are


@pytest.mark.parametrize("name", [" train", "train ", " "])
def test_verify26_v1_a_name_or_team_with_a_space_at_an_end_is_refused(name: str) -> None:
    from jupyter_sched.admission.rules import edge_spaces

    with pytest.raises(ValidationError) as refused:
        edge_spaces(name, "name")
    assert refused.value.field == "name" and "with a space: it reads as" in refused.value.message, refused.value
    assert refused.value.hint == f"write it without the space: {name.strip()!r}"
    if name.strip():
        with pytest.raises(ValidationError, match="with a space"):
            check_team_name(name, "team")
    edge_spaces("train run", "name")  # a space inside stays


def test_verify26_v1_a_job_named_with_a_trailing_space_is_a_400_and_nothing_is_stored(services: Services) -> None:
    user = services.caller("v26a", admin=False)
    with pytest.raises(ValidationError, match="name ends with a space"):
        services.jobs.submit(user, SubmitJobRequest(gpus=0, name="train ", command=["true"]))
    assert services.list_jobs(user=None, state=None) == []
