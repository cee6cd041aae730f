"""``jupyter-sched simulate`` / ``fetch-traces`` entry point (``jupyter_sched.sim.cli.main``).

Downloads cannot run here (no network): ``fetch-traces`` is checked through its plan (URLs pinned
to the source commits, target paths in the shared-data layout) and ``--dry-run``.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from jupyter_sched.sim.cli import main
from jupyter_sched.sim.fetch import GROUPS, fetch, plan_downloads

SCENARIO = """\
name: tiny
cluster: {nodes: 1, gpus_per_node: 2}
jobs:
  - {name: a, gpus: 1, submit: 0m, runtime: 10m, time_limit: 10m}
  - {name: b, gpus: 2, submit: 1m, runtime: 5m, time_limit: 5m}
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_fetch_plan_points_at_the_pinned_public_sources(tmp_path: Path) -> None:
    plan = plan_downloads(tmp_path)
    urls = {p.path.relative_to(tmp_path).as_posix(): p.url for p in plan}
    assert urls["openb/openb_pod_list_default.csv"] == (
        "https://raw.githubusercontent.com/alibaba/clusterdata/7a6c496e4f4b6ce6150be8f881cb051bf2abff42/"
        "cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv")
    assert urls["fgd_expected_results/analysis_allo_discrete.csv"].startswith(
        "https://raw.githubusercontent.com/hkust-adsl/kubernetes-scheduler-simulator/8f3d6417")
    assert urls["tiresias/60_job.csv"].endswith("/SymbioticLab/Tiresias/959f9b08f44fa1b4f2b3aed79b01e4d439264a94"
                                                "/simulator/60_job.csv")
    assert sum(1 for k in urls if k.startswith("openb/openb_pod_list_")) == 24
    assert all(u.startswith("https://raw.githubusercontent.com/") for u in urls.values())
    assert {p.path.parts[len(tmp_path.parts)] for p in plan} == {
        "openb", "fgd_expected_results", "tiresias", "acme", "alibaba_spot_gpu_v2026"}
    assert set(GROUPS) == {"openb", "fgd", "tiresias", "acme", "spot"}


def test_fetch_writes_the_planned_files_through_the_opener(tmp_path: Path) -> None:
    plan = plan_downloads(tmp_path, ["tiresias"])
    written = fetch(plan, opener=lambda url: url.encode())
    assert written == len(plan) == 6
    assert (tmp_path / "tiresias" / "n32g4.csv").read_bytes().endswith(b"/simulator/n32g4.csv")
    assert fetch(plan, opener=lambda url: b"") == 0  # existing files are kept


def test_fetch_traces_dry_run_prints_the_plan_and_bad_groups_fail(tmp_path: Path) -> None:
    code, out, _ = run("fetch-traces", "--dest", str(tmp_path), "--only", "fgd", "--dry-run")
    assert code == 0 and len(out.splitlines()) == 3 and not any(tmp_path.iterdir())
    code, _, err = run("fetch-traces", "--dest", str(tmp_path), "--only", "imagenet", "--dry-run")
    assert code == 2 and "imagenet" in err


def test_simulate_a_scenario_writes_records_and_figures(tmp_path: Path) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    code, out, err = run("simulate", str(path), "--out", str(tmp_path / "out"))
    assert code == 0, err
    # new user 6, F11: three lines in words and units, then where every figure went (no raw dump)
    lines = out.splitlines()
    assert re.fullmatch(r"\d+ jobs: \d+ finished · mean JCT \S+ over the (\d+ )?finished( one)? · "
                        r"mean wait \S+ over the (\d+ )?started( one)? · makespan \S+", lines[0]), out
    assert lines[1].startswith("ETAs at submit: ") and lines[2].startswith("preemptions "), out
    assert "(every figure: summary.csv)" in lines[3] and "avg_jct_s" not in out and "None" not in out, out
    for name in ("jobs.csv", "timeseries.csv", "summary.csv", "teams.csv", "queue.html", "utilization.html"):
        assert (tmp_path / "out" / name).is_file()
    code, out, err = run("simulate", str(path))  # without --out: the figures are printed, readably
    assert code == 0, err
    assert "avg_jct_s" in out and "None" not in out and not re.search(r"\d\.\d{6,}", out), out


@pytest.mark.parametrize("argv", [["simulate"], ["bogus"]], ids=["simulate without a source", "unknown command"])
def test_a_bad_command_line_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    capsys.readouterr()


def test_a_missing_scenario_file_is_an_error_line_not_a_traceback(tmp_path: Path) -> None:
    code, _, err = run("simulate", str(tmp_path / "nope.yaml"))
    assert code == 2 and err.startswith("jupyter-sched simulate: scenario file") and err.endswith("[not_found]\n"), err


def test_the_jupyter_sched_command_dispatches_simulate_without_a_server(tmp_path: Path) -> None:
    """``jupyter-sched simulate`` is a subcommand of the main CLI and needs no running server."""
    from jupyter_sched.cli.main import main as cli_main

    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(SCENARIO)
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["simulate", str(scenario), "--out", str(tmp_path / "out")], out=out, err=err)
    assert code == 0, err.getvalue()
    assert (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, want", [
    (["--openb", "default", "--policy", "Nope"], "jupyter-sched simulate: unknown placement policy 'Nope'"),
    (["--openb", "default", "--seed", "-1"], "jupyter-sched simulate: --seed must be 0 or more"),
    (["--openb="], "jupyter-sched simulate: --openb needs a workload name"),
    (["--tiresias="], "jupyter-sched simulate: --tiresias needs a cluster spec name"),
], ids=["unknown policy", "negative seed", "empty workload", "empty cluster spec"])
def test_bad_simulate_arguments_are_an_error_line(argv: list[str], want: str) -> None:
    code, out, err = run("simulate", *argv)
    assert code == 2 and not out and err.startswith(want), err


IDLE_SCENARIO = """\
name: idle-tiny
cluster: {nodes: 1, gpus_per_node: 4}
profile: {reclaim: true}
idle: {window: 30m, grace: 5m, warning: 0m, busy_kernel_window: 3h, threshold_pct: 5}
tick: 1m
horizon: 3h
jobs:
  - {name: forgets, kind: lease, gpus: 1, submit: 0m, runtime: 10h, activity: [{for: 20m, util: 80, kernel: busy}]}
  - {name: endpoint, kind: inference, gpus: 1, submit: 0m, runtime: 10h,
     activity: [{for: 10h, util: 3, kernel: busy}]}
  - {name: train, gpus: 1, submit: 0m, runtime: 30m, time_limit: 1h}
"""


def test_newuser8_n11_the_summary_says_what_happened_to_every_job_with_reclaims(tmp_path: Path) -> None:
    """New user 8, N11: the README's first simulate (idle_leases.yaml) printed "17 jobs, 5
    finished" with no reclaim figure, in a scenario about idle reclaim; now every job's fate is
    counted on the first line and in summary.csv (new columns appended after the old ones)."""
    import csv

    path = tmp_path / "idle.yaml"
    path.write_text(IDLE_SCENARIO, encoding="utf-8")
    code, out, err = run("simulate", str(path), "--out", str(tmp_path / "out"))
    assert code == 0, err
    head = out.splitlines()[0]
    assert head.startswith("3 jobs: 1 finished, 1 reclaimed when idle (0 false), 1 still running at the 3h horizon · "), out
    with open(tmp_path / "out" / "summary.csv", encoding="utf-8") as f:
        [row] = list(csv.DictReader(f))
    assert list(row)[:2] == ["jobs", "finished"] and list(row).index("cycles") < list(row).index("reclaimed")
    assert (row["reclaimed"], row["false_reclaims"], row["running_at_end"], row["pending_at_end"], row["rejected"]) \
        == ("1", "0", "1", "0", "0"), row
    with open(tmp_path / "out" / "jobs.csv", encoding="utf-8") as f:
        fates = {r["name"]: (r["outcome"], r["false_reclaims"]) for r in csv.DictReader(f)}
    assert fates == {"forgets": ("reclaimed", "0"), "endpoint": ("running", "0"), "train": ("succeeded", "0")}, fates


HORIZON_SCENARIO = """\
name: hor
cluster: {nodes: 1, gpus_per_node: 8}
horizon: 1h
jobs:
  - {name: a, user: u, gpus: 2, submit: 0m}
  - {name: b, user: u, gpus: 1, submit: 10m, runtime: 20m}
"""

RECLAIM_SCENARIO = """\
name: exA
cluster: {nodes: 1, gpus_per_node: 8, model: A100}
profile: {backfill: true, preemption: true, reclaim: true}
quotas:
  - {team: a, guaranteed: 4}
  - {team: b, guaranteed: 4}
horizon: 3h
jobs:
  - {name: b6, user: ub, team: b, gpus: 6, submit: 0m, runtime: 2h, time_limit: 2h}
  - {name: a4, user: ua, team: a, gpus: 4, submit: 10m, runtime: 30m, time_limit: 1h}
"""


def test_newuser18_n9_makespan_counts_work_running_at_the_horizon_and_wait_counts_waits_after_preemption(
        tmp_path: Path) -> None:
    """``makespan 30m`` for a run whose job was still running at its 1 h horizon, and ``mean wait
    0s`` when b6 waited 30 minutes after its reclaim (new user 18, N9, the scenarios as reported)."""
    import csv

    path = tmp_path / "hor.yaml"
    path.write_text(HORIZON_SCENARIO, encoding="utf-8")
    code, out, err = run("simulate", str(path), "--out", str(tmp_path / "hor"))
    assert code == 0, err
    assert "· makespan ≥ 1h" in out.splitlines()[0], out
    with open(tmp_path / "hor" / "summary.csv", encoding="utf-8") as f:
        [row] = list(csv.DictReader(f))
    assert float(row["makespan_s"]) == 3600.0 and row["makespan_open"] == "True", row
    path = tmp_path / "exA.yaml"
    path.write_text(RECLAIM_SCENARIO, encoding="utf-8")
    code, out, err = run("simulate", str(path), "--out", str(tmp_path / "exA"))
    assert code == 0, err
    with open(tmp_path / "exA" / "jobs.csv", encoding="utf-8") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    assert float(rows["b6"]["queue_s"]) == 0.0 and float(rows["b6"]["wait_s"]) > 1500, rows["b6"]  # ~30 min again
    assert "mean wait " in out and "(first waits 0s; the rest after preemption)" in out.splitlines()[0], out


def test_newuser38_n31_a_download_that_fails_names_the_host_the_url_and_a_way_round(tmp_path: Path) -> None:
    """newuser38 n31: offline, ``fetch-traces`` ended with Python's ``<urlopen error [errno -2] name or service not
    known> [os_error]`` — no URL, no host, no way round; and its --help had no description. Real sockets on this host:
    a port nothing listens on (unreachable), and a real HTTP server answering 404, each fetched through the real
    opener (urllib)."""
    import http.server
    import socket
    import threading

    from jupyter_sched.sim.fetch import Download, DownloadError

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    with pytest.raises(DownloadError) as unreachable:
        fetch([Download(f"http://127.0.0.1:{closed}/openb/x.csv", tmp_path / "x.csv")])
    said = str(unreachable.value)
    assert said.startswith("cannot reach 127.0.0.1 (") and f"to download http://127.0.0.1:{closed}/openb/x.csv" in said
    assert "HTTPS_PROXY" in said and "`--dry-run` lists" in said, said

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)  # serves cwd: 404s
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        with pytest.raises(DownloadError) as missing:
            fetch([Download(f"http://127.0.0.1:{port}/no-such-trace.csv", tmp_path / "y.csv")])
        assert f"127.0.0.1 answered 404 File not found for http://127.0.0.1:{port}/no-such-trace.csv" in str(missing.value)
    finally:
        server.shutdown()
        server.server_close()
    out = io.StringIO()
    assert main(["fetch-traces", "--help"], out=out) == 0
    assert "Download the public GPU cluster traces" in out.getvalue() and "licence" in out.getvalue()
