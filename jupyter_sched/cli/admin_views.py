"""``jupyter-sched usage`` and ``jupyter-sched audit``: the usage report and the audit log from a
terminal (hubadmin22 H10: both were REST only, found by reading openapi.yaml).

Each is one request to the existing route, so the server decides who sees what: ``usage`` asks
``GET usage/report`` for everyone's usage when the caller is an admin (``all=true``), else their own;
``audit`` is ``GET audit`` (admins; anyone else gets the server's 403 in words). ``cost`` is said with
its unit, the rows' ``cost_unit`` (``c.HubSchedApp.gpu_price_unit``, e.g. USD; "price units" when the
admin named no currency); the CSV has it as a column beside ``cost``. The period is the one usage
period unless ``--since``/``--until``/``--month`` say another: the last 7 days, as ``status`` and
the panel say it (:mod:`jupyter_sched.wording.usage`; session 23: this said "this month").

Standard library and :mod:`jupyter_sched.wording` only (the CLI's start-up cost: :mod:`.main`).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from ..client._wire import Req, unwrap_list
from ..model.periods import PERIODS, next_period_start, period_name, period_starts
from ..model.units import clock_text, gpu_hours_phrase
from ..wording.usage import USAGE_DAYS, cost_cell, efficiency_cell, last_days, period_text
from ..wording.usage import parsed_utc as _parsed
from .local_when import local_when

__all__ = ["COST_UNIT", "WHEN_HELP", "add_parsers", "audit", "quotas", "record_time", "usage", "when_arg"]

COST_UNIT = "price units of c.HubSchedApp.gpu_prices (price per GPU-hour times allocated GPU-hours)"
"""What ``cost`` counts when the server's rows do not say (``cost_unit`` absent: a server before it)."""

_BY = ("user", "team", "gpu_model", "kind", "job_id", "period")
"""``usage --by`` keys: those ``GET usage/report`` groups by (newuser23 N10: gpu_model was refused; hubadmin25
B8: one key only, so a chargeback sheet by team and user, or team and model, was REST only)."""
_BY_ALIASES = {"model": "gpu_model", "gpu-model": "gpu_model", "job": "job_id", "job-id": "job_id"}


def add_parsers(sub: Any, want: Any) -> list[str]:
    """Add ``usage`` and ``audit`` to the subcommands (those ``want(name)`` accepts); their names."""
    added = []
    if want("usage"):
        usage_p = sub.add_parser(
            "usage", help="GPU-hours used, per user or team, with cost (admins: everyone's; others: their own)",
            description="Allocated and utilized GPU-hours (GPU-HOURS, UTILIZED: hours of whole GPUs), "
                        "telemetry coverage, efficiency (utilized / allocated) and cost, from GET "
                        "api/sched/usage/report, for one period: the last 7 days (as status says) unless --since/--until "
                        "or --month/--quarter say another (said under the table, and as the CSV's since and until columns). "
                        "Admins see everyone's usage, others their own. cost is "
                        "allocated GPU-hours times c.HubSchedApp.gpu_prices, in c.HubSchedApp.gpu_price_unit "
                        "(said under the table and as the CSV's cost_unit column); empty without prices. "
                        "Example: jupyter-sched usage --by team --month 2026-11 --csv > november.csv")
        usage_p.add_argument("--by", type=_by, default="user", metavar="KEYS",
                             help="one row per user (default), or per any of " + ", ".join(_BY) + " (model for "
                                  "gpu_model), several comma separated for a chargeback sheet: --by team,user or "
                                  "--by team,model; period groups by --period")
        usage_p.add_argument("--period", choices=PERIODS, default=None,
                             help="with --by period: one row per day, week (from Monday), month (default) or "
                                  "quarter (from Jan 1, Apr 1, Jul 1, Oct 1)")
        usage_p.add_argument("--since", metavar="WHEN", type=_when,
                             help="from this time: a date (2026-12-01: its midnight UTC) or ISO 8601 with an "
                                  "offset (2026-12-01T00:00:00+02:00); default: 7 days before --until (the last 7 days, "
                                  "the period status says)")
        usage_p.add_argument("--until", metavar="WHEN", type=_when,
                             help="up to this time, not included (a date: its midnight UTC, so --until "
                                  "2026-12-01 ends with November 30); default: now")
        usage_p.add_argument("--month", metavar="YYYY-MM", type=_month,
                             help="one calendar month in UTC, e.g. 2026-11 (its 1st 00:00 UTC up to the next "
                                  "month's); instead of --since/--until")
        usage_p.add_argument("--quarter", metavar="YYYYQN", type=_quarter,
                             help="one calendar quarter in UTC, e.g. 2026Q4 (Oct 1 00:00 UTC up to Jan 1); "
                                  "instead of --since/--until/--month; --by period --period month splits it "
                                  "by month")
        usage_p.add_argument("--csv", action="store_true", help="print the report as CSV (the REST answer's columns)")
        usage_p.add_argument("--as-scenario", action="store_true",
                             help="admins: write the jobs submitted in the period (default: the last full quarter) "
                                  "as a jupyter-sched simulate scenario (JSON, which is YAML) — the cluster as the "
                                  "inventory is now, the quota lines in force, each job that ran with its submit "
                                  "time, runtime, GPUs, team and user — to replay under a proposed line: usage "
                                  "--as-scenario --quarter 2026Q4 > q4.yaml; jupyter-sched simulate q4.yaml --quotas "
                                  "proposed.yaml")
        added.append("usage")
    if want("audit"):
        audit_p = sub.add_parser("audit", help="admin: the scheduler's decision log, newest first",
                                 description="The audit log (GET api/sched/audit; admins), newest first; TIME in "
                                             "UTC. Example: jupyter-sched audit --since 2026-12-04 --exclude "
                                             "eta_moved")
        audit_p.add_argument("--action", metavar="A", help="only this action, e.g. refused, admit, owner_removed")
        audit_p.add_argument("--exclude", metavar="A", action="append", default=[],
                             help="leave this action out, e.g. --exclude eta_moved (repeat it, or A,B, for more)")
        audit_p.add_argument("--since", metavar="WHEN", type=_when,
                             help="from this time: a date (2026-12-01: its midnight UTC) or ISO 8601 with an offset")
        audit_p.add_argument("--until", metavar="WHEN", type=_when,
                             help="up to this time, not included (a date: its midnight UTC)")
        audit_p.add_argument("--user", metavar="U", help="only rows about this user (or made by them)")
        audit_p.add_argument("--actor", metavar="A", help="only rows this actor made, e.g. an admin's own acts")
        audit_p.add_argument("--job", metavar="JOB", help="only rows about this job — its id (j-…) or the name of "
                                                          "one job (anyone's): what happened to it, in order "
                                                          "(submit, admit, preemptions, end)")
        audit_p.add_argument("--limit", type=_limit, default=50, metavar="N", help="at most N rows (default 50, "
                                                                                    "at most 10000)")
        audit_p.add_argument("--csv", action="store_true", help="print the rows as CSV (id, at, actor, action, user, "
                                                                 "job_id, message, details as JSON)")
        added.append("audit")
    if want("quotas"):
        from .what_if import add_arguments  # quotas what-if (hubadmin26 B7)

        quotas_p = sub.add_parser(
            "quotas", help="the quota set in force: lines, budgets (admins: where each stands), team policies",
            description="Every quota line (TEAM, USER, MODEL, GUARANTEED GPUs and the LIMIT it may borrow "
                        "above them), every budget — for an admin with where it stands now (used, left, "
                        "reset) — and every team policy, from GET api/sched/quotas; an admin also reads "
                        "its warnings. Changes are PUT api/sched/quotas (or the admin notebook). "
                        "quotas what-if (admins) replays a past period's usage of a team against a proposed line "
                        "and the line in force: jupyter-sched quotas what-if --team cv --guaranteed 4 --limit 2 "
                        "--quarter 2026Q4")
        add_arguments(quotas_p, when=_when, month=_month, quarter=_quarter)
        added.append("quotas")
    return added


WHEN_HELP = ("a date (2026-12-01: its midnight in your time zone, TZ; --utc: UTC), a time (2026-12-01 09:30: yours; "
             "with Z or an offset such as +02:00: exactly that), or how long ago (7d, 12h, 1h30m, 2w)")
"""What ``--since``/``--until`` take (:func:`when_arg`), for the help of every command that has them."""
_MONTH = re.compile(r"(\d{4})-(\d{2})")
_QUARTER = re.compile(r"(\d{4})-?[Qq]([1-4])")


def _when(value: str) -> str:
    """The ``type`` of ``--since``/``--until``: a plain date ``2026-12-01`` is its midnight and a time with
    no offset that time, both in the reader's zone (:mod:`.local_when`, newuser41 n9; the server refuses an
    offset-less time, hubadmin23 A10 / newuser23 N10); a ``Z`` or an offset goes as typed; a duration (``7d``,
    ``12h``, ``30m``, ``2w``) is that long before now (hubadmin25 B19) — read by
    :func:`~jupyter_sched.client.when.read_when`, as the Python client's ``since`` (newuser42 N1)."""
    from ..client.when import read_when

    try:
        read = read_when(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return local_when(read) if isinstance(read, datetime) else read


def _month(value: str) -> tuple[str, str]:
    """``--month 2026-11`` → ``("2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z")``: the month in UTC,
    its end not included (the report's window is ``[since, until)``)."""
    found = _MONTH.fullmatch(value.strip())
    if not found or not 1 <= int(found.group(2)) <= 12 or int(found.group(1)) < 1970:
        raise argparse.ArgumentTypeError(f"{value!r} is not a month — write YYYY-MM, e.g. 2026-11")
    year, month = int(found.group(1)), int(found.group(2))
    nxt = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01T00:00:00Z", f"{nxt[0]:04d}-{nxt[1]:02d}-01T00:00:00Z"


def _quarter(value: str) -> tuple[str, str]:
    """``--quarter 2026Q4`` → ``("2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z")``: the calendar
    quarter in UTC (:func:`~jupyter_sched.model.periods.period_start`), its end not included."""
    found = _QUARTER.fullmatch(value.strip())
    if not found or int(found.group(1)) < 1970:
        raise argparse.ArgumentTypeError(f"{value!r} is not a quarter — write YYYYQN, e.g. 2026Q4 (Oct to Dec)")
    start = datetime(int(found.group(1)), 3 * int(found.group(2)) - 2, 1, tzinfo=timezone.utc)
    return f"{start:%Y-%m-%dT%H:%M:%S}Z", f"{next_period_start(start, 'quarter'):%Y-%m-%dT%H:%M:%S}Z"


def usage_window(args: argparse.Namespace, now: datetime) -> tuple[str | None, str | None]:
    """The ``(since, until)`` ``usage`` asks for: ``--month``'s (its until None while the month is not over:
    it ends now), else ``--since`` and ``--until``
    (None: up to now). ``--since`` None with ``--until`` given is the 7 days before ``--until`` (or
    before ``now``, when earlier), the server's own rule, computed here and sent: the footer says the
    period the query used (new user 24, N9: it said "in the last 7 days (since …)" and no end). Both
    None: the server's one usage period, the 7 days before the answer (what ``status`` says).

    Raises:
        ValueError: ``--month`` or ``--quarter`` beside ``--since``, ``--until`` (or each other) (the message says which to keep);
            ``--since`` after ``now`` (no usage is recorded yet); ``--since`` not before ``--until``.
    """
    since, until, month, quarter = (getattr(args, name, None) for name in ("since", "until", "month", "quarter"))
    if quarter is not None:
        if since or until or month:
            raise ValueError("--quarter is a whole quarter by itself: give --quarter alone, or --month, "
                             "or --since/--until")
        month = quarter
    if month is not None:
        if since or until:
            raise ValueError("--month is a whole month by itself: give --month alone, or --since/--until")
        # the month not over yet ends now: its rows and footer say so, not its end to come (hubadmin24 B9)
        end = _parsed(month[1])
        return month[0], month[1] if end is None or end <= now else None
    start, end = _parsed(since), _parsed(until)
    if end is not None and not since:  # a --until the server could not read: sent alone, its refusal names it
        start = min(end, now) - timedelta(days=USAGE_DAYS)
        since = f"{start:%Y-%m-%dT%H:%M:%S}Z"
    if start is not None and start > now:
        raise ValueError(f"--since {clock_text(start, now)} is in the future: usage is recorded up to now "
                         f"({clock_text(now, now)}) — give a start before it")
    if start is not None and end is not None and start >= end:
        raise ValueError(f"--since {clock_text(start, now)} is not before --until {clock_text(end, now)}: "
                         "the period would be empty — give a start before the end")
    return since or None, until


def _by(value: str) -> str:
    """The ``type`` of ``usage --by``: comma separated keys of :data:`_BY` (``model`` for ``gpu_model``), each
    once, as ``GET usage/report``'s ``by`` takes them (``team,user``)."""
    keys = [_BY_ALIASES.get(k.strip().lower(), k.strip().lower()) for k in value.split(",") if k.strip()]
    bad = [k for k in keys if k not in _BY]
    if bad or not keys:
        raise argparse.ArgumentTypeError(
            f"{bad[0] if bad else value!r} is not one of {', '.join(_BY)} (model for gpu_model) — one, or several "
            "comma separated, e.g. team,user")
    return ",".join(dict.fromkeys(keys))


def _limit(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= 10_000:
        raise argparse.ArgumentTypeError(f"--limit wants a whole number from 1 to 10000 (got {value!r})")
    return number


def _csv_pages(pages: Iterable[Any]) -> str:
    """The CSV pages of ``GET usage/report?format=csv`` as one text: the first page's header row once."""
    out: list[str] = []
    for page in pages:
        text = str(page).rstrip("\n")
        if out:  # each page starts with the header row (one line: no field name holds a newline)
            text = text.partition("\n")[2]
        if text:
            out.append(text)
    return "\n".join(out)


def usage(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``jupyter-sched usage``: the report as a table (or CSV, or the JSON with ``--json``)."""
    now = datetime.now(timezone.utc)
    try:
        since, until = usage_window(args, now)
    except ValueError as exc:
        print(f"jupyter-sched usage: {exc} [usage_error]", file=io.err)
        return 2  # EXIT_USAGE (main's; not imported: the CLI's start-up cost)
    if getattr(args, "as_scenario", False):  # the hub's history for the simulator (hubadmin26 B7)
        from .scenario_export import as_scenario

        return as_scenario(client, args, io, (since, until), now)
    me = client.call(Req("GET", "me"))
    keys = str(args.by).split(",")
    period = getattr(args, "period", None)
    if period and "period" not in keys:
        print("jupyter-sched usage: --period goes with --by period (one row per day, week, month or quarter), e.g. "
              f"--by {args.by},period --period {period} [usage_error]", file=io.err)
        return 2
    params = {"by": args.by, **({"since": since} if since else {}), **({"until": until} if until else {}),
              **({"all": "true"} if me.get("is_admin") else {}), **({"period": period} if period else {})}
    if args.csv:  # the server's CSV: every row carries the period as its since and until columns
        print(_csv_pages(client.pages(Req("GET", "usage/report", params={**params, "format": "csv"}))), file=io.out)
        return 0
    # every page (red30 R8: by job_id a page ends at 1000 jobs or 4 MiB)
    rows = [row for page in client.pages(Req("GET", "usage/report", params=params)) for row in unwrap_list(page, "usage")]
    if getattr(args, "json", False):
        import json

        said_since = since or (rows[0].get("since") if rows else me.get("gpu_hours_since"))
        print(json.dumps({"rows": rows, "cost_unit": _cost_unit(rows), "since": said_since, "until": until}, indent=2),
              file=io.out)
        return 0
    whose = "everyone's usage" if me.get("is_admin") else f"{me.get('user')}'s usage"
    if since:
        period = period_text(since, until, now)
    else:  # the one period, with its start: the rows' (the server's clock), else GET me's
        period = last_days(rows[0].get("since") if rows else me.get("gpu_hours_since"), now)
    if not rows:
        print(f"no usage recorded ({whose}, {period})" if since  # the default period has its own brackets
              else f"no usage recorded: {whose}, {period}", file=io.out)
        return 0
    # one column per grouping key, in the order asked (hubadmin25 B8: team, user for a chargeback sheet); a
    # non-admin's rows by team are their own share of each team (red15 R14: the server's rows say the user): a
    # USER column says so — the TEAM column alone read as the team's figure (newuser38 n9)
    own_share = not me.get("is_admin") and "team" in keys and "user" not in keys
    shown = [*keys, "user"] if own_share else keys
    if "period" in keys:
        rows = _by_period(rows, shown, getattr(args, "period", None) or "month", now)
    table = [[*(k.upper().replace("_", " ") for k in shown), "GPU-HOURS", "UTILIZED", "EFFICIENCY", "COST", "JOBS"]]
    for row in rows:
        table.append([*(str(row.get(k) or "-") for k in shown), _num(row.get("allocated_gpu_hours")),
                      _num(row.get("utilized_gpu_hours")), _pct(row.get("efficiency")), _cost(row),
                      str(row.get("jobs", ""))])
    _print(table, io)
    from ..model.periods import said_to_reader

    for row in rows:  # a team's work moved to another (hub group rename): its line links the two rows (its clock: n30)
        if row.get("moved"):
            print(f"{row.get('team') or row.get(keys[0])}: {said_to_reader(str(row['moved']))}", file=io.out)
    # rows the report skipped or counted once (quarantined, overlapping: hubadmin25 B7), each said once
    for said in dict.fromkeys(str(w) for row in rows for w in row.get("warnings") or ()):
        print(f"warning: {said}", file=io.out)
    unit = _cost_unit(rows)
    if own_share:
        print(f"by team: {me.get('user')}'s own share of each team's use; a team's total is an admin's report", file=io.out)
    print(f"{whose}, {period}; GPU-HOURS allocated and UTILIZED in GPU-hours (EFFICIENCY: utilized / allocated); "
          + (f"COST in {unit}" if unit else no_prices_said(client.config())), file=io.out)
    return 0


def _members_from_hub(body: Mapping[str, Any]) -> bool:
    """Whether GET quotas' memberships are a hub's groups (``user_teams_source.set_by`` ``hub``: hub mode)."""
    source = body.get("user_teams_source")
    return isinstance(source, Mapping) and source.get("set_by") == "hub"


def _members_cell(policy: Mapping[str, Any], body: Mapping[str, Any], *, hub: bool, whole: bool) -> str:
    """The MEMBERS cell of a team policy: how many users are in the team — in ``user_teams`` (the hub's groups on
    a hub, where a policy's own ``members`` is refused) and, embedded, the policy's ``members`` too, as a caller's
    teams are resolved (newuser36 n1: a hub's team of 3 read ``0``, as if empty). On a hub ``3 (hub group)``, or
    ``hub group`` where the count is not known: a user's reader (``whole`` false: GET quotas cuts memberships to
    the caller) or the groups not read yet."""
    team = str(policy.get("team"))
    teams_of = body.get("user_teams")
    members = {str(user) for user, teams in (teams_of.items() if isinstance(teams_of, Mapping) else ())
               if isinstance(teams, (list, tuple)) and team in teams}
    if hub:
        return f"{len(members)} (hub group)" if whole and teams_of else "hub group"
    members |= {str(user) for user in policy.get("members") or ()}
    return str(len(members))


def quotas(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``jupyter-sched quotas``: GET quotas as tables (``--json``: the answer) — a read view of the set in force
    (hubadmin25 B14: every change and check of a month was GET/PUT quotas with JSON by hand)."""
    from .what_if import misused, what_if

    wrong = misused(args)
    if wrong is not None:
        print(f"jupyter-sched quotas: {wrong}", file=io.err)
        return 2
    if getattr(args, "action", None) == "what-if":
        asked = any(getattr(args, k, None) for k in ("since", "until", "month", "quarter"))
        try:  # none of them: the server's default, the last full quarter
            window = usage_window(args, datetime.now(timezone.utc)) if asked else (None, None)
        except ValueError as err:
            print(f"jupyter-sched quotas what-if: {err} [usage_error]", file=io.err)
            return 2
        return what_if(client, args, io, window)
    answer = client.call(Req("GET", "quotas"))
    if getattr(args, "json", False):
        import json

        print(json.dumps(answer, indent=2), file=io.out)
        return 0
    body: Mapping[str, Any] = answer if isinstance(answer, Mapping) else {}
    lines = [q for q in body.get("quotas") or () if isinstance(q, Mapping)]
    if lines:
        table = [["TEAM", "USER", "MODEL", "GUARANTEED", "LIMIT"]]
        for q in lines:
            limit = q.get("borrowing_limit")
            table.append([str(q.get("team")), str(q.get("user") or "-"), str(q.get("gpu_model") or "*"),
                          f"{float(q.get('guaranteed') or 0):g}", "none" if limit is None else f"+{float(limit):g}"])
        _print(table, io)
        print("GUARANTEED GPUs of MODEL (* any) the team (or USER in it) may always get back; LIMIT what it may borrow "
              "above them (none: no limit)", file=io.out)
    else:
        print("No quota lines are set.", file=io.out)
    standings = [b for b in body.get("budget_standings") or () if isinstance(b, Mapping)]
    budgets = [b for b in body.get("budgets") or () if isinstance(b, Mapping)]
    if standings or budgets:
        from ..wording.budgets import standing_text

        now = datetime.now(timezone.utc)
        print("Budgets:", file=io.out)
        for b in standings or budgets:
            who = b.get("team") if not b.get("user") else f"user {b.get('user')} in {b.get('team')}"
            hours = float(b.get('gpu_hours') or 0)
            plain = f"{who}: {gpu_hours_phrase(hours, f'{hours:g}')} a {b.get('period')}"
            # a standing in the reader's zone and words, as `status` says it (newuser30 n11: "used today" in
            # Los Angeles, the server's words)
            print(f"  {standing_text(b, now) or b.get('text') or plain}", file=io.out)
    cooling = [c for c in body.get("reclaim_cooldowns") or () if isinstance(c, Mapping)]
    if cooling:  # a team's reclaims held by a cool-down, in the reader's zone as `status` says it (newuser38 n21)
        from ..wording.quota import reclaim_cooldown_line

        now = datetime.now(timezone.utc)
        paused = [line for c in cooling if (line := reclaim_cooldown_line(c, now))]
        if paused:
            print("Reclaim cool-downs:", file=io.out)
            for line in paused:
                print(f"  {line}", file=io.out)
    policies = [t for t in body.get("teams") or () if isinstance(t, Mapping)]
    if policies:
        hub = _members_from_hub(body)
        # on a hub a user reads only their own membership: the count is an admin's to see
        whole = hub and bool(client.call(Req("GET", "me")).get("is_admin"))
        table = [["TEAM", "WEIGHT", "PRIORITIES", "RECLAIM", "MEMBERS"]]
        for t in policies:
            table.append([str(t.get("team")), f"{float(t.get('weight') or 1):g}",
                          ",".join(str(c) for c in t.get("allowed_priorities") or ()) or "-", str(t.get("reclaim") or "-"),
                          _members_cell(t, body, hub=hub, whole=whole)])
        print("Team policies:", file=io.out)
        _print(table, io)
        if hub:
            print("MEMBERS: the hub group of the team's name (a user's teams are their hub groups, changed on the hub), "
                  "as the service last read it", file=io.out)
    source = body.get("source")
    if isinstance(source, Mapping) and source.get("text"):
        # in the reader's zone by the one clock renderer (new user 30, n9: "set by PUT quotas by root at 2026-12-06 …")
        from ..wording.quota import quota_source_text
        from ..wording.reasons import wire_time

        at = wire_time(source.get("set_at"))
        said = quota_source_text(str(source.get("set_by") or ""), at, config=bool(source.get("config")),
                                 now=datetime.now(timezone.utc)) if at is not None else str(source["text"])
        print(f"set by {said}", file=io.out)
    from ..model.periods import said_to_reader

    for warning in body.get("warnings") or ():  # a spent day budget's "this UTC day" in the reader's words (n11)
        print(f"warning: {said_to_reader(str(warning))}", file=io.out)
    return 0


def no_prices_said(config: Any) -> str:
    """The usage footer's COST words where no prices are set: a hub's setting names it; on a single
    ``jupyter lab`` (``features.hub`` false) prices are a JupyterHub setting, none here (new user 25,
    n7: ``c.HubSchedApp.gpu_prices`` named to a user of a plain lab)."""
    features = config.get("features") if isinstance(config, Mapping) else None
    if isinstance(features, Mapping) and features.get("hub") is False:
        return "COST: none, no prices are set here (GPU prices are a JupyterHub setting; a single jupyter lab has none)"
    return "COST: none, no prices are set (c.HubSchedApp.gpu_prices)"


def _cost_unit(rows: list[dict[str, Any]]) -> str | None:
    """The unit the rows' costs are in (their ``cost_unit``; :data:`COST_UNIT` from a server that
    does not say it); None when no row has a cost."""
    if not any(r.get("cost") is not None for r in rows):
        return None
    units = sorted({str(r["cost_unit"]) for r in rows if r.get("cost") is not None and r.get("cost_unit")})
    return ", ".join(units) if units else COST_UNIT


_PREEMPTED = ("a job preempted is recorded on its own row as reclaim (to return borrowed quota, or for a "
              "higher priority), then requeued: try --action reclaim, or --action requeued")
_RECORDED_AS = {"preempt": _PREEMPTED, "preempted": _PREEMPTED, "preemption": _PREEMPTED}
"""What an empty ``--action`` answer says where the event is recorded under other actions (new user 24
nit: ``audit --action preempt`` said "no audit rows match" after four preemptions, all ``reclaim`` rows)."""


def _audited_job(client: Any, ref: str) -> str:
    """``--job REF`` as a job id: an id as typed (``J-…`` in capitals: the id), else the one job of that name among
    everyone's newest (audit is an admin's: any user's job) — as every other JOB argument takes a name (newuser37 n7:
    ``audit --job a-two`` said "no audit rows match").

    Raises:
        ValidationError: several jobs have that name (field ``job_id``; their ids, owners and states, newest first).
        NotFoundError: no job among everyone's newest has that name (field ``job_id``).
    """
    from ..client._wire import NAMED_FROM, job_named, needs_lookup
    from ..errors import NotFoundError, ValidationError

    if not needs_lookup(ref):
        return job_named(ref, None).id
    from ..errors import AuthorizationError

    try:
        everyone = client.jobs(all_users=True, limit=NAMED_FROM)
    except AuthorizationError:  # not an admin: their own job's name, as every JOB argument; GET audit then says its 403
        return str(client.job_id_of(ref))
    rows = [row for row in everyone if row.get("name") == ref]
    if len(rows) > 1:
        ids = ", ".join(f"{row.get('id')} ({row.get('user') or '-'}, {row.get('state')})" for row in rows[:8]) + (
            " …" if len(rows) > 8 else "")
        raise ValidationError(f"{len(rows)} jobs are named {ref[:80]!r}: {ids}", field="job_id",
                              hint=f"give the id of the one you mean, e.g. --job {rows[0].get('id')} (newest first)",
                              details={"ids": [str(row.get("id")) for row in rows]})
    if not rows:
        raise NotFoundError(f"no job has the id or the name {ref[:80]!r} (among everyone's newest {NAMED_FROM} jobs)",
                            field="job_id", hint="ids look like j-… (leases l-…); `jupyter-sched jobs --all` lists "
                                                 "each job's id and name")
    return str(rows[0]["id"])


def audit(client: Any, args: argparse.Namespace, io: Any) -> int:
    """``jupyter-sched audit``: the decision log, one line per row (``--json``: the rows)."""
    params = {"limit": str(args.limit)}
    if args.action:
        params["action"] = args.action
    if args.user:
        params["user"] = args.user
    if getattr(args, "actor", None):  # hubadmin25 B10: "every act by an admin this month"
        params["actor"] = args.actor
    for name in ("since", "until"):
        if getattr(args, name, None):
            params[name] = getattr(args, name)
    exclude = sorted({a.strip() for text in getattr(args, "exclude", None) or () for a in text.split(",") if a.strip()})
    if exclude:
        params["exclude"] = ",".join(exclude)
    from ..errors import ValidationError

    try:
        if getattr(args, "job", None):  # hubadmin24 B17: "what happened to j-…?" was audit --user U | grep
            params["job_id"] = _audited_job(client, args.job)  # a name as well (newuser37 n7); refused as --job
        rows = unwrap_list(client.call(Req("GET", "audit", params=params)), "audit")
    except ValidationError as exc:  # a value typed wrong is a usage error: exit 2, as argparse's (hubadmin25 B14)
        option = {"action": "--action", "exclude": "--exclude", "since": "--since", "until": "--until",
                  "limit": "--limit", "job_id": "--job"}.get(str(exc.field))
        if option is None:
            raise
        from .main import EXIT_USAGE, PROG, error_line, failure

        line = error_line("audit", exc)
        if option not in line:  # the option typed, as argparse's usage errors name it
            line = line.replace(f"{PROG} audit: ", f"{PROG} audit: {option}: ", 1)
        print(failure(args, line, exc), file=io.err)
        return EXIT_USAGE
    more = _more_match(client, params, rows, args.limit)
    if getattr(args, "json", False):
        import json

        print(json.dumps(rows, indent=2), file=io.out)
        if more:
            print(more, file=io.err)
        return 0
    if getattr(args, "csv", False):
        print(_audit_csv(rows).rstrip("\n"), file=io.out)
        if more:
            print(more, file=io.err)  # the CSV stays rows only
        return 0
    if not rows:
        related = _RECORDED_AS.get(str(args.action or ""))
        print("no audit rows match" + (f" — {related}" if related else ""), file=io.out)
        return 0
    from ..model.units import clocks_said
    from ..wording.reasons import wire_time

    now = datetime.now(timezone.utc)
    table = [["TIME", "ACTOR", "ACTION", "USER", "JOB", "MESSAGE"]]
    for row in rows:
        # the message's clocks in the TIME column's zone, the reader's (newuser38 n30: "… idle at Dec 7 11:02:00
        # UTC" beside 03:01:30 PST); a clock without its date is of the row's day
        table.append([record_time(row.get("at"), now), str(row.get("actor") or ""),
                      str(row.get("action") or ""), str(row.get("user") or "-"), str(row.get("job_id") or "-"),
                      clocks_said(str(row.get("message") or ""), now, ref=wire_time(row.get("at")))])
    _print(table, io)
    if more:
        print(more, file=io.out)
    return 0


def _more_match(client: Any, params: dict[str, str], rows: list[dict[str, Any]], limit: int) -> str:
    """A line when more rows match than ``limit`` showed (hubadmin25 B10: 10,000 rows printed and nothing
    said whether more matched): one row older than the oldest shown is asked for, by id; "" when none."""
    if len(rows) < limit or not rows:
        return ""
    oldest = min(rows, key=lambda r: int(r.get("id") or 0))
    older = unwrap_list(client.call(Req("GET", "audit", params={**params, "limit": "1",
                                                                "until": str(oldest.get("at"))})), "audit")
    if not older:  # (a row at the very microsecond of the oldest shown could still be cut: not said)
        return ""
    return (f"{len(rows)} row{'' if len(rows) == 1 else 's'} shown, the newest; more match — older ones with --until {oldest.get('at')} "
            "(then --until the oldest of those, and so on), or raise --limit (at most 10000)")


def _audit_csv(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV: ``id, at, actor, action, user, job_id, message, details`` (details as JSON), by the one CSV
    writer (:func:`~jupyter_sched.textsafe.csv_text`: an actor, user or message starting ``=`` ``+`` ``-`` ``@`` is
    a text cell, never a formula; controls escaped — s30)."""
    import json

    from ..textsafe import csv_text

    return csv_text(["id", "at", "actor", "action", "user", "job_id", "message", "details"],
                    ([row.get("id"), row.get("at"), row.get("actor"), row.get("action"), row.get("user") or "",
                      row.get("job_id") or "", row.get("message") or "",
                      json.dumps(row.get("details") or {}, sort_keys=True)] for row in rows))


def record_time(value: Any, now: datetime, *, seconds: bool = True) -> str:
    """A time of the server's answer (ISO text) as the CLI says clocks (:func:`~jupyter_sched.model.units.clock_text`,
    in the caller's zone; ``seconds``: ``09:57:08 UTC`` today, ``Dec 4 23:10:02 UTC`` before, else ``09:57 UTC``):
    an audit record's (hubadmin23 A15: a bare ``2026-12-05 09:57:08`` with no zone), ``jobs``' oldest shown
    (newuser28 n7: ``2026-12-06T01:29:53.024250Z``); a value this cannot read is shown as sent."""
    from ..model.units import clock_text

    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value or "")
    return clock_text(when, now, seconds=seconds)


def _by_period(rows: list[dict[str, Any]], keys: list[str], period: str, now: datetime) -> list[dict[str, Any]]:
    """``rows`` of a report by period (``period`` their length) with each period named as a reader says it
    (:func:`~jupyter_sched.model.periods.period_name`: ``2026-10``, ``2026Q4``; the server's key is its start,
    ``2026-10-01T00:00:00+00:00``) and, for each group of the other keys, a 0 row for every period of the
    report's window (up to ``now``) with no usage (newuser29 n10: ``--quarter 2026Q4 --by period`` listed December alone), in
    the order of the keys, periods by time."""
    window = (_parsed(rows[0].get("since")), _parsed(rows[0].get("until"))) if rows else (None, None)
    starts = period_starts(window[0], min(window[1], now), period) if window[0] and window[1] else []
    groups: dict[tuple[str, ...], dict[str, dict[str, Any]]] = {}
    for row in rows:
        others = tuple(str(row.get(k)) for k in keys if k != "period")
        groups.setdefault(others, {})[str(row.get("period"))] = row
    for others, by_start in groups.items():
        for start in starts:
            if not any(_parsed(key) == start for key in by_start):
                named = dict(zip([k for k in keys if k != "period"], others, strict=True))
                by_start[start.isoformat()] = {**named, "period": start.isoformat(), "allocated_gpu_hours": 0.0,
                                               "utilized_gpu_hours": 0.0, "efficiency": None, "cost": None, "jobs": 0}
    filled = [row for by_start in groups.values() for row in by_start.values()]
    filled.sort(key=lambda row: tuple(str(_parsed(str(row.get(k))) or "") if k == "period" else str(row.get(k))
                                      for k in keys))
    return [{**row, "period": period_name(begins, period)} if (begins := _parsed(str(row.get("period")))) else row
            for row in filled]


def _num(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


_cost = cost_cell
"""A row's COST cell: the one renderer the magics' ``%schedule usage`` shares (newuser31 n9)."""
_pct = efficiency_cell
"""An EFFICIENCY cell: the one renderer the magics' ``%schedule usage`` shares (newuser31 n9)."""


def _print(rows: list[list[str]], io: Any) -> None:
    """Columns padded to their widest cell, each cell's controls, bidirectional and zero-width characters written
    as escapes (an audit row's actor ``amy\u200b`` never prints as ``amy``: red29 R2)."""
    from ..textsafe import escaped_controls

    rows = [[escaped_controls(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip(), file=io.out)


when_arg = _when
"""The argparse ``type`` of ``--since``/``--until`` (:func:`_when`), for other commands (``jobs``)."""
