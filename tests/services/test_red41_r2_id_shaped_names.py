"""Red team 41, R2: a job, lease or definition could be NAMED like an id (``j-…``, ``l-…``, ``d-…``). The queue then
showed another user's job id as the hostile job's name, and every client reads a reference starting ``j-``/``l-`` as
an id: an admin cancelling "that job" by what the NAME column says cancelled the victim's job. Such names are now
refused (400, field ``name``, why and the fix) at submit, lease, definition create and definition rename (PATCH);
a name that is another user's unfinished job's id is audited as a hostile input against that job. Names stored
before are shown as they are. With it, a hyphen's look-alikes (U+2010 hyphen, U+2212 minus, …) beside Latin-like
letters or ASCII digits are refused as the mixed-script rule refuses letters (``a\u2010train`` reads as ``a-train``).

Real parts: the application services on a real SQLite store (submit, lease, definitions, the audit log, the queue
read back), the local executor (``sleep``), the admission rules themselves.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.admission.rules import id_name, visible_text
from jupyter_sched.errors import ValidationError
from jupyter_sched.model import JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetQueueRequest, SubmitJobRequest, parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest, UpdateDefinitionRequest
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job

ID_SHAPED = {"j-1m991jn1y-gm4ndp": "job id", "l-x": "lease id", "d-x": "definition id", "J-X": "job id",
             "(j-1m991jn1y-gm4ndp)": "job id", "'L-1'": "lease id", "j-": "job id"}
NAMES = ("jx-1", "job-1", "my j-1", "run j-1", "lease", "d", "dj-1", "train-1")


@pytest.mark.parametrize("name", list(ID_SHAPED))
def test_red41_r2_a_name_that_reads_as_an_id_is_refused_naming_why_and_the_fix(name: str) -> None:
    with pytest.raises(ValidationError) as refused:
        id_name(name)
    err = refused.value
    assert err.field == "name"
    assert f"reads as a {ID_SHAPED[name]}" in err.message, err.message
    assert err.hint is not None and "does not start with j-, l- or d-" in err.hint, err.hint
    assert err.details["reads_as"] == ID_SHAPED[name]


@pytest.mark.parametrize("name", NAMES)
def test_red41_r2_names_that_only_hold_an_id_prefix_elsewhere_pass(name: str) -> None:
    id_name(name)
    visible_text(name, "name", limit=200, name=True)


DASHES = {"a\u2010train": "U+2010 (hyphen) at character 2", "a\u2011train": "U+2011 (non-breaking hyphen)",
          "run\u22121": "U+2212 (minus sign) at character 4", "a\u2013b": "U+2013 (en dash)",
          "a\uff0dtrain": "U+FF0D", "tr\u0430in\u2010x": "U+2010 (hyphen) at character 6",
          "\u2010train": "U+2010 (hyphen) at character 1"}
KEPT = ("a-train", "train \u2013 v2", "report \u2014 v2", "\u30c6\u30b9\u30c8\u2010\u30c6\u30b9\u30c8", "\u65e5\u672c\u301c\u6771\u4eac")


@pytest.mark.parametrize("name", list(DASHES), ids=[ascii(n) for n in DASHES])
def test_red41_r2_a_hyphen_lookalike_beside_latin_or_ascii_is_refused_naming_it(name: str) -> None:
    with pytest.raises(ValidationError) as refused:
        visible_text(name, "name", limit=200, name=True)
    assert refused.value.field == "name"
    assert DASHES[name] in refused.value.message, refused.value.message
    assert refused.value.hint is not None and "U+002D" in refused.value.hint


@pytest.mark.parametrize("name", KEPT, ids=[ascii(n) for n in KEPT])
def test_red41_r2_dashes_between_spaces_long_dashes_and_other_scripts_dashes_pass(name: str) -> None:
    visible_text(name, "name", limit=200, name=True)


def _refused(services: Services, user: str) -> list[dict[str, Any]]:
    return [{"job_id": e.job_id, "message": e.message, **e.details}
            for e in services.store.list_events(user=user, action="refused")]


def test_red41_r2_submit_lease_and_definitions_refuse_an_id_shaped_name_audited_hostile_when_it_names_a_live_job(
        services: Services, tmp_path: Path) -> None:
    victim = make_job("j-1m991jn1y-gm4ndp", user="r41a", gpus=0, state=JobState.PENDING)
    services.store.insert_job(JobRecord(job=victim, executor="local"))
    r41c = services.caller("r41c", admin=False)
    for body, kind in (({"gpus": 0, "command": ["true"], "name": "j-1m991jn1y-gm4ndp"}, "job"),
                       ({"gpus": 0, "command": ["true"], "name": "l-1"}, "lease"),
                       ({"gpus": 0, "command": ["true"], "name": "D-1"}, "definition")):
        with pytest.raises(ValidationError) as refused:
            services.jobs.submit(r41c, parse(SubmitJobRequest, body))
        assert refused.value.field == "name" and f"reads as a {kind} id" in refused.value.message
        assert "r41a" not in refused.value.message and "hostile" not in refused.value.details  # no word of whose
    with pytest.raises(ValidationError, match="reads as a job id") as refused:
        services.leases.request(r41c, SubmitJobRequest(gpus=1, kernel_id="k1", name="j-1m991jn1y-gm4ndp"))
    assert refused.value.field == "name"
    (tmp_path / "nightly.py").write_text("print('nightly')\n")
    with pytest.raises(ValidationError, match="reads as a definition id") as refused:
        services.definitions.create(r41c, parse(CreateDefinitionRequest, {
            "name": "d-nightly", "script": str(tmp_path / "nightly.py"), "schedule": "0 7 * * *", "timezone": "UTC",
            "gpus": 0}))
    assert refused.value.field == "name"
    made = services.definitions.create(r41c, parse(CreateDefinitionRequest, {
        "name": "nightly", "script": str(tmp_path / "nightly.py"), "schedule": "0 7 * * *", "timezone": "UTC",
        "gpus": 0}))
    with pytest.raises(ValidationError, match="reads as a job id") as refused:
        services.definitions.update(r41c, made.id, parse(UpdateDefinitionRequest, {"name": "j-1m991jn1y-gm4ndp"}))
    assert refused.value.field == "name"
    from jupyter_sched.store.definitions import get_definition
    with services.store.transaction(write=False) as tx:
        assert get_definition(tx, made.id).name == "nightly"
    with pytest.raises(ValidationError, match="U\\+2010 \\(hyphen\\) at character 2") as refused:
        services.jobs.submit(r41c, parse(SubmitJobRequest, {"gpus": 0, "command": ["true"], "name": "a\u2010train"}))
    assert refused.value.field == "name"
    assert [j.job.id for j in services.store.live_jobs()] == ["j-1m991jn1y-gm4ndp"]  # nothing else stored
    audit = _refused(services, "r41c")
    hostile = [e for e in audit if e.get("error_details", {}).get("hostile")]
    # the submit, the lease and the rename that named r41a's live job: hostile, against that job, naming its owner
    assert [e["job_id"] for e in hostile] == ["j-1m991jn1y-gm4ndp"] * 3, audit
    assert all("r41a's unfinished job (hostile input)" in str(e["message"]) for e in hostile), hostile
    assert sum(1 for e in audit if e["field"] == "name") >= 6, audit  # every refusal audited
    # an admin's own id-shaped name is refused the same (an id is nobody's name)
    with pytest.raises(ValidationError, match="reads as a lease id"):
        services.jobs.submit(services.caller("root", admin=True),
                             parse(SubmitJobRequest, {"gpus": 0, "command": ["true"], "name": "l-2"}))
    # a name stored before the rule is listed as it is
    old = make_job("j-old", user="r41c", gpus=0, state=JobState.PENDING)
    services.store.insert_job(JobRecord(job=replace(old, spec=replace(old.spec, name="j-1m991jn1y-gm4ndp")),
                                        executor="local"))
    listed = services.jobs.queue(services.caller("r41b", admin=False), GetQueueRequest()).to_wire()
    assert ("j-old", "j-1m991jn1y-gm4ndp") in [(row["id"], row["name"]) for row in listed], listed


def test_red41_r2_a_file_whose_stem_reads_as_an_id_gets_a_name_that_does_not() -> None:
    """``%schedule run l-bfgs.py`` (and notebook, serve, define) names the job after its file: an id-shaped stem
    would be refused though the user gave no name, so it is named ``run l-bfgs``."""
    from jupyter_sched.model.names import file_name

    assert file_name("train") == "train" and file_name("jx-1") == "jx-1"
    for stem in ("l-bfgs", "d-prep", "J-7"):
        assert file_name(stem) == f"run {stem}"
        id_name(file_name(stem))
