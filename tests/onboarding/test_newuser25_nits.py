"""newuser25's nits (/work/coord/notes/newuser25.md, "Nits"), each its own test."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import main
from jupyter_sched.errors import ValidationError
from jupyter_sched.model.validation import spec_from_request
from jupyter_sched.wording import job_line
from jupyter_sched.wording.jobs import lease_end_words


def test_newuser25_nit_n1_status_help_has_a_description_paragraph(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    try:
        main(["status", "--help"], out=out, err=err)
    except SystemExit:
        pass
    said = capsys.readouterr()
    text = " ".join((out.getvalue() + err.getvalue() + said.out + said.err).split())
    assert "Where you stand: the server this command talks to" in text, text
    assert "as %schedule status JOB says it" in text and "%%" not in text, text


def test_newuser25_nit_n2_my_own_cancelled_job_reads_cancelled_by_you() -> None:
    mine = {"id": "j-1", "kind": "training", "state": "cancelled", "user": "root", "mine": True, "exit_code": -15,
            "message": "cancelled by root (killed by SIGTERM; it ran 4s)"}
    assert lease_end_words(mine) == "cancelled by you (killed by SIGTERM; it ran 4s)"
    assert job_line(mine, None) == "job j-1: cancelled — cancelled by you (killed by SIGTERM; it ran 4s)"
    assert lease_end_words({**mine, "mine": False}) == "cancelled by its owner (killed by SIGTERM; it ran 4s)"
    by_admin = {**mine, "message": "cancelled by boss (killed by SIGTERM)"}
    assert lease_end_words(by_admin) == "cancelled by boss (killed by SIGTERM)"  # another's: named
    # the owner not known (an older answer): as it is
    assert lease_end_words({**mine, "user": None}) == mine["message"]
    # a lease's words are unchanged
    lease = {"kind": "lease", "user": "root", "mine": True, "message": "released by root"}
    assert lease_end_words(lease) == "released by you"


@pytest.mark.parametrize(("name", "said", "hint"), [
    ("x" * 300, "name must be 1-200 characters (got 300)", "give a shorter name"),
    ("x" * 201, "name must be 1-200 characters (got 201)", "give a shorter name"),
])
def test_newuser25_nit_n6_a_name_too_long_says_its_length(name: str, said: str, hint: str) -> None:
    with pytest.raises(ValidationError) as refused:
        spec_from_request({"gpus": 0, "command": ["true"], "name": name}, user="ann")
    assert refused.value.message == said and refused.value.hint == hint and refused.value.field == "name"
