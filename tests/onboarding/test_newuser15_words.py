"""New user 15's findings N2, N3, N4, N6, N10, N12, N15 and red team 15's R3 and R15 (bullets 1, 3
and 5) — /work/coord/notes/newuser15.md and red15.md: against a real embedded server (simulated
GPUs), the CLI run in this process, the magics with a real client, the scheduling core and the
renderers. Each test names the finding it holds to."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.magics.core import MagicError
from jupyter_sched.model.validation import NO_LIMIT_NO_GPU_WARNING
from tests.core.core_builders import T0, Scenario, make_job, make_node, running, snapshot
from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}
ESC_RED = "\x1b[31mRED\x1b[0m"
Capture = pytest.CaptureFixture[str]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu15w", USERS)


def _cli(server: EmbeddedServer, capsys: Capture, *argv: str) -> tuple[int, str, str]:
    """``jupyter-sched ARGV`` in this process (:meth:`EmbeddedServer.cli`); a usage error is written by
    argparse to ``sys.stderr``, so that is read too."""
    capsys.readouterr()
    code, out, err = server.cli(*argv)
    seen = capsys.readouterr()
    return code, out + seen.out, err + seen.err


def _refused(server: EmbeddedServer, body: dict[str, Any], route: str = "jobs", status: int = 400) -> dict[str, Any]:
    answer = api(server, "tok-ann").post(route, json=body)
    assert answer.status_code == status, (body, answer.text)
    error: dict[str, Any] = answer.json()["error"]
    return error


# ---- N2: an empty option value — one shape, one code, one exit status ---------------------------------------

@pytest.mark.parametrize("argv, option", [
    (["submit", "--name", "", "--", "true"], "--name"),
    (["submit", "--workdir", "", "--", "true"], "--workdir"),
    (["submit", "--team", "", "--", "true"], "--team"),
    (["submit", "--model", "", "--", "true"], "--model"),
    (["submit", "--gpus", "", "--", "true"], "--gpus"),
    (["submit", "--time-limit", " ", "--", "true"], "--time-limit"),
    (["submit", "--script", ""], "--script"),
    (["submit", "--gpus", "0", "--notebook", "", "--", "true"], "--notebook"),
    (["definitions", "create", "--cron", "", "x.py"], "--cron"),
], ids=["name", "workdir", "team", "model", "gpus", "time-limit blank", "script", "notebook beside a command",
        "definitions create --cron"])
def test_newuser15_n2_every_empty_option_value_is_one_usage_error(server: EmbeddedServer, argv: list[str],
                                                                  option: str, capsys: Capture) -> None:
    """N2: ``--name ''`` was ``… must not be empty: give it a value … [usage_error]`` exit 2, ``--team ''``
    ``… must not be empty — give --team a value … [validation_error]`` exit 1, ``--script ''`` "say what to
    run" (the user did), and ``--notebook ''`` beside a command was dropped and the job submitted. One
    sentence, one code and exit 2 for each, before anything is sent."""
    code, out, err = _cli(server, capsys, *argv)
    assert code == EXIT_USAGE, (argv, code, out, err)
    line = err.strip().splitlines()[-1]
    assert f": {option} must not be empty — give {option} a value, or leave it out" in line, line
    assert line.endswith("[usage_error]"), line
    assert not out, out


def test_newuser15_n2_definitions_edit_says_leaving_it_out_keeps_it(server: EmbeddedServer, capsys: Capture) -> None:
    """N2 (the edit side): an empty value of ``definitions edit`` is the same refusal; left out, the
    saved value stays (it is no default there)."""
    code, _, err = _cli(server, capsys, "definitions", "edit", "d-x", "--name", "")
    assert code == EXIT_USAGE and "--name must not be empty — give --name a value, or leave it out to keep it as " \
        "it is [usage_error]" in err, err


# ---- N3: counts in ASCII digits; REST numbers are JSON numbers ---------------------------------------------

@pytest.mark.parametrize("typed", ["1_0", "\u0661", "\uff11"],
                         ids=["an underscore", "Arabic-Indic one", "fullwidth one"])
def test_newuser15_n3_a_count_python_reads_but_nobody_means_is_refused(server: EmbeddedServer, typed: str,
                                                                      capsys: Capture) -> None:
    """N3: ``--gpus 1_0`` was told about 10 GPUs and ``--gpus`` with an Arabic-Indic one submitted a 1-GPU job (Python's
    ``int``/``float`` read both). ASCII digits only, on every surface, refused naming the option."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.model.validation import parse_gpus

    code, out, err = _cli(server, capsys, "submit", "-q", "--gpus", typed, "--", "true")
    assert code == EXIT_USAGE and not out, (code, out, err)
    assert f'--gpus must be an integer (got "{typed}")' in err, err
    with pytest.raises(ValidationError):
        parse_gpus(typed)
    with pytest.raises(MagicError) as magic:
        _magics(server).gpu(f"request {typed} --no-wait")
    assert str(magic.value).startswith(f'%gpu request: gpus must be an integer (got "{typed}")'), magic.value
    code, _, err = _cli(server, capsys, "submit", "-q", "--gpus", "0", "--cpu", typed, "--", "true")
    assert code == EXIT_USAGE and "--cpu must be a number of cores" in err, err
    rows = api(server, "tok-boss").get("jobs", params={"all": "true"}).json()
    assert not (rows["jobs"] if isinstance(rows, dict) else rows), rows  # nothing was submitted


@pytest.mark.parametrize("field, text", [("gpus", "1"), ("gpus", "0.5"), ("cpu", "2")])
def test_newuser15_n3_rest_refuses_a_number_sent_as_text_as_it_refuses_true(server: EmbeddedServer, field: str,
                                                                            text: str) -> None:
    """N3/N10: ``{"gpus": "1"}`` was 201 while ``{"gpus": true}`` and ``PUT quotas`` ``"guaranteed": "2"``
    were refused. A number field takes a JSON number: the text is refused naming the field; a word keeps
    handed case 019's words; the number itself is taken."""
    body = {"gpus": 0, "command": ["true"], field: text}
    error = _refused(server, body)
    assert error["field"] == field, error
    assert error["message"] == f'{field} must be a JSON number, not the text "{text}"', error
    assert error["hint"] == f'send it without quotes: "{field}": {text}', error
    assert _refused(server, {"gpus": "two", "command": ["true"]})["message"] == 'gpus must be an integer (got "two")'
    taken = api(server, "tok-ann").post("jobs", json={**body, field: float(text)})
    assert taken.status_code == 201, taken.text
    clear(server)


# ---- N4: a negative time limit is refused in words that do not contradict 0 ---------------------------------

def test_newuser15_n4_a_negative_time_limit_is_not_told_to_be_above_zero(server: EmbeddedServer,
                                                                         capsys: Capture) -> None:
    """N4: ``"time_limit": "-5m"`` read "must be a positive duration … give a duration above zero" while 0
    is taken (it means no limit, case 033). REST and the CLI now say what is wrong and that 0 is none."""
    error = _refused(server, {"gpus": 0, "command": ["true"], "time_limit": "-5m"})
    assert error["message"] == "time_limit must not be negative (got '-5m')", error
    assert error["hint"] == "give e.g. '10m', or 0 for no limit; left out, the queue's default applies", error
    assert "above zero" not in error["hint"]
    assert _refused(server, {"gpus": 0, "command": ["true"], "time_limit": -5})["message"] == \
        "time_limit must not be negative (got -5)"
    code, _, err = _cli(server, capsys, "submit", "--gpus", "0", "--time-limit=-5", "--", "true")
    assert code == EXIT_USAGE and "--time-limit must not be negative (got '-5') — give e.g. '10m', or 0 for no " \
        "limit" in err, err


# ---- N6: the core's reason message: no "GPU GPU", no microseconds, "of team" ---------------------------------

def test_newuser15_n6_the_rest_reason_message_reads_as_words() -> None:
    """N6: the REST ``reason.message`` (what the panel's definitions view showed) read "needs 0.5 of a
    Simulated GPU 80GB GPU; no Simulated GPU 80GB GPU has that much free; … reserved from
    2026-12-04T05:50:54.496979+00:00", and a backoff "retries from …T05:39:41.790441+00:00". The message
    names a model once and times to the second (the renderers still turn them into clock times)."""
    from jupyter_sched.scheduling import run_cycle
    from jupyter_sched.wording import render_reason

    model = "Simulated GPU 80GB"
    node = make_node("n1", gpus=1, model=model)
    busy = running(make_job("busy", gpus=1, models=[model], time_limit_s=5400.25), node="n1")
    big = make_job("big", gpus=1, models=[model], submitted=-5, time_limit_s=600)
    share = make_job("share", gpus=1, milli=500, models=[model], submitted=-1)
    back = replace(make_job("back", gpus=1, models=[model], submitted=-2),
                   not_before=T0 + timedelta(minutes=30, microseconds=123456))
    reasons = {p.job_id: p.reason for p in run_cycle(snapshot([node], [busy, big, share, back])).pending}
    said = reasons["share"].message
    assert said.startswith(f"needs 0.5 of a {model}; no {model} has that much free;"), said
    assert "reserved from 2025-03-30T12:30:00Z;" in said and "GPU GPU" not in said, said
    assert reasons["back"].message == "requeued after preemption; retries from 2025-03-30T12:30:00Z"
    assert reasons["share"].details["backfill"]["reservation"] == "2025-03-30T12:30:00.250000+00:00"  # data: exact
    wire = {"code": reasons["back"].code, "message": reasons["back"].message, "details": {}}
    assert render_reason(wire, now=T0).summary == "requeued after preemption; retries from 12:30 UTC."


def test_newuser15_n6_a_preemption_names_the_team_as_a_team() -> None:
    """N6: "a higher-priority normal job of default" — the team is meant: "of team default", in the
    victim's Preempted reason and in its requeued reason after."""
    s = Scenario([make_node("n1", gpus=1)])
    s.submit(running(make_job("lo", gpus=1, priority="low"), "n1"), make_job("hi", gpus=1, submitted=1))
    first = s.cycle()
    assert [p.reason for p in first.preemptions] == ["preempted by higher-priority normal job hi of team default"]
    later = s.at(0.1).cycle()
    said = next(p.reason.message for p in later.pending if p.job_id == "lo")
    assert said.endswith("requeued after preemption by hi, a higher-priority normal job of team default."), said


# ---- N10: CLI odds -------------------------------------------------------------------------------------------

def test_newuser15_n10_an_id_in_capitals_is_an_id_and_an_unknown_name_names_the_surface_s_list(
        server: EmbeddedServer, capsys: Capture) -> None:
    """N10: ``logs J-1M8Z…`` was looked up as a *name* ("none of your jobs is named …"), while ``cancel
    j-nosuch`` said "no job … visible to you"; the magic's hint for an unknown name named the CLI. An id
    typed in capitals is the id; each surface's hint names its own list."""
    code, _, err = _cli(server, capsys, "logs", "J-1M8ZRHEMP-T0EW78")
    # the embedded owner is its admin: "no job has the id", never what non-admins are not shown (newuser35 n4)
    assert code == EXIT_REFUSED and "no job has the id 'j-1m8zrhemp-t0ew78'" in err, err
    code, _, err = _cli(server, capsys, "logs", "nosuch-n10")
    assert code == EXIT_REFUSED and err.strip().endswith(
        "none of your jobs is named 'nosuch-n10', and no job has that id — `jupyter-sched jobs` lists yours, "
        "newest first [not_found]"), err
    with pytest.raises(MagicError) as magic:
        _magics(server).schedule("wait nosuch-n10")
    assert "%schedule jobs lists your jobs" in str(magic.value) and "jupyter-sched" not in str(magic.value), magic.value


@pytest.mark.parametrize("cron, said", [
    ("61 * * * *", "minute 61 is out of range 0-59"), ("0 24 * * *", "hour 24 is out of range 0-23"),
    ("0 0 32 * *", "day-of-month 32 is out of range 1-31"), ("0 0 * 13 *", "month 13 is out of range 1-12"),
    ("0 0 * * 9", "day-of-week 9 is out of range 0-7"), ("*/0 * * * *", "minute step /0 never advances"),
    ("x * * * *", "the minute field 'x' is not one cron reads"),
], ids=["minute", "hour", "day of month", "month", "day of week", "step 0", "a word"])
def test_newuser15_n10_a_bad_cron_field_is_named_with_its_range(server: EmbeddedServer, cron: str, said: str) -> None:
    """N10: ``--cron '61 * * * *'`` said cronsim's "Bad minute"; the field, the number and its range now."""
    error = _refused(server, {"schedule": cron}, route="definitions/preview")
    assert error["field"] == "schedule", error
    assert error["message"].startswith(f"invalid cron expression {cron!r}: {said}"), error
    assert "Bad " not in error["message"], error


def test_newuser15_n10_a_number_of_seconds_in_exponent_form_is_a_number_of_seconds(server: EmbeddedServer,
                                                                                  capsys: Capture) -> None:
    """N10: ``wait J --for 1e9`` read "cannot parse duration '1e9' — use a number of seconds"; it is one
    (too long here, which is what it is told now), and ``--for 1e2`` waits 100 s."""
    from jupyter_sched.model.units import parse_duration

    code, _, err = _cli(server, capsys, "wait", "j-abc-def", "--for", "1e9")
    assert code == EXIT_USAGE and "--for must be at most 366 days (got '1e9')" in err, err
    assert "cannot parse" not in err
    assert parse_duration("1e2", field="--for") == 100.0


def test_newuser15_n10_a_refused_definition_is_not_called_a_job() -> None:
    """N10: a definition refused by the hub's run-as check said "job refused: hub user 'ghost15' has no OS
    account …" — nothing was submitted. The gate says what was refused; a submit keeps its words."""
    from jupyter_sched.admission.gate import Admission
    from jupyter_sched.errors import AuthorizationError

    def no_account(job: Any) -> None:  # hub.central.refuse_unrunnable's words
        raise AuthorizationError(f"job refused: hub user {job.spec.user!r} has no OS account", field="user")

    gate = Admission.__new__(Admission)  # the run-as step alone: no store, audit or quotas needed
    gate.run_as_check = no_account
    job = make_job("d", gpus=0, user="ghost15")
    for request, opens in (("save a definition", "definition refused: "), ("submit job", "job refused: ")):
        with pytest.raises(AuthorizationError) as refused:
            gate._run_as(job, request)
        assert refused.value.message == f"{opens}hub user 'ghost15' has no OS account", refused.value.message
        assert str(refused.value).startswith(opens)


# ---- N12: the magics' refusal prefix and the timed-out request ---------------------------------------------

def test_newuser15_n12_gpu_request_n_is_refused_as_the_magic_not_n(server: EmbeddedServer) -> None:
    """N12: ``%gpu request 5`` → "N: needs 5 GPUs …" — nobody typed N. The magic's name opens it, as
    ``%%schedule --gpus 5`` opens with ``--gpus:``; a message about the value itself keeps ``N``."""
    with pytest.raises(MagicError) as refused:
        _magics(server).gpu("request 5 --no-wait")
    assert str(refused.value).startswith("%gpu request: needs 5 GPUs"), refused.value
    assert not str(refused.value).startswith("N:")


def test_newuser15_n12_a_timed_out_request_says_its_reason_once(server: EmbeddedServer) -> None:
    """N12: on ``--timeout 5s`` the progress line's reason came again whole in the error ("It was queued #4 ·
    needs … · ETA …"), and the last progress frame said "waited 1s". One short line now: the time-out, the
    queue position and ETA, the lease withdrawn; the bar ends at the time-out."""
    boss = api(server, "tok-boss")
    holder = boss.post("jobs", json={"gpus": 2, "command": ["sleep", "300"], "name": "holder"})
    assert holder.status_code == 201, holder.text
    magics = _magics(server)
    with pytest.raises(MagicError) as refused:
        magics.gpu("request 1 --timeout 2s")
    said = str(refused.value)
    # new user 20, N6: what happened first, then the queue's reason once, with no brackets around it
    assert said.startswith("no GPUs granted within 2s; lease request l-") and "withdrawn. It was #" in said, said
    assert said.count("needs") == 1 and "in the queue: needs" in said and "withdrawn)" not in said, said
    clear(server)


# ---- N15: the saved output of a wait says how it ended ------------------------------------------------------

def test_newuser15_n15_the_wait_bar_s_saved_text_is_its_last_state() -> None:
    """N15: in a notebook run by ``nbconvert --execute`` the wait's widget row kept its first ``text/plain``
    ("queued · waited 0s") above "failed": the row is a display handle now, and finishing it replaces its
    text (the widget's view stays), which is what a saved notebook shows."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from jupyter_sched.magics.display import Progress, widgets_enabled
    from jupyter_sched.wording import WaitProgress

    if not widgets_enabled():
        pytest.skip("ipywidgets is not installed here")
    InteractiveShell.instance()
    with capture_output() as shown:
        bar = Progress("job j-1 (daily_report, run now)")
        bar.show(WaitProgress(None, "queued #1", "queued", "waiting for the next scheduling cycle"), 0.0)
        bar.show(WaitProgress(0.5, "running on vm · 3s", "running"), 3.0)
        bar.finish(4.2)
    first, last = shown.outputs[0], shown.outputs[-1]
    assert "waited 0s" in first.data["text/plain"]
    assert last.data["text/plain"] == "job j-1 (daily_report, run now): waited 4s", last.data
    assert last.update and last.transient["display_id"] == first.transient["display_id"]
    assert last.data["application/vnd.jupyter.widget-view+json"] == \
        first.data["application/vnd.jupyter.widget-view+json"]


# ---- R3: control characters in every echoed string; the service log escapes them ---------------------------

@pytest.mark.parametrize("body, field", [
    ({"gpus": 1, "node_selector": {"k": ESC_RED}}, "node_selector"),
    ({"gpus": 1, "node_selector": {ESC_RED: "v"}}, "node_selector"),
    ({"gpus": 1, "mig_profile": ESC_RED}, "mig_profile"),
    ({"gpus": 0, "image": ESC_RED}, "image"),
    ({"gpus": 1, "model": ESC_RED}, "model"),
    ({"gpus": 1, "gpu_models": ["Simulated GPU 80GB", "\u202eevil"]}, "gpu_models"),
    ({"gpus": 1, "tolerations": [ESC_RED]}, "tolerations[0]"),
], ids=["node_selector value", "node_selector key", "mig_profile", "image", "model", "gpu_models bidi",
        "toleration"])
def test_red15_r3_every_echoed_text_field_refuses_control_characters(server: EmbeddedServer, body: dict[str, Any],
                                                                     field: str) -> None:
    """R3: an ESC in ``node_selector`` or ``mig_profile`` came back raw in the 422 ("no node carries
    node_selector k=\\x1b[31mRED…"), the audit and the service log; ``image`` was stored. Every word a
    reason, the audit or the log repeats is checked as ``name`` is: 400 naming the field, the character
    said as U+XXXX (never echoed), and audited so."""
    error = _refused(server, {"command": ["sleep", "300"], **body})
    assert error["field"] == field, error
    assert "\x1b" not in str(error) and "\u202e" not in str(error), error
    # said as U+XXXX, or — a model no node has, refused before the text check — quoted with its escapes
    assert any(word in error["message"] for word in ("U+001B", "U+202E", "is not a toleration", "'\\x1b[31mRED",
                                                     "'\\u202eevil'")), error
    rows = api(server, "tok-boss").get("audit", params={"user": "ann", "limit": 1000}).json()
    assert not any("\x1b" in str(row) for row in rows), rows
    assert "\x1b" not in server.log_path.read_text(errors="replace")


def test_red15_r3_a_value_quoted_in_a_refusal_is_escaped(server: EmbeddedServer) -> None:
    """R3 ("every echoed value escaped"): ``{"\x1b[31mX": 1}`` came back ``unknown field '<ESC>[31mX'``
    (raw, in the answer, the audit and the log), while other fields echoed ``'\\x1b…'``. Every value a
    refusal quotes (``errors.shown``) is written with its escapes; an unknown field's name too."""
    unknown = _refused(server, {"gpus": 0, "command": ["true"], "\x1b[31mX": 1})
    assert unknown["message"] == "unknown field '\\x1b[31mX'" and unknown["field"] == "\\x1b[31mX", unknown
    priority = _refused(server, {"gpus": 0, "command": ["true"], "priority": ESC_RED})
    assert "\x1b" not in str(priority) and "(got '\\x1b[31mRED\\x1b[0m')" in priority["message"], priority


def test_red15_r3_the_service_log_escapes_control_characters() -> None:
    """R3: ``tail -f service.log`` ran a user's ESC sequences (``… -> 422: no node carries node_selector
    ^[[31mRED…``). Every handler of the server's log writes a control character as its escape — what
    was sent is kept, newlines stay — whichever logger the record came through."""
    import io

    from jupyter_sched.extension.request_log import escape_log_controls

    out = io.StringIO()
    log = logging.getLogger("r15-r3-test")
    log.propagate = False
    handler = logging.StreamHandler(out)
    log.addHandler(handler)
    escape_log_controls(log)
    escape_log_controls(log)  # once per handler, however often it is called
    assert len(handler.filters) == 1
    try:
        log.warning("refused %s: %s", "POST jobs", f"node_selector k={ESC_RED}\u202e\rline\nnext\tcol")
        log.warning(f"plain {ESC_RED}")
    finally:
        log.removeHandler(handler)
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text, text
    assert "node_selector k=\\x1b[31mRED\\x1b[0m\\u202e\\x0dline\nnext\tcol" in text, text
    assert "plain \\x1b[31mRED\\x1b[0m" in text


# ---- R15: reasons and descriptions that said the wrong thing ------------------------------------------------

def test_red15_r15_a_lease_a_job_asked_for_is_held_for_that_job() -> None:
    """R15: a lease bound to ``parent_job_id`` read "GPUs held for no kernel: `jupyter-sched cancel l-…`
    releases them (or idle reclaim)", and its sibling waited on leases "(held for no kernel)" — they are
    held for job parent0 and released with it (as happened)."""
    from jupyter_sched.wording.jobs import ends_by
    from jupyter_sched.wording.reasons import _own_leases_text

    now = datetime(2026, 12, 4, 5, 0, tzinfo=timezone.utc)
    lease = {"id": "l-1", "kind": "lease", "state": "running", "name": "lease", "kernel_id": None,
             "parent_job_id": "j-parent0", "mine": True, "started_at": "2026-12-04T04:59:00Z",
             "resources": {"gpus": 1, "gpu_milli": 1000}, "allocation": {"node": "vm", "gpu_uuids": ["GPU-0"]}}
    said = ends_by(lease, now, cancel="jupyter-sched cancel")
    assert "GPUs held for job j-parent0: released when it ends" in said and "no kernel" not in said, said
    loose = {**lease, "parent_job_id": None}
    assert "GPUs held for no kernel" in ends_by(loose, now, cancel="jupyter-sched cancel")
    who, _ = _own_leases_text([{"id": "l-1", "kind": "lease", "gpus": 1, "kernel": False, "parent_job_id": "j-p0"}])
    assert who == "your own lease l-1 (held for job j-p0 and released with it)", who
    who, _ = _own_leases_text([{"id": "l-1", "kind": "lease", "gpus": 1, "kernel": False, "parent_job_id": "j-p0"},
                               {"id": "l-2", "kind": "lease", "gpus": 1, "kernel": False}])
    assert who == "your own leases l-1 and l-2 (held for no kernel: l-2; held l-1 for job j-p0, released with it)", who


@pytest.mark.parametrize("cron, said", [
    ("0 0 29 2 1", "At 00:00 on the 29th day of month or on Monday in February"),
    ("0 7 1,15 * MON", "At 07:00 on the first and the 15th day of month or on Monday"),
    ("0 7 */2 * 1", "At 07:00 on every second day of month if it's on Monday"),
    ("0 7 * * 1", "At 07:00 on Monday"),
], ids=["both restricted: or", "a list and a weekday: or", "a star-step day: and (cron ANDs it)", "weekday only"])
def test_red15_r15_a_cron_description_says_or_where_cron_fires_on_either(server: EmbeddedServer, cron: str,
                                                                        said: str) -> None:
    """R15: ``0 0 29 2 1`` was described "… on the 29th day of month and on Monday in February" while its
    next firings were every Monday of February: cron ORs a restricted day of month and day of week. The
    words are cronsim's, joined by "or" there; where cronsim's evaluator ANDs them ("*/2"), its "if it's"
    stays."""
    preview = api(server, "tok-ann").post("definitions/preview", json={"schedule": cron})
    assert preview.status_code == 200, preview.text
    assert preview.json()["description"] == said, preview.json()
    if cron == "0 0 29 2 1":
        assert preview.json()["next"][0].startswith("2027-02-01"), preview.json()  # a Monday, not the 29th


def test_red15_r15_an_image_on_the_local_executor_is_said_to_be_unused(server: EmbeddedServer) -> None:
    """R15 (bullet 5): ``image`` on the local executor was 201 with nothing said in the red team's view. It
    is accepted and the answer's warnings say it is not used (the choice: note, not refuse — a notebook
    shared between a Kubernetes and a local server runs on both)."""
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"], "image": "pytorch/pytorch:2"})
    assert made.status_code == 201, made.text
    assert made.json()["warnings"] == ["image 'pytorch/pytorch:2' is not used: the local executor runs jobs on this "
                                       "host's own software, not in a container image",
                                       NO_LIMIT_NO_GPU_WARNING], made.json()  # new user 20, N23
    clear(server)
