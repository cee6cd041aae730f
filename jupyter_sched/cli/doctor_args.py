"""``jupyter-sched doctor``'s arguments: parsed before the store is imported, so ``doctor --help`` and a usage
error answer as fast as any other command's (newuser37 n5: importing :mod:`.doctor` — SQLAlchemy and the store —
took ~1.9 s of a 2 to 3 s ``doctor --help``). :mod:`.doctor` runs what they ask."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Sequence
from datetime import datetime
from typing import TextIO

from .main import _Parser

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_NO_STORE = 0, 1, 2, 3

DOCTOR_EXIT_STATUS = (f"Exit status: {EXIT_OK} nothing to fix (or the change was made); {EXIT_FOUND} rows that cannot be "
                      f"read, a failed check or a refused change; {EXIT_USAGE} bad input: fix the command (a bad "
                      f"option, a --db URL with a password, or run where the store is: on a hub, where the service "
                      f"runs); {EXIT_NO_STORE} no store at that URL (nothing is created to check).")
"""The doctor's own exit statuses, in its --help (newuser39 n17: not said; n16: "run it where the service runs"
was 3, which ``jupyter-sched --help`` calls "no server answered")."""


def parse(argv: Sequence[str] | None, *, out: TextIO, err: TextIO) -> argparse.Namespace | int:
    """The doctor's arguments, or the exit code where parsing ended it (``--help``: EXIT_OK, written to ``out``; a
    usage error: EXIT_USAGE, written to ``err``)."""
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            return doctor_parser().parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE


def _end_time(value: str) -> datetime:
    """The ``type`` of ``correct-end --end``: a time with its offset — ISO 8601 (``2026-12-06T19:43:05Z``) or as
    ``doctor ends`` writes it (``2026-12-06 19:43:05 UTC``) — so a bad one is refused naming ``--end`` (newuser35
    N4: "end: '1h30' is not an ISO 8601 timestamp"), and one without an offset with its UTC form written out."""
    text = value.strip()
    iso = text[:-4].strip() + "+00:00" if text.upper().endswith(" UTC") else text
    try:
        parsed = datetime.fromisoformat(iso.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time — write one as `doctor ends` shows it, e.g. "
                                         "'2026-12-06 19:43:05 UTC', or ISO 8601 with its offset, e.g. "
                                         "2026-12-06T19:43:05Z") from None
    if parsed.utcoffset() is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no UTC offset — write "
                                         f"{parsed.replace(microsecond=0).isoformat()}Z for UTC, or add an offset "
                                         "such as +02:00")
    return parsed


def doctor_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jupyter-sched doctor",  # its errors in the CLI's one style
                     description="Find, list, repair or remove rows the store could not read; list finished "
                                 "jobs whose end is suspect and correct one (ends, correct-end); bring the schema to "
                                 "this code's (migrate); rotate the job-token secret. Works on the store's database "
                                 "itself (not through a server), and only on one that exists.",
                     epilog=DOCTOR_EXIT_STATUS)
    parser.add_argument("--db", help="SQLAlchemy URL of the store (default: the URL in the file named by "
                                     "$JUPYTER_SCHED_DB_URL_FILE, else $JUPYTER_SCHED_DB_URL, else the embedded "
                                     "server's SQLite file)")
    parser.add_argument("--config", metavar="FILE", help="the config file the server reads (a service started with "
                                                         "--config=FILE): checked instead of the Jupyter config path's")
    parser.add_argument("--json", action="store_true", help="print JSON (a scan: the whole report, each check with "
                                                            "its status and fix — docs/admin.md; list: the quarantine)")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.add_parser("scan", help="read every row, note the bad ones, list the quarantine (default)")
    sub.add_parser("list", help="list the quarantine without scanning")
    fix = sub.add_parser("repair", help="set columns of a quarantined row (COLUMN=VALUE; null for NULL)")
    fix.add_argument("id", type=int)
    fix.add_argument("changes", nargs="+", metavar="COLUMN=VALUE")
    drop = sub.add_parser("remove", help="delete a quarantined row")
    drop.add_argument("id", type=int)
    drop.add_argument("--yes", action="store_true", help="really delete it")
    rotate = sub.add_parser("rotate-job-secret", help="make a new secret for jobs' progress tokens (audited)",
                            description="Make a new generation of the secret jobs' progress tokens are derived from "
                                        "(in the store: every server sharing it uses it for the next job it starts). "
                                        "The running jobs' tokens keep working until those jobs end, unless "
                                        "--revoke-running. The secret is never shown.")
    rotate.add_argument("--revoke-running", action="store_true",
                        help="also stop the running jobs' tokens now (a leaked secret): their progress reports are "
                             "refused until they end; needs --yes")
    rotate.add_argument("--yes", action="store_true", help="really revoke the running jobs' tokens")
    ends = sub.add_parser("ends", help="list finished jobs whose end is their owner's claim or impossible, with why",
                          description="List succeeded, failed and cancelled jobs whose recorded end is suspect: an end "
                                      "their own exit.json claimed while the service was down and nothing bounded "
                                      "(rows settled before ends were bounded), or one the store shows impossible "
                                      "(after its end was recorded, in the future, at its start, before a service or "
                                      "its own progress report saw it running). Each with the range a corrected end "
                                      "may take and the suggested end. Correct one with doctor correct-end.")
    ends.add_argument("--limit", type=int, default=500, help="at most this many, newest end first (default 500)")
    correct = sub.add_parser("correct-end", help="set a finished job's end within what the store knows (audited)",
                             description="Set the end of a job `doctor ends` lists: its finished_at and its last "
                                         "attempt's usage intervals, so GPU-hours, fair share, budget standing and "
                                         "reports follow; one end_corrected audit record (who, before -> after, "
                                         "GPU-hours, reason). The end must lie in the range `doctor ends` shows. "
                                         "Example: jupyter-sched doctor correct-end j-123 --reason 'claimed while the "
                                         "service was down' --yes")
    correct.add_argument("job", metavar="JOB", help="the job's id, or its name when one job has it")
    correct.add_argument("--end", type=_end_time, metavar="TIME",
                         help="the corrected end: as doctor ends shows it ('2026-12-06 19:43:05 UTC') or ISO 8601 "
                              "with its offset (default: the suggested end)")
    correct.add_argument("--reason", required=True, help="why (kept in the audit record)")
    correct.add_argument("--yes", action="store_true", help="really correct it (without: show what would change)")
    move = sub.add_parser("migrate", help="bring the store's schema to this code's (no other action migrates)",
                          description="Apply the schema steps this code knows and the store has not had yet — what "
                                      "the service's next start with this code would do. Back the store up first: an "
                                      "older version refuses a newer schema.")
    move.add_argument("--yes", action="store_true", help="really migrate it")
    for action in sub.choices.values():  # doctor's own options after its ACTION too, as typed last (newuser36 N4's kind:
        # `doctor list --db URL` was "--db: not an option of jupyter-sched doctor list"); left alone when absent
        action.add_argument("--db", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        action.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser
