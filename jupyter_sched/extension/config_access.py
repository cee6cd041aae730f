"""Traitlets of the REST surface and of admission: who is who, who is admin, who is in which
team and who may use which priority class (see :mod:`.config` and :mod:`jupyter_sched.admission`)."""

from __future__ import annotations

from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, Set, Unicode, validate
from traitlets.config import Configurable

from .config import config_error, positive

__all__ = ["HUB_CPU_JOB_CAP", "HUB_PENDING_CAP", "HUB_SUBMIT_RATE", "AccessConfig", "WebConfig"]

HUB_CPU_JOB_CAP = 8
"""``c.SchedApp.max_running_cpu_jobs_per_user`` of a hub's central service when not configured."""
HUB_PENDING_CAP = 200
"""``c.SchedApp.max_pending_jobs_per_user`` of a hub's central service when not configured."""
HUB_SUBMIT_RATE = 120
"""``c.SchedApp.max_submits_per_user_minute`` of a hub's central service when not configured."""


class WebConfig(Configurable):
    """The REST surface: who is who, who is admin, how push streams are bounded."""

    identity_source = Enum(
        ["auto", "owner", "jupyter_user"],
        default_value="auto",
        config=True,
        help="""How a request's scheduler identity is found. "owner": every authenticated caller
        is the server owner, the OS user running the server (a personal server's token holder
        IS its owner; stable across restarts, unlike jupyter_server's per-start anonymous
        name). "jupyter_user": the username the server's IdentityProvider returns (custom or
        hub identity providers). Default "auto": "owner" with jupyter_server's built-in token /
        password identity provider, else "jupyter_user".""",
    )

    admin_users = Set(
        Unicode(),
        default_value=set(),
        config=True,
        help="""Scheduler identities allowed admin endpoints (PUT quotas, audit, other users'
        jobs). Default: empty = only the server owner (OS user running the server), which is
        right for a personal server. On a hub (jupyter-sched serve) these names are admins too,
        besides the hub's admins and holders of the scope c.HubIdentityProvider.admin_scope
        (default "custom:jupyter-sched:admin"); the service's start-up log names all three.""",
    )

    events_queue_size = Int(
        256,
        config=True,
        help="""Events buffered per Server-Sent-Events client. Default: 256. A client that falls
        this far behind is disconnected (it reconnects and refetches state) instead of growing
        server memory without bound.""",
    )

    events_keepalive_s = Float(
        15.0,
        config=True,
        help="""Seconds between SSE keep-alive comments on an idle stream. Default: 15 s, under the
        usual 30-60 s proxy idle timeouts.""",
    )

    inject_kernel_env = Bool(
        True,
        config=True,
        help="""Give kernels started by this server JUPYTER_SCHED_URL, JUPYTER_SCHED_TOKEN and
        JUPYTER_SCHED_KERNEL_ID so %gpu finds the API with no setup. Default: True.""",
    )

    request_threads = Int(
        8,
        config=True,
        help="""Threads that run the store work of API requests, off the server's event loop (so a
        slow database never stalls streams, kernels or other requests). Default: 8; each holds at
        most one database connection at a time. Half as many more serve the GETs that list many
        rows (jobs, leases, queue, audit, usage, telemetry history, metrics), so quick answers
        (config, me, inventory, one job, a submit) never wait in line behind panels' page reads.""",
    )

    gil_switch_interval_ms = Float(
        0.5,
        config=True,
        help="""Longest wait, in milliseconds, of a thread of this server for Python's interpreter
        lock while another runs (``sys.setswitchinterval``; CPython's default is 5 ms). The engine
        decides on its own thread; each SQL statement, socket read or write of a request gives the
        lock up and then waits up to this long to get it back, so a submit that overlapped a
        scheduling cycle waited 5 ms fifteen-odd times. Default: 0.5. 0 leaves the interpreter's
        setting; a value above the process's current interval changes nothing. Set once per
        process, when the first server starts.""",
    )

    cycle_steps_aside = Bool(
        True,
        config=True,
        help="""Whether a full scheduling cycle steps aside while the server's event loop answers
        requests: between two jobs it waits, the interpreter lock released, until the loop has
        nothing left to do (at most 20 ms at a time, then it runs at least 2 ms), so fifty panels'
        polls and a ``jupyter-sched status`` never share the lock with a cycle of hundreds of
        milliseconds. Default: on. Off: the cycle shares the interpreter with the loop as any
        thread does (see ``gil_switch_interval_ms``).""",
    )

    dryrun_concurrency = Int(
        2,
        config=True,
        help="""Dry runs (POST dryrun: a whole scheduling cycle each) computed at once, on their own
        threads. Default: 2. Up to four times as many wait; more are answered 429 "busy" (retry),
        so a burst of what-ifs never starves submits.""",
    )

    @validate("request_threads", "dryrun_concurrency")
    def _check_threads(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if not 1 <= value <= 256:
            raise config_error(proposal["trait"].name, value, "must be 1..256 threads", "set e.g. 8")
        return value

    @validate("events_queue_size")
    def _check_queue_size(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if not 1 <= value <= 100_000:
            raise config_error("events_queue_size", value, "must be 1..100000 events", "set e.g. 256")
        return value

    @validate("events_keepalive_s")
    def _check_keepalive(self, proposal: dict[str, Any]) -> float:
        return positive("events_keepalive_s", float(proposal["value"]))

    @validate("gil_switch_interval_ms")
    def _check_switch_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0 <= value <= 1000:  # NaN fails too
            raise config_error("gil_switch_interval_ms", value, "must be 0..1000 ms", "set e.g. 0.5; 0 = Python's own")
        return value


class AccessConfig(Configurable):
    """Admission (DESIGN *Who is asking*): teams of embedded users and priority-class grants; which account's
    database server the store believes (``db_server_uids``)."""

    db_server_uids = List(
        Int(),
        config=True,
        help="""PostgreSQL on a loopback TCP address (db_url host 127.0.0.1, ::1 or localhost): uids
        besides root, this server's own account and the "postgres" account that may hold that address.
        Before connecting, and again on each connection made, the store checks who accepted it
        and refuses one another account took (a port any account may bind, free while PostgreSQL
        restarts: red team 31, R3). Default: [] (the server runs as "postgres"). A Unix socket
        (?host=/var/run/postgresql) needs no such check.""",
    )

    user_teams = Dict(
        default_value={},
        config=True,
        help="""Teams of users when embedded (hub mode takes teams from hub groups), {user: team}
        or {user: [team, ...]}; a user's first team is charged when a request names none, and a
        request naming a team not theirs is refused (403). Users nobody names are in default_team.
        Default: {} (everyone in default_team). Admins may change memberships at run time: PUT
        api/sched/quotas with "user_teams" in the same shapes replaces them all (audited
        team_members_changed), and that outlives restarts — this setting is applied at a start only
        when it changed since last applied (the start-up log then warns what it replaces); GET
        api/sched/quotas shows the memberships in force and who set them (user_teams_source).
        Team policies may also list members.""",
    )

    unlisted_team_borrowing_limit = Float(
        default_value=0.0, allow_none=True,
        config=True,
        help="""GPUs a team without a quota line of its own may use once any quota line exists (its
        line: guaranteed 0, this borrowing limit, any GPU model; red team 19, R3, as Slurm's
        association enforcement and Kueue's "no quota, not admitted"). Default 0: such a team's GPU
        jobs are refused, saying so and which of the user's teams have a line. None = no limit (the
        old behaviour: work-conserving borrowing by everyone, reclaimable by teams within their
        guarantee). With no quota lines at all nothing is limited. It bounds every scope no line
        covers (red team 20, R2): a team's work on GPU models its lines do not name, and the members
        without a line of their own of a team named only by per-user lines.""",
    )

    priority_grants = Dict(
        default_value={},
        config=True,
        help="""Priority classes granted beyond the team policies, {"users": {user: [classes]},
        "teams": {team: [classes]}}; e.g. {"teams": {"prod": ["high"]}} lets prod's members submit
        priority "high". Default: {} — "high" is granted to nobody (team policies' allowed_priorities
        default to normal and low); a request for a class not granted is refused (403, audited). A team
        with a stored team policy (PUT quotas teams[]) gets no class beyond its allowed_priorities and normal.""",
    )

    max_unfinished_per_user = Int(
        default_value=1000,
        config=True,
        help="""Most jobs and leases one user may have unfinished (pending, admitted, running,
        preempted) at once; a submit beyond it is refused with 429 naming the limit (audited), so one
        user's flood of pending work cannot make everyone's queue slow. 0 = no limit. Default: 1000.""",
    )

    @validate("unlisted_team_borrowing_limit")
    def _check_unlisted(self, proposal: dict[str, Any]) -> float | None:
        value = proposal["value"]
        if value is not None and not 0 <= float(value) < float("inf"):  # NaN fails too
            raise config_error("unlisted_team_borrowing_limit", value, "must be a number of GPUs >= 0 or None",
                               "set 0 (teams without a quota line get no GPUs) or None (no limit)")
        return None if value is None else float(value)

    max_pending_jobs_per_user = Int(
        default_value=0,
        config=True,
        help=f"""Most jobs and leases one user may have pending (waiting to start) at once; a submit,
        lease request or "run now" beyond it is refused with 429 "USER has N pending jobs; at most N
        per user — wait for some to start or cancel them" (audited), and a definition's scheduled
        firing then becomes a rejected run saying so (definition_max_firings_per_user_hour bounds how
        many an hour). Bounds the queue every user's listing, and every cycle, goes through (new
        user 17, N11: one hub user queued 300 jobs in 27 s). max_unfinished_per_user still bounds
        pending + running together. 0 = no limit. Default: {HUB_PENDING_CAP} under JupyterHub
        (jupyter-sched serve); 0 on a single-user server (jupyter lab).""",
    )

    max_submits_per_user_minute = Int(
        default_value=0,
        config=True,
        help=f"""Each user's submit rate: a token bucket of this many submits (POST jobs, lease
        requests, a definition's "run now"; also each create, edit, pause, resume or delete of a job
        definition: each is an audit row) refilled at this many a minute — a burst of that many,
        then one every 60/N s; beyond it 429 with a Retry-After header (seconds) and "retry in N s"
        (audited). Per server process. Scheduled firings of definitions are bounded by
        definition_max_firings_per_user_hour instead. 0 = no limit. Default: {HUB_SUBMIT_RATE}
        under JupyterHub (jupyter-sched serve); 0 on a single-user server (jupyter lab).""",
    )

    max_carried_bytes_held = Int(
        default_value=256 << 20,
        config=True,
        help="""Most bytes of notebooks and scripts that unfinished jobs of ALL users carry in the scheduler's
        store at once (a notebook or script sent with the job, not a path it reads: %%schedule, the panel's "Run
        on GPU", POST jobs' notebook_json/source). The service keeps each carried text several times over while
        its job waits (store rows, caches: ~2.5-6 times its size, verify 25 V6), and the per-user bound (64 MiB)
        alone let twenty users take gigabytes. A submit past it is refused with 429 naming this setting
        (audited); jobs that name a file instead are not affected. 0 = no limit. Default: 268435456 (256 MiB).""",
    )

    @validate("max_unfinished_per_user", "max_pending_jobs_per_user", "max_submits_per_user_minute",
              "max_carried_bytes_held")
    def _check_bounds(self, proposal: dict[str, Any]) -> int:
        """A bound of these is a whole number >= 0 (0 = no limit); the error names it, with an example."""
        value, name = int(proposal["value"]), str(proposal["trait"].name)
        if value < 0:
            example = {"max_unfinished_per_user": "1000", "max_carried_bytes_held": "268435456 (256 MiB)"}.get(name, "200")
            raise config_error(name, value, "must be >= 0", f"e.g. {example}; 0 = no limit")
        return value

    max_ports_per_user = Int(
        default_value=4,
        config=True,
        help="""Most declared ports (inference jobs' ``port``) one user's running services may hold at
        once; a node runs one job per declared port, so more pend (reason names this setting) until
        one of theirs ends (red team 16, R8: well-known ports reserved by jobs that never listen). A
        service that never listens on its port is stopped after 10 minutes. 0 = no cap. Default: 4.""",
    )

    @validate("max_ports_per_user")
    def _check_ports_cap(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value < 0:
            raise config_error("max_ports_per_user", value, "must be >= 0", "e.g. 4; 0 = no cap")
        return value

    reclaim_cooldown_s = Float(
        default_value=900.0,
        config=True,
        help="""Seconds what a reclaim takes back is to be held: a job or lease whose reclaim evicted other
        teams' running (borrowed) work and that ended sooner, by any cause (exit, failure, time limit, release,
        cancel, idle reclaim), holds its team's next reclaims of such work until this long after its reclaim
        (an audit record ``reclaim_dropped`` names the team and the cause; red31/red32 R5: a reclaim then an
        end at once restarted another team's work at no cost to the taker). The team's jobs wait meanwhile,
        the reason saying until when; its other work is not held. 0 = off; at most 3600. Default: 900 (15 min).""",
    )

    time_limits = List(
        Dict(),
        config=True,
        help="""Default and maximum time limits per queue (team) and priority class, e.g.
        ``[{"team": "cv", "default_s": 14400, "max_s": 86400}, {"priority": "low", "max_s": 604800}]``
        (seconds; a rule without ``team`` is every team's, without ``priority`` every class's; the
        most specific applies). A job that gives no time limit gets its queue's ``default_s`` (else
        ``default_time_limit_s``, else ``max_s``) and is stopped there; one asking for more than
        ``max_s`` is refused naming the maximum (admins may), one asking for none (``time_limit 0``)
        is stopped at ``max_s`` once it starts, and an owner lengthens a pending job's limit up to
        it (Slurm's partition ``DefaultTime`` and ``MaxTime``). Backfill and ETAs plan with these
        limits. Default: none.""",
    )

    @validate("time_limits")
    def _check_time_limits(self, proposal: dict[str, Any]) -> list[dict[str, Any]]:
        from ..errors import SchedError
        from ..queues.limits import time_limit_rules

        value = list(proposal["value"])
        try:
            time_limit_rules(value)
        except SchedError as err:
            raise config_error("time_limits", value, err.message,
                               err.hint or "see jupyter-sched's docs/admin.md, Time limits per queue") from None
        return value

    elect_overdue = Float(
        default_value=0.75,
        config=True,
        help="""A pending job that has waited longer than this many times the wait it was promised when
        queued (its first ETA, projected without progress reports; at least 10 minutes) is elected: it
        goes first among the jobs of its priority class and holds its GPU model's backfill reservation,
        so later, lighter jobs start ahead of it only where they end before its reserved start. A bound
        on starvation for big jobs (gangs) that the fair order would let lighter users overtake again
        and again (issue 16; Slurm's age factor plays this role). A user whose running job outran its
        learnt runtime is not elected meanwhile. 0 = off. Default: 0.75 (benchmarks/jct_loaded.py).""",
    )

    @validate("elect_overdue")
    def _check_elect_overdue(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0 <= value <= 100:  # NaN fails too
            raise config_error("elect_overdue", value, "must be between 0 and 100",
                               "e.g. 0.75 (elect a job once it waited 3/4 of its promised wait); 0 = off")
        return value

    max_running_cpu_jobs_per_user = Int(
        default_value=0,
        config=True,
        help=f"""Most CPU-only (0-GPU) jobs one user may have running at once; more are accepted and
        pend (reason names this setting and the numbers) until one of theirs ends. A guard between
        the users of a JupyterHub: 0-GPU work is charged to no quota, and their jobs share the host
        that runs everyone's, so without a cap one user could start hundreds of processes there.
        0 = no cap. Default: {HUB_CPU_JOB_CAP} under JupyterHub (jupyter-sched serve); 0 on a
        single-user server (jupyter lab), whose one user runs what they like on their own machine
        (new user 16, N14).""",
    )

    budget_admission = Unicode(
        default_value="overrun",
        config=True,
        help="""How GPU-hour budgets admit work. Default "overrun": new GPU work pends once the
        budget is spent; a job may start on any remainder, and its submit answer warns when its
        GPUs times its time limit pass what is left. "safe": such a job pends too, what is left
        counting out what the running jobs may still spend by their time limits (as Slurm's
        AccountingStorageEnforce=safe), its reason naming the numbers and the longest time limit
        that fits; a batch job with no time limit then pends while a budget governs it. A kernel's
        GPU lease has no time limit: under "safe" it starts only while what is left covers its GPUs
        for lease_budget_hours, holds that much ahead of its teammates' jobs while it runs, and is
        released (its kernel keeps running, without the GPUs) once the budget is spent.""",
    )

    lease_budget_hours = Float(
        default_value=1.0,
        config=True,
        help="""Under budget_admission = "safe": the hours of its GPUs a kernel's GPU lease must find
        left in its team's (or user's) GPU-hour budget to start, and keeps held ahead of its
        teammates' jobs while it runs (a 2-GPU lease: 2 GPU-hours). A lease has no time limit, so
        this is its bound: it is released, audited budget_release, once the budget is spent.
        Default: 1 (an hour of a notebook session). Ignored under "overrun".""",
    )

    @validate("lease_budget_hours")
    def _check_lease_budget_hours(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0 < value <= 366 * 24:  # NaN fails too
            raise config_error("lease_budget_hours", value, "must be above 0 and at most a year of hours",
                               "e.g. 1")
        return value

    @validate("budget_admission")
    def _check_budget_admission(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        if value not in ("overrun", "safe"):
            raise config_error("budget_admission", value, "must be overrun or safe", "e.g. \"safe\"")
        return value

    @validate("max_running_cpu_jobs_per_user")
    def _check_cpu_job_cap(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value < 0:
            raise config_error("max_running_cpu_jobs_per_user", value, "must be >= 0", "e.g. 8; 0 = no cap")
        return value

    @validate("user_teams", "priority_grants")
    def _check_admission(self, proposal: dict[str, Any]) -> dict[str, Any]:
        from ..admission import AdmissionPolicy
        from ..errors import ValidationError

        name = proposal["trait"].name
        value = dict(proposal["value"])
        try:
            AdmissionPolicy.from_settings({name: value})
        except ValidationError as err:
            raise config_error(name, value, err.message, err.hint or "see the trait help") from None
        return value


def check_team(name: str, team: str) -> None:
    """The load-time error of a team name a job could not name (the rule of ``PUT quotas`` and a
    job's ``team``, :func:`~jupyter_sched.admission.rules.check_team_name`), for ``quotas[i].team``
    and ``default_team``: ``c.SchedApp.quotas[0].team = 'ml\u202e': contains the invisible character
    U+202E. Fix: …`` (new user 8, N10 follow-up: the config took what REST refused)."""
    from ..admission.rules import check_team_name
    from ..errors import ValidationError

    try:
        check_team_name(team, name)
    except ValidationError as err:
        shown = team if len(team) <= 40 else team[:40] + "…"
        raise config_error(name, shown, err.message.removeprefix(name).strip(), err.hint or "see the trait help") \
            from None
