"""New user 21, N9: small wording leftovers, one named case each.

Each case fails before its fix (the words said are quoted in the case's comment). The panel's
Preempted toast cut mid-word is a vitest case (labextension/test/plugins.test.ts,
test_newuser21_n9_preempted_toast_fits_and_ends_whole).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.admission.rules import check_team_name
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import _restart_banner
from jupyter_sched.executors.outcome import log_tail
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line
from jupyter_sched.model.quota import Quota, QuotaSet
from jupyter_sched.quota.user_lines import user_line_warnings
from jupyter_sched.wording.flags import with_dash_hint
from jupyter_sched.wording.quota import ask_for_gpus
from tests.core.core_builders import make_job, running


def _refused(call: object, *args: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_newuser21_n9_an_option_typed_last_without_a_value_is_told_it_needs_one() -> None:
    # before: `--model: expected one argument — a value starting with "-" is joined to its option: --model=VALUE`
    err = _refused(parse_gpu_line, "request 1 --model")
    assert err.field == "--model" and err.message == "--model: needs a value, e.g. --model A100", err.message
    assert with_dash_hint("argument --time-limit: expected one argument", ["submit", "--time-limit"]) == \
        "argument --time-limit: needs a value, e.g. --time-limit 30m"
    # a value starting with "-" still gets the joined form (new user 9), unless it is a negative duration (23 N1)
    assert "--name=-5m" in with_dash_hint("argument --name: expected one argument", ["submit", "--name", "-5m"])


@pytest.mark.parametrize("line", ["logs", "wait"])
def test_newuser21_n9_schedule_missing_job_says_an_id_or_a_name(line: str) -> None:
    # before: "%schedule logs: missing JOB, the job's id" — a name works too (README)
    err = _refused(parse_schedule_line, line)
    assert err.field == "JOB" and "a job's id or name" in err.message, err.message
    assert "%schedule jobs lists" in (err.hint or "")


@pytest.mark.parametrize("line", ["cancel", "cancel j-1 --mine"])
def test_newuser21_n9_schedule_cancel_hint_shows_no_made_up_id(line: str) -> None:
    # before: "e.g. %schedule cancel j-7" — no id looks like that (ids are j-1m91…), and a name works
    err = _refused(parse_schedule_line, line)
    assert "j-7" not in (err.hint or "") and "name or id" in (err.hint or ""), err.hint


def _me(**default_team: object) -> dict[str, object]:
    team = {"team": "ml", "quotas": [{"team": "*", "guaranteed": 0, "borrowing_limit": 0}], "in_use": 0, "yours": 0,
            "unlisted": True, **default_team}
    return {"user": "ana", "team": "ml", "by_team": [team]}


def test_newuser21_n9_gpu_status_does_not_invite_a_request_the_team_cannot_start() -> None:
    # before: "… no GPU work of the team can start until it gets a line" then "Ask with: %gpu request 1"
    assert ask_for_gpus(_me(), "%gpu request 1") == "Team ml can start no GPU work until an admin gives it a quota line."
    other = {"team": "cv", "quotas": [{"team": "cv", "guaranteed": 1, "borrowing_limit": 1}], "unlisted": False}
    me = {**_me(), "by_team": [*_me()["by_team"], other]}  # type: ignore[list-item]
    assert ask_for_gpus(me, "%gpu request 1").endswith("; ask with: %gpu request 1 --team cv")
    open_team = _me(unlisted=False, quotas=[{"team": "ml", "guaranteed": 1, "borrowing_limit": 0}])
    assert ask_for_gpus(open_team, "%gpu request 1") == "Ask with: %gpu request 1"


def test_newuser21_n9_put_quotas_warns_of_a_per_user_line_below_a_pending_job_of_that_user() -> None:
    # before: PUT quotas answered "warnings": [] while root's 2-GPU job could never fit his 1.5-GPU line
    quotas = QuotaSet(quotas=(Quota(team="default", guaranteed=4), Quota(team="default", user="root", guaranteed=1,
                                                                         borrowing_limit=0.5)))
    live = [make_job("big", gpus=2, user="root"), make_job("small", gpus=1, user="root"),
            running(make_job("held", gpus=4, user="root")), make_job("other", gpus=3, user="ana")]
    said = user_line_warnings(quotas, live)
    assert said == ["user root's quota line in team default allows at most 1.5 GPUs: their 1 pending job asking for "
                    "more (2 GPUs) can never start — raise the line with PUT quotas, or resubmit it smaller"], said
    assert user_line_warnings(QuotaSet(quotas=(Quota(team="default", user="root", guaranteed=1),)), live) == []


def test_newuser21_n9_a_zero_width_joiner_is_said_as_part_of_an_emoji_not_an_invisible_character() -> None:
    # before: "quotas[0].team contains the invisible character U+200D" for 👩‍🔬
    err = _refused(check_team_name, "\U0001f469\u200d\U0001f52c", "quotas[0].team")
    assert err.message == "quotas[0].team contains U+200D (a zero-width joiner, e.g. inside an emoji sequence)"
    assert "letters, digits, - and _" in (err.hint or "")
    assert "invisible character U+200B" in _refused(check_team_name, "ml\u200b", "team").message  # as before


def test_newuser21_n9_a_jobs_last_lines_are_its_last_runs_only(tmp_path: Path) -> None:
    # before: "last lines: tick 260 | tick 270 | tick 280 | tick 290 | tick 0" — two runs glued together
    log = tmp_path / "output.log"
    job = make_job("j1")
    assert _restart_banner(job, log) is None  # a first start into an empty folder says nothing
    log.write_text("tick 260\ntick 270\ntick 280\ntick 290\n")
    banner = _restart_banner(job, log)  # started again without a new attempt (a service restart)
    assert banner is not None and banner.startswith("[jupyter_sched] started again")
    with log.open("a") as fh:
        fh.write(f"{banner}\ntick 0\n")
    assert log_tail(log) == ["tick 0"]
    with log.open("a") as fh:
        fh.write("[jupyter_sched] restarting service (restart 1)\n")
    assert log_tail(log) == []  # the newest run has said nothing yet

