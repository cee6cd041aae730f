"""red27 R4 (low-medium): one user turned off everyone's submit-time script check.

Found: the red26 R2 fix compiled scripts past 8 KiB in ONE child service-wide; mal's 8 threads of 60 KB submits
kept it busy, so eve's 21 KB script with a syntax error on its last line waited a second for the child and was
then skipped — 200 "not checked" 6 of 6 times (it would run and fail). Now a user holds at most one of the
service's children (:class:`~jupyter_sched.services.script_check._Gate`): a user's checks queue behind their own,
another user's are not delayed by them.

Real parts: the child processes that compile (the real CPython compile, its limits).
"""

from __future__ import annotations

import threading

from jupyter_sched.services import script_check

EVE_BAD = b"x = 1\n" * 3_500 + b"def broken(:\n"  # 21 KB, its syntax error on its last line
MAL_HEAVY = b"y = f'" + b"{1}" * 20_000 + b"'\n"  # 60 KB: an f-string of 20,000 fields (red27's carrier)


def test_red27_r4_a_user_holding_the_child_never_makes_another_users_check_skip() -> None:
    gate = script_check._GATE
    assert gate.acquire("mal", timeout=60)  # mal's check in flight
    try:
        # before: None (skipped after 1 s: "the job's run tells") — every other user's check waited on mal's
        assert script_check.script_problem_apart(EVE_BAD, "eve.py", user="eve") == "line 3501: invalid syntax"
        # mal's own next check queues behind his own: not checked (his run tells), nobody else's affected
        assert script_check.script_problem_apart(EVE_BAD, "mal.py", user="mal") is None
    finally:
        gate.release("mal")
    assert script_check.script_problem_apart(EVE_BAD, "mal.py", user="mal") == "line 3501: invalid syntax"


def test_red27_r4_eves_checks_all_tell_while_mal_floods_the_child() -> None:
    stop = threading.Event()
    floods = [0]

    def flood() -> None:
        while not stop.is_set():
            script_check.script_problem_apart(MAL_HEAVY, "mal.py", user="mal")
            floods[0] += 1

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        said = [script_check.script_problem_apart(EVE_BAD, "eve.py", user="eve") for _ in range(6)]
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert floods[0] > 0
    assert said == ["line 3501: invalid syntax"] * 6, said  # before: None (not checked) for most of them
