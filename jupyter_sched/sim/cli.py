"""``jupyter-sched simulate`` and ``jupyter-sched fetch-traces`` (wired as subcommands by the CLI).

::

    jupyter-sched simulate SCENARIO.yaml [--out DIR]        discrete-event run of a scenario file
    jupyter-sched simulate q4.yaml --quotas proposed.yaml   the same arrivals under other quota lines
    jupyter-sched simulate --tiresias n32g4 [--speedup 8]   the Tiresias 60-job trace
    jupyter-sched simulate --openb default --policy FGD --seed 42 [--out DIR]
                                                            FGD protocol replay of an openb workload
    jupyter-sched fetch-traces --dest DIR [--only openb,fgd,tiresias] [--dry-run]

``--out DIR`` writes CSV files (per-job records / curves, summary) and plotly HTML figures.
Exit codes: 0 success, 1 a run failed (message on stderr), 2 bad command line.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from ..errors import NotFoundError, SchedError, ValidationError

if TYPE_CHECKING:
    from ..model import QuotaSet

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """A parser whose mistakes are one line in the CLI's style (``jupyter-sched simulate: what —
    usage [usage_error]``), as ``jupyter-sched``'s other commands say them, not argparse's
    ``usage:`` + ``error:`` pair (new user 14, N24)."""

    def error(self, message: str) -> NoReturn:
        from ..wording.flags import usage_error_line

        self.exit(2, usage_error_line(self.prog, message, self.format_usage(),
                                      options=list(self._option_string_actions)) + "\n")


OFFLINE_EXIT_STATUS = ("Exit status: 0 done; 2 bad input (an option, or a scenario, trace or output folder that is missing "
                       "or unusable: fix the command); 1 could not finish (the [sim] extra missing, a file it could not "
                       "write or fetch); 130 interrupted.")
"""``simulate``'s and ``fetch-traces``' exit statuses, in their --help as every subcommand's (newuser40 n1)."""


SHIPPED_SCENARIO = "benchmarks/scenarios/idle_leases.yaml"
"""The scenario the repository ships (a working day of idle leases on 16 GPUs), named in --help."""

SIMULATE_DESCRIPTION = textwrap.fill(
    "Replay a workload through the real scheduling core offline, in simulated time (no server, no GPU): "
    "a scenario YAML file of your own, last quarter's jobs, or a public trace. It prints a summary "
    "(jobs finished, reclaimed, waiting; waits and utilization) and, with --out, writes CSV files and "
    "HTML figures. A scenario is YAML: name, cluster {nodes, gpus_per_node, model}, optional "
    "profile/quotas/idle/tick/horizon, and jobs [{name, user, team, kind, gpus, submit, runtime, "
    "time_limit, activity}] (the full format: jupyter_sched/sim/scenario.py).", 100)
"""``simulate --help``'s description: what it does and the scenario format in one sentence (newuser41 n7)."""

SIMULATE_EPILOG = (
    "examples:\n"
    f"  jupyter-sched simulate {SHIPPED_SCENARIO} --out sim/\n"
    "      the scenario this repository ships (run from the checkout): a day of idle leases on 16 GPUs\n"
    "  jupyter-sched usage --as-scenario --quarter 2026Q4 > q4.yaml\n"
    "  jupyter-sched simulate q4.yaml --quotas proposed.yaml\n"
    "      last quarter's jobs replayed under a proposed quota line\n"
    "  jupyter-sched fetch-traces --dest DIR --only openb\n"
    "  JUPYTER_SCHED_DATA=DIR jupyter-sched simulate --openb default --policy FGD\n"
    "      a public trace: download it once, then name its folder\n\n" + textwrap.fill(OFFLINE_EXIT_STATUS, 100))
"""``simulate --help``'s examples (each a command that runs as written) and exit statuses."""


def build_parser(prog: str = "jupyter-sched") -> argparse.ArgumentParser:
    """Parser with the ``simulate`` and ``fetch-traces`` subcommands."""
    parser = _Parser(prog=prog, description="Trace-driven simulation of the scheduler.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    sim = sub.add_parser("simulate", help="replay a scenario or a public trace through the scheduler",
                         description=SIMULATE_DESCRIPTION, epilog=SIMULATE_EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    src = sim.add_mutually_exclusive_group(required=True)
    src.add_argument("scenario", nargs="?", help="scenario YAML file")
    src.add_argument("--openb", metavar="WORKLOAD", help="openb pod list (e.g. default, gpushare40), read from the folder "
                          "JUPYTER_SCHED_DATA names (jupyter-sched fetch-traces --dest DIR fills one)")
    src.add_argument("--tiresias", metavar="SPEC", help="Tiresias cluster spec (e.g. n32g4)")
    sim.add_argument("--policy", default="FGD",
                     help="placement policy for --openb: the paper's Random, DotProduct, GpuClustering, GpuPacking, "
                          "BestFit or FGD (default), or ours, FGD-Balanced or FGD-Planned (the best)")
    sim.add_argument("--seed", type=int, default=42, help="shuffle seed for --openb (default 42)")
    sim.add_argument("--speedup", type=float, default=1.0, help="arrival-rate multiplier for --tiresias")
    sim.add_argument("--quotas", metavar="FILE",
                     help="with a scenario: replay it under these quota lines instead of its own — a YAML or JSON "
                          "file with a list of {team, user, gpu_model, guaranteed, borrowing_limit}, or GET "
                          "api/sched/quotas' answer ({quotas: [...]}); e.g. last quarter's history "
                          "(jupyter-sched usage --as-scenario --quarter 2026Q4 > q4.yaml) under a proposed line")
    sim.add_argument("--out", help="folder for CSV files and HTML figures (created if missing; files of the same "
                                   "names already there are refused unless --force)")
    sim.add_argument("--force", action="store_true",
                     help="overwrite output files of the same names already in --out (jobs.csv, summary.csv, …)")
    fetch = sub.add_parser(
        "fetch-traces", help="download the public traces into a folder",
        description="Download the public GPU cluster traces the simulator and the placement benchmarks replay — "
                    "openb (Alibaba's GPU cluster trace v2023, with the FGD paper's published results), Tiresias "
                    "(Philly), Acme and Alibaba's spot-GPU nodes — from raw.githubusercontent.com, pinned to "
                    "commits, each under its own licence (research/study use, Apache-2.0, CC BY 4.0: see "
                    "jupyter_sched/sim/fetch.py). --dry-run lists every URL and where it goes.",
        epilog=OFFLINE_EXIT_STATUS)
    fetch.add_argument("--dest", required=True, help="target folder (then set JUPYTER_SCHED_DATA to it)")
    fetch.add_argument("--only", help="comma-separated groups: openb,fgd,tiresias,acme,spot (default all)")
    fetch.add_argument("--dry-run", action="store_true", help="print the plan, download nothing")
    fetch.add_argument("--overwrite", action="store_true", help="fetch files that already exist")
    return parser


def _simulate(args: argparse.Namespace, out: TextIO) -> int:
    from .outfiles import OPENB_FILES, SCENARIO_FILES, check_out_files, frame_csv, open_out_file
    from .report import allocation_figure, queue_figure, utilization_figure
    from .simulator import simulate

    folder = Path(args.out) if args.out else None
    _check_names(args)
    if folder is not None:  # before the run, as --out's other checks (new user 22, N13: overwritten silently)
        _check_out(folder)
        check_out_files(folder, OPENB_FILES if args.openb is not None else SCENARIO_FILES, force=args.force)
    if args.openb is not None:
        from .fgd_protocol import OUR_POLICIES, PAPER_POLICIES, replay
        from .traces import openb_inventory, read_openb_pods

        known = {p.lower(): p for p in (*PAPER_POLICIES, *OUR_POLICIES)}
        args.policy = known.get(args.policy.strip().lower(), args.policy)  # fgd-planned = FGD-Planned
        if args.policy not in known.values():
            raise ValidationError(f"unknown placement policy {args.policy!r}", field="--policy",
                                  hint="use one of " + ", ".join(known.values()))
        if args.seed < 0:
            raise ValidationError(f"--seed must be 0 or more (got {args.seed})", field="--seed",
                                  hint="the paper's seeds are 42-51")
        pods = [p.shape for p in read_openb_pods(args.openb)]
        res = replay(openb_inventory(), pods, args.policy, seed=args.seed, keep_records=folder is not None)
        out.write(f"openb {args.openb} {args.policy} seed {args.seed}: allocation {res.alloc[100]:.2f} % at 100 % "
                  f"arrived, {res.alloc[-1]:.2f} % at {len(res.alloc) - 1} %; {res.placed}/{res.pods} pods placed; "
                  f"{res.wall_s:.2f} s, {res.decisions_per_s:.0f} decisions/s\n")
        if folder:
            with open_out_file(folder / "curve.csv", force=args.force) as fh:
                fh.write(frame_csv(res.curve(), index=True))
            with open_out_file(folder / "pods.csv", force=args.force) as fh:
                fh.write(frame_csv(res.records_frame()))
            with open_out_file(folder / "allocation.html", force=args.force) as fh:
                allocation_figure({args.policy: res.curve()["alloc"]}).write_html(fh)
            out.write(f"wrote {folder}/curve.csv, pods.csv, allocation.html\n")
        return 0
    if args.tiresias is not None:
        from ..model import ResourceRequest
        from .simulator import SimJob
        from .traces import read_tiresias_cluster, read_tiresias_jobs

        cluster = read_tiresias_cluster(args.tiresias)
        per = cluster.gpus_per_node
        jobs = [SimJob(name=f"tiresias-{j.job_id}", user=f"user{j.job_id % 4}", submit_s=j.submit_s / args.speedup,
                       runtime_s=j.duration_s, time_limit_s=j.duration_s,
                       resources=ResourceRequest(gpus=min(j.num_gpu, per), workers=max(1, -(-j.num_gpu // per))))
                for j in read_tiresias_jobs()]
        result = simulate(cluster.inventory(), jobs)
    else:
        from .scenario import load_scenario

        sc = load_scenario(args.scenario)
        kwargs = sc.simulator_kwargs()
        if args.quotas is not None:
            kwargs["quotas"] = _quotas_file(args.quotas)
        result = simulate(sc.inventory, sc.jobs, **kwargs)
    from .teams import team_lines

    out.write(summary_text(result.summary) + "\n")
    if len(result.teams) > 1:  # per team, so two quota lines can be compared (hubadmin26 B7); one team: the above
        for line in team_lines(result.teams):
            out.write(line + "\n")
    if folder:
        import pandas as pd

        frames = {"jobs.csv": result.jobs, "timeseries.csv": result.timeseries,
                  "summary.csv": pd.DataFrame([result.summary]), "teams.csv": result.teams}
        for name, frame in frames.items():
            with open_out_file(folder / name, force=args.force) as fh:
                fh.write(frame_csv(frame))
        for name, figure in (("queue.html", queue_figure), ("utilization.html", utilization_figure)):
            with open_out_file(folder / name, force=args.force) as fh:
                figure(result.timeseries).write_html(fh)
        out.write(f"wrote {folder}/" + ", ".join(SCENARIO_FILES) + " (every figure: summary.csv)\n")
    else:
        out.write("every figure (--out DIR writes them to summary.csv, with per-job records and charts):\n")
        for key, value in result.summary.items():
            out.write(f"  {key:26s} {_figure(value)}\n")
    return 0


def _quotas_file(path: str) -> QuotaSet:
    """``--quotas FILE``'s lines (:func:`~.scenario.quota_lines`): a list, or a mapping with ``quotas``
    (GET api/sched/quotas' answer, PUT's body; its other keys are not read here).

    Raises:
        NotFoundError / ValidationError: field ``--quotas`` (no such file, not YAML, not lines), or
            ``--quotas[i].<key>`` naming the bad line.
    """
    from collections.abc import Mapping

    from .scenario import quota_lines, read_yaml

    doc = read_yaml(path, "--quotas")
    if isinstance(doc, Mapping):
        if "quotas" not in doc:
            raise ValidationError(f"--quotas {path}: no quotas list in it", field="--quotas",
                                  hint="give a list of lines, or a mapping with quotas: [...] (GET api/sched/quotas)")
        doc = doc["quotas"]
    return quota_lines(doc, "--quotas")


def _figure(value: object) -> str:
    """A summary figure as a reader wants it: 4 significant digits, "-" for none (new user 6, F11:
    "eta_mae_rel 1.916030534351145", "steady_eta_coverage None")."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return str(value)


def summary_text(summary: dict[str, object]) -> str:
    """A simulation's outcome in three lines, in words and units (new user 6, F11: 28 lines of raw
    keys and 16-digit floats)::

        17 jobs: 5 finished, 11 reclaimed when idle (0 false), 1 still running at the 12h horizon · mean JCT 4h36m · …
        ETAs at submit: off by 4h11m at the median over the 2 of 5 jobs that waited and had one
        preemptions 0 · time-outs 0 · GPU-hours allocated 12.5, lost 0.0
    """
    from ..model.units import format_duration

    def num(key: str) -> float | None:
        value = summary.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def dur(key: str) -> str:
        value = num(key)
        return "-" if value is None else format_duration(value)

    mean_wait = dur("avg_wait_s") if num("avg_wait_s") is not None else dur("avg_queue_s")
    wait = mean_wait + _over(summary.get("started"), "started")
    if num("avg_wait_s") is not None and num("avg_queue_s") is not None and dur("avg_queue_s") != mean_wait:
        wait += f" (first waits {dur('avg_queue_s')}; the rest after preemption)"  # new user 18, N9
    makespan = ("≥ " if summary.get("makespan_open") else "") + dur("makespan_s")  # work ran on to the horizon
    # each mean says what it is over (newuser38 n19: "1 waited · mean wait 47m34s" was the mean of all 7 jobs)
    head = (f"{summary.get('jobs', 0)} jobs: {_fates(summary, dur)} · mean JCT {dur('avg_jct_s')}"
            f"{_over(summary.get('finished'), 'finished')} · mean wait {wait} · makespan {makespan}")
    waited, coverage = summary.get("eta_waited_jobs"), num("eta_coverage")
    if num("eta_mae_s") is None:
        eta = "ETAs at submit: no job waited with an ETA to check"
    else:
        had = round(coverage * waited) if coverage is not None and isinstance(waited, int) else None
        over = f"the {had} of {waited} jobs that waited and had one" if had is not None and had != waited else \
            f"{waited} job{'' if waited == 1 else 's'} that waited"
        eta = f"ETAs at submit: off by {dur('eta_mae_s')} at the median over {over}"
    alloc, lost = num("gpu_h_allocated"), num("lost_gpu_h")
    tail = (f"preemptions {summary.get('preemptions', 0)} · time-outs {summary.get('timeouts', 0)} · GPU-hours "
            f"allocated {'-' if alloc is None else f'{alloc:.1f}'}, lost {'-' if lost is None else f'{lost:.1f}'}")
    return "\n".join((head, eta, tail))


def _over(count: object, which: str) -> str:
    """`` over the 5 finished``: the jobs a mean of the summary is over ("" when not known)."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return ""
    return f" over the {which} one" if count == 1 else f" over the {count} {which}"


def _fates(summary: dict[str, object], dur: Callable[[str], str]) -> str:
    """What happened to every job: ``5 finished, 11 reclaimed when idle (0 false), 1 still running at
    the 12h horizon`` (new user 8, N11: "17 jobs, 5 finished" read as 12 jobs that never finished,
    in a scenario about idle reclaim). Time-outs are on the third line; the counts add up to jobs."""
    def count(key: str) -> int:
        value = summary.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    parts = [f"{count('finished')} finished"]
    if count("timeouts"):
        parts.append(f"{count('timeouts')} stopped at their time limit")
    if count("reclaimed") or count("false_reclaims"):
        parts.append(f"{count('reclaimed')} reclaimed when idle ({count('false_reclaims')} false)")
    horizon = summary.get("horizon_s")
    hours = float(horizon) / 3600 if isinstance(horizon, (int, float)) and not isinstance(horizon, bool) else None
    at = " at the end" if hours is None else f" at the {hours:g}h horizon" if hours.is_integer() else \
        f" at the {dur('horizon_s')} horizon"
    if count("running_at_end"):
        parts.append(f"{count('running_at_end')} still running{at}")
    if count("pending_at_end"):
        parts.append(f"{count('pending_at_end')} still waiting{at}")
    if count("rejected"):
        parts.append(f"{count('rejected')} refused (can never run here)")
    return ", ".join(parts)


def _check_out(folder: Path) -> None:
    """``--out`` is a folder this process can write, created now if missing — checked before the
    run, not after it (new user 20, N12: ``--out /etc/passwd`` ran the whole simulation, then
    failed "file exists", throwing the run away).

    Raises:
        ValidationError: field ``--out``: a file, or a folder that cannot be created or written.
    """
    if folder.exists() and not folder.is_dir():
        raise ValidationError(f"--out {str(folder)[:200]} is a file; give a folder (it is created if missing)",
                              field="--out", hint="e.g. --out sim-results")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValidationError(f"--out {str(folder)[:200]}: cannot create the folder ({exc.strerror or exc})",
                              field="--out", hint="give a folder you can write, e.g. --out sim-results") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValidationError(f"--out {str(folder)[:200]}: the folder is not writable by you", field="--out",
                              hint="give a folder you can write, e.g. --out sim-results")


def _check_names(args: argparse.Namespace) -> None:
    """Refuse an empty ``--openb`` / ``--tiresias`` before any file is looked for, so the error
    names the argument (not a missing data folder, which would send the user to the wrong fix).

    Raises:
        ValidationError: field ``--openb`` or ``--tiresias``.
    """
    if args.openb is not None and not args.openb.strip():
        from .traces import OPENB_WORKLOADS

        raise ValidationError("--openb needs a workload name", field="--openb",
                              hint="e.g. --openb default; the paper's workloads: " + ", ".join(OPENB_WORKLOADS))
    if args.quotas is not None and args.scenario is None:
        raise ValidationError("--quotas goes with a scenario file: the public traces have no teams",
                              field="--quotas", hint="e.g. jupyter-sched simulate q4.yaml --quotas proposed.yaml")
    if args.tiresias is not None and not args.tiresias.strip():
        raise ValidationError("--tiresias needs a cluster spec name", field="--tiresias",
                              hint="e.g. --tiresias n32g4 for 32 nodes x 4 GPUs; also n1g4, n160g8, n256g8")


def _fetch(args: argparse.Namespace, out: TextIO) -> int:
    from .fetch import fetch, plan_downloads

    plan = plan_downloads(args.dest, args.only.split(",") if args.only else None)
    if args.dry_run:
        for item in plan:
            out.write(f"{item.url} -> {item.path}\n")
        return 0
    def progress(line: str) -> None:
        out.write(line + "\n")

    written = fetch(plan, overwrite=args.overwrite, progress=progress)
    out.write(f"{written} files written under {args.dest}; set JUPYTER_SCHED_DATA={args.dest}\n")
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``simulate`` or ``fetch-traces`` with ``argv`` (without the program name).

    Returns:
        The exit code (0 ok, 1 failed, 2 usage).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        import contextlib

        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # --help, a usage error: to the streams given
            args, extras = parser.parse_known_args(list(argv) if argv is not None else None)
            if extras:  # said with the subcommand's usage, not the whole program's
                actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
                actions[0].choices[args.command].error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    said = f"jupyter-sched {args.command}: "  # every line as the CLI's others: what — the fix [code]
    try:
        return _simulate(args, out) if args.command == "simulate" else _fetch(args, out)
    except SchedError as exc:
        hint = f" — {exc.hint}" if exc.hint else ""
        err.write(f"{said}{exc.message}{hint} [{exc.code}]\n")
        # bad input is 2, as every command's (newuser38 n2): here every refusal is of what was typed or the files it
        # names (a scenario, an output folder, traces not fetched)
        return 2 if isinstance(exc, ValidationError | NotFoundError) else 1
    except ModuleNotFoundError as exc:  # a slim install: the simulator's libraries are an extra
        if exc.name and exc.name.split(".")[0] in ("pandas", "plotly", "scipy", "numpy"):
            from ..extras import install_extra

            err.write(f"{said}needs {exc.name.split('.')[0]}, which comes with the [sim] extra — "
                      f"{install_extra('sim')} [missing_extra]\n")
            return 1
        raise
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        err.write(f"{said}{where}{(exc.strerror or str(exc)).lower()} [os_error]\n")
        return 1
    except KeyboardInterrupt:  # Ctrl-C of a long replay was a traceback (newuser40 n1, found beside it)
        err.write(f"{said}interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
