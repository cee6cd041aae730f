"""New user 23, N7: a definition's run trigger was worded three ways — the panel said ``scheduled`` /
``run now``, the CLI's ``definitions runs`` ``schedule`` / ``manual``, the magics' table ``manual``
(the run-now job's name said ``every, run now``).

One table now (:data:`jupyter_sched.wording.definitions.TRIGGER_WORDS`, :func:`trigger_text`): the
server sends each run's words as ``trigger_text`` (the wire's ``trigger`` stays ``schedule`` /
``manual``), the CLI's and the magics' columns print the same function's words, a run-now job's name
ends with them, and the panel shows the server's words as given (labextension/test/definitions.test.ts,
``triggerText``).

Real parts: the definitions service on a SQLite store with a manual clock (def_builders.Server), two
processes on one file for the catch-up run; the CLI's and the magics' run renderers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from def_builders import Server, at

from jupyter_sched.cli.definitions import RUNS_HEADER, _run_line
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.magics.define import _run_row
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import ListDefinitionRunsRequest
from jupyter_sched.wording.definitions import CATCH_UP_WORD, TRIGGER_WORDS


def _runs(server: Server, definition_id: str) -> list[dict[str, Any]]:
    answer = server.definitions.runs(server.caller("fay"), definition_id, parse(ListDefinitionRunsRequest, {}))
    return list(answer.to_wire())


def test_s24_words_n7_a_runs_trigger_reads_the_same_on_rest_the_cli_and_the_magics(tmp_path: Path) -> None:
    clock = ManualClock(at("2026-12-05T06:06:30+00:00"))
    url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
    first = Server(url, clock, tmp_path / "jobs-1")
    second: Server | None = None
    try:
        d = first.create({"name": "every", "script": "tick.py", "schedule": "* * * * *", "gpus": 0, "overlap": "allow",
                          "missed": "run_once"}, user="fay")
        clock.set(at("2026-12-05T06:07:00.5+00:00"))
        assert len(first.fire_due().created) == 1                     # 06:07: its schedule fired
        clock.set(at("2026-12-05T06:07:20+00:00"))
        now_run = first.run_now(d["id"], {}, user="fay")              # a user's run now
        clock.set(at("2026-12-05T06:09:05+00:00"))                    # a 90 s outage: the one catch-up run
        second = Server(url, clock, tmp_path / "jobs-2")
        assert len(second.fire_due().created) == 1
        runs = _runs(second, d["id"])
        by_job = {r["job_id"]: r for r in runs}
        catch_up, manual, scheduled = runs[0], by_job[now_run["job_id"]], runs[-1]
        assert (scheduled["trigger"], manual["trigger"], catch_up["catch_up"]) == ("schedule", "manual", True)

        # before: REST had no words (the panel made its own), the CLI printed the wire's "schedule" / "manual"
        want = {id(scheduled): "scheduled", id(manual): "run now", id(catch_up): "catch-up"}
        assert (TRIGGER_WORDS["schedule"], TRIGGER_WORDS["manual"], CATCH_UP_WORD) == ("scheduled", "run now", "catch-up")
        for run in (scheduled, manual, catch_up):
            words = want[id(run)]
            assert run["trigger_text"] == words, run                         # what the panel shows
            cli = _run_line(run, "UTC")
            column = cli[18:27].strip()  # WHEN is 16 wide, then two spaces; TRIGGER 9
            assert column == words, cli                                      # jupyter-sched definitions runs
            assert cli.index(run["job_id"]) == RUNS_HEADER.index("JOB"), (cli, RUNS_HEADER)  # columns line up
            assert _run_row(run, "UTC")["trigger"] == words, _run_row(run, "UTC")   # %schedule define runs
        assert manual["job"]["name"] == f"every, {TRIGGER_WORDS['manual']}", manual["job"]["name"]
        listed = second.list(user="fay")[0]["last_run"]                      # a definition's last run says it too
        assert listed["trigger_text"] == "catch-up", listed
    finally:
        first.store.close()
        if second is not None:
            second.store.close()
