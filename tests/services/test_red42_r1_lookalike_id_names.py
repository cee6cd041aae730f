"""Red team 42, R1 and R3: red41 R2 refused names that read as an id (``j-…``, ``l-…``, ``d-…``), but not when the first
letter is another alphabet's letter drawn as j, l or d: a job named ``\u0458-<r42a's id tail>`` (Cyrillic je U+0458) or
``\u03f3-…`` (Greek yot U+03F3) was accepted and stood in the queue as r42a's job id, glyph for glyph — the very R2
attack (an admin typing what the NAME column shows cancels r42a's job) — and no hostile audit row was written; so did
``\u04cf-…`` (palochka) for a lease's ``l-`` and ``\u0501-…`` (komi de) for a definition's ``d-``. A name is now read as
the letters it is drawn as (TR39's skeleton, the hub user names' rule) before it is judged an id.

Real parts: the admission rule itself; the application services on a real SQLite store (tests/services' fixture)
for the refusal's audit.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.admission.rules import id_name, read_as_id, visible_text
from jupyter_sched.errors import ValidationError
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest, parse
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job

VICTIM = "j-1m99d8dx6-mkdv46"
DRAWN_AS_ID = {"\u0458-1m99d8dx6-mkdv46": "job id", "\u03f3-1m99d8dx6-mkdv46": "job id", "\u04cf-1m99": "lease id",
               "\u0501-1m99x": "definition id", "I-1m99d8dx6-mkdv46": "lease id", "\u0406-x": "lease id",
               "(\u0458-1)": "job id", "\u0408-1": "job id"}
KEPT = ("Ivan-run", "\u0458\u0430\u0437-1", "I run", "lj-1", "\u0434-1", "\u03b9-mode", "id-1", "I", "|x",
        "I-JEPA", "I-BERT-base", "I-ViT")  # model names (verify42 V1): an ASCII I reads as l only before an id's tail


@pytest.mark.parametrize("name", list(DRAWN_AS_ID), ids=[ascii(n) for n in DRAWN_AS_ID])
def test_red42_r1_a_name_whose_first_letter_is_drawn_as_j_l_or_d_reads_as_an_id(name: str) -> None:
    with pytest.raises(ValidationError) as refused:
        id_name(name)
    err = refused.value
    assert err.field == "name" and f"reads as a {DRAWN_AS_ID[name]} (its first letter is drawn as " in err.message, \
        err.message
    assert err.hint is not None and "or a letter drawn as one, e.g. run-" in err.hint, err.hint
    assert err.details["reads_as"] == DRAWN_AS_ID[name]


@pytest.mark.parametrize("name", KEPT, ids=[ascii(n) for n in KEPT])
def test_red42_r1_names_of_one_script_that_do_not_read_as_an_id_pass(name: str) -> None:
    assert read_as_id(name) is None
    id_name(name)


def test_red42_r1_a_lookalike_of_another_users_live_job_id_is_refused_and_audited_hostile(services: Services) -> None:
    victim = make_job(VICTIM, user="r42a", gpus=0, state=JobState.RUNNING)
    services.store.insert_job(JobRecord(job=victim, executor="local"))
    r42c = services.caller("r42c", admin=False)
    for name in ("\u0458-1m99d8dx6-mkdv46", "\u03f3-1M99D8DX6-MKDV46"):
        visible_text(name, "name", limit=200, name=True)  # one letter of one script: the mixed-script rule passes it
        with pytest.raises(ValidationError) as refused:
            services.jobs.submit(r42c, parse(SubmitJobRequest, {"gpus": 0, "command": ["true"], "name": name}))
        assert refused.value.field == "name" and "reads as a job id" in refused.value.message
        assert "r42a" not in refused.value.message and "hostile" not in refused.value.details  # no word of whose
    assert [j.job.id for j in services.store.live_jobs()] == [VICTIM]  # nothing of r42c's stored
    audit: list[dict[str, Any]] = [{"job_id": e.job_id, "message": e.message, **e.details}
                                   for e in services.store.list_events(user="r42c", action="refused")]
    hostile = [e for e in audit if e.get("error_details", {}).get("hostile")]
    assert [e["job_id"] for e in hostile] == [VICTIM] * 2, audit
    assert all("r42a's unfinished job (hostile input)" in str(e["message"]) for e in hostile), hostile


OPTION_LIKE = ("--all --yes", "--all", "--mine", "-a", "--user=r42a", "-", "-1", "'--all'", '"--all --yes"', "(-a)")


@pytest.mark.parametrize("name", OPTION_LIKE)
def test_red42_r3_a_name_that_reads_as_an_option_is_refused(name: str) -> None:
    """red42 R3: names starting with '-' were accepted; an admin pasting ``--all --yes`` after ``jupyter-sched cancel``
    cancelled every user's work, and the owner could not name the job to the CLI either."""
    with pytest.raises(ValidationError) as refused:
        id_name(name)
    err = refused.value
    assert err.field == "name" and "starts with '-': every jupyter-sched command reads it as one of its options" in \
        err.message, err.message
    assert err.hint is not None and err.hint.startswith("give a name that starts with a letter or digit, e.g. run-")
    assert err.details["reads_as"] == "option"


@pytest.mark.parametrize("name", ("a-b", "x--y", "run --all", "\u2014all", "train-1"))
def test_red42_r3_a_hyphen_after_the_first_character_or_a_long_dash_passes(name: str) -> None:
    id_name(name)


def test_red42_r3_submit_refuses_an_option_like_name_and_audits_it(services: Services) -> None:
    r42c = services.caller("r42c", admin=False)
    with pytest.raises(ValidationError, match="starts with '-'") as refused:
        services.jobs.submit(r42c, parse(SubmitJobRequest, {"gpus": 0, "command": ["true"], "name": "--all --yes"}))
    assert refused.value.field == "name"
    assert not services.store.live_jobs()
    assert [e.details.get("field") for e in services.store.list_events(user="r42c", action="refused")] == ["name"]


def test_red42_r3_a_file_whose_stem_starts_with_a_hyphen_gets_a_name_that_does_not() -> None:
    from jupyter_sched.model.names import file_name

    assert file_name("-x") == "run -x" and file_name("x-1") == "x-1"
    id_name(file_name("--all"))
