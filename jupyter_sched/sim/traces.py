"""Readers for the public GPU cluster traces the simulator replays (edge: reads files).

Where the data lives: ``$JUPYTER_SCHED_DATA`` if set, else ``<repo>/../shared/data/traces``
(:func:`data_dir`). Layout and sources: see that folder's README and
:mod:`jupyter_sched.sim.fetch`.

* openb (Alibaba cluster-trace-gpu-v2023, FGD ATC'23): node list and pod lists with fractional
  ``gpu_milli`` and ``gpu_spec`` model constraints (:func:`read_openb_nodes`,
  :func:`read_openb_pods`, :func:`openb_inventory`).
* Tiresias (NSDI'19) 60-job trace and cluster specs (:func:`read_tiresias_jobs`,
  :func:`read_tiresias_cluster`).
* The FGD authors' published per-seed results (:func:`read_fgd_expected`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import NotFoundError, ValidationError
from ..model import GPU, Inventory, Node
from ..placement.fgd import PodShape

__all__ = [
    "OPENB_WORKLOADS",
    "OpenbPod",
    "TiresiasCluster",
    "TiresiasJob",
    "candidate_dirs",
    "data_dir",
    "openb_inventory",
    "read_fgd_expected",
    "read_openb_nodes",
    "read_openb_pods",
    "read_tiresias_cluster",
    "read_tiresias_jobs",
]

OPENB_WORKLOADS = (
    "default", "cpu050", "cpu100", "cpu200", "cpu250",
    "gpushare40", "gpushare60", "gpushare80", "gpushare100",
    "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33",
    "multigpu20", "multigpu30", "multigpu40", "multigpu50",
)
"""The 17 openb workloads of the FGD paper's evaluation (Figs. 7-14), by pod-list suffix."""

_ENV = "JUPYTER_SCHED_DATA"


def data_dir() -> Path:
    """The traces folder: ``$JUPYTER_SCHED_DATA``, else the first existing ``shared/data/traces``
    beside the source checkout (``<repo>/../shared``) or beside the current folder (``../shared``,
    for an installed package run from its checkout).

    Raises:
        NotFoundError: no such folder (the message names the places tried and how to get the data).
    """
    tried = candidate_dirs()
    for root in tried:
        if root.is_dir():
            return root
    unset = "" if os.environ.get(_ENV) else f", and {_ENV} is not set"
    raise NotFoundError(
        "trace data folder not found (looked in " + ", ".join(str(p) for p in tried) + f"){unset}",
        field=_ENV, hint=FETCH_HINT)


FETCH_HINT = ("download the traces once: `jupyter-sched fetch-traces --dest DIR --only openb,tiresias`, then "
              "name that folder: `JUPYTER_SCHED_DATA=DIR jupyter-sched simulate --openb default`")
"""How to get trace data, said where none is found: a folder of the reader's choosing, named by
JUPYTER_SCHED_DATA — never the checkout's ``../shared``, which a newcomer never made (newuser41 n7)."""


def candidate_dirs() -> list[Path]:
    """Where :func:`data_dir` looks, in order, each place once: ``$JUPYTER_SCHED_DATA`` alone when
    set, else ``shared/data/traces`` beside the source checkout (when the package runs from one)
    and beside the current folder (the two are the same folder when the command runs from the
    checkout, and are then listed once)."""
    env = os.environ.get(_ENV)
    if env:
        return [Path(env)]
    tail = Path("shared") / "data" / "traces"
    source = Path(__file__).resolve().parents[2]
    # beside the checkout only when this IS a checkout: from site-packages that place is
    # <venv>/lib/python3.X/shared, where nobody keeps data (new user 5, finding 19)
    places = ((source.parent / tail,) if (source / "pyproject.toml").is_file() else ()) + \
        (Path.cwd().resolve().parent / tail,)
    return list(dict.fromkeys(places))


def _file(path: Path) -> Path:
    if not path.is_file():
        raise NotFoundError(f"trace file {path} does not exist", field="path",
                            hint="run `jupyter-sched fetch-traces` or set JUPYTER_SCHED_DATA")
    return path


def _csv(path: Path, columns: tuple[str, ...], dtype: dict[str, type] | None = None,
         numeric: tuple[str, ...] = ()) -> pd.DataFrame:
    """Read a trace CSV that must have ``columns``; ``numeric`` columns must hold numbers in every row.

    Raises:
        NotFoundError: no such file.
        ValidationError: not a CSV table (field ``columns``), a missing column, or a value that is not
            a number in a ``numeric`` column (field: that column).
    """
    try:
        frame = pd.read_csv(_file(path), dtype=dtype, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValidationError(f"{path.name} is not a CSV table with a header row ({exc})", field="columns",
                              hint=f"expected a header with {list(columns)}; re-fetch the trace") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValidationError(f"{path.name} lacks columns {missing}", field="columns",
                              hint=f"expected columns {list(columns)}")
    for column in numeric:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[column][values.isna()]
        if len(bad):
            raise ValidationError(f"{path.name}: {column} is not a number in {len(bad)} rows (first: {bad.iloc[0]!r})",
                                  field=column, hint=f"fix or drop the rows whose {column} is not a number")
        frame[column] = values
    return frame


def read_openb_nodes(path: Path | None = None) -> pd.DataFrame:
    """The openb GPU node list (``openb_node_list_gpu_node.csv`` by default).

    Returns:
        DataFrame with ``sn`` (name), ``cpu_milli``, ``memory_mib``, ``gpu`` (count) and ``model``.
    """
    path = path or data_dir() / "openb" / "openb_node_list_gpu_node.csv"
    return _csv(path, ("sn", "cpu_milli", "memory_mib", "gpu", "model"), {"model": str, "sn": str},
                numeric=("cpu_milli", "memory_mib", "gpu"))


def openb_inventory(nodes: pd.DataFrame | None = None) -> Inventory:
    """An :class:`Inventory` of the openb nodes (simulated GPUs; uuids ``<node>-gpu<i>``)."""
    frame = read_openb_nodes() if nodes is None else nodes
    out = []
    for sn, cpu, mem, count, model in zip(frame["sn"], frame["cpu_milli"], frame["memory_mib"],
                                          frame["gpu"], frame["model"], strict=True):
        gpus = tuple(GPU(uuid=f"{sn}-gpu{i}", index=i, node=str(sn), model=str(model),
                         memory_mib=0, simulated=True) for i in range(int(count)))
        out.append(Node(name=str(sn), gpus=gpus, cpu_millis=int(cpu), memory_mib=int(mem)))
    return Inventory(nodes=tuple(out), source="simulated")


@dataclass(frozen=True, slots=True)
class OpenbPod:
    """One pod of an openb pod list.

    Attributes:
        name: pod name.
        shape: its request (CPU millicores, memory MiB, GPUs, milli per GPU, allowed models).
        qos: ``LS``, ``BE``, ``Burstable`` or ``Guaranteed``.
        creation_s / deletion_s: trace times in seconds.
    """

    name: str
    shape: PodShape
    qos: str
    creation_s: float
    deletion_s: float


def read_openb_pods(workload: str = "default", path: Path | None = None) -> list[OpenbPod]:
    """The pods of ``openb_pod_list_<workload>.csv``, in file order.

    ``gpu_milli`` applies to each of ``num_gpu`` GPUs; CPU-only pods get ``gpu_milli`` 0;
    ``gpu_spec`` ``"V100M16|V100M32"`` becomes ``models=("V100M16", "V100M32")`` (the ``multigpu*``
    lists have no such column: any model).

    Raises:
        NotFoundError: no such file.
        ValidationError: missing columns or impossible values (gpu_milli outside 0..1000).
    """
    path = path or data_dir() / "openb" / f"openb_pod_list_{workload}.csv"
    frame = _csv(path, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"),
                 {"gpu_spec": str, "name": str, "qos": str}, numeric=("cpu_milli", "memory_mib", "num_gpu", "gpu_milli"))
    bad = frame[(frame["gpu_milli"] < 0) | (frame["gpu_milli"] > 1000)]
    if len(bad):
        raise ValidationError(f"{path.name}: gpu_milli outside 0..1000 for {len(bad)} pods",
                              field="gpu_milli", hint="gpu_milli is thousandths of one GPU")
    pods = []
    qos = frame["qos"] if "qos" in frame.columns else pd.Series([""] * len(frame))
    specs = frame["gpu_spec"] if "gpu_spec" in frame.columns else pd.Series([""] * len(frame))  # multigpu* lack it
    created = frame["creation_time"] if "creation_time" in frame.columns else pd.Series([0] * len(frame))
    deleted = frame["deletion_time"] if "deletion_time" in frame.columns else pd.Series([0] * len(frame))
    for name, cpu, mem, ngpu, milli, spec, q, c, d in zip(
            frame["name"], frame["cpu_milli"], frame["memory_mib"], frame["num_gpu"],
            frame["gpu_milli"], specs, qos, created, deleted, strict=True):
        gpus = int(ngpu)
        models = tuple(m for m in str(spec).split("|") if m)
        shape = PodShape(cpu_milli=int(cpu), memory_mib=int(mem), gpus=gpus,
                         gpu_milli=int(milli) if gpus else 0, models=models)
        pods.append(OpenbPod(name=str(name), shape=shape, qos=str(q),
                             creation_s=float(c or 0), deletion_s=float(d or 0)))
    return pods


@dataclass(frozen=True, slots=True)
class TiresiasJob:
    """One job of the Tiresias trace: ``num_gpu`` GPUs from ``submit_s`` for ``duration_s`` seconds."""

    job_id: int
    num_gpu: int
    submit_s: float
    duration_s: float
    model_name: str


@dataclass(frozen=True, slots=True)
class TiresiasCluster:
    """A Tiresias cluster spec: switches x nodes per switch x GPUs per node."""

    num_switch: int
    nodes_per_switch: int
    gpus_per_node: int
    cpus_per_node: int
    mem_gib_per_node: int

    @property
    def nodes(self) -> int:
        """Number of nodes."""
        return self.num_switch * self.nodes_per_switch

    def inventory(self, model: str = "V100") -> Inventory:
        """The spec as a simulated :class:`Inventory` (node ``sw<s>-n<k>``)."""
        out = []
        for s in range(self.num_switch):
            for k in range(self.nodes_per_switch):
                name = f"sw{s}-n{k}"
                gpus = tuple(GPU(uuid=f"{name}-gpu{i}", index=i, node=name, model=model,
                                 memory_mib=16384, simulated=True) for i in range(self.gpus_per_node))
                out.append(Node(name=name, gpus=gpus, cpu_millis=self.cpus_per_node * 1000,
                                memory_mib=self.mem_gib_per_node * 1024))
        return Inventory(nodes=tuple(out), source="simulated")


def read_tiresias_jobs(path: Path | None = None) -> list[TiresiasJob]:
    """The Tiresias 60-job trace (``tiresias/60_job.csv``) sorted by submit time."""
    path = path or data_dir() / "tiresias" / "60_job.csv"
    frame = _csv(path, ("job_id", "num_gpu", "submit_time", "duration"), {"model_name": str},
                 numeric=("job_id", "num_gpu", "submit_time", "duration"))
    jobs = [TiresiasJob(job_id=int(j), num_gpu=int(g), submit_s=float(s), duration_s=float(d),
                        model_name=str(m))
            for j, g, s, d, m in zip(frame["job_id"], frame["num_gpu"], frame["submit_time"],
                                     frame["duration"], frame.get("model_name", [""] * len(frame)),
                                     strict=True)]
    return sorted(jobs, key=lambda j: (j.submit_s, j.job_id))


def read_tiresias_cluster(name: str = "n32g4", path: Path | None = None) -> TiresiasCluster:
    """A Tiresias cluster spec file (``n32g4`` = 32 nodes x 4 GPUs)."""
    path = path or data_dir() / "tiresias" / f"{name}.csv"
    columns = ("num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node", "mem_p_node")
    frame = _csv(path, columns, numeric=columns)
    row = frame.iloc[0]
    return TiresiasCluster(int(row["num_switch"]), int(row["num_node_p_switch"]), int(row["num_gpu_p_node"]),
                           int(row["num_cpu_p_node"]), int(row["mem_p_node"]))


def read_fgd_expected(kind: str = "allo", path: Path | None = None) -> pd.DataFrame:
    """Published FGD simulator results: ``allo`` (allocation %), ``frag_ratio`` or ``frag`` (amount %).

    Returns:
        One row per (workload, policy, seed) with columns ``workload`` (e.g. ``default``),
        ``policy`` (``Random``, ``DotProduct``, ``GpuClustering``, ``GpuPacking``, ``BestFit``,
        ``FGD``), ``seed`` and ``"0"`` … ``"130"`` (percent of arrived GPU demand).
    """
    path = path or data_dir() / "fgd_expected_results" / f"analysis_{kind}_discrete.csv"
    frame = _csv(path, ("workload", "sc_policy", "seed"), {"workload": str, "sc_policy": str})
    names = {"Random": "Random", "DotProd": "DotProduct", "GpuClustering": "GpuClustering",
             "GpuPacking": "GpuPacking", "BestFit": "BestFit", "FGD": "FGD"}
    frame = frame.copy()
    frame["workload"] = frame["workload"].str.replace("openb_pod_list_", "", regex=False)
    frame["policy"] = frame["sc_policy"].str.split("-", n=1).str[1].map(names)
    return frame
