"""New user 13, N18: ``jupyter-sched doctor`` in a fresh home created an empty store
(``~/.local/share/jupyter/jupyter_sched/sched.sqlite``) and said "every row of jobs, usage,
gpu_rollups and events reads" about it; in a hub user's shell (``JUPYTER_SCHED_HUB_URL`` set) it did
the same, never saying that the hub's store is elsewhere. The doctor works only on a store that
exists, creates nothing, and says which store it read and where that came from. The installed
``jupyter-sched`` command, real SQLite files."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.cli.doctor import EXIT_NO_STORE, EXIT_OK, EXIT_USAGE
from jupyter_sched.store import Store, sqlite_url

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]


def _doctor(home: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``jupyter-sched doctor ARGV`` as an account whose home is ``home`` (no Jupyter or scheduler
    variables of this test run leak in)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    clean.update({"HOME": str(home), "PYTHONPATH": str(ROOT), **env})
    return subprocess.run([CLI, "doctor", *argv], env=clean, capture_output=True, text=True, timeout=120)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("env, says, status", [
    ({}, "no store at {home}/.local/share/jupyter/jupyter_sched/sched.sqlite (the embedded server's default "
         "file): nothing to check, and none was created", EXIT_NO_STORE),
    ({"JUPYTER_SCHED_URL": "http://127.0.0.1:9/", "JUPYTER_SCHED_TOKEN": "t"},
     "doctor reads a database, not the server at $JUPYTER_SCHED_URL (http://127.0.0.1:9/)", EXIT_NO_STORE),
    ({"JUPYTER_SCHED_HUB_URL": "http://127.0.0.1:9/services/jupyter-sched/", "JUPYTER_SCHED_TOKEN": "t"},
     "$JUPYTER_SCHED_HUB_URL is set (http://127.0.0.1:9/services/jupyter-sched/), so the store to check is the "
     "hub service's database, not this account's embedded default — run it where the service runs",
     EXIT_USAGE),  # the command to run elsewhere: bad input, 2 (newuser39 n16; was 3, "no server answered")
], ids=["a fresh home", "a server URL set", "a hub user's shell"])
def test_newuser13_n18_doctor_in_a_fresh_home_creates_no_store_and_says_so(tmp_path: Path, env: dict[str, str],
                                                                           says: str, status: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    run = _doctor(home, **env)
    assert run.returncode == status, run.stdout + run.stderr
    assert "reads" not in run.stdout and "every row" not in run.stdout, run.stdout  # vouches for nothing
    assert says.format(home=home) in run.stderr, run.stderr
    assert _files(home) == [], _files(home)  # no file, no folder


def test_newuser13_n18_a_database_without_the_schema_is_not_made_a_store(tmp_path: Path) -> None:
    """An existing SQLite file that holds no jupyter_sched schema (the wrong --db) is said to be so,
    and left as it was: no tables created in it."""
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (x TEXT)")
    run = _doctor(tmp_path, "--db", sqlite_url(other))
    assert run.returncode == EXIT_NO_STORE, run.stdout + run.stderr
    assert f"sqlite:///{other} (--db) holds no jupyter_sched store" in run.stderr, run.stderr
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["notes"]


def test_newuser13_n18_doctor_names_the_store_it_read_and_where_its_url_came_from(tmp_path: Path) -> None:
    """A real store: the first line names it and the source of its URL (here the file named by
    $JUPYTER_SCHED_DB_URL_FILE, as ``jupyter-sched serve`` reads it); "all read" says how many rows."""
    path = tmp_path / "service" / "sched.sqlite"
    Store(sqlite_url(path)).close()
    url_file = tmp_path / "db-url"
    url_file.write_text(sqlite_url(path) + "\n")
    run = _doctor(tmp_path, JUPYTER_SCHED_DB_URL_FILE=str(url_file),
                  JUPYTER_SCHED_HUB_URL="http://127.0.0.1:9/services/jupyter-sched/")  # a store is named: it is used
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    # the code's version and the store's schema steps (hubadmin23 A7) follow the store line
    code = lines.pop(1)
    assert code.startswith("code: jupyter_sched ") and "store schema " in code, run.stdout
    assert lines[:2] == [
        f"store: sqlite:///{path} ($JUPYTER_SCHED_DB_URL_FILE ({url_file}))",
        "no quarantined rows: every row read (0 of jobs, 0 of usage, 0 of gpu_rollups, 0 of events, 0 of quotas, "
        "0 of budgets, 0 of team_policies, 0 of job_progress)"], run.stdout
    assert lines.pop(2) == "no usage rows overlap on a GPU", run.stdout  # hubadmin25 B7
    # and how local jobs are isolated on this host (red team 15, R1): a devices cgroup, or environment only
    assert len(lines) == 4 and lines[2].startswith("isolation: local jobs: GPUs fenced by "), run.stdout
    # and who can read local jobs' command lines (new user 17, N13), from this host's /proc mount
    from jupyter_sched.executors.proc_mount import command_line_visibility

    assert lines[3] == command_line_visibility().text, run.stdout
    # and whether hub users' servers can be fenced here (red team 16, R1): how, or plainly that they are not
    fenced = lines[2].startswith("isolation: local jobs: GPUs fenced by a devices cgroup")
    if fenced:
        assert "user servers are fenced where the hub's spawner is jupyter_sched.hub.fence.FencedLocalProcessSpawner" \
            in lines[2] and "fence_gpus = False" in lines[2], lines[2]
    else:
        assert "user servers are not fenced: " in lines[2] and "can open any GPU of this host" in lines[2], lines[2]


def test_newuser17_n13_doctor_names_the_proc_mount_option_that_decides_who_reads_job_command_lines(
        tmp_path: Path) -> None:
    """New user 17, N13: the API redacts another user's ``command``, but ``ps -eo user,args`` showed
    nu17a's job arguments to nu17b. The doctor's line says which ``/proc`` option is in effect and
    what to do; read from a mounts table in ``/proc/mounts`` format (the real one is read above)."""
    from jupyter_sched.executors.proc_mount import command_line_visibility

    table = tmp_path / "mounts"
    table.write_text("sysfs /sys sysfs rw,nosuid 0 0\nproc /proc proc rw,relatime 0 0\n")
    open_ = command_line_visibility(table)
    assert not open_.hidden and open_.options == "rw,relatime", open_
    assert "/proc is mounted without hidepid (rw,relatime)" in open_.text, open_.text
    assert "every local account can read every local job's command line" in open_.text, open_.text
    assert "through env" in open_.text and "hidepid=2" in open_.text, open_.text
    # the last /proc mount is the one in effect (a remount with hidepid=2 adds a line)
    table.write_text("proc /proc proc rw,relatime 0 0\nproc /proc proc rw,nosuid,relatime,hidepid=invisible 0 0\n")
    hidden = command_line_visibility(table)
    assert hidden.hidden and hidden.text.startswith("command lines: /proc is mounted hidepid=invisible: "), hidden
    table.write_text("proc /proc proc rw,hidepid=0 0 0\n")
    assert not command_line_visibility(table).hidden
    assert "/proc is mounted hidepid=0 (rw,hidepid=0)" in command_line_visibility(table).text
    unknown = command_line_visibility(tmp_path / "absent")
    assert not unknown.hidden and "is unknown" in unknown.text and "through env" in unknown.text, unknown
    table.write_text("sysfs /sys sysfs rw 0 0\n")
    assert "no /proc mount in" in command_line_visibility(table).text
