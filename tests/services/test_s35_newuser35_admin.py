"""newuser35's admin-side findings on the services and the doctor (issue 20, the admin's first hour).

N4: ``doctor correct-end`` looked in the suspect list before the job table — a job's name (every other command takes
one) or a mistyped id was "not one `doctor ends` lists; … unless you add --yes", and only ``--yes`` said "no job"; a
correction of an end nothing suspects to the same end wrote an ``end_corrected`` audit record; ``--end 1h30`` was
refused naming ``end``, not ``--end``. n4: a refusal of an unknown id to an admin said "finished jobs of other users
are not shown to you", which is untrue of an admin.

Real parts: a SQLite store with the services over it (the ``services`` fixture), the doctor's own ``main``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.cli import doctor
from jupyter_sched.errors import NotFoundError
from jupyter_sched.services import Services
from tests.services.test_s34_red33_r3_old_rows import _doctor, _settled


def test_newuser35_n4_correct_end_looks_the_job_up_by_id_or_name_and_refuses_in_the_dry_run_what_yes_refuses(
        services: Services) -> None:
    now = datetime.now(timezone.utc)
    start = now - timedelta(hours=2)
    cheap = _settled(services, "cheap", start=start, claimed=start + timedelta(seconds=1),
                     settled=start + timedelta(seconds=92), alive=start + timedelta(seconds=60))
    honest = _settled(services, "honest", start=start, claimed=start + timedelta(minutes=5),
                      settled=start + timedelta(minutes=5, seconds=1), message="exited with code 0")
    twice = [_settled(services, "rerun", start=start, claimed=start + timedelta(minutes=m),
                      settled=start + timedelta(minutes=m), message="exited with code 0") for m in (3, 4)]
    store = services.store

    # an unknown name or id: "no job" in the dry run as with --yes, never an invitation to add --yes
    for ref in ("quickstart-train", "j-nosuch-0"):
        for yes in ([], ["--yes"]):
            code, _, err = _doctor(store, "correct-end", ref, "--reason", "x", *yes)
            assert code == doctor.EXIT_FOUND and f"no job '{ref}' in this store" in err, err
            assert "--yes" not in err and "doctor ends" in err, err
    # a name, as every other command takes one: the dry run says which job and what it would do
    code, _, err = _doctor(store, "correct-end", "cheap", "--reason", "x")
    assert code == doctor.EXIT_USAGE and f"would set the end of {cheap} (r33b, succeeded)" in err, err
    assert "add --yes" in err and "not suspect" not in err, err
    # a name several jobs have: their ids, not a guess
    code, _, err = _doctor(store, "correct-end", "rerun", "--reason", "x", "--yes")
    assert code == doctor.EXIT_FOUND and "2 jobs are named 'rerun'" in err and all(i in err for i in twice), err
    # an end nothing suspects, "corrected" to itself: nothing to correct, no audit record — dry run and --yes alike
    for yes in ([], ["--yes"]):
        code, _, err = _doctor(store, "correct-end", "honest", "--reason", "x", *yes)
        assert code == doctor.EXIT_FOUND and f"nothing to correct: job {honest} already ends at" in err, err
    assert store.list_events(action="end_corrected") == []
    # one it does not suspect, to another end in its range: said so, then done
    moved = (start + timedelta(minutes=4)).strftime("%Y-%m-%d %H:%M:%S UTC")  # as doctor ends writes it
    code, _, err = _doctor(store, "correct-end", honest, "--end", moved, "--reason", "x")
    assert code == doctor.EXIT_USAGE and "its end is not suspect" in err and "add --yes" in err, err
    # --end: a bad time is refused naming --end, before any store is read
    for bad, said in (("1h30", "is not a time"), ("2026-12-07T01:04:30", "has no UTC offset — write "
                                                                         "2026-12-07T01:04:30Z")):
        code, _, err = _doctor(store, "correct-end", cheap, "--end", bad, "--reason", "x")
        assert code == doctor.EXIT_USAGE and "--end" in err and said in err, err
    # the end kept as it stands, of a suspect one, is an admin's word (it leaves the suspect list): still allowed
    code, out, err = _doctor(store, "correct-end", "cheap", "--end", (start + timedelta(seconds=60)).isoformat(),
                             "--reason", "kept", "--yes")
    assert code == doctor.EXIT_OK and cheap in out, err
    assert store.get_job(cheap).job.finished_at == start + timedelta(seconds=60)


def test_newuser35_n4_an_admin_asking_for_an_unknown_id_is_not_told_what_non_admins_are_not_shown(
        services: Services) -> None:
    boss, judy = services.caller("boss", admin=True), services.caller("judy", admin=False)
    with pytest.raises(NotFoundError) as said:
        services.jobs.get(boss, "j-1m93d0kba-gtkhhs")
    assert "not shown to you" not in f"{said.value.message} {said.value.hint}", said.value
    assert "no job has the id 'j-1m93d0kba-gtkhhs'" in said.value.message and "--all" in (said.value.hint or "")
    with pytest.raises(NotFoundError) as said:
        services.jobs.get(judy, "j-1m93d0kba-gtkhhs")
    assert "visible to you" in said.value.message and "not shown to you" in (said.value.hint or "")


def test_newuser35_n3_what_if_says_its_period_in_the_readers_zone_without_microseconds_in_sentences(
        services: Services) -> None:
    from jupyter_sched.cli.what_if import said_here
    from jupyter_sched.model.units import shown_in
    from jupyter_sched.services.models import SetQuotasRequest, parse
    from jupyter_sched.services.models.quotas import GetQuotaWhatIfRequest

    boss = services.caller("boss", admin=True)
    services.quotas.set(boss, parse(SetQuotasRequest, {"quotas": [{"team": "vision", "guaranteed": 2}]}))
    now = services.ctx.clock.now()
    for team, note in (("vision", ""), ("visoin", " Team visoin used no GPU and has no line here: did you mean "
                                                  "vision?")):
        answer = services.accounting.what_if(boss, GetQuotaWhatIfRequest(
            team=team, guaranteed=4, borrowing_limit=2, since="2026-10-01T00:00:00Z")).model_dump(mode="json")
        server = answer["text"]
        assert not re.search(r"\d{4}-\d\d-\d\dT|:\d\d\.\d+", server), server  # no raw ISO, no microseconds
        assert server.startswith(f"Team {team}, Oct 1 00:00 UTC → "), server
        with shown_in("Europe/Berlin"):
            said = said_here(answer, now)
        assert said.startswith(f"Team {team}, Oct 1 02:00 CEST → "), said  # the reader's zone, named, as usage
        assert "The proposed line (guaranteed 4, borrowing limit 2)" in said, said
        assert ". When held-back work would have run instead is not said" in said, said
        assert said.endswith("moved too." + note), said
        sentences = [s for s in said.split(". ") if s]
        assert all(s[:1].isupper() for s in sentences), sentences


def test_newuser35_n2_nothing_to_replay_suggests_another_period_never_the_one_given() -> None:
    from jupyter_sched.cli.scenario_export import last_full_quarter, other_periods

    now = datetime(2026, 12, 7, 0, 52, tzinfo=timezone.utc)
    q4 = datetime(2026, 10, 1, tzinfo=timezone.utc)
    said = other_periods(q4, now, now)  # --quarter 2026Q4 (cut at now)
    assert said == "--quarter 2026Q3 (the quarter before) or --since 2026-07-01 (from then to now)", said
    said = other_periods(*last_full_quarter(now), now)  # the default: Q3
    assert said == "--quarter 2026Q2 (the quarter before) or --since 2026-10-01 (from its end to now)", said
    start, end = datetime(2026, 11, 15, 10, 30, tzinfo=timezone.utc), datetime(2026, 11, 20, tzinfo=timezone.utc)
    assert other_periods(start, end, now) == ("--quarter 2026Q3 (the quarter before) or --since 2026-11-20 (from "
                                              "its end to now)")
