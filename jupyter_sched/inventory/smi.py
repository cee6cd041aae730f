"""Parse ``nvidia-smi`` CSV queries and ``-L`` listings (case 014; real captures in shared/data).

``nvidia-smi --query-gpu=<fields> --format=csv`` prints a header (``memory.used [MiB]``) and rows
whose values carry units (``75412 MiB``, ``0 %``, ``71.15 W``) or ``[N/A]``-style placeholders.
``--query-compute-apps=gpu_uuid,pid,used_memory`` lists processes holding memory. Together they
decide which GPUs are held by processes the scheduler did not start (:func:`foreign_memory_mib`).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import ValidationError
from ..model import GPU, MigDevice

__all__ = [
    "DEFAULT_FOREIGN_THRESHOLD_MIB",
    "SmiGpuRow",
    "SmiMigRow",
    "SmiProcessRow",
    "capture_sections",
    "foreign_memory_mib",
    "gpus_from_smi",
    "parse_compute_apps_csv",
    "parse_gpu_list",
    "parse_mig_table",
    "parse_query_gpu_csv",
    "smi_number",
]

DEFAULT_FOREIGN_THRESHOLD_MIB = 512
"""Memory in MiB a GPU may show in use without an owning process before it counts as foreign.
Idle GPUs report a few MiB to a few tens of MiB with no process (59 MiB on the H100 capture,
4 MiB in case 014); a zombie's hold is GiBs."""

_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]*)\s*$")
_SECTION = re.compile(r"^# (\w+) :: (.+?)\s*$")
_LIST_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[^)]+)\)\s*$")
_LIST_MIG = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)]+)\)\s*$")


def smi_number(raw: str | None) -> float | None:
    """``"75412 MiB"`` → 75412.0, ``"0 %"`` → 0.0, ``"[N/A]"``/``"N/A"``/``""`` → None."""
    if raw is None:
        return None
    match = _NUMBER.match(raw)
    return float(match.group(1)) if match else None


def _strip_unit(name: str) -> str:
    return name.split(" [", 1)[0].strip()


def _rows(text: str, what: str) -> list[dict[str, str]]:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValidationError(f"{what}: empty output", field=what, hint="pass the command's CSV output with its header")
    reader = csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)
    header = [_strip_unit(name) for name in next(reader)]
    rows = []
    for n, values in enumerate(reader, start=2):
        if len(values) != len(header):
            raise ValidationError(f"{what}: line {n} has {len(values)} values for {len(header)} columns",
                                  field=what, hint="the output looks cut off; run the query again")
        rows.append(dict(zip(header, (v.strip() for v in values), strict=True)))
    return rows


@dataclass(frozen=True, slots=True)
class SmiGpuRow:
    """One GPU row of ``--query-gpu`` (fields absent from the query are None).

    Attributes:
        index: NVML index. uuid: ``GPU-...``. name: product name. pci_bus_id: ``00000000:83:00.0``.
        memory_total_mib / memory_used_mib: MiB. utilization_pct: %. power_w: W. temperature_c: °C.
        mig_enabled: ``mig.mode.current == Enabled``. raw: every field as printed.
    """

    index: int
    uuid: str
    name: str = ""
    pci_bus_id: str = ""
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None
    utilization_pct: float | None = None
    power_w: float | None = None
    temperature_c: float | None = None
    mig_enabled: bool = False
    raw: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SmiProcessRow:
    """One row of ``--query-compute-apps``: a process holding GPU memory."""

    gpu_uuid: str
    pid: int
    used_memory_mib: float | None = None
    process_name: str = ""


@dataclass(frozen=True, slots=True)
class SmiMigRow:
    """One MIG device: from a line of ``nvidia-smi -L``, completed by the "MIG devices" table.

    Attributes:
        gpu_index: parent GPU's NVML index. profile: e.g. ``"3g.40gb"``. device: MIG device index.
        uuid: ``MIG-...``. gpu_instance_id: GI ID (dcgm-exporter ``GPU_I_ID``), None until known.
        memory_total_mib / memory_used_mib: from the table, None until known.
    """

    gpu_index: int
    profile: str
    device: int
    uuid: str
    gpu_instance_id: int | None = None
    memory_total_mib: float | None = None
    memory_used_mib: float | None = None


def parse_query_gpu_csv(text: str) -> list[SmiGpuRow]:
    """Parse ``nvidia-smi --query-gpu=... --format=csv`` (must include ``index`` and ``uuid``).

    Raises:
        ValidationError: missing header fields, or a row with the wrong number of values.
    """
    rows = _rows(text, "query-gpu")
    out: list[SmiGpuRow] = []
    for row in rows:
        if "uuid" not in row or "index" not in row:
            raise ValidationError("query-gpu: the query must include the index and uuid fields", field="query-gpu",
                                  hint="run nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total --format=csv")
        index = smi_number(row["index"])
        out.append(SmiGpuRow(
            index=int(index) if index is not None else len(out), uuid=row["uuid"], name=row.get("name", ""),
            pci_bus_id=row.get("pci.bus_id", ""), memory_total_mib=smi_number(row.get("memory.total")),
            memory_used_mib=smi_number(row.get("memory.used")), utilization_pct=smi_number(row.get("utilization.gpu")),
            power_w=smi_number(row.get("power.draw")), temperature_c=smi_number(row.get("temperature.gpu")),
            mig_enabled=row.get("mig.mode.current", "").lower() == "enabled", raw=row))
    return out


def parse_compute_apps_csv(text: str) -> list[SmiProcessRow]:
    """Parse ``nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv``
    (``used_gpu_memory`` is accepted too; a header-only answer means no processes).

    Raises:
        ValidationError: no ``gpu_uuid``/``pid`` column, or a malformed row.
    """
    out = []
    for row in _rows(text, "query-compute-apps"):
        if "gpu_uuid" not in row or "pid" not in row:
            raise ValidationError("query-compute-apps: the query must include gpu_uuid and pid",
                                  field="query-compute-apps",
                                  hint="run nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv")
        memory = row.get("used_memory", row.get("used_gpu_memory"))
        out.append(SmiProcessRow(gpu_uuid=row["gpu_uuid"], pid=int(row["pid"]), used_memory_mib=smi_number(memory),
                                 process_name=row.get("process_name", "")))
    return out


def parse_gpu_list(text: str) -> tuple[list[tuple[int, str, str]], list[SmiMigRow]]:
    """Parse ``nvidia-smi -L``: ``([(index, name, uuid)], [MIG rows])``."""
    gpus: list[tuple[int, str, str]] = []
    migs: list[SmiMigRow] = []
    for line in text.splitlines():
        if match := _LIST_GPU.match(line):
            gpus.append((int(match.group(1)), match.group(2), match.group(3)))
        elif (mig := _LIST_MIG.match(line)) and gpus:
            migs.append(SmiMigRow(gpus[-1][0], mig.group(1), int(mig.group(2)), mig.group(3)))
    return gpus, migs


_MIG_TABLE_ROW = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|\s+(\d+)MiB\s*/\s*(\d+)MiB")


def parse_mig_table(table: str, migs: Sequence[SmiMigRow]) -> list[SmiMigRow]:
    """Complete ``-L`` MIG rows with GI ID and memory from the "MIG devices" part of the default
    ``nvidia-smi`` table (``| GPU GI CI MIG | used / total | ...``)."""
    found: dict[tuple[int, int], tuple[int | None, int | None, int | None]] = {}
    for line in table.splitlines():
        if match := _MIG_TABLE_ROW.match(line):
            gpu, gi, _ci, dev, used, total = (int(g) for g in match.groups())
            found[(gpu, dev)] = (gi, used, total)
    out: list[SmiMigRow] = []
    for mig in migs:
        gi_id, used_mib, total_mib = found.get((mig.gpu_index, mig.device), (None, None, None))
        out.append(SmiMigRow(mig.gpu_index, mig.profile, mig.device, mig.uuid, gi_id,
                             None if total_mib is None else float(total_mib),
                             None if used_mib is None else float(used_mib)))
    return out


def capture_sections(text: str) -> dict[str, str]:
    """Split an nvidia_gpu_exporter capture into ``{"<state> :: <name>": body}``
    (e.g. ``"load :: query-gpu (csv, what the exporter parses)"``)."""
    sections: dict[str, str] = {}
    current: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        match = _SECTION.match(line)
        if match:
            if current is not None:
                sections[current] = "\n".join(body).strip("\n") + "\n"
            current, body = f"{match.group(1)} :: {match.group(2)}", []
        elif current is not None and not line.startswith("# $ ") and not (line and set(line) == {"#"}):
            body.append(line)
    if current is not None:
        sections[current] = "\n".join(body).strip("\n") + "\n"
    return sections


def foreign_memory_mib(used_mib: float | None, processes: Iterable[tuple[int, float | None]],
                       ours: Collection[int], *, threshold_mib: int = DEFAULT_FOREIGN_THRESHOLD_MIB) -> int:
    """Memory in MiB held on a GPU by work the scheduler did not start (case 014).

    It is the memory of listed processes whose pid is not in ``ours``, plus memory in use that
    no listed process explains (a zombie or a process in another PID namespace) when that
    exceeds ``threshold_mib``.

    Args:
        used_mib: device memory in use, MiB (None = unknown → only listed processes count).
        processes: ``(pid, used MiB or None)`` for every process holding memory on the GPU.
        ours: pids the scheduler started (jobs and lease kernels and their children).
        threshold_mib: unexplained memory tolerated (driver/context overhead).
    """
    listed = 0.0
    foreign = 0.0
    for pid, mib in processes:
        listed += mib or 0.0
        if pid not in ours:
            foreign += mib or 0.0
    unexplained = (used_mib or 0.0) - listed
    if unexplained > threshold_mib:
        foreign += unexplained
    return round(foreign)


def gpus_from_smi(gpus: Sequence[SmiGpuRow], processes: Sequence[SmiProcessRow], *, node: str,
                  ours: Collection[int] = (), migs: Sequence[SmiMigRow] = (),
                  threshold_mib: int = DEFAULT_FOREIGN_THRESHOLD_MIB) -> list[GPU]:
    """Build inventory GPUs from parsed nvidia-smi output, with ``foreign_memory_mib`` set.

    Args:
        gpus: rows of :func:`parse_query_gpu_csv`. processes: rows of :func:`parse_compute_apps_csv`.
        node: node name. ours: pids the scheduler started. migs: MIG rows of :func:`parse_gpu_list`.
        threshold_mib: see :func:`foreign_memory_mib`.
    """
    out = []
    for row in gpus:
        procs = [(p.pid, p.used_memory_mib) for p in processes if p.gpu_uuid == row.uuid]
        mig_devices = tuple(MigDevice(uuid=m.uuid, profile=m.profile,
                                      gpu_instance_id=m.device if m.gpu_instance_id is None else m.gpu_instance_id,
                                      memory_mib=int(m.memory_total_mib or _profile_memory_mib(m.profile)))
                            for m in migs if m.gpu_index == row.index)
        out.append(GPU(
            uuid=row.uuid, index=row.index, node=node, model=row.name, memory_mib=int(row.memory_total_mib or 0),
            pci_bus_id=row.pci_bus_id, mig_enabled=row.mig_enabled or bool(mig_devices), mig_devices=mig_devices,
            foreign_memory_mib=foreign_memory_mib(row.memory_used_mib, procs, ours, threshold_mib=threshold_mib)))
    return out


def _profile_memory_mib(profile: str) -> int:
    """``"3g.40gb"`` → 40960 MiB (the profile's nominal size; NVML gives the exact one)."""
    match = re.search(r"\.(\d+)gb", profile)
    return int(match.group(1)) * 1024 if match else 0
