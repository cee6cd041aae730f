"""nvidia-smi parsers on every real capture; the topology parser (case 007); foreign memory (case 014)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.inventory import gpus_from_smi, parse_compute_apps_csv, parse_query_gpu_csv, parse_topology
from jupyter_sched.inventory.smi import capture_sections, parse_gpu_list, parse_mig_table, smi_number
from jupyter_sched.model import Inventory, Job, JobSpec, JobState, Node
from jupyter_sched.model.job import Allocation
from jupyter_sched.reclaim import foreign_gpu_reports, gpu_occupancy

from .conftest import SMI, require

UUID0 = "GPU-00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class Capture:
    file: str
    name: str
    bus_id: str
    total: float
    idle_used: float
    load_used: float
    idle_util: float | None
    load_util: float | None
    load_power: float
    load_temp: float
    mig: bool
    load_processes: tuple[tuple[int, float, str], ...]
    migs: tuple[tuple[str, int, float], ...] = ()  # profile, GI id, total MiB


CAPTURES = [
    Capture("linux-x86_64__nvidia-h200__590.48.01.txt", "NVIDIA H200", "00000000:83:00.0", 143771, 0, 32362,
            0.0, 100.0, 627.4, 52.0, False,
            ((10291, 2566, "/root/tools/memhog"), (10293, 1542, "/root/tools/memhog"), (10309, 28234, "./gpu_burn"))),
    Capture("linux-x86_64__nvidia-h100-mig__590.48.01.txt", "NVIDIA H100 80GB HBM3", "00000000:00:09.0", 81559, 59,
            11125, None, None, 433.78, 53.0, True,
            ((21180, 2296, "/root/tools/memhog"), (21181, 1272, "/root/tools/memhog"), (21198, 7484, "./gpu_burn")),
            migs=(("3g.40gb", 2, 40448), ("2g.20gb", 3, 20096), ("1g.10gb", 9, 9984), ("1g.10gb", 10, 9984))),
    Capture("linux-x86_64__nvidia-l40s__595.80.txt", "NVIDIA L40S", "00000000:01:00.0", 46068, 0, 1235,
            100.0, 9.0, 110.23, 54.0, False, ((20037, 538, "ffmpeg"), (20038, 681, "ffmpeg"))),
]


def test_every_capture_has_expectations() -> None:
    assert {p.name for p in require(SMI).glob("*.txt")} == {c.file for c in CAPTURES}


def sections(capture: Capture) -> dict[str, str]:
    return capture_sections((require(SMI) / capture.file).read_text())


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.name for c in CAPTURES])
def test_query_gpu_csv_idle_and_load(capture: Capture) -> None:
    s = sections(capture)
    idle, = parse_query_gpu_csv(s["idle :: query-gpu (csv, what the exporter parses)"])
    load, = parse_query_gpu_csv(s["load :: query-gpu (csv, what the exporter parses)"])
    for row in (idle, load):
        assert (row.index, row.uuid, row.name, row.pci_bus_id) == (0, UUID0, capture.name, capture.bus_id)
        assert row.memory_total_mib == capture.total and row.mig_enabled is capture.mig
    assert (idle.memory_used_mib, load.memory_used_mib) == (capture.idle_used, capture.load_used)
    assert (idle.utilization_pct, load.utilization_pct) == (capture.idle_util, capture.load_util)
    assert (load.power_w, load.temperature_c) == (capture.load_power, capture.load_temp)


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.name for c in CAPTURES])
def test_compute_apps_csv_idle_and_load(capture: Capture) -> None:
    s = sections(capture)
    assert parse_compute_apps_csv(s["idle :: query-compute-apps (per-process)"]) == []
    load = parse_compute_apps_csv(s["load :: query-compute-apps (per-process)"])
    assert [(p.pid, p.used_memory_mib, p.process_name) for p in load] == list(capture.load_processes)
    assert {p.gpu_uuid for p in load} == {UUID0}


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.name for c in CAPTURES])
def test_gpu_list_and_mig_table(capture: Capture) -> None:
    s = sections(capture)
    gpus, migs = parse_gpu_list(s["capabilities :: list (-L)"])
    assert gpus == [(0, capture.name, UUID0)]
    migs = parse_mig_table(s["load :: nvidia-smi (default table)"], migs)
    assert [(m.profile, m.gpu_instance_id, m.memory_total_mib) for m in migs] == list(capture.migs)
    assert all(m.uuid.startswith("MIG-") for m in migs)


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.name for c in CAPTURES])
def test_single_gpu_capture_topology_has_no_pairs(capture: Capture) -> None:
    topo = parse_topology(sections(capture)["capabilities :: topo -m"])
    assert topo.gpu_indices == (0,) and topo.nvlink_pairs == frozenset()


@pytest.mark.parametrize("raw,want", [("75412 MiB", 75412.0), ("0 %", 0.0), ("71.15 W", 71.15), ("[N/A]", None),
                                      ("N/A", None), ("", None), ("[Requested functionality has been deprecated]", None)],
                         ids=["MiB", "percent", "watts", "bracketed N/A", "bare N/A", "empty", "deprecated"])
def test_smi_number(raw: str, want: float | None) -> None:
    assert smi_number(raw) == want


def test_query_without_uuid_is_rejected_with_the_fix() -> None:
    with pytest.raises(ValidationError, match="index and uuid") as info:
        parse_query_gpu_csv("name, memory.used [MiB]\nNVIDIA H200, 4 MiB\n")
    assert "--query-gpu=index,uuid" in (info.value.hint or "")


def test_cut_off_csv_row_is_rejected() -> None:
    with pytest.raises(ValidationError, match="line 2 has 2 values for 3 columns"):
        parse_query_gpu_csv("index, uuid, memory.used [MiB]\n0, GPU-1\n")


# ---- case 007 -------------------------------------------------------------------------------
NODE_A = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7
GPU0\t X \tNV4\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS
GPU1\tNV4\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS
GPU2\tSYS\tSYS\t X \tNV4\tSYS\tSYS\tSYS\tSYS
GPU3\tSYS\tSYS\tNV4\t X \tSYS\tSYS\tSYS\tSYS
GPU4\tSYS\tSYS\tSYS\tSYS\t X \tNV4\tSYS\tSYS
GPU5\tSYS\tSYS\tSYS\tSYS\tNV4\t X \tSYS\tSYS
GPU6\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tNV4
GPU7\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tNV4\t X\x20
"""
NODE_B = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7
GPU0\t X \tSYS\tNV12\tSYS\tSYS\tSYS\tSYS\tSYS
GPU1\tSYS\t X \tSYS\tNV12\tSYS\tSYS\tSYS\tSYS
GPU2\tNV12\tSYS\t X \tSYS\tSYS\tSYS\tSYS\tSYS
GPU3\tSYS\tNV12\tSYS\t X \tSYS\tSYS\tSYS\tSYS
GPU4\tSYS\tSYS\tSYS\tSYS\t X \tNV12\tSYS\tSYS
GPU5\tSYS\tSYS\tSYS\tSYS\tNV12\t X \tSYS\tSYS
GPU6\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tNV12
GPU7\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tNV12\t X\x20
"""


@pytest.mark.parametrize("text,pairs,link,count", [
    (NODE_A, {(0, 1), (2, 3), (4, 5), (6, 7)}, "NV4", 4),
    (NODE_B, {(0, 2), (1, 3), (4, 5), (6, 7)}, "NV12", 12),
], ids=["node A: adjacent pairs, 4 links", "node B: pairs 0-2 and 1-3 are not adjacent"])
def test_case_007_topology_parser_reads_pairs_from_the_matrix(text: str, pairs: set[tuple[int, int]], link: str,
                                                              count: int) -> None:
    topo = parse_topology(text)
    assert topo.gpu_indices == tuple(range(8))
    assert topo.nvlink_pairs == frozenset(pairs)
    for i, j in pairs:
        assert topo.link(i, j) == topo.link(j, i) == link and topo.nvlink_count(i, j) == count
        assert topo.nvlink_peers(i) == (j,)


def test_case_007_topology_parser_node_b_never_assumes_adjacency() -> None:
    topo = parse_topology(NODE_B)
    assert topo.link(0, 1) == "SYS" and topo.nvlink_count(0, 1) == 0


def test_case_007_topology_parser_tolerates_affinity_columns_and_ansi_header() -> None:
    text = ("\t\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
            "GPU0\t X \tNV18\tPXB\t0-47\t0\t\tN/A\nGPU1\tNV18\t X \tPXB\t0-47\t0\t\tN/A\n"
            "NIC0\tPXB\tPXB\t X \n\nLegend:\n  X    = Self\n")
    topo = parse_topology(text)
    assert topo.nvlink_pairs == frozenset({(0, 1)}) and topo.nvlink_count(0, 1) == 18


@pytest.mark.parametrize("text,message", [
    ("no matrix here\n", "no GPU column header"),
    ("\tGPU0\tGPU1\nGPU0\t X \n", "row GPU0 has 1 cells for 2 columns"),
], ids=["no header", "row cut off"])
def test_case_007_topology_parser_rejects_broken_matrices(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_topology(text)


# ---- case 014 -------------------------------------------------------------------------------
CASE_014_GPUS = """\
index, uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB]
0, GPU-11111111-aaaa-bbbb-cccc-000000000000, 0 %, 75412 MiB, 81559 MiB
1, GPU-22222222-aaaa-bbbb-cccc-000000000000, 0 %, 4 MiB, 81559 MiB
2, GPU-33333333-aaaa-bbbb-cccc-000000000000, 0 %, 18020 MiB, 81559 MiB
3, GPU-44444444-aaaa-bbbb-cccc-000000000000, 97 %, 60110 MiB, 81559 MiB
"""
CASE_014_APPS = """\
gpu_uuid, pid, used_memory [MiB]
GPU-33333333-aaaa-bbbb-cccc-000000000000, 48121, 18016 MiB
GPU-44444444-aaaa-bbbb-cccc-000000000000, 50233, 60106 MiB
"""


def case_014_state() -> tuple[Inventory, list[Job]]:
    gpus = gpus_from_smi(parse_query_gpu_csv(CASE_014_GPUS), parse_compute_apps_csv(CASE_014_APPS), node="box",
                         ours={48121, 50233})
    inventory = Inventory(nodes=(Node(name="box", gpus=tuple(gpus)),), source="nvml")
    jobs = [Job(id=job, spec=JobSpec(name=job, user="u"), state=JobState.RUNNING,
                allocation=Allocation(node="box", gpu_uuids=(uuid,)))
            for job, uuid in (("dave-nb", "GPU-33333333-aaaa-bbbb-cccc-000000000000"),
                              ("erin-train", "GPU-44444444-aaaa-bbbb-cccc-000000000000"))]
    return inventory, jobs


def test_case_014_held_memory_without_process_is_foreign_and_not_placeable() -> None:
    inventory, jobs = case_014_state()
    assert [g.foreign_memory_mib for g in inventory.gpus()] == [75412, 0, 0, 0]
    assert list(gpu_occupancy(inventory, jobs).values()) == ["occupied-unmanaged", "free", "allocated", "allocated"]


def test_case_014_reclaimer_reports_gpu0_but_has_no_allocation_to_release() -> None:
    inventory, jobs = case_014_state()
    (report,) = foreign_gpu_reports(inventory, jobs)
    assert report.message == "GPU0 holds 73.6 GiB with no owning process"
    assert (report.index, report.held_mib, report.allocated_to, report.releasable) == (0, 75412, (), False)


def test_case_014_a_process_we_did_not_start_is_foreign_too() -> None:
    gpus = gpus_from_smi(parse_query_gpu_csv(CASE_014_GPUS), parse_compute_apps_csv(CASE_014_APPS), node="box",
                         ours={50233})
    inventory = Inventory(nodes=(Node(name="box", gpus=tuple(gpus)),))
    assert [g.foreign_memory_mib for g in gpus] == [75412, 0, 18016, 0]
    reports = foreign_gpu_reports(inventory, foreign_pids={gpus[2].uuid: [48121]})
    assert reports[1].message == "GPU2 holds 17.6 GiB in process(es) 48121 not started by the scheduler"
