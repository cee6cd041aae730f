"""Parse the GPU matrix of ``nvidia-smi topo -m`` into NVLink pairs (case 007).

The matrix is read cell by cell; pairs are never assumed to be adjacent indices (on the node of
NVIDIA/k8s-device-plugin#546 the pairs are 0-2, 1-3, 4-5, 6-7). Cell values: ``X`` (self),
``NV#`` (a bonded set of # NVLinks), ``SYS``, ``NODE``, ``PHB``, ``PXB``, ``PIX`` (PCIe paths).
The header may carry ANSI escapes (real captures underline it) and extra columns (``NIC0``,
``CPU Affinity``, ``NUMA Affinity``, ``GPU NUMA ID``), which are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ValidationError

__all__ = ["Topology", "parse_topology"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GPU = re.compile(r"^GPU(\d+)$")
_COLUMN = re.compile(r"^(GPU|NIC)\d+$")
_NVLINK = re.compile(r"^NV(\d+)$")


@dataclass(frozen=True, slots=True)
class Topology:
    """GPU-to-GPU links of one node.

    Attributes:
        gpu_indices: NVML indices of the GPUs in the matrix, in order.
        links: ``(i, j) -> cell`` for every ordered pair ``i != j`` (e.g. ``"NV4"``, ``"SYS"``).
    """

    gpu_indices: tuple[int, ...] = ()
    links: Mapping[tuple[int, int], str] = field(default_factory=dict)

    @property
    def nvlink_pairs(self) -> frozenset[tuple[int, int]]:
        """Unordered NVLink-connected pairs as ``(low, high)`` index tuples."""
        return frozenset((i, j) for (i, j), cell in self.links.items() if i < j and _NVLINK.match(cell))

    def link(self, i: int, j: int) -> str:
        """The cell between GPUs ``i`` and ``j`` (``"X"`` for ``i == j``; ``""`` when unknown)."""
        return "X" if i == j else self.links.get((i, j), "")

    def nvlink_count(self, i: int, j: int) -> int:
        """Number of bonded NVLinks between ``i`` and ``j`` (0 when not NVLink-connected)."""
        match = _NVLINK.match(self.link(i, j))
        return int(match.group(1)) if match else 0

    def nvlink_peers(self, index: int) -> tuple[int, ...]:
        """NVML indices reachable from ``index`` by NVLink, sorted."""
        return tuple(sorted({j for (i, j), cell in self.links.items() if i == index and _NVLINK.match(cell)}))


def parse_topology(text: str) -> Topology:
    """Parse ``nvidia-smi topo -m`` output.

    Args:
        text: the command's output (the legend and CPU-affinity columns may be included).

    Returns:
        :class:`Topology`; a single-GPU node has no links.

    Raises:
        ValidationError: no ``GPU0 ...`` header, or a GPU row with fewer cells than GPU columns.
    """
    lines = [_ANSI.sub("", line).rstrip() for line in text.splitlines()]
    # The header is the first indented line whose first token is a GPU/NIC column; rows are not indented.
    header_at = next((n for n, line in enumerate(lines)
                      if line[:1] in ("\t", " ") and line.split() and _COLUMN.match(line.split()[0])), None)
    if header_at is None:
        raise ValidationError("topology: no GPU column header found in `nvidia-smi topo -m` output",
                              field="topology", hint="pass the full output of `nvidia-smi topo -m`")
    columns: list[str] = []
    for token in lines[header_at].split():
        if not _COLUMN.match(token):
            break
        columns.append(token)
    indices: list[int] = []
    links: dict[tuple[int, int], str] = {}
    for line in lines[header_at + 1:]:
        tokens = line.split()
        if not tokens:
            break
        row = _GPU.match(tokens[0])
        if not row:
            continue
        i = int(row.group(1))
        cells = tokens[1:1 + len(columns)]
        if len(cells) < len(columns):
            raise ValidationError(f"topology: row GPU{i} has {len(cells)} cells for {len(columns)} columns",
                                  field="topology", hint="the matrix looks cut off; capture it again")
        indices.append(i)
        for column, cell in zip(columns, cells, strict=True):
            col = _GPU.match(column)
            if col and int(col.group(1)) != i:
                links[(i, int(col.group(1)))] = cell
    return Topology(gpu_indices=tuple(indices), links=links)
